"""The two namespaces a backward formula runs in.

Every op's backward is written once, as ``backward(self, ns, grad)``, with Python operators
(``*  +  -  /  **  @``) and the functions of ``ns``.  The engine passes

  * ``ARR`` -- gradients are raw arrays; the formula is plain NumPy (the fast, usual case);
  * ``TEN`` -- gradients are Tensors; the formula is built from glassgrad's own
    differentiable ops, so it is recorded and can be differentiated again
    (``create_graph=True``, higher-order gradients, gradgradcheck).

``use_namespaces`` (at the bottom) hands both to ``autograd.graph``, where the engine and ``Node``
find them: autograd imports no op.

Both namespaces offer the same functions with the same signatures.  Add a function to
both, in the section of your op family, when a formula needs one.
"""
import numpy as np

from ..autograd.graph import freed_error, check_saved as _check, use_namespaces
from ..autograd.saved_hooks import unpack_tensor
from .._blas import matmul as gemm
from .._tensor import Tensor, _make
from .._sparse_coo import COO
from .._sparse_tensor import make_sparse
from ._core import as_array, sum_to, _ARRAYS
from .scans import _cumsum
from .unary import erfinv_array
from . import special_kernels as SK
from . import view_writes as W, shape as S
from . import arithmetic as A, unary as U, ternary as T
from . import reduction as R, views as V, linalg as L, conversion as C, indexing as I
from . import einsum as ES
from . import special as SP, special_binary as SB
from . import complex as CX


