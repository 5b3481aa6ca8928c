"""gradcheck / gradgradcheck: compare the engine's gradients with central finite differences.

For every differentiable output o_i and every input x_j that requires grad, the analytical
Jacobian is built row by row with autograd.grad and the numerical one column by column by
nudging each element of x_j by +-eps.  Inputs are meant to be float64, as in PyTorch.
"""
import numpy as np

from .. import _tensor     # Tensor, read as _tensor.Tensor
from .grad_mode import no_grad, enable_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when the two Jacobians differ."""


def _tensors(x):
    if isinstance(x, _tensor.Tensor):
        return (x,)
    return tuple(x)


def _real_parts(o):
    """An output's values as real numbers (a complex element: its real and imaginary parts, in that order)."""
    a = o.detach().resolve_conj().numpy()
    if a.dtype.kind == "c":
        return np.stack([a.real, a.imag], -1).astype(np.float64).ravel()
    return a.astype(np.float64).ravel()


def _outputs(func, inputs):
    with no_grad():
        return [_real_parts(o) for o in _tensors(func(*inputs)) if isinstance(o, _tensor.Tensor)]


def _numerical(func, inputs, j, eps):
    """The columns d outputs / d input j (a complex element: d/d real part, then d/d imaginary part)."""
    data = inputs[j].detach().numpy()   # shares memory with the input: nudge in place
    steps = (1, 1j) if data.dtype.kind == "c" else (1,)
    cols = []
    for k in range(data.size):
        idx = np.unravel_index(k, data.shape)
        old = data[idx]
        for st in steps:
            data[idx] = old + eps * st
            plus = _outputs(func, inputs)
            data[idx] = old - eps * st
            minus = _outputs(func, inputs)
            data[idx] = old
            cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    return cols


def _analytical_rows(o, inputs, wrt, grad):
    """One row per real output number: the gradient of that number (PyTorch's convention for complex inputs:
    d/d real part + i d/d imaginary part, read back as the two real numbers)."""
    flat = o.reshape(-1)
    cplx = o.is_complex()
    rows = {j: [] for j in wrt}
    for k in range(flat.numel()):
        for go in ((1, 1j) if cplx else (1,)):      # the real part of the output, then its imaginary part
            if not o.requires_grad:
                gs = (None,) * len(wrt)
            else:
                seed = _tensor._make(np.asarray(go, dtype=o.detach().numpy().dtype))
                gs = grad(flat[k], [inputs[j] for j in wrt], seed, retain_graph=True, allow_unused=True)
            for j, g in zip(wrt, gs):
                n = inputs[j].numel() * (2 if inputs[j].is_complex() else 1)
                rows[j].append(np.zeros(n) if g is None else _real_parts(g))
    return rows


def _jacobians(func, inputs, eps):
    outs = [o for o in _tensors(func(*inputs)) if isinstance(o, _tensor.Tensor)]
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, _tensor.Tensor) and x.requires_grad]
    numerical = {}
    for j in wrt:
        cols = _numerical(func, inputs, j, eps)
        for i in range(len(outs)):
            numerical[(i, j)] = (np.stack([c[i] for c in cols], axis=1) if cols
                                 else np.zeros((_real_parts(outs[i]).size, 0)))
    from . import grad      # autograd.grad
    analytical = {}
    for i, o in enumerate(outs):
        rows = _analytical_rows(o, inputs, wrt, grad)
        for j in wrt:
            n = inputs[j].numel() * (2 if inputs[j].is_complex() else 1)
            analytical[(i, j)] = (np.stack(rows[j]) if rows[j] else np.zeros((0, n)))
    return numerical, analytical


def gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    inputs = _tensors(inputs)
    numerical, analytical = _jacobians(func, inputs, eps)
    for (i, j), num in numerical.items():
        ana = analytical[(i, j)]
        # numerical is (outputs x inputs); analytical rows are outputs too
        if num.shape != ana.shape or not np.allclose(ana, num, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            raise GradcheckError(f"Jacobian mismatch for output {i} with respect to input {j},\n"
                                 f"numerical:{num.T}\nanalytical:{ana.T}\n")
    return True


def _normal(rng, shape, dt):
    if np.dtype(dt).kind == "c":
        return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the function (inputs, grad_outputs) -> d<func(inputs), grad_outputs>/d inputs."""
    inputs = _tensors(inputs)
    outs = [o for o in _tensors(func(*inputs)) if isinstance(o, _tensor.Tensor) and o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_tensor._make(_normal(rng, tuple(o.shape), o.detach().numpy().dtype))
                             .requires_grad_(True) for o in outs)
    grad_outputs = _tensors(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        from . import grad      # autograd.grad
        xs, gos = args[:n], args[n:]
        with enable_grad():      # also when gradcheck evaluates it for finite differences
            ys = [o for o in _tensors(func(*xs)) if isinstance(o, _tensor.Tensor) and o.requires_grad]
            gs = grad(ys, [x for x in xs if isinstance(x, _tensor.Tensor) and x.requires_grad], gos,
                      create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)
    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
