"""torch.special's orthogonal polynomials: Chebyshev T U V W (and the shifted ones, x -> 2x - 1), Hermite H and
He, Laguerre L, Legendre P, each `f(input, n)`.

ops: special_chebyshev_polynomial_t/u/v/w special_shifted_chebyshev_polynomial_t/u/v/w special_hermite_polynomial_h
     special_hermite_polynomial_he special_laguerre_polynomial_l special_legendre_polynomial_p

PyTorch's algorithm, vectorised: n is truncated to an integer (0 for n < 0), the values at the ends of the
interval are exact, the Chebyshev polynomials of high degree inside (-1, 1) come from their trigonometric
forms, the rest from the three-term recurrences, in the result's dtype (float32 arithmetic for float32, as
PyTorch).  PyTorch defines no derivative for them: the results never require grad.
"""
import numpy as np

from ._core import as_array, make, full_precision
from .special_binary import _operands

_THRESHOLD = {("t", False): 6, ("u", False): 8, ("v", False): 8, ("w", False): 8,
              ("t", True): 6, ("u", True): 6, ("v", True): 6, ("w", True): 4}


def _degree(n, dt, nan_is=None):
    """n as int64 (truncated; nan / inf as -1 for Hermite, as PyTorch's guard, else as the C cast: -2^63)."""
    n = as_array(n)
    if n.dtype.kind == "f":
        bad = ~np.isfinite(n)
        n = np.where(bad, -1 if nan_is == -1 else np.iinfo(np.int64).min, np.trunc(np.where(bad, 0, n)))
    return n.astype(np.int64)


def _recur(q0, q1, n, step, active):
    """The recurrence r_k = step(k, q_{k-1}, q_{k-2}) from k = 2 up to each element's n (where `active`)."""
    p, q = np.broadcast_arrays(q0, q1)
    p, q = p.copy(), q.copy()
    top = int(n[active].max()) if active.any() else 1
    for k in range(2, top + 1):
        m = active & (n >= k)
        if not m.any():
            break
        r = step(k, q, p)
        p, q = np.where(m, q, p), np.where(m, r, q)
    return q


def _cheb_kernel(kind, shifted):
    def run(x, n):
        x, n = np.broadcast_arrays(x, _degree(n, x.dtype))
        dt = x.dtype.type
        one = dt(1)
        y = x + x - one if shifted else x
        nf = n.astype(x.dtype)
        sgn = np.where(n % 2 == 0, one, -one)
        ends = {"t": (one, sgn), "u": (nf + one, sgn * (nf + one)), "v": (one, sgn * (nf + nf + one)),
                "w": (nf + nf + one, sgn)}[kind]
        hi, lo = (x == one, x == 0) if shifted else (y == one, y == -one)
        inside = (np.abs(y) < one) & (n > _THRESHOLD[kind, shifted])
        th = np.arccos(np.where(inside, y, dt(0)))
        trig = {"t": lambda: np.cos(nf * th),
                "u": lambda: np.sin((nf + one) * th) / np.sin(th),
                "v": lambda: np.cos((nf + dt(0.5)) * th) / np.cos(th / dt(2)),
                "w": lambda: np.sin((nf + dt(0.5)) * th) / np.sin(th / dt(2))}[kind]()
        q1 = {"t": y, "u": y + y, "v": y + y - one, "w": y + y + one}[kind]
        rec = _recur(np.ones_like(y), q1, n, lambda k, q, p: (y + y) * q - p, ~inside & (n >= 2))
        out = np.where(n == 0, one, np.where(n == 1, q1, rec))
        out = np.where(inside, trig, out)
        out = np.where(hi, ends[0], np.where(lo, ends[1], out))
        return np.where(n < 0, dt(0), out)
    return run


