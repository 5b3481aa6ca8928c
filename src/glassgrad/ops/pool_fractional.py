"""fractional_max_pool3d (FractionalMaxPool3DBackward0): torch's pseudo-random pooling windows in 3-D.

The 2-D form is in pool.py; this reuses its interval generation and its backward (the gradient added at the
flat indices of the chosen maxima)."""
import numpy as np

from ..backend import contiguous
from ._core import make, edge, save_in, grad
from .pool import _AdaptiveMaxNode, _batched, _intervals

__all__ = ["fractional_max_pool3d"]


class FractionalMaxPool3DBackward0(_AdaptiveMaxNode):
    __slots__ = ()


def fractional_max_pool3d(x, K, O, samples):
    """Checked by the caller; samples (N, C, 3): [..., 0] places the T windows, [..., 1] H, [..., 2] W."""
    a0 = x._data
    a = _batched(a0, 3)
    N, C, T, H, W = a.shape
    sm = samples._data.astype(a.dtype, copy=False)
    st = _intervals(sm[..., 0], T, O[0], K[0])
    sh = _intervals(sm[..., 1], H, O[1], K[1])
    sw = _intervals(sm[..., 2], W, O[2], K[2])
    def r(n):
        return np.arange(n, like=a)
    tI = st[:, :, :, None, None, None, None, None] + r(K[0]).reshape(1, 1, 1, 1, 1, -1, 1, 1)
    hI = sh[:, :, None, :, None, None, None, None] + r(K[1]).reshape(1, 1, 1, 1, 1, 1, -1, 1)
    wI = sw[:, :, None, None, :, None, None, None] + r(K[2]).reshape(1, 1, 1, 1, 1, 1, 1, -1)
    nI = r(N).reshape(-1, 1, 1, 1, 1, 1, 1, 1)
    cI = r(C).reshape(1, -1, 1, 1, 1, 1, 1, 1)
    win = a[nI, cI, tI, hI, wI].reshape(N, C, O[0], O[1], O[2], -1)
    if win.size:
        kidx = win.argmax(-1)
        val = np.take_along_axis(win, kidx[..., None], -1)[..., 0]
    else:
        kidx = np.zeros((N, C, *O), np.int64, like=a)
        val = np.zeros(kidx.shape, a.dtype, like=a)
    kt, rest = np.divmod(kidx, K[1] * K[2])
    kh, kw = np.divmod(rest, K[2])
    flat = (((st[:, :, :, None, None] + kt) * H + (sh[:, :, None, :, None] + kh)) * W
            + (sw[:, :, None, None, :] + kw))
    batched = a0.ndim == 5
    vo, fo = (val, flat) if batched else (val[0], flat[0])
    idx_t = make(contiguous(fo))
    if x._rg and grad.enabled:
        n = FractionalMaxPool3DBackward0((edge(x),))
        n.flat, n.shape, n.batched = flat, a.shape, batched
        n._saved = (save_in(x), save_in(idx_t))
        return make(contiguous(vo), True, n), idx_t
    return make(contiguous(vo)), idx_t