_UINT_OF = {np.dtype(np.float16): np.uint16, np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def _device(x):
    """x when it is a device array (the like= of a constant beside it: CuPy takes no host array, not even 0-d),
    else None."""
    return x if x.__class__ is not np.ndarray and isinstance(x, _ARRAYS) else None


class ArrayNamespace:
    """Backward on raw arrays."""
    is_tensor_mode = False
    plain = True    # one gradient per array (explain's StackNS subclass stacks K; formulas with their own
                    # NumPy fast path test ns.plain)

    # -- saved tensors and hooks ---------------------------------------------------
    @staticmethod
    def unpack(node):
        saved = node._saved
        if saved is None:
            raise freed_error()
        if len(saved) == 1:         # the common case, without the comprehension
            return (_check(node, saved[0]),)
        return tuple([_check(node, s) for s in saved])

    @staticmethod
    def unpack_one(node, s):
        return _check(node, s)

    @staticmethod
    def to_tensor(g):
        if isinstance(g, COO):
            return make_sparse(g)
        return None if g is None else _make(g)

    @staticmethod
    def from_tensor(t):
        return None if t is None else t._data

    @staticmethod
    def data(g):
        return g

    # -- shapes ----------------------------------------------------------------------
    sum_to = staticmethod(sum_to)     # undo broadcasting: ops/_core.py's sum_to

    @staticmethod
    def expand(g, shape):
        return np.broadcast_to(g, shape)

    @staticmethod
    def reshape(g, shape):
        return g.reshape(shape)

    @staticmethod
    def permute(g, dims):
        return g.transpose(dims)

    @staticmethod
    def transpose(g, d0, d1):
        return g.swapaxes(d0, d1)

    @staticmethod
    def mT(g):
        return g.swapaxes(-1, -2)

    @staticmethod
    def unsqueeze(g, dim):
        return np.expand_dims(g, dim)

    @staticmethod
    def squeeze(g, dims):
        return g.squeeze(dims)

    @staticmethod
    def sum(g, dims, keepdim=False):
        if g.dtype.kind == "V":         # bfloat16: accumulated in float32, rounded once (as torch)
            return g.sum(axis=dims, keepdims=keepdim, dtype=np.float32).astype(g.dtype)
        return g.sum(axis=dims, keepdims=keepdim)

    @staticmethod
    def cast(g, npdtype):
        if g.dtype == npdtype:
            return g
        if g.dtype.kind == "c" and np.dtype(npdtype).kind != "c":     # a real input's gradient: the real part
            g = g.real
        return g.astype(npdtype)

    # -- complex (ops/complex.py) ----------------------------------------------------------------
    @staticmethod
    def conj(x):
        dt = getattr(x, "dtype", None)
        if dt is None:
            return x.conjugate() if isinstance(x, complex) else x
        return np.conj(x) if dt.kind == "c" else x

    @staticmethod
    def sgn(x):
        return U.sign_array(x)

    @staticmethod
    def real(x):
        return np.real(x)

    @staticmethod
    def imag(x):
        return np.imag(x)

    @staticmethod
    def view_as_real(g):
        return np.stack([g.real, g.imag], -1)

    @staticmethod
    def view_as_complex(g):
        return g[..., 0] + 1j * g[..., 1] if g.dtype == np.float64 else (g[..., 0] + 1j * g[..., 1]).astype(np.complex64)

    # -- values ----------------------------------------------------------------------
    @staticmethod
    def zeros(shape, like):
        return np.zeros(shape, like.dtype, like=like)

    @staticmethod
    def zeros_like(g):
        return np.zeros_like(g)

    @staticmethod
    def ones_like(g):
        return np.ones_like(g)

    @staticmethod
    def full_like(g, v):
        return np.full_like(g, v)

    @staticmethod
    def where(c, a, b):
        return np.where(c, a, b)

    @staticmethod
    def matmul(a, b):
        return gemm(a, b)

    @staticmethod
    def outer(a, b):
        return np.multiply.outer(a, b)

    exp = staticmethod(np.exp)
    log = staticmethod(np.log)
    sqrt = staticmethod(np.sqrt)
    sin = staticmethod(np.sin)
    cos = staticmethod(np.cos)
    tanh = staticmethod(np.tanh)
    abs = staticmethod(np.abs)
    sign = staticmethod(U.sign_array)
    square = staticmethod(np.square)
    reciprocal = staticmethod(np.reciprocal)

    @staticmethod
    def sigmoid(x):
        return 1 / (1 + np.exp(-x))

    @staticmethod
    def pow(a, b):
        return np.power(a, b)

    @staticmethod
    def mask(cond, g):
        """g where cond else 0 (cond is a boolean array, never differentiated).  For floats, a bitwise AND
        of g's bits with all-ones / all-zeros: the same result as np.where (NaN and inf where cond holds,
        +0.0 elsewhere) at ~1/10 of its cost on large random masks."""
        u = _UINT_OF.get(g.dtype)
        if cond.__class__ is not np.ndarray and g.__class__ is not np.ndarray:
            return np.where(cond, g, g.dtype.type(0))   # a device: one kernel (a 0-d zeros would be another)
        if u is None or g.size < 2048 or cond.__class__ is not np.ndarray or cond.dtype != np.bool_:
            return np.where(cond, g, np.zeros((), g.dtype, like=_device(g)))     # (one call: cheaper on small arrays)
        return np.bitwise_and(g.view(u), np.negative(cond.view(np.uint8), dtype=u)).view(g.dtype)

    @staticmethod
    def index_add_zeros(shape, index, g):
        """Zeros of `shape` with g added at an index (repeated indices accumulate)."""
        out = np.zeros(shape, g.dtype, like=g)
        np.add.at(out, index, g)
        return out

    @staticmethod
    def view_scatter(shape, view_fn, g, dtype=None):
        """Zeros of `shape` with g written into the view that view_fn selects."""
        out = np.zeros(shape, g.dtype if dtype is None else dtype, like=g if isinstance(g, _ARRAYS) else None)
        view_fn(out)[...] = g
        return out

    @staticmethod
    def view_fill(g, view_fn, value):
        """A copy of g with value written into view_fn's region."""
        out = g.copy()
        view_fn(out)[...] = value
        return out

    @staticmethod
    def apply_view(g, view_fn):
        return view_fn(g)

    @staticmethod
    def const(x, like):
        """A non-differentiable array (mask, index) in this namespace's form."""
        return x

    # -- linalg --
    @staticmethod
    def einsum(eq, *ops):
        return ES._np_einsum(eq, *ops)

    # -- shape --
    @staticmethod
    def stack(gs, dim=0):
        return np.stack(gs, dim)

    # -- reduction --
    @staticmethod
    def cumsum(g, dim, reverse=False):
        if reverse:
            return np.flip(np.cumsum(np.flip(g, dim), axis=dim), dim)
        return np.cumsum(g, axis=dim)

    # -- unary --
    @staticmethod
    def erfinv(x):
        return erfinv_array(x).astype(x.dtype)

    # -- special (ops/special.py) --
    @staticmethod
    def digamma(x):
        return SK.digamma_arr(x).astype(x.dtype)

    @staticmethod
    def polygamma(n, x):
        return SK.polygamma_arr(n, x).astype(x.dtype)

    @staticmethod
    def i0(x):
        return SK.i0_arr(x).astype(x.dtype)

    @staticmethod
    def special_i0e(x):
        return SK.i0e_arr(x).astype(x.dtype)

    @staticmethod
    def special_i1(x):
        return SK.i1_arr(x).astype(x.dtype)

    @staticmethod
    def special_i1e(x):
        return SK.i1e_arr(x).astype(x.dtype)

    @staticmethod
    def special_zeta(x, q):
        return SK.zeta_arr(x, q).astype(np.result_type(x, q))


class _TensorNS:
    """Backward with glassgrad Tensors: the formula is itself recorded (create_graph)."""
    is_tensor_mode = True
    plain = False

    @staticmethod
    def unpack(node):
        saved = node._saved
        if saved is None:
            raise freed_error()
        return tuple([_TensorNS.unpack_one(node, s) for s in saved])

    @staticmethod
    def unpack_one(node, s):
        if len(s) == 3:                  # through a saved-tensor unpack hook
            return unpack_tensor(node, s)
        _check(node, s)
        if len(s) == 2:
            return s[0]
        arr, vc, v, nr = s
        t = _make(arr, True, node, nr)   # a saved output is differentiable through its own node
        t._vc = vc
        return t

    @staticmethod
    def to_tensor(g):
        return g

    @staticmethod
    def from_tensor(t):
        return t

    @staticmethod
    def data(g):
        return g._data

    @staticmethod
    def sum_to(g, shape):
        if g._data.shape == tuple(shape):
            return g
        return V.sum_to_size(g, shape)

    @staticmethod
    def expand(g, shape):
        return V.expand(g, shape)

    @staticmethod
    def reshape(g, shape):
        return V.reshape(g, shape)

    @staticmethod
    def permute(g, dims):
        return V.permute(g, dims)

    @staticmethod
    def transpose(g, d0, d1):
        return V.transpose(g, d0, d1)

    @staticmethod
    def mT(g):
        return V.transpose(g, -1, -2)

    @staticmethod
    def unsqueeze(g, dim):
        return V.unsqueeze(g, dim)

    @staticmethod
    def squeeze(g, dims):
        return V.squeeze(g, dims)

    @staticmethod
    def sum(g, dims, keepdim=False):
        return R.sum(g, dims, keepdim)

    @staticmethod
    def cast(g, npdtype):
        if g._data.dtype == npdtype:
            return g
        if g._data.dtype.kind == "c" and np.dtype(npdtype).kind != "c":     # a real input's gradient: the real part
            g = CX.real(g)
        return C.to_dtype(g, C.dtype_of_np(npdtype))

    # -- complex (ops/complex.py) ----------------------------------------------------------------
    @staticmethod
    def conj(x):
        return CX.conj(x) if isinstance(x, Tensor) and x._data.dtype.kind == "c" else x

    @staticmethod
    def sgn(x):
        return U.sgn(x)

    @staticmethod
    def real(x):
        return CX.real(x)

    @staticmethod
    def imag(x):
        return CX.imag(x)

    @staticmethod
    def view_as_real(g):
        return CX.view_as_real(CX.resolve_conj(g.contiguous()))

    @staticmethod
    def view_as_complex(g):
        return CX.complex(g[..., 0], g[..., 1])

    @staticmethod
    def zeros(shape, like):
        arr = like._data if isinstance(like, Tensor) else like
        return _make(np.zeros(shape, arr.dtype, like=arr))

    @staticmethod
    def zeros_like(g):
        return _make(np.zeros_like(g._data))

    @staticmethod
    def ones_like(g):
        return _make(np.ones_like(g._data))

    @staticmethod
    def full_like(g, v):
        return _make(np.full_like(g._data, v))

    @staticmethod
    def where(c, a, b):
        return T.where(c if isinstance(c, Tensor) else _make(as_array(c)), a, b)

    @staticmethod
    def matmul(a, b):
        return L.matmul(a, b)

    @staticmethod
    def outer(a, b):
        return L.outer(a, b)

    @staticmethod
    def exp(x):
        return U.exp(x)

    @staticmethod
    def log(x):
        return U.log(x)

    @staticmethod
    def sqrt(x):
        return U.sqrt(x)

    @staticmethod
    def sin(x):
        return U.sin(x)

    @staticmethod
    def cos(x):
        return U.cos(x)

    @staticmethod
    def tanh(x):
        return U.tanh(x)

    @staticmethod
    def abs(x):
        return U.abs(x)

    @staticmethod
    def sign(x):
        return U.sign(x)

    @staticmethod
    def square(x):
        return A.square(x)

    @staticmethod
    def reciprocal(x):
        return U.reciprocal(x)

    @staticmethod
    def sigmoid(x):
        return U.sigmoid(x)

    @staticmethod
    def pow(a, b):
        return A.pow(a, b)

    @staticmethod
    def mask(cond, g):
        c = cond._data if isinstance(cond, Tensor) else cond
        return T.where(_make(as_array(c)), g, _make(np.zeros((), g._data.dtype, like=g._data)))

    @staticmethod
    def index_add_zeros(shape, index, g):
        return I.index_put_zeros(shape, index, g)

    @staticmethod
    def view_scatter(shape, view_fn, g, dtype=None):
        return W.view_scatter(shape, view_fn, g)

    @staticmethod
    def view_fill(g, view_fn, value):
        return W.view_fill(g, view_fn, value)

    @staticmethod
    def apply_view(g, view_fn):
        return W.apply_view(g, view_fn)

    @staticmethod
    def const(x, like):
        return x if isinstance(x, Tensor) else _make(as_array(x))

    # -- linalg --
    @staticmethod
    def einsum(eq, *ops):
        return ES.einsum(eq, *ops)

    # -- shape --
    @staticmethod
    def stack(gs, dim=0):
        return S.stack(gs, dim)

    # -- reduction --
    @staticmethod
    def cumsum(g, dim, reverse=False):
        return _cumsum(g, dim, None, reverse)

    # -- unary --
    @staticmethod
    def erfinv(x):
        return U.erfinv(x)

    # -- special (ops/special.py) --
    @staticmethod
    def digamma(x):
        return SP.digamma(x)

    @staticmethod
    def polygamma(n, x):
        return SP.polygamma(n, x)

    @staticmethod
    def i0(x):
        return SP.i0(x)

    @staticmethod
    def special_i0e(x):
        return SP.special_i0e(x)

    @staticmethod
    def special_i1(x):
        return SP.special_i1(x)

    @staticmethod
    def special_i1e(x):
        return SP.special_i1e(x)

    @staticmethod
    def special_zeta(x, q):
        return SB.special_zeta(x, q)


ARR = ArrayNamespace()
TEN = _TensorNS()
use_namespaces(ARR, TEN)     # the engine and Node take them from autograd.graph