def _hermite(x, n, phys):
    x, n = np.broadcast_arrays(x, _degree(n, x.dtype, -1))
    dt = x.dtype.type
    q1 = x + x if phys else x.copy()
    limit = 128 if x.dtype == np.float32 else 512
    if phys:
        step = (lambda k, q, p: (x + x) * q - dt(2 * (k - 1)) * p)
    else:
        step = (lambda k, q, p: x * q - dt(k - 1) * p)
    rec = _recur(np.ones_like(x), q1, n, step, (n >= 2) & (n <= limit))
    out = np.where(n == 0, dt(1), np.where(n == 1, q1, rec))
    out = np.where(n > limit, dt(np.nan), out)
    return np.where(n < 0, dt(0), out)


def _laguerre(x, n):
    x, n = np.broadcast_arrays(x, _degree(n, x.dtype))
    dt = x.dtype.type
    q1 = dt(1) - x
    rec = _recur(np.ones_like(x), q1, n, lambda k, q, p: ((dt(2 * (k - 1)) + (dt(1) - x)) * q - dt(k - 1) * p)
                 / dt(k), n >= 2)
    out = np.where((n == 0) | (np.abs(x) == 0), dt(1), np.where(n == 1, q1, rec))
    return np.where(n < 0, dt(0), out)


def _legendre(x, n):
    x, n = np.broadcast_arrays(x, _degree(n, x.dtype))
    dt = x.dtype.type
    rec = _recur(np.ones_like(x), x, n, lambda k, q, p: (dt(2 * k - 1) * x * q - dt(k - 1) * p) / dt(k), n >= 2)
    out = np.where(n == 0, dt(1), np.where(n == 1, x, rec))
    out = np.where(np.abs(x) == 1, np.where((x > 0) | (n % 2 == 0), dt(1), dt(-1)), out)
    return np.where(n < 0, dt(0), out)


def _poly_op(name, kernel):
    """special_<name>(input, n): input and n Tensors or numbers (not both numbers); no gradient."""
    def fn(input, n, *, out=None):
        xd, nd, _, _ = _operands(name, input, n)
        full_precision(name[len("special_"):] + "_cpu", xd.dtype)
        raw_n = n._data if hasattr(n, "_data") else n
        with np.errstate(all="ignore"):
            y = kernel(as_array(xd), raw_n if np.ndim(raw_n) else as_array(raw_n))
        return make(as_array(y, xd.dtype).reshape(np.broadcast_shapes(np.shape(xd), np.shape(nd))))
    fn.__name__ = fn.__qualname__ = name
    return fn


special_chebyshev_polynomial_t = _poly_op("special_chebyshev_polynomial_t", _cheb_kernel("t", False))
special_chebyshev_polynomial_u = _poly_op("special_chebyshev_polynomial_u", _cheb_kernel("u", False))
special_chebyshev_polynomial_v = _poly_op("special_chebyshev_polynomial_v", _cheb_kernel("v", False))
special_chebyshev_polynomial_w = _poly_op("special_chebyshev_polynomial_w", _cheb_kernel("w", False))
special_shifted_chebyshev_polynomial_t = _poly_op("special_shifted_chebyshev_polynomial_t", _cheb_kernel("t", True))
special_shifted_chebyshev_polynomial_u = _poly_op("special_shifted_chebyshev_polynomial_u", _cheb_kernel("u", True))
special_shifted_chebyshev_polynomial_v = _poly_op("special_shifted_chebyshev_polynomial_v", _cheb_kernel("v", True))
special_shifted_chebyshev_polynomial_w = _poly_op("special_shifted_chebyshev_polynomial_w", _cheb_kernel("w", True))
special_hermite_polynomial_h = _poly_op("special_hermite_polynomial_h", lambda x, n: _hermite(x, n, True))
special_hermite_polynomial_he = _poly_op("special_hermite_polynomial_he", lambda x, n: _hermite(x, n, False))
special_laguerre_polynomial_l = _poly_op("special_laguerre_polynomial_l", _laguerre)
special_legendre_polynomial_p = _poly_op("special_legendre_polynomial_p", _legendre)
