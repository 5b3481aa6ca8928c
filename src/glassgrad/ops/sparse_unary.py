"""Zero-preserving unary ops on sparse COO tensors: abs sin sinh tan tanh asin asinh atan atanh sqrt expm1
log1p relu sign sgn floor ceil round trunc frac deg2rad rad2deg square erf erfinv nan_to_num, pow(number), and
the tests isnan isinf signbit isposinf isneginf (no gradient).

As torch: the input is coalesced first and the dense op runs on the values (its dtype rules: sin of an int
tensor is float); the result is coalesced.  The nodes carry torch's dense names (``SinBackward0``, ...).  Where
torch's sparse backward works (abs log1p relu frac deg2rad rad2deg pow square, and the zero gradients of sign
floor ceil round trunc) the gradient is sparse on the input's coalesced pattern; where torch's backward fails
(it calls a dense-only kernel on the sparse gradient) the node raises torch's error.
"""
import numpy as np

from .._sparse_coo import COO, coalesce as _coalesce, gather, empty as empty_coo
from .._sparse_tensor import make_sparse, register, not_on_sparse
from ._core import Node, Tensor, make, edge, grad, as_array
from . import unary as _unary, arithmetic as _arith, compare as _compare
from .sparse import grad_in, grads_out

__all__ = []


def _node(name, derivative=None, error=None):
    """The node class `name`: gradient = g * derivative(x, y) on the coalesced pattern ("zero": an empty sparse
    gradient), or `error(shape)` raised as torch's backward raises it."""
    class SparseUnaryNode(Node):
        __slots__ = ("x", "y", "exponent")

        def backward(self, ns, g):
            x, y = self.x, self.y
            if error is not None:
                raise error(x.shape)
            if derivative == "zero":
                return grads_out(ns, empty_coo(x.sparse_dim, x.shape, x.values.dtype, x.values))
            gv = gather(grad_in(ns, g), x.indices, x.shape[:x.sparse_dim])
            d = as_array(derivative(x.values, y.values, self))
            return grads_out(ns, COO(x.indices, (gv * d).astype(x.values.dtype, copy=False), x.shape, True))
    SparseUnaryNode.__name__ = SparseUnaryNode.__qualname__ = name
    return SparseUnaryNode


def _not_on_sparse(op):
    return lambda shape: not_on_sparse(op)


def _add_sparse_dense(shape):
    return RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")


def _memory_format(shape):
    return RuntimeError("memory format option is only supported by strided tensors")


def _division(shape):
    return RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor (got shape "
                        f"{list(shape)} for divisor)")


AbsBackward0 = _node("AbsBackward0", lambda x, y, n: np.sign(x))
Log1PBackward0 = _node("Log1PBackward0", lambda x, y, n: 1 / (1 + x))
ReluBackward0 = _node("ReluBackward0", lambda x, y, n: y > 0)
FracBackward0 = _node("FracBackward0", lambda x, y, n: 1)
Deg2RadBackward0 = _node("Deg2RadBackward0", lambda x, y, n: np.float32(np.pi / 180) if x.dtype == np.float32
                         else np.pi / 180)
Rad2DegBackward0 = _node("Rad2DegBackward0", lambda x, y, n: np.float32(180 / np.pi) if x.dtype == np.float32
                         else 180 / np.pi)
PowBackward0 = _node("PowBackward0", lambda x, y, n: n.exponent * x ** (n.exponent - 1))
SignBackward0 = _node("SignBackward0", "zero")
FloorBackward0 = _node("FloorBackward0", "zero")
CeilBackward0 = _node("CeilBackward0", "zero")
RoundBackward0 = _node("RoundBackward0", "zero")
TruncBackward0 = _node("TruncBackward0", "zero")
SinBackward0 = _node("SinBackward0", error=_not_on_sparse("cos"))
SinhBackward0 = _node("SinhBackward0", error=_not_on_sparse("cosh"))
TanhBackward0 = _node("TanhBackward0", error=_not_on_sparse("tanh_backward"))
TanBackward0 = _node("TanBackward0", error=_add_sparse_dense)
AsinBackward0 = _node("AsinBackward0", error=_add_sparse_dense)
AsinhBackward0 = _node("AsinhBackward0", error=_add_sparse_dense)
AtanBackward0 = _node("AtanBackward0", error=_add_sparse_dense)
Expm1Backward0 = _node("Expm1Backward0", error=_add_sparse_dense)
AtanhBackward0 = _node("AtanhBackward0", error=_memory_format)
SqrtBackward0 = _node("SqrtBackward0", error=_division)
ErfBackward0 = _node("ErfBackward0", error=_not_on_sparse("exp"))
ErfinvBackward0 = _node("ErfinvBackward0", error=_not_on_sparse("exp"))
SgnBackward0 = _node("SgnBackward0", error=_not_on_sparse("_efficientzerotensor"))
NanToNumBackward0 = _node("NanToNumBackward0", error=_not_on_sparse("ne.Scalar"))

_NODES = {"abs": AbsBackward0, "log1p": Log1PBackward0, "relu": ReluBackward0, "frac": FracBackward0,
          "deg2rad": Deg2RadBackward0, "rad2deg": Rad2DegBackward0, "sign": SignBackward0, "floor": FloorBackward0,
          "ceil": CeilBackward0, "round": RoundBackward0, "trunc": TruncBackward0, "sin": SinBackward0,
          "sinh": SinhBackward0, "tanh": TanhBackward0, "tan": TanBackward0, "asin": AsinBackward0,
          "asinh": AsinhBackward0, "atan": AtanBackward0, "expm1": Expm1Backward0, "atanh": AtanhBackward0,
          "sqrt": SqrtBackward0, "erf": ErfBackward0, "erfinv": ErfinvBackward0, "sgn": SgnBackward0,
          "nan_to_num": NanToNumBackward0}
NO_GRAD = ("isnan", "isinf", "signbit", "isposinf", "isneginf")
NAMES = tuple(_NODES) + NO_GRAD + ("square", "pow")


def _dense_fn(name):
    for m in (_unary, _arith, _compare):
        fn = getattr(m, name, None)
        if fn is not None:
            return fn
    raise AttributeError(name)


def _apply(input, name, node_cls, fn, *args, **kwargs):
    c = _coalesce(input._data)
    v = fn(make(c.values), *args, **kwargs)._data
    res = COO(c.indices, v, c.shape, True)
    if node_cls is not None and grad.enabled and input._rg:
        n = node_cls((edge(input),))
        n.x, n.y = c, res
        return make_sparse(res, True, n), n
    return make_sparse(res), None


def unary(name, input, *args, **kwargs):
    """`name` (one of NAMES but pow) of a sparse tensor."""
    if name == "square":
        return pow(input, 2)
    return _apply(input, name, _NODES.get(name), _dense_fn(name), *args, **kwargs)[0]


def pow(input, exponent):
    if isinstance(exponent, Tensor):
        raise not_on_sparse("pow.Tensor_Tensor")
    res, n = _apply(input, "pow", PowBackward0, _arith.pow, exponent)
    if n is not None:
        n.exponent = exponent
    return res


def _registered(name):
    return lambda input, *args, **kwargs: unary(name, input, *args, **kwargs)


def _relu(input, inplace=False):         # nn.functional.relu's signature (torch.relu has no `inplace`)
    if inplace:
        raise not_on_sparse("relu_")
    return unary("relu", input)


register(pow=pow, **{name: _registered(name) for name in NAMES if name not in ("pow", "relu")}, relu=_relu)
