"""torch's `out=` argument: the result written into the tensor(s) the caller gave, which are returned.

torch.* functions take `out=`; the generated wrappers of the torch namespace (``_args.tensor_first`` /
``with_out``, given `write_out` by ``glassgrad/__init__``) compute the result as usual and hand it here, so an op
never sees `out`.  As torch's out= variants: a result that would need a gradient is refused, the result is cast
to out's dtype when torch's casting rules allow it, an out of another shape is resized (with torch's deprecation
warning unless it is empty), and a tuple result goes into a tuple of outs, returned as torch's `<name>_out`
return type.
"""
import warnings

from .._tensor import Tensor
from .. import _args, _dtype
from .sorting import _structseq

__all__ = ["write_out"]

_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does not match the "
            "required output shape {}. This behavior is deprecated, and in a future PyTorch release outputs will not "
            "be resized unless they have zero elements. You can explicitly reuse an out tensor t by resizing it, "
            "inplace, to zero elements with t.resize_(0). (Triggered internally at "
            "/__w/pytorch/pytorch/aten/src/ATen/native/Resize.cpp:30.)")


def write_out(name, res, out):
    """Write `res` (a tensor or a tuple of them) into `out`; return out as torch's out= variants do."""
    if isinstance(res, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(res):
            raise TypeError(f"{name}(): argument 'out' must be tuple of Tensors, not {_args.type_name(out)}")
        for r, o in zip(res, out):
            _one(name, r, o)
        fields = getattr(type(res), "_fields", None)
        return _structseq(type(res).__name__ + "_out", fields)(out) if fields else tuple(out)
    _one(name, res, out)
    return out


def _one(name, r, o):
    if not isinstance(o, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {_args.type_name(o)}")
    if not isinstance(r, Tensor):
        raise TypeError(f"{name}(): out= is not supported for a result that is not a tensor")
    if r._grad_fn is not None or r._rg:
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if r.dtype != o.dtype and not _dtype.can_cast(r.dtype, o.dtype):
        raise RuntimeError(f"result type {r.dtype.name_c} can't be cast to the desired output type {o.dtype.name_c}")
    if o._data.__class__ is not r._data.__class__ and o.device != r.device:     # (structured kernels' resize_out)
        raise RuntimeError(f"Expected out tensor to have device {r.device}, but got {o.device} instead")
    if tuple(o.shape) != tuple(r.shape):
        if o.numel():
            warnings.warn(_RESIZED.format(list(o.shape), list(r.shape)), UserWarning, stacklevel=4)
        o.resize_(tuple(r.shape))
    o.copy_(r)
