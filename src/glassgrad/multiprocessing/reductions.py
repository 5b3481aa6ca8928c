"""How glassgrad tensors cross process boundaries: reducers registered with ``multiprocessing.reduction``'s
``ForkingPickler`` (the pickler of ``Queue``, ``Pipe``, ``Pool`` and the arguments of a spawned ``Process``).

A host tensor is sent as its shared buffer's file descriptor (``multiprocessing.reduction.DupFd``: inherited
by a child that is being started, otherwise sent over a Unix socket by the sender's resource sharer when the
receiver unpickles) plus its byte offset, shape, strides, dtype and ``requires_grad``; a tensor not yet in
shared memory is first moved there, in place, as in torch.  The receiver maps the descriptor (_shm.from_fd:
once per process, however often the memory arrives) and rebuilds the tensor on it, so writes on either side
are seen by the other.  A tensor whose memory is empty arrives as a new empty tensor.  ``.grad`` is not sent, and a non-leaf that requires grad is refused, as in torch.
Tensors on a device are pickled by value.
"""
import multiprocessing
import warnings
from multiprocessing import reduction

import numpy as np

from .. import _shm
from .._tensor import Tensor, _make
from ..nn.parameter import Parameter

try:
    # loaded now, so that a fork never copies it half-initialised (Queue pickles in a background thread)
    import multiprocessing.resource_sharer  # noqa: F401
except ImportError:
    pass

__all__ = ["reduce_tensor", "rebuild_tensor", "rebuild_empty", "init_reductions", "fd_id"]

_NONLEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not support "
            "crossing process boundaries.  If you just want to transfer the data, call detach() on the tensor "
            "before serializing (e.g., putting it on the queue).")


def fd_id(fd):
    """(inode, device) of a descriptor: one piece of shared memory has the same id in every process."""
    return _shm.file_key(fd)


def _warn_if_has_hooks(tensor):
    hooks = tensor._extra.get("hooks") if tensor._extra else None
    for hook in (hooks or {}).values():
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
                          "decorate the function with @torch.utils.hooks.unserializable_hook to suppress this "
                          "warning", stacklevel=2)


def reduce_tensor(tensor):
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError(_NONLEAF)
    _warn_if_has_hooks(tensor)
    a = tensor._data
    if a.__class__ is not np.ndarray:           # device memory: by value
        return tensor.__reduce_ex__(4)
    buf = _shm.buffer_of(a)
    if buf is None and _shm.root_nbytes(a) == 0:     # torch sends an empty storage as a new one, not shared
        return (rebuild_empty, (type(tensor), a.shape, a.strides, a.dtype, tensor.requires_grad))
    if buf is None:
        tensor.share_memory_()
        a = tensor._data
        buf = _shm.buffer_of(a)
    meta = (_shm.addr(a) - buf.addr, a.shape, a.strides, a.dtype, a.flags.writeable, tensor.requires_grad)
    return (rebuild_tensor, (type(tensor), multiprocessing.reduction.DupFd(buf.fd), buf.nbytes, meta))


def rebuild_tensor(cls, df, nbytes, meta):
    offset, shape, strides, dtype, writeable, requires_grad = meta
    buf = _shm.from_fd(df.detach(), nbytes)
    arr = np.ndarray(shape, dtype, buffer=buf.array(), offset=offset, strides=strides)
    if not writeable:
        arr.flags.writeable = False
    t = _make(arr)
    if cls is Parameter:
        return Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def rebuild_empty(cls, shape, strides, dtype, requires_grad):
    arr = np.lib.stride_tricks.as_strided(np.empty(0, dtype), shape, strides, writeable=True)
    t = _make(arr)
    if cls is Parameter:
        return Parameter(t, requires_grad=requires_grad)
    t.requires_grad = requires_grad
    return t


def init_reductions():
    for cls in (Tensor, Parameter):
        reduction.register(cls, reduce_tensor)
