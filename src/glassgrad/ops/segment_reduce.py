"""torch.segment_reduce: reductions (sum / mean / max / min / prod) over consecutive segments of one axis,
the segments given by `lengths` or `offsets` (batched over the leading dims); SegmentReduceBackward0 is
torch's _segment_reduce_backward (ties of max / min share the gradient; prod's zeros get the product of
the others), whose own derivative torch does not implement.  Everything runs on the data's device, sized by
shapes alone: the segments are scatters (ufunc.at) of the data rows into the output rows; the only reads of
values are torch's own checks and, on a device, the round count of prod's ordered product (_seg_prod).

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
    return t._data.astype(np.int64)


def _starts_ends(data, axis, lengths, offsets, unsafe):
    """(starts, ends) of the segments, shape (batch..., S), on the data's device, checked as torch checks them.
    The checks read values (torch's too: `lengths.min().item()`, `all(...).item()`, the CPU kernel's segment
    length check): each is one scalar read (a sync on a device), never a copy of the lengths."""
    if offsets is not None:
        seg = offsets
    elif lengths is not None:
        seg = lengths
    else:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if backend.device_of(data._data) != backend.device_of(seg._data):
        name = "offsets" if offsets is not None else "lengths"
        raise RuntimeError(f"Expected data.get_device() == {name}_value.get_device() to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")
    if data.ndim < seg.ndim:
        raise RuntimeError("Expected data.dim() >= lengths_value.dim() to be true, but got false.  (Could this error "
                           "message be improved?  If so, please report an enhancement request to PyTorch.)")
    if axis != seg.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}.")
    if offsets is None and not unsafe:
        lv = lengths._data
        if lv.size == 0:
            raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                               "reduction dim with the 'dim' argument.")
        if bool(lv.min() < 0):                                  # torch: lengths.min().item()
            raise RuntimeError("lengths contains negative value!")
        if bool((lv.sum(-1) != data.shape[axis]).any()):        # torch: all(lengths.sum(-1) == N).item()
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")
    if offsets is not None:
        off = _kernel_dtype(offsets, "_segment_reduce_offsets_cpu_kernel1")
        starts, ends = off[..., :-1], off[..., 1:]
        if bool((ends < starts).any()):                         # the check of torch's CPU kernel
            raise RuntimeError("Expected segment_length >= 0 to be true, but got false.  (Could this error message "
                               "be improved?  If so, please report an enhancement request to PyTorch.)")
        return starts, ends
    lv = _kernel_dtype(lengths, "_segment_reduce_lengths_cpu_kernel1")
    ends = np.cumsum(lv, -1)
    return ends - lv, ends


class _Layout:
    """Where each element goes, on the data's device and sized by shapes alone: data as (B*N, R) rows, output as
    (B*S, R) rows plus a last, dropped row that takes the data rows in no segment; `gid` the output row of each
    data row, `valid` whether it is in a segment, `count` each segment's length, `first` / `size` the data rows
    each segment covers (its first row, and how many lie inside the data)."""

    def __init__(self, shape, axis, starts, ends):
        self.shape, self.axis = shape, axis
        B = int(np.prod(shape[:axis], dtype=np.int64))
        N, S = shape[axis], starts.shape[-1]
        self.R = int(np.prod(shape[axis + 1:], dtype=np.int64))
        self.B, self.N, self.S = B, N, S
        st = np.broadcast_to(starts, shape[:axis] + (S,)).reshape(B, S)
        en = np.broadcast_to(ends, shape[:axis] + (S,)).reshape(B, S)
        self.count = (en - st).reshape(-1)
        b = np.arange(B, like=st)[:, None]
        lo, hi = np.clip(st, 0, N), np.clip(en, 0, N)
        self.first = (lo + b * N).reshape(-1)
        self.size = np.maximum(hi - lo, 0).reshape(-1)
        # row n of batch b is in segment s = #{ends <= n} (a histogram of the ends, summed up) if starts[s] <= n
        h = np.zeros(B * (N + 1), np.int64, like=st)
        np.add.at(h, (hi + b * (N + 1)).reshape(-1), 1)
        s = np.cumsum(h.reshape(B, N + 1)[:, :N], -1)
        if S:
            valid = (s < S) & (np.arange(N, like=st) >= np.take_along_axis(st, np.minimum(s, S - 1), -1))
        else:
            valid = np.zeros((B, N), bool, like=st)
        self.valid = valid.reshape(-1)
        self.gid = np.where(valid, s + b * S, B * S).reshape(-1)
        self.out_shape = shape[:axis] + (S,) + shape[axis + 1:]


def _seg_prod(out, x, lay):
    """out[gid[i]] *= x[i] for the rows i in order (ufunc.at's order: torch's loop over each segment)."""
    if out.__class__ is np.ndarray:
        np.multiply.at(out, lay.gid, x)
        return out
    # a device has no multiply.at: round k multiplies in the k-th row of every segment (torch's CUDA kernel walks
    # each segment in one thread); the number of rounds, the longest segment, is one scalar read
    rounds = int(lay.size.max()) if lay.size.size and x.shape[0] else 0
    o = out[:-1]
    for k in range(rounds):
        take = (k < lay.size)[:, None]
        o[...] = np.where(take, o * x[np.minimum(lay.first + k, x.shape[0] - 1)], o)
    return out


def _forward(a, lay, red, initial):
    x = a.reshape(lay.B * lay.N, lay.R)
    init = {"sum": 0, "mean": 0, "prod": 1, "max": -np.inf, "min": np.inf}[red] if initial is None else initial
    out = np.full((lay.B * lay.S + 1, lay.R), init, a.dtype, like=a)
    with np.errstate(all="ignore"):
        if red == "prod":
            _seg_prod(out, x, lay)
        else:
            uf = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum}[red]
            uf.at(out, lay.gid, x)
        out = out[:-1]
        if red == "mean":
            c = lay.count[:, None]
            empty = np.broadcast_to(c == 0, out.shape)
            out = np.where(empty, np.nan if initial is None else out, out / np.maximum(c, 1).astype(a.dtype))
    return out.astype(a.dtype, copy=False)


def _exclusive_prod(x, special, lay, initial):
    """The product of the other elements of the segment, in order from `initial`, at each zero / NaN (`special`)
    element: torch's loop, without one.  The first zero / NaN of a segment (per column) gets the segment's
    product with itself as 1 -- multiplying by 1 is exact, so that is the product of the others in order.  A
    later one's others hold the first, a 0 or NaN: their product is the product up to and including the first
    (A: ±0 or NaN), then times each later other y, which keeps ±0 (sign flipped by y's sign bit) for finite y
    and gives NaN for an infinite or NaN y."""
    dt = x.dtype
    init = 1 if initial is None else initial
    sp = special.astype(np.int64)
    before = np.concatenate([np.zeros((1, lay.R), np.int64, like=sp), np.cumsum(sp, 0)])   # specials in rows < i
    start = np.concatenate([before[lay.first], np.zeros((1, lay.R), np.int64, like=sp)])   # ... < segment start
    rank = before[1:] - start[lay.gid]                  # zeros / NaNs of the segment up to the row, itself included
    first = special & (rank == 1)
    after = (rank - sp) >= 1                            # rows past the segment's first zero / NaN
    shape = (lay.B * lay.S + 1, lay.R)
    p1 = _seg_prod(np.full(shape, init, dt, like=x), np.where(first, np.ones((), dt, like=x), x), lay)
    pa = _seg_prod(np.full(shape, init, dt, like=x), np.where(after, np.ones((), dt, like=x), x), lay)[lay.gid]
    bad, neg = (~np.isfinite(x) & after).astype(np.int64), (np.signbit(x) & after).astype(np.int64)
    nbad, nneg = np.zeros(shape, np.int64, like=sp), np.zeros(shape, np.int64, like=sp)
    np.add.at(nbad, lay.gid, bad)
    np.add.at(nneg, lay.gid, neg)
    nan = np.isnan(pa) | (nbad[lay.gid] - bad > 0)
    sign = np.signbit(pa) ^ ((nneg[lay.gid] - neg) % 2 == 1)
    later = np.where(nan, np.nan, np.where(sign, -0.0, 0.0)).astype(dt)
    return np.where(first, p1[lay.gid], later)


def _backward(g, a, out, lay, red, initial):
    """torch's _segment_reduce_backward on arrays: the gradient of `a` (data) given the output's `g`."""
    dt = a.dtype
    pad = np.zeros((1, lay.R), dt, like=a)              # the dropped row of the data rows in no segment
    g = np.concatenate([g.reshape(lay.B * lay.S, lay.R), pad])
    out = np.concatenate([out.reshape(lay.B * lay.S, lay.R), pad])
    x = a.reshape(lay.B * lay.N, lay.R)
    gs, os = g[lay.gid], out[lay.gid]
    with np.errstate(all="ignore"):
        if red == "sum":
            gx = gs
        elif red == "mean":
            count = np.concatenate([lay.count, np.ones(1, np.int64, like=lay.count)])
            gx = gs / count[lay.gid][:, None].astype(dt)
        elif red in ("max", "min"):
            hit = (x == os) | np.isnan(x)
            n = np.zeros(out.shape, np.int64, like=x)
            np.add.at(n, lay.gid, hit.astype(np.int64))
            gx = np.where(hit, gs / np.maximum(n[lay.gid], 1).astype(dt), 0)
        else:
            gx = (gs * os) / x
            special = ((x == 0) | np.isnan(x)) & lay.valid[:, None]
            if x.__class__ is not np.ndarray or special.any():     # (a device skips the sync of the test)
                gx = np.where(special, gs * _exclusive_prod(x, special, lay, initial), gx)
    full = np.where(lay.valid[:, None], gx, 0).astype(dt, copy=False)
    return full.reshape(lay.shape)


class SegmentReduceBackward0(Node):
    __slots__ = ("lay", "red", "initial")
    _saved_names = ("data", "result")

    def backward(self, ns, g):
        x, y = ns.unpack(self)
        if ns.is_tensor_mode:       # torch has no derivative of _segment_reduce_backward
            gx = _backward(g._data, x._data, y._data, self.lay, self.red, self.initial)
            node = NotImplementedNode(tuple(edge(t) for t in (g, x) if t._rg))
            node.what = "aten::_segment_reduce_backward"
            rg = grad.enabled and (g._rg or x._rg)
            return (make(gx, rg, node if rg else None),)
        return (_backward(g, x, y, self.lay, self.red, self.initial),)


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
    work = a.astype(np.float32) if a.dtype.kind == "V" else a       # bfloat16 computed in float32
    lay = _Layout(a.shape, axis, starts, ends)
    y = _forward(work, lay, red, initial).reshape(lay.out_shape).astype(a.dtype)
    if data._rg and grad.enabled:
        n = SegmentReduceBackward0((edge(data),))
        n.lay, n.red, n.initial = lay, red, initial
        out = make(y, True, n)
        n._saved = (save_in(data), save_out(out))
        return out
    return make(y)
