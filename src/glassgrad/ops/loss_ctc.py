"""CTC loss (torch.ctc_loss): forward-backward in log space with NumPy, vectorised over the batch.

grad_fn CtcLossBackward0 (per-sample negative log likelihoods); its gradient follows PyTorch's
formula exp(lp) - exp(log(sum alpha beta) + nll - lp) (the gradient of the loss taken through a
log_softmax), zero for time steps past a sample's input length.
"""
import numpy as np

from .. import backend
from ._core import Tensor, make, edge, grad, save_in, full_precision
from ..autograd.graph import Node
from .loss import _const_grad

__all__ = ["ctc_loss_per_sample"]

_NEG = -np.inf


def _on(a, like):
    """`a` on `like`'s device (lengths and targets may be CPU tensors beside CUDA log_probs, as in torch)."""
    return a if a.__class__ is like.__class__ else backend.to_device(a, backend.device_of(like))


def _lengths(v, what, like):
    if isinstance(v, Tensor):
        a = v._data
        if a.dtype.kind not in "iu":
            raise RuntimeError(f"{what} must be integral")
        return _on(a.reshape(-1).astype(np.int64), like)
    if isinstance(v, int):
        return np.array([v], np.int64, like=like)
    return np.asarray(list(v), np.int64, like=like).reshape(-1)


def _lse3(a, b, c):
    with np.errstate(invalid="ignore"):
        return np.logaddexp(np.logaddexp(a, b), c)


class CtcLossBackward0(Node):
    __slots__ = ("coef",)
    _saved_names = ("log_probs",)

    def backward(self, ns, g):
        gb = ns.unsqueeze(ns.unsqueeze(g, 0), 2)
        return (_const_grad(ns, self.coef, gb, "aten::_ctc_loss_backward", self),)


def _check_args(lp, targets, input_lengths, target_lengths, blank):
    """(targets array, input lengths, target lengths), after PyTorch's first checks."""
    if lp.ndim != 3:
        raise RuntimeError(f"ctc_loss: expected log_probs to be 3-D (T, N, C), got {lp.ndim}-D")
    T, N, C = lp.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    tg = _on(targets._data, lp) if isinstance(targets, Tensor) else np.asarray(targets, like=lp)
    if tg.dtype.kind not in "iu":
        raise RuntimeError("ctc_loss: expected targets to have an integer dtype")
    il = _lengths(input_lengths, "input_lengths", lp)
    tl = _lengths(target_lengths, "target_lengths", lp)
    if il.size != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if tl.size != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    return tg, il, tl


def _labels(tg, tl, N, Smax):
    """(N, Smax) labels per sample: rows of a 2-D targets, or the concatenated 1-D targets cut by length."""
    if tg.ndim == 2:
        if tg.shape[1] < Smax:
            raise RuntimeError(f"Expected tensor to have size at least {Smax} at dimension 1, but got size "
                               f"{tg.shape[1]} for argument #2 'targets' (while checking arguments for "
                               f"ctc_loss_allocate_outputs)")
        lab = np.zeros((N, Smax), np.int64, like=tg)
        if Smax:
            lab[:] = tg[:, :Smax]
        return lab
    off = np.concatenate([np.zeros(1, np.int64, like=tl), np.cumsum(tl)[:-1]]).astype(np.int64)
    idx = off[:, None] + np.arange(Smax, like=tl)[None, :]
    return tg.reshape(-1)[np.minimum(idx, max(tg.size - 1, 0))] if tg.size else np.zeros((N, Smax), np.int64, like=tg)


def _alpha(lpe, tl, valid_s, skip):
    """Forward variables: alpha[t, n, s] = log P(prefix of the extended labels up to s at time t)."""
    T, N, Lmax = lpe.shape
    alpha = np.full((T, N, Lmax), _NEG, like=lpe)
    if T:
        a0 = np.full((N, Lmax), _NEG, like=lpe)
        a0[:, 0] = lpe[0, :, 0]
        if Lmax > 1:
            a0[:, 1] = np.where(tl > 0, lpe[0, :, 1], _NEG)
        alpha[0] = a0
        for t in range(1, T):
            p = alpha[t - 1]
            p1 = np.concatenate([np.full((N, 1), _NEG, like=p), p[:, :-1]], 1)
            p2 = np.concatenate([np.full((N, 2), _NEG, like=p), p[:, :-2]], 1)[:, :Lmax]
            alpha[t] = np.where(valid_s, _lse3(p, p1, np.where(skip, p2, _NEG)) + lpe[t], _NEG)
    return alpha


