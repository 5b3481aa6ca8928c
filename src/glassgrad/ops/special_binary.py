"""torch.special's two-operand functions with gradients: xlog1py, zeta (and igamma / igammac, gammainc /
gammaincc, in special_igamma.py's kernels).

ops: special_xlog1py special_zeta igamma igamma_ igammac igammac_

Each takes a Tensor or a number on either side (torch's Scalar overloads, with their own node names:
SpecialXlog1PyBackward1 for a number first, ...2 for a number second); integer operands compute in the default
float dtype.  Gradients as PyTorch's: d/dx x log1p(y) = log1p(y) (0 where x = 0 and y <= -1), d/dy = x / (y + 1);
zeta's only through q (d/dq zeta(x, q) = -x zeta(x + 1, q)); igamma's only through x.
"""
import numpy as np

from .. import _dtype
from ._core import _OneEdge, as_array, Tensor, full_precision, make, edge, NO_EDGE, save_in, grad, binary_operands, _Binary, _binary_node, \
    _needs_grad, _want, _bcast, _inplace
from . import special_kernels as K, special_igamma as G

__all__ = ["igamma", "igammac"]      # (igamma_, igammac_: Tensor methods only, as in torch)


def _operands(name, input, other):
    """(a array, b array, a tensor or None, b tensor or None) in the result dtype (floats for integers)."""
    if isinstance(input, Tensor):
        ad, bd, bt = binary_operands(input, other)
        at = input
    elif isinstance(other, Tensor):
        bd, ad, _ = binary_operands(other, input)
        at, bt = None, other
    else:
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    arr = ad if at is not None else bd
    dt = arr.dtype if arr.dtype.kind in "fV" else _dtype._default[0].np
    return as_array(ad, dt), as_array(bd, dt), at, bt


def _binary_special(cls0, cls1, cls2, fwd, input, other, name, save=True, full=False):
    """The forward of a two-operand function `fwd` (arrays -> float64 or the dtype) with nodes cls0 (two
    tensors), cls1 (a number first), cls2 (a number second); `full`: torch's kernel has no float16 / bfloat16."""
    ad, bd, at, bt = _operands(name, input, other)
    if full:
        full_precision(name[len("special_"):] + "_cpu", ad.dtype)
    y = as_array(_bcast(lambda u, v: as_array(fwd(u, v)).astype(u.dtype, copy=False), ad, bd, input, other))
    if at is None:
        if not (bt._rg and grad.enabled):
            return make(y)
        n = cls1((edge(bt),) if issubclass(cls1, _OneEdge) else (NO_EDGE, edge(bt)))
        n.ashape = n.adt = None
        n.other, n.bshape, n.bdt = input, bd.shape, bt._data.dtype
        n._saved = (save_in(bt),)
        return make(y, True, n)
    if not _needs_grad(at, bt):
        return make(y)
    n = _binary_node(cls0 if bt is not None else cls2, at, other, bt)
    n._saved = (save_in(at), save_in(bt)) if bt is not None else (save_in(at),)
    return make(y, True, n)


def _unpack(node, ns):
    """(a, b) of a binary node: the saved tensors, a number where the operand was one."""
    if node.ashape is None:
        b, = ns.unpack(node)
        return node.other, b
    if node.bshape is None:
        a, = ns.unpack(node)
        return a, node.other
    return ns.unpack(node)


# -- xlog1py ------------------------------------------------------------------------------------------
def _xlog1py_arr(x, y):
    with np.errstate(all="ignore"):
        out = np.where(x == 0, np.zeros((), np.result_type(x, y)), x * np.log1p(y))
        return np.where(np.isnan(y), y, out)


class SpecialXlog1PyBackward0(_Binary):    # z = x log1p(y); dx = gy log1p(y); dy = gy x / (y + 1)
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, ns, g):
        a, b = _unpack(self, ns)
        ga = gb = None
        if self.ashape is not None and _want(self, 0):
            bd = ns.data(b) if isinstance(b, (np.ndarray, Tensor)) else as_array(b)
            ad = ns.data(a)
            z = np.broadcast_to((ad == 0) & (bd <= -1), g.shape)
            lb = ns.log(ns.where(ns.const(z, g), ns.ones_like(g), g * 0 + b + 1))
            ga = ns.mask(~z & ~np.broadcast_to(ns.data(g) == 0, g.shape), g * lb)
        if self.bshape is not None and _want(self, 1):
            gb = g * a / (b + 1)
        return self._red(ns, ga, gb)


