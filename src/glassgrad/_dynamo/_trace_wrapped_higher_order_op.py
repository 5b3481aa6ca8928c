"""torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex: while it is entered (on this thread),
``t[i]`` / ``t[i, j]`` whose index leaves are all ints or tensors index through advanced indexing -- each int
becomes a 0-d int64 tensor -- so the result is a copy (``ModIndexBackward``, torch's ``mod_index``), never a
view made from a scalar.
torch does this with a TorchFunctionMode; glassgrad's ops do not dispatch through ``__torch_function__``, so the
mode puts its ``__getitem__`` on Tensor while some thread is inside one and consults a thread-local depth.
(transformers imports it for its vmap-made attention masks, ``masking_utils.sdpa_mask``.)"""
import threading

from .._dtype import int64
from .._tensor import Tensor
from ..autograd import Function
from ..autograd.grad_mode import no_grad
from ..ops.creation import tensor, zeros

__all__ = ["TransformGetItemToIndex"]

_local = threading.local()
_installed = {"count": 0, "original": None}
_lock = threading.Lock()


def _leaves(index):
    if isinstance(index, (tuple, list)):
        return [x for item in index for x in _leaves(item)]
    return [index]


def _getitem(self, index):
    original = _installed["original"]
    if getattr(_local, "depth", 0) > 0:
        leaves = _leaves(index)
        if all(isinstance(x, (Tensor, int)) for x in leaves):
            if not leaves:
                raise IndexError("at least one index must be provided")
            converted = tuple(tensor(x, dtype=int64, device=self.device) if isinstance(x, int) else x
                              for x in leaves)
            return ModIndex.apply(self, converted)
    return original(self, index)


class ModIndex(Function):
    """torch's mod_index: x[indices] by advanced indexing; the gradient scatters back (accumulating repeats)."""

    @staticmethod
    def forward(ctx, x, indices):
        ctx.save_for_backward(*[i for i in indices])
        ctx.shape = x.shape
        with no_grad():      # 0-d indices select a view; advanced indexing copies (same values)
            y = _installed["original"](x, indices)
            return y.clone() if y._base is not None else y

    @staticmethod
    def backward(ctx, g):
        return zeros(ctx.shape, dtype=g.dtype, device=g.device).index_put_(ctx.saved_tensors, g, accumulate=True), None


class TransformGetItemToIndex:
    """A context manager (torch's is a TorchFunctionMode): indexing by ints and tensors inside it is advanced
    indexing."""

    def __enter__(self):
        with _lock:
            if _installed["count"] == 0:
                _installed["original"] = Tensor.__getitem__
                Tensor.__getitem__ = _getitem
            _installed["count"] += 1
        _local.depth = getattr(_local, "depth", 0) + 1
        return self

    def __exit__(self, *exc):
        _local.depth -= 1
        with _lock:
            _installed["count"] -= 1
            if _installed["count"] == 0:
                Tensor.__getitem__ = _installed["original"]
        return False
