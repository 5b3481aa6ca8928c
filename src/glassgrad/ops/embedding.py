"""Embedding primitives: lookups of weight rows by index, and the one-hot encoding.

ops: embedding (EmbeddingBackward0), embedding_renorm_ (in place, no history),
     embedding_bag (EmbeddingBagBackward0; sum / mean / max bags), one_hot (no gradient)

The gradient of a lookup is the output gradient added back into the rows that were read
(padding rows skipped, optionally divided by how often each row was used).
"""
import math

import numpy as np

from .. import _cuda_kernels, _dtype
from .._cuda_kernels import seq as _k_seq

from ._core import make, edge, save_in, grad, check_inplace
from ..autograd.graph import Node, guard
from .gather_scatter import _index_select, _index_add_zeros
from .norm import _C, _saved_prop, _unpack, _want

# the torch-namespace functions (torch.embedding, torch.embedding_renorm_); nn.functional wraps them
__all__ = ["embedding", "embedding_renorm_"]


# -- embedding -------------------------------------------------------------------------------------
def _check_indices(indices, fn):
    d = indices._data.dtype
    if d not in (np.int64, np.int32):
        legacy = _dtype._FROM_NP[d]._legacy
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{legacy} instead (while checking arguments for {fn})")
    return indices._data.astype(np.int64, copy=False)


def _fused(g2):
    return g2.__class__ is not np.ndarray and g2.dtype in (np.float32, np.float64) and _cuda_kernels.available()


class EmbeddingBackward0(Node):       # dW = zeros with gy rows added at the indices (padding rows skipped)
    __slots__ = ("idx", "num_weights", "padding_idx", "scale_grad_by_freq", "sparse", "wshape")
    _saved_names = ()

    def backward(self, ns, g):
        idx = self.idx.reshape(-1)
        d = self.wshape[1]
        g2 = ns.reshape(g, (idx.size, d))
        if not ns.is_tensor_mode and _fused(g2):     # a GPU: one kernel, the same sums in the same order
            g2 = g2 if g2.flags.c_contiguous else g2.copy(order="C")
            return (_k_seq.embedding_backward(idx, g2, self.num_weights, self.padding_idx, self.scale_grad_by_freq),)
        keep = idx != self.padding_idx
        scale = None
        if self.scale_grad_by_freq and idx.size:
            counts = np.bincount(idx, minlength=self.num_weights)[idx]
            scale = (1.0 / counts).astype(ns.data(g2).dtype).reshape(-1, 1)
        if not keep.all():
            g2 = ns.mask(keep.reshape(-1, 1), g2)
        if scale is not None:
            g2 = g2 * _C(ns, scale, g2)
        return (_index_add_zeros(ns, self.wshape, 0, idx, g2),)

    @property
    def _saved_indices(self):
        return make(self.idx)

    @property
    def _saved_padding_idx(self):
        return self.padding_idx

    @property
    def _saved_scale_grad_by_freq(self):
        return self.scale_grad_by_freq

    @property
    def _saved_sparse(self):
        return self.sparse

    @property
    def _saved_weight_sym_argsize_0(self):
        return self.num_weights


def embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding(weight, indices, ...): rows of weight; gradient summed into the used rows."""
    idx = _check_indices(input, "embedding")
    w = weight._data
    if w.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    nw = w.shape[0]
    if (_fused(w) and idx.size and w.shape[1] and w.flags.c_contiguous and idx.flags.c_contiguous
            and idx.__class__ is w.__class__):     # a GPU: the check and the gather in one kernel, one sync
        y, bad = _k_seq.embedding_forward(w, idx)
        if int(bad[0]):
            raise IndexError("index out of range in self")
    else:
        if idx.size and (idx.min() < 0 or idx.max() >= nw):
            raise IndexError("index out of range in self")
        y = w[idx]
    if weight._rg and grad.enabled:
        node = EmbeddingBackward0((edge(weight),))
        guard(node, input)                  # torch saves the indices
        node.idx = idx.copy()
        node.num_weights, node.padding_idx = nw, int(padding_idx)
        node.scale_grad_by_freq, node.sparse, node.wshape = bool(scale_grad_by_freq), bool(sparse), w.shape
        return make(y, True, node)
    return make(y)


def embedding_renorm_(weight, input, max_norm, norm_type):
    """Rescale (in place, no history) the rows of weight used by input whose norm exceeds max_norm."""
    check_inplace(weight)
    idx = np.unique(_check_indices(input, "embedding_renorm_"))
    w = weight._data
    if idx.size and (idx.min() < 0 or idx.max() >= w.shape[0]):
        raise IndexError("index out of range in self")
    rows = w[idx].astype(np.float64)
    p = float(norm_type)
    if p == math.inf:
        norms = np.abs(rows).max(axis=1) if rows.shape[1] else np.zeros(len(idx), like=rows)
    elif p == 0:
        norms = (rows != 0).sum(axis=1).astype(np.float64)
    else:
        norms = (np.abs(rows) ** p).sum(axis=1) ** (1.0 / p)
    norms = norms.astype(w.dtype).astype(np.float64)     # torch computes the norm in the weight's dtype
    big = norms > max_norm
    if big.any():
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
        w[idx[big]] = (w[idx[big]] * scale[:, None]).astype(w.dtype)
    weight._vc[0] += 1
    return weight


# -- embedding bag ---------------------------------------------------------------------------------
class EmbeddingBagBackward0(Node):
    __slots__ = ("idx", "bag", "valid", "mode", "scale", "maxi", "wshape")
    _saved_names = ("weight", "per_sample_weights")
    _saved_per_sample_weights = _saved_prop(1)

    def backward(self, ns, g):
        saved = _unpack(ns, self)
        w, psw = saved[0], saved[1]
        idx, bag, valid = self.idx, self.bag, self.valid
        gw = gp = None
        if self.mode == 2:                      # max: each (bag, column) sends its grad to the argmax row
            if _want(self, 0):
                mi = self.maxi                  # (B, D), -1 for empty bags
                b, d = np.nonzero(mi >= 0)
                gsel = g[b, d] if not ns.is_tensor_mode else g[make(b), make(d)]
                gw = ns.index_add_zeros(self.wshape, (mi[b, d], d), gsel)
            return gw, None
        vi, vb = idx[valid], bag[valid]
        rows = _index_select(ns, g, 0, vb)       # (n_valid, D)
        if _want(self, 0):
            r = rows
            s = self.scale[valid] if self.scale is not None else None
            if psw is not None:
                pv = _index_select(ns, psw, 0, np.nonzero(valid)[0])
                r = r * ns.unsqueeze(pv, 1)
            if s is not None:
                r = r * _C(ns, s.reshape(-1, 1), r)
            gw = _index_add_zeros(ns, self.wshape, 0, vi, r)
        if psw is not None and _want(self, 1):
            wr = _index_select(ns, w, 0, vi)
            vals = ns.sum(rows * wr, (1,))
            n = idx.size
            gp = _index_add_zeros(ns, (n,), 0, np.nonzero(valid)[0], vals)
        return gw, gp


def _bag_freq(idx, nw):
    """The divisor torch 2.13's CPU embedding_bag backward applies per index value with
    scale_grad_by_freq: the k-th distinct value (ascending) is divided by the count of the value at
    position k of the sorted indices (a quirk of its kernel, reproduced so gradients match)."""
    counts = np.bincount(idx, minlength=nw)
    srt = np.sort(idx)
    uniq = np.unique(idx)
    div = np.ones(nw, np.float64, like=idx)
    div[uniq] = counts[srt[:uniq.size]]
    return div


def _embedding_bag(weight, input, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """torch.embedding_bag for 1-D input and offsets (the functional form flattens 2-D input)."""
    idx = _check_indices(input, "embedding_bag")
    offs = offsets._data.astype(np.int64)
    w = weight._data
    nw, d = w.shape
    n = idx.size
    if offs.size and offs[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {int(offs[0])}")
    if offs.size and offs[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
                           f"{int(offs[-1])}")
    if offs.size > 1 and (np.diff(offs) < 0).any():
        raise RuntimeError("Expected i < index_size to be true, but got false.  (Could this error message be "
                           "improved?  If so, please report an enhancement request to PyTorch.)")
    if n and (idx.min() < 0 or idx.max() >= nw):
        bad = int(np.nonzero((idx < 0) | (idx >= nw))[0][0])
        raise RuntimeError(f"Index {bad} of input takes value {int(idx[bad])} which is not in the valid range "
                           f"[0, {nw})")
    if padding_idx is not None and not -nw <= padding_idx < nw:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, {-nw} through {nw - 1}, but got "
                           f"{padding_idx}")
    starts = offs[:-1] if include_last_offset else offs
    nb = starts.size
    bag = np.searchsorted(starts, np.arange(n, like=idx), side="right") - 1 if n else np.zeros(0, np.int64, like=idx)
    if include_last_offset and offs.size:
        bag = np.where(np.arange(n, like=idx) < offs[-1], bag, -1)
    pad = -1 if padding_idx is None else int(padding_idx)
    if pad < 0 and padding_idx is not None:
        pad += nw
    valid = (idx != pad) & (bag >= 0)
    vi, vb = idx[valid], bag[valid]
    psw = None if per_sample_weights is None else per_sample_weights._data
    dt = w.dtype
    out = np.zeros((nb, d), dt, like=w)
    maxi = None
    scale = None
    if mode == 2:                  # per (bag, column): the first row reaching the maximum, as torch's kernel
        rows = w[vi]
        m = vi.size
        best = np.full((nb, d), -np.inf, dt, like=w)
        np.maximum.at(best, vb, rows)
        first = np.full((nb, d), m, np.int64, like=w)
        np.minimum.at(first, vb, np.where(rows == best[vb], np.arange(m, like=w)[:, None], m))
        has = first < m
        maxi = np.where(has, vi[np.minimum(first, m - 1)] if m else -1, -1)
        out = np.where(has, best, 0).astype(dt)
    else:
        rows = w[vi]
        if psw is not None:
            rows = rows * psw[valid][:, None]
        np.add.at(out, vb, rows)
        cnt = np.bincount(vb, minlength=nb)[:nb]
        if mode == 1:
            div = np.maximum(cnt, 1).astype(dt)
            out = (out / div[:, None]).astype(dt)
            scale = (1.0 / np.maximum(cnt, 1))[np.maximum(bag, 0)]
        if scale_grad_by_freq and n:
            f = 1.0 / _bag_freq(idx, nw)[idx]
            scale = f if scale is None else scale * f
        if scale is not None:
            scale = scale.astype(dt)
    ins = (weight, per_sample_weights)
    if grad.enabled and any(t is not None and t._rg for t in ins):
        node = EmbeddingBagBackward0(tuple(edge(t) if t is not None else (None, 0) for t in ins))
        node.idx, node.bag, node.valid, node.mode, node.scale, node.maxi = idx, bag, valid, mode, scale, maxi
        node.wshape = w.shape
        node._saved = (save_in(weight), save_in(per_sample_weights) if per_sample_weights is not None else None)
        return make(out, True, node)
    return make(out)


def _one_hot(tensor, num_classes=-1):
    a = tensor._data
    if a.dtype != np.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    k = int(num_classes)
    if k == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        k = int(a.max()) + 1
    if a.size:
        if a.min() < 0:
            raise RuntimeError("Class values must be non-negative.")
        if a.max() >= k:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(a.shape + (k,), np.int64, like=a)
    np.put_along_axis(out, a[..., None], 1, axis=-1) if a.size else None
    return make(out)