def _beta(lpe, il, tl, Lb, valid_s, skip):
    """Backward variables: beta[t, n, s] = log P(suffix from s at time t), starting at each input's end."""
    T, N, Lmax = lpe.shape
    bi = np.arange(N, like=lpe)
    beta = np.full((T, N, Lmax), _NEG, like=lpe)
    nxt = np.full((N, Lmax), _NEG, like=lpe)
    sk2 = np.zeros((N, Lmax), bool, like=lpe)
    if Lmax > 2:
        sk2[:, :-2] = skip[:, 2:]
    init = np.full((N, Lmax), _NEG, like=lpe)
    for t in range(T - 1, -1, -1):
        init[:] = _NEG
        init[bi, Lb - 1] = lpe[t, bi, Lb - 1]
        has2 = tl > 0
        init[bi[has2], (Lb - 2)[has2]] = lpe[t, bi[has2], (Lb - 2)[has2]]
        n1 = np.concatenate([nxt[:, 1:], np.full((N, 1), _NEG, like=lpe)], 1)
        n2 = np.concatenate([nxt[:, 2:], np.full((N, 2), _NEG, like=lpe)], 1)[:, :Lmax]
        rec = np.where(valid_s, _lse3(nxt, n1, np.where(sk2, n2, _NEG)) + lpe[t], _NEG)
        cur = np.where((t == il - 1)[:, None], init, np.where((t < il - 1)[:, None], rec, _NEG))
        beta[t] = cur
        nxt = cur
    return beta


def _gradient(lp, lpe, alpha, beta, nll, ext, il, zero_infinity):
    """grad = exp(lp) - sum over the positions s labelled c of exp(alpha + beta + nll - lp)."""
    T, N = lp.shape[:2]
    with np.errstate(over="ignore", invalid="ignore"):
        gr = np.exp(lp)
        contrib = np.exp(alpha + beta + nll[None, :, None] - lpe)
    tt = np.broadcast_to(np.arange(T, like=lp)[:, None, None], contrib.shape)
    bb = np.broadcast_to(np.arange(N, like=lp)[None, :, None], contrib.shape)
    cc = np.broadcast_to(ext[None], contrib.shape)
    live = contrib != 0
    np.subtract.at(gr, (tt[live], bb[live], cc[live]), contrib[live].astype(gr.dtype))
    # an impossible alignment (nll = inf): nan everywhere (as PyTorch's inf - inf), or 0 with zero_infinity
    gr[:, np.isinf(nll)] = 0 if zero_infinity else np.nan
    tmask = np.arange(T, like=lp)[:, None] < il[None, :]
    gr[~tmask] = 0
    return gr


def ctc_loss_per_sample(log_probs, targets, input_lengths, target_lengths, blank=0, zero_infinity=False):
    """Negative log likelihood per sample (torch._ctc_loss's first output): log_probs (T, N, C), shape (N,).
    The extended labels put a blank before, between and after the targets; alpha / beta are the usual
    forward / backward variables over them, the gradient is computed only when log_probs needs one."""
    lp = log_probs._data
    full_precision("ctc_loss_cpu", lp.dtype)
    tg, il, tl = _check_args(lp, targets, input_lengths, target_lengths, blank)
    T, N, C = lp.shape
    Smax = int(tl.max()) if N else 0
    lab = _labels(tg, tl, N, Smax)
    bad = (il > T) | (il < 0)
    if N and bad.any():        # (one check, not one sync per sample)
        raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got value "
                           f"{int(il[int(np.argmax(bad))])} (while checking arguments for ctc_loss_allocate_outputs)")
    smask = np.arange(Smax, like=lp)[None, :] < tl[:, None]
    lab = np.where(smask, lab, blank)
    Lmax = 2 * Smax + 1
    ext = np.full((N, Lmax), blank, np.int64, like=lp)
    ext[:, 1::2] = lab
    Lb = 2 * tl + 1
    lpe = np.take_along_axis(lp, np.broadcast_to(ext[None], (T, N, Lmax)), 2).astype(np.float64)  # (T, N, Lmax)
    s_idx = np.arange(Lmax, like=lp)
    skip = np.zeros((N, Lmax), bool, like=lp)
    if Lmax > 2:
        skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    valid_s = s_idx[None, :] < Lb[:, None]
    alpha = _alpha(lpe, tl, valid_s, skip)
    bi = np.arange(N, like=lp)
    tlast = np.maximum(il - 1, 0)
    aT = alpha[tlast, bi] if T else np.full((N, Lmax), _NEG, like=lp)
    end1 = aT[bi, Lb - 1]
    end2 = np.where(tl > 0, aT[bi, np.maximum(Lb - 2, 0)], _NEG)
    with np.errstate(invalid="ignore"):
        ll = np.logaddexp(end1, end2)
    ll = np.where(il > 0, ll, np.where(tl == 0, 0.0, _NEG))
    nll = -ll
    y = nll.astype(lp.dtype)
    if not (log_probs._rg and grad.enabled):
        return make(y)
    beta = _beta(lpe, il, tl, Lb, valid_s, skip)
    n = CtcLossBackward0((edge(log_probs),))
    n.coef = _gradient(lp, lpe, alpha, beta, nll, ext, il, zero_infinity)
    n._saved = (save_in(log_probs),)
    return make(y, True, n)
