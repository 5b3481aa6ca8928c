"""Complex tensors: their parts, their conjugate, and building them from real ones.

ops: view_as_real view_as_complex real imag conj conj_physical conj_physical_ resolve_conj resolve_neg
     is_conj is_neg angle polar complex is_complex

Gradients follow PyTorch's convention (conjugate Wirtinger derivatives): for a real loss L of a complex z,
z.grad is dL/d(Re z) + i dL/d(Im z); a holomorphic f passes gy * conj(f'(z)) back (ops/unary.py's _Unary,
arithmetic's mul / div / pow).  `real` and `imag` are `view_as_real(z).select(-1, 0 / 1)`, as in PyTorch
(grad_fn SelectBackward0), so they are writable views of z.

The conjugate bit: PyTorch's `conj()` is a lazy view (a flag on the tensor).  Here `conj()` of a complex
tensor is a new array with the flag set in `_extra` (`is_conj()` is True, `resolve_conj()` gives a copy
without it, `view_as_real` refuses it as PyTorch does); what differs is that writing into it does not
write into the original.
"""
import numpy as np

from .. import _dtype, backend
from ._core import make, edge, save_in, save_out, grad, _inplace
from ..autograd.graph import Node
from .views import _view_op, _ViewNode, mT
from .slicing import select
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["view_as_real", "view_as_complex", "real", "imag", "conj", "conj_physical", "conj_physical_",
           "resolve_conj", "resolve_neg", "is_conj", "is_neg", "angle", "polar", "complex", "is_complex", "adjoint"]


def _name(a):
    return _dtype.from_numpy_dtype(a.dtype).name_c


def is_complex(input):
    return input._data.dtype.kind == "c"


def _flag(x, key):
    return x._extra is not None and x._extra.get(key, False)


def is_conj(input):
    return _flag(input, "conj")


def is_neg(input):
    return _flag(input, "neg")


# -- view_as_real / view_as_complex ----------------------------------------------------------------------
def _real_view(a):
    """The (..., 2) real view of complex array `a` (real and imaginary parts interleaved in memory)."""
    r = a.real
    return backend.as_strided(r, a.shape + (2,), r.strides + (r.itemsize,))


def _complex_view(a):
    """The complex view of a real array whose last dimension is (real, imag) with stride 1."""
    ct = np.complex64 if a.dtype == np.float32 else np.complex128
    # NumPy's view() with a wider dtype needs a contiguous last axis: view the (..., 2) pairs, drop the axis
    return a.view(ct)[..., 0]


class ViewAsRealBackward0(_ViewNode):    # y = view_as_real(z); dz = view_as_complex(gy)
    __slots__ = ()

    def backward(self, ns, g):
        return (ns.view_as_complex(g),)


class ViewAsComplexBackward0(_ViewNode):     # z = view_as_complex(x); dx = view_as_real(gz)
    __slots__ = ()

    def backward(self, ns, g):
        return (ns.view_as_real(g),)


def view_as_real(input):
    a = input._data
    if a.dtype.kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To resolve the conjugate "
                           "tensor so you can view it as real, use self.resolve_conj(); however, be warned that "
                           "the resulting tensor will NOT alias the original.")
    return _view_op(input, _real_view(a), ViewAsRealBackward0, _real_view)


