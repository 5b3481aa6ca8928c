"""torch.segment_reduce: reductions (sum / mean / max / min / prod) over consecutive segments of one axis,
the segments given by `lengths` or `offsets` (batched over the leading dims); SegmentReduceBackward0 is
torch's _segment_reduce_backward (ties of max / min share the gradient; prod's zeros get the product of
the others), whose own derivative torch does not implement. The segment loops run on the host.

ops: segment_reduce
"""
import numpy as np

from .. import _args, _dtype, backend
from .._tensor import _wrap_dim
from ._core import make, edge, grad, save_in, save_out, NotImplementedNode
from ..autograd.graph import Node

__all__ = ["segment_reduce"]

_REDUCE = {"sum": "sum", "mean": "mean", "max": "max", "amax": "max", "min": "min", "amin": "min", "prod": "prod"}
_FLOAT = (np.float16, np.float32, np.float64)


def _kernel_dtype(t, kernel):
    if t._data.dtype not in (np.int32, np.int64):
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_dtype.c_name(t._data.dtype)}'")
    return backend.to_host(t._data).astype(np.int64)


def _starts_ends(data, axis, lengths, offsets, unsafe):
    """(starts, ends) of the segments, shape (batch..., S), checked as torch checks them."""
    if offsets is not None:
        seg = offsets
    elif lengths is not None:
        seg = lengths
    else:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if data.ndim < seg.ndim:
        raise RuntimeError("Expected data.dim() >= lengths_value.dim() to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    if axis != seg.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}.")
    if offsets is None and not unsafe:
        lv = backend.to_host(lengths._data)
        if lv.size == 0:
            raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               "reduction dim with the 'dim' argument.")
        if lv.min() < 0:
            raise RuntimeError("lengths contains negative value!")
        if (lv.sum(-1) != data.shape[axis]).any():
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")
    if offsets is not None:
        off = _kernel_dtype(offsets, "_segment_reduce_offsets_cpu_kernel1")
        starts, ends = off[..., :-1], off[..., 1:]
        if (ends < starts).any():
            raise RuntimeError("Expected segment_length >= 0 to be true, but got false.  (Could this error message "
                               "be improved?  If so, please report an enhancement request to PyTorch.)")
        return starts, ends
    lv = _kernel_dtype(lengths, "_segment_reduce_lengths_cpu_kernel1")
    ends = np.cumsum(lv, -1)
    return ends - lv, ends


class _Layout:
    """Where each element goes: data as (B*N, R) rows, output as (B*S, R); `pos` the data rows taken, `seg`
    the output row of each, `count` each segment's length."""

    def __init__(self, shape, axis, starts, ends):
        self.shape, self.axis = shape, axis
        B = int(np.prod(shape[:axis], dtype=np.int64))
        N, S = shape[axis], starts.shape[-1]
        self.R = int(np.prod(shape[axis + 1:], dtype=np.int64))
        self.B, self.N, self.S = B, N, S
        st = np.broadcast_to(starts, shape[:axis] + (S,)).reshape(B, S)
        en = np.broadcast_to(ends, shape[:axis] + (S,)).reshape(B, S)
        count = (en - st).reshape(-1)
        self.count = count
        self.seg = np.repeat(np.arange(B * S), count)
        first = (st + np.arange(B)[:, None] * N).reshape(-1)           # each segment's first data row
        excl = np.cumsum(count) - count
        self.pos = np.repeat(first - excl, count) + np.arange(count.sum())
        self.out_shape = shape[:axis] + (S,) + shape[axis + 1:]