class SpecialXlog1PyBackward1(_OneEdge, SpecialXlog1PyBackward0):     # x a number
    __slots__ = ()
    slot = 1


class SpecialXlog1PyBackward2(_OneEdge, SpecialXlog1PyBackward0):     # y a number
    __slots__ = ()


def special_xlog1py(input, other, *, out=None):
    return _binary_special(SpecialXlog1PyBackward0, SpecialXlog1PyBackward1, SpecialXlog1PyBackward2,
                           _xlog1py_arr, input, other, "special_xlog1py")


# -- zeta ---------------------------------------------------------------------------------------------
class SpecialZetaBackward0(_Binary):       # dq = -gy x zeta(x + 1, q); dx: not implemented (PyTorch's)
    __slots__ = ()
    _saved_names = ("self", "other")

    def backward(self, ns, g):
        a, b = _unpack(self, ns)
        if self.ashape is not None and _want(self, 0):
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        gb = g * -(ns.special_zeta(a + 1.0, b) * a) if self.bshape is not None else None
        return self._red(ns, None, gb)


class SpecialZetaBackward1(_OneEdge, SpecialZetaBackward0):     # x a number
    __slots__ = ()
    slot = 1


class SpecialZetaBackward2(_OneEdge, SpecialZetaBackward0):     # q a number
    __slots__ = ()


def special_zeta(input, other, *, out=None):
    return _binary_special(SpecialZetaBackward0, SpecialZetaBackward1, SpecialZetaBackward2, K.zeta_arr,
                           input, other, "special_zeta", full=True)


# -- igamma / igammac (gammainc / gammaincc) ------------------------------------------------------------
class IgammaBackward0(_Binary):            # P(a, x); dx = gy exp((a - 1) log x - x - lgamma(a)); da: none
    __slots__ = ()
    _saved_names = ("self", "other")
    _sign = 1.0
    _what = "igamma"

    def backward(self, ns, g):
        a, x = ns.unpack(self)
        if _want(self, 0):
            raise NotImplementedError(f"the derivative for '{self._what}: input' is not implemented.")
        la = ns.const(as_array(K.lgamma_arr(ns.data(a))).astype(ns.data(a).dtype), a)
        gx = g * ns.exp((a - 1) * ns.log(x) - x - la) * self._sign
        return self._red(ns, None, gx)


class IgammacBackward0(IgammaBackward0):   # Q(a, x) = 1 - P(a, x); dx = -(igamma's)
    __slots__ = ()
    _sign = -1.0
    _what = "igammac"


def _igamma_op(name, cls, kernel, label=None):
    """igamma / igammac (`label`: the name torch's argument errors give, special_gammainc for the alias)."""
    def fn(input, other, *, out=None):
        for i, v in enumerate((input, other)):
            if not isinstance(v, Tensor):
                raise TypeError(f"{label or name}(): argument '{('input', 'other')[i]}' (position {i + 1}) must be Tensor, "
                                f"not {type(v).__name__}")
        ad, bd, bt = binary_operands(input, other)
        if ad.dtype.kind not in "fV":
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{_dtype.from_numpy_dtype(ad.dtype).name_c}'")
        y = as_array(_bcast(lambda u, v: as_array(kernel(u, v)).astype(u.dtype, copy=False), ad, bd, input,
                              other))
        if _needs_grad(input, bt):
            n = _binary_node(cls, input, other, bt)
            n._saved = (save_in(input), save_in(bt))
            return make(y, True, n)
        return make(y)
    fn.__name__ = fn.__qualname__ = name
    return fn


igamma = _igamma_op("igamma", IgammaBackward0, G.igamma_arr)
igammac = _igamma_op("igammac", IgammacBackward0, G.igammac_arr)
special_gammainc = _igamma_op("igamma", IgammaBackward0, G.igamma_arr, "special_gammainc")
special_gammaincc = _igamma_op("igammac", IgammacBackward0, G.igammac_arr, "special_gammaincc")


def igamma_(x, other):
    return _inplace(igamma, x, other)


def igammac_(x, other):
    return _inplace(igammac, x, other)