def view_as_complex(input):
    if _acs.on:
        return _ac.fp32(view_as_complex, input)
    a = input._data
    if a.dtype == np.float16:
        raise TypeError("glassgrad has no complex32 (chalf) tensors: view_as_complex of a Half tensor would make one")
    if a.dtype not in (np.float32, np.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a "
                           f"tensor of scalar type: {_name(a)}")
    if a.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if a.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    st = input.stride()
    if st[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in st[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if input.storage_offset() % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _view_op(input, _complex_view(a), ViewAsComplexBackward0, _complex_view)


def real(input):
    if input._data.dtype.kind != "c":
        return input
    return select(view_as_real(_resolved(input)), -1, 0)


def imag(input):
    if input._data.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    if is_conj(input):          # PyTorch: the imaginary part of a lazy conjugate is a negated view
        out = select(view_as_real(_resolved(input)), -1, 1)
        out._extra_dict()["neg"] = True
        return out
    return select(view_as_real(input), -1, 1)


def _resolved(x):
    return resolve_conj(x) if is_conj(x) else x


# -- the conjugate ------------------------------------------------------------------------------------
class ConjBackward0(Node):          # y = conj(z); dz = conj(gy)
    __slots__ = ()

    def backward(self, ns, g):
        return (ns.conj(g),)


class ConjPhysicalBackward0(ConjBackward0):
    __slots__ = ()


def _conj(input, cls):
    y = np.conj(input._data)
    if input._rg and grad.enabled:
        return make(y, True, cls((edge(input),)))
    return make(y)


def conj(input):
    if input._data.dtype.kind != "c":
        return input
    if is_conj(input):          # the conjugate of a lazy conjugate: the original values, flag cleared
        return _conj(input, ConjBackward0)
    out = _conj(input, ConjBackward0)
    out._extra_dict()["conj"] = True
    return out


def adjoint(input):
    """torch.adjoint: the conjugate transpose of the last two dims (replaces ops/views.py's in the namespace)."""
    return conj(mT(input))


def conj_physical(input):
    if input._data.dtype.kind != "c":
        return input
    return _conj(input, ConjPhysicalBackward0)


def conj_physical_(input):
    if input._data.dtype.kind != "c":
        return input
    return _inplace(conj_physical, input)


class CloneBackward0(Node):          # resolve_conj / resolve_neg: a materialized copy; dx = gy
    __slots__ = ()

    def backward(self, ns, g):
        return (g,)


def _copy(input):
    if input._rg and grad.enabled:
        return make(input._data.copy(), True, CloneBackward0((edge(input),)))
    return make(input._data.copy())


def resolve_conj(input):
    return _copy(input) if is_conj(input) else input


def resolve_neg(input):
    return _copy(input) if is_neg(input) else input


# -- angle / polar / complex ----------------------------------------------------------------------------
class AngleBackward0(Node):         # y = angle(z); dz = gy * z / |z|^2 * i (0 at z = 0); real x: dx = 0
    __slots__ = ()
    _saved_names = ("self",)

    def backward(self, ns, g):
        z, = ns.unpack(self)
        zd = ns.data(z)
        if zd.dtype.kind != "c":
            return (g * 0,)
        r = g * z / ns.square(ns.abs(z)) * 1j
        return (ns.where(ns.const(zd == 0, r), r * 0, r),)


def angle(input, *, out=None):
    a = input._data
    if a.dtype.kind == "c":
        y = np.angle(a).astype(a.real.dtype)
    else:
        f = a if a.dtype.kind in "fV" else a.astype(_dtype._default[0].np)
        y = np.where(np.isnan(f), f, np.where(f < 0, np.pi, 0.0)).astype(f.dtype)   # PyTorch: pi for x < 0
    if input._rg and grad.enabled:
        n = AngleBackward0((edge(input),))
        n._saved = (save_in(input),)
        return make(y, True, n)
    return make(y)


def _two_real(fn, a, b, fn_name="complex"):
    ad, bd = a._data, b._data
    ok = (np.float16, np.float32, np.float64)
    if ad.dtype not in ok or bd.dtype not in ok:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_name(ad)} and "
                           f"{_name(bd)}")
    if ad.dtype != bd.dtype:
        raise RuntimeError(f"Expected object of scalar type {_name(ad)} but got scalar type {_name(bd)} for "
                           "second argument")
    if ad.dtype == np.float16:
        if fn_name == "polar":
            raise NotImplementedError("\"polar_cpu\" not implemented for 'Half'")
        raise TypeError("glassgrad has no complex32 (chalf) tensors")
    ct = np.complex64 if ad.dtype == np.float32 else np.complex128
    from ._core import broadcast_shape
    shape = broadcast_shape(ad.shape, bd.shape)
    out = np.empty(shape, ct, like=ad)
    re, im = fn(ad, bd)
    out.real[...], out.imag[...] = re, im          # (views: CuPy's arrays have no .real setter)
    return out


class PolarBackward0(Node):         # y = abs * exp(i angle); d abs = Re(conj(gy) sgn(y)), d angle = Re(conj(gy) i y)
    __slots__ = ("shapes",)
    _saved_names = ("result",)

    def backward(self, ns, g):
        y, = ns.unpack(self)
        gc = ns.conj(g)
        ga = ns.real(gc * ns.sgn(y)) if self.next_functions[0][0] is not None else None
        gt = ns.real(gc * (y * 1j)) if self.next_functions[1][0] is not None else None
        return _reduce(ns, (ga, gt), self.shapes)


def _reduce(ns, gs, shapes):
    return tuple(None if g is None else ns.sum_to(g, s) for g, s in zip(gs, shapes))


def polar(abs, angle, *, out=None):
    if _acs.on:
        return _ac.fp32(polar, abs, angle, out=out)
    y = _two_real(lambda r, t: (r * np.cos(t), r * np.sin(t)), abs, angle, "polar")
    if grad.enabled and (abs._rg or angle._rg):
        n = PolarBackward0((edge(abs), edge(angle)))
        n.shapes = (abs._data.shape, angle._data.shape)
        out = make(y, True, n)
        n._saved = (save_out(out),)
        return out
    return make(y)


class ComplexBackward0(Node):       # z = re + i im; d re = Re(gz), d im = Im(gz)
    __slots__ = ("shapes",)
    _saved_names = ("real", "imag")

    def backward(self, ns, g):
        gr = ns.real(g) if self.next_functions[0][0] is not None else None
        gi = ns.imag(g) if self.next_functions[1][0] is not None else None
        return _reduce(ns, (gr, gi), self.shapes)


def complex(real, imag, *, out=None):
    y = _two_real(lambda r, i: (r, i), real, imag)
    if grad.enabled and (real._rg or imag._rg):
        n = ComplexBackward0((edge(real), edge(imag)))
        n.shapes = (real._data.shape, imag._data.shape)
        return make(y, True, n)
    return make(y)