def _forward(a, lay, red, initial):
    x = a.reshape(lay.B * lay.N, lay.R)[lay.pos]
    init = {"sum": 0, "mean": 0, "prod": 1, "max": -np.inf, "min": np.inf}[red] if initial is None else initial
    out = np.full((lay.B * lay.S, lay.R), init, a.dtype)
    uf = {"sum": np.add, "mean": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[red]
    with np.errstate(all="ignore"):
        uf.at(out, lay.seg, x)
        if red == "mean":
            c = lay.count[:, None]
            empty = np.broadcast_to(c == 0, out.shape)
            out = np.where(empty, np.nan if initial is None else out, out / np.maximum(c, 1).astype(a.dtype))
    return out.astype(a.dtype, copy=False)


def _backward(g, a, out, lay, red, initial):
    """torch's _segment_reduce_backward on arrays: the gradient of `a` (data) given the output's `g`."""
    g = g.reshape(lay.B * lay.S, lay.R)
    out = out.reshape(lay.B * lay.S, lay.R)
    x = a.reshape(lay.B * lay.N, lay.R)[lay.pos]
    gs, os = g[lay.seg], out[lay.seg]
    with np.errstate(all="ignore"):
        if red == "sum":
            gx = gs
        elif red == "mean":
            gx = gs / lay.count[lay.seg][:, None].astype(a.dtype)
        elif red in ("max", "min"):
            hit = (x == os) | np.isnan(x)
            n = np.zeros(out.shape, np.int64)
            np.add.at(n, lay.seg, hit.astype(np.int64))
            gx = np.where(hit, gs / np.maximum(n[lay.seg], 1).astype(a.dtype), 0)
        else:
            gx = (gs * os) / x
            special = (x == 0) | np.isnan(x)
            for r, c in zip(*np.nonzero(special)):          # zeros: the product of the others, in order
                s = lay.seg[r]
                rows = np.nonzero(lay.seg == s)[0]
                p = np.asarray(1 if initial is None else initial, a.dtype)
                for k in rows:
                    if k != r:
                        p = p * x[k, c]
                gx[r, c] = g[s, c] * p
    full = np.zeros((lay.B * lay.N, lay.R), a.dtype)
    full[lay.pos] = gx
    return full.reshape(lay.shape)


class SegmentReduceBackward0(Node):
    __slots__ = ("lay", "red", "initial", "dev")
    _saved_names = ("data", "result")

    def backward(self, ns, g):
        x, y = ns.unpack(self)
        if ns.is_tensor_mode:       # torch has no derivative of _segment_reduce_backward
            gx = _backward(backend.to_host(g._data), backend.to_host(x._data), backend.to_host(y._data), self.lay,
                           self.red, self.initial)
            node = NotImplementedNode(tuple(edge(t) for t in (g, x) if t._rg))
            node.what = "aten::_segment_reduce_backward"
            rg = grad.enabled and (g._rg or x._rg)
            return (make(backend.to_device(gx, self.dev), rg, node if rg else None),)
        gx = _backward(backend.to_host(g), backend.to_host(x), backend.to_host(y), self.lay, self.red, self.initial)
        return (backend.to_device(gx, self.dev),)


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    _args.tensor_arg(data, "segment_reduce", "data", 1)
    a = data._data
    axis = _wrap_dim(axis, max(a.ndim, 1))
    if indices is not None and lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    starts, ends = _starts_ends(data, axis, lengths, offsets, unsafe)
    if reduce not in _REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    red = _REDUCE[reduce]
    if a.dtype.type not in _FLOAT and a.dtype.kind != "V":
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for '{_dtype.c_name(a.dtype)}'")
    dev = backend.device_of(a)
    host = backend.to_host(a)
    work = host.astype(np.float32) if host.dtype.kind == "V" else host       # bfloat16 computed in float32
    lay = _Layout(a.shape, axis, starts, ends)
    y = _forward(work, lay, red, initial).reshape(lay.out_shape).astype(a.dtype)
    y = backend.to_device(y, dev)
    if data._rg and grad.enabled:
        n = SegmentReduceBackward0((edge(data),))
        n.lay, n.red, n.initial, n.dev = lay, red, initial, dev
        out = make(y, True, n)
        n._saved = (save_in(data), save_out(out))
        return out
    return make(y)
