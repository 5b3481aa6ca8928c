"""affine_grid (AffineGridGeneratorBackward0) and 2-D grid_sample (GridSampler2DBackward0), bilinear and
nearest, padding zeros / border / reflection, with PyTorch's coordinate arithmetic.

Per output point the sampling coordinate is ix = A * gx + B, where A (the unnormalise factor times the
clip / reflection derivative) and B are constants of the forward pass; so one backward formula, written
with the namespace ns, serves both the array and the tensor (double backward) modes.
"""
import numpy as np

from ..backend import contiguous
from ._core import make, edge, save_in, grad, attach_self, full_precision
from .._blas import matmul as gemm
from ..autograd.graph import Node
from .shape import stack

__all__ = ["affine_grid_generator", "grid_sampler_2d"]


# -- affine_grid -------------------------------------------------------------------------------------
def _linspace_neg_one(n, align_corners, dt, like):
    if n <= 1:
        return np.zeros(max(n, 1), dt, like=like)[:n] if n == 0 else np.zeros(1, dt, like=like)
    i = np.arange(n, like=like)
    step = (1.0 - -1.0) / (n - 1)
    half = n // 2
    r = np.where(i < half, -1.0 + step * i, 1.0 - step * (n - 1 - i)).astype(dt)
    if not align_corners:
        r = (r * dt.type(n - 1) / dt.type(n)).astype(dt)
    return r


def _base_grid(sizes, align_corners, dt, like):
    """(prod(spatial), nd + 1) rows [x, y, (z,) 1] in PyTorch's order (x = last dim), on `like`'s device."""
    sp = sizes[2:]
    nd = len(sp)
    axes = [_linspace_neg_one(s, align_corners, dt, like) for s in sp]
    grids = np.meshgrid(*axes, indexing="ij")          # grids[k] varies along spatial dim k
    cols = [grids[nd - 1 - k].reshape(-1) for k in range(nd)] + [np.ones(int(np.prod(sp)), dt, like=like)]
    return np.stack(cols, axis=1).astype(dt)


class AffineGridGeneratorBackward0(Node):
    __slots__ = ("size", "align_corners", "base")

    def backward(self, ns, g):
        N = self.size[0]
        nd = len(self.size) - 2
        gm = ns.reshape(g, (N, -1, nd))                                    # (N, P, nd)
        base = ns.const(self.base, g)                                      # (P, nd + 1)
        return (ns.transpose(ns.matmul(ns.mT(base), gm), 1, 2),)             # (N, nd, nd + 1)


def affine_grid_generator(theta, size, align_corners):
    t = theta._data
    size = [int(s) for s in size]
    if 1 in size[2:]:             # torch's one-point axis is at::tensor(0), whose kernel has no Half / BFloat16
        full_precision("tensor_cpu", t.dtype)
    base = _base_grid(size, align_corners, t.dtype, t)
    y = gemm(base[None], t.transpose(0, 2, 1))                            # (N, P, nd); bf16: float32, rounded once
    y = contiguous(y.reshape([size[0]] + size[2:] + [len(size) - 2]))
    if theta._rg and grad.enabled:
        n = AffineGridGeneratorBackward0((edge(theta),))
        n.size, n.align_corners, n.base = size, align_corners, base
        return make(y, True, n)
    return make(y)


# -- grid_sample ---------------------------------------------------------------------------------------
def _reflect(x, twice_low, twice_high, ft):
    """PyTorch's reflect_coordinates with the sign of its derivative."""
    if twice_low == twice_high:
        return np.zeros_like(x), np.zeros_like(x)
    mn = ft(twice_low / 2)
    span = ft((twice_high - twice_low) / 2)
    v = x - mn
    sign = np.where(v < 0, -1, 1).astype(ft)
    v = np.abs(v)
    extra = np.fmod(v, span)
    flips = np.floor(v / span)
    even = (flips % 2) == 0
    out = np.where(even, extra + mn, span - extra + mn).astype(ft)
    return out, np.where(even, sign, -sign).astype(ft)


def _source(coord, size, padding_mode, align_corners):
    """(ix, A) with ix = A * coord + B: PyTorch's unnormalise + padding, and the derivative factor A."""
    ft = coord.dtype.type
    if align_corners:
        ix = ((coord + ft(1)) / ft(2) * ft(size - 1)).astype(coord.dtype)
        a = np.full(coord.shape, ft(size - 1) / ft(2), coord.dtype, like=coord)
    else:
        ix = (((coord + ft(1)) * ft(size) - ft(1)) / ft(2)).astype(coord.dtype)
        a = np.full(coord.shape, ft(size) / ft(2), coord.dtype, like=coord)
    if padding_mode == "border":
        keep = (ix > 0) & (ix < size - 1)
        ix = np.clip(ix, 0, size - 1).astype(coord.dtype)
        a = np.where(keep, a, 0).astype(coord.dtype)
    elif padding_mode == "reflection":
        if align_corners:
            ix, s = _reflect(ix, 0, 2 * (size - 1), ft)
        else:
            ix, s = _reflect(ix, -1, 2 * size - 1, ft)
        a = (a * s).astype(coord.dtype)
        keep = (ix > 0) & (ix < size - 1)
        ix = np.clip(ix, 0, size - 1).astype(coord.dtype)
        a = np.where(keep, a, 0).astype(coord.dtype)
    return ix, a


def _corners(ix, iy, W, H, mode):
    """[(xi, yi, in-bounds mask, x sign, y sign)] for the bilinear corners, or the nearest point."""
    if mode == "nearest":
        xn, yn = np.rint(ix).astype(np.int64), np.rint(iy).astype(np.int64)
        return [(xn, yn, (xn >= 0) & (xn < W) & (yn >= 0) & (yn < H), 0, 0)]
    x0, y0 = np.floor(ix).astype(np.int64), np.floor(iy).astype(np.int64)
    out = []
    for dy in (0, 1):
        for dx in (0, 1):
            xc, yc = x0 + dx, y0 + dy
            out.append((xc, yc, (xc >= 0) & (xc < W) & (yc >= 0) & (yc < H), dx, dy))
    return out


def _weights(ns, ixt, iyt, x0, y0, dx, dy):
    """Bilinear weights of one corner as expressions in ixt, iyt (arrays or tensors)."""
    wx = (ixt - ns.const(x0, ixt)) if dx else (ns.const(x0 + 1, ixt) - ixt)
    wy = (iyt - ns.const(y0, iyt)) if dy else (ns.const(y0 + 1, iyt) - iyt)
    return wx, wy


class GridSampler2DBackward0(Node):
    __slots__ = ("interpolation_mode", "padding_mode", "align_corners", "geom")
    _saved_names = ("input", "grid")

    def backward(self, ns, g):
        x, grid = ns.unpack(self)
        ix_c, iy_c, ax, bx, ay, by, corners = self.geom
        N, C, H, W = x.shape
        gt = ns.permute(g, (0, 2, 3, 1))                                   # (N, Ho, Wo, C)
        nI = np.broadcast_to(np.arange(N, like=ix_c).reshape(N, 1, 1), ix_c.shape)
        xt = ns.permute(x, (0, 2, 3, 1))                                   # (N, H, W, C)
        gxs, gys = grid[..., 0], grid[..., 1]
        ixt = gxs * ns.const(ax, gxs) + ns.const(bx, gxs)
        iyt = gys * ns.const(ay, gys) + ns.const(by, gys)
        want_x = self.next_functions[0][0] is not None
        want_g = self.next_functions[1][0] is not None
        gin = None
        gdx = gdy = None
        x0 = np.floor(ix_c).astype(np.int64)
        y0 = np.floor(iy_c).astype(np.int64)
        for xc, yc, ok, dx, dy in corners:
            m = ok.astype(ix_c.dtype)[..., None]
            xi, yi = np.clip(xc, 0, W - 1), np.clip(yc, 0, H - 1)
            idx = (nI, yi, xi)
            if self.interpolation_mode == "nearest":
                w = ns.const(m, gt)
                if want_x:
                    gin = ns.index_add_zeros((N, H, W, C), idx, gt * w)
                continue
            wx, wy = _weights(ns, ixt, iyt, x0, y0, dx, dy)
            wx, wy = ns.unsqueeze(wx, -1), ns.unsqueeze(wy, -1)
            if want_x:
                c = ns.index_add_zeros((N, H, W, C), idx, gt * (wx * wy * ns.const(m, gt)))
                gin = c if gin is None else gin + c
            if want_g:
                v = _gather(ns, xt, idx) * ns.const(m, gt)
                s = gt * v
                tx = ns.sum(s * wy, (3,)) * (1 if dx else -1)
                ty = ns.sum(s * wx, (3,)) * (1 if dy else -1)
                gdx = tx if gdx is None else gdx + tx
                gdy = ty if gdy is None else gdy + ty
        rx = ry = None
        if want_x:
            rx = ns.permute(gin, (0, 3, 1, 2)) if gin is not None else ns.zeros(tuple(x.shape), x)
        if want_g:
            if gdx is None:
                ry = ns.zeros(tuple(grid.shape), grid)
            else:
                gdx = gdx * ns.const(ax, gdx)
                gdy = gdy * ns.const(ay, gdy)
                ry = _stack_last(ns, gdx, gdy)
        if self.interpolation_mode == "nearest" and rx is not None:
            # PyTorch's node saves input and grid: its gradient requires grad
            rx = attach_self(ns, rx, self)
        return (rx, ry)


def _gather(ns, xt, idx):
    if ns.is_tensor_mode:
        return xt[tuple(make(contiguous(i)) for i in idx)]
    return xt[idx]


def _stack_last(ns, a, b):
    if ns.is_tensor_mode:
        return stack([a, b], -1)
    return np.stack([a, b], -1)


def grid_sampler_2d(input, grid, mode, padding_mode, align_corners):
    x, gd = input._data, grid._data
    N, C, H, W = x.shape
    ix, ax = _source(gd[..., 0], W, padding_mode, align_corners)
    iy, ay = _source(gd[..., 1], H, padding_mode, align_corners)
    bx = (ix - ax * gd[..., 0]).astype(ix.dtype)
    by = (iy - ay * gd[..., 1]).astype(iy.dtype)
    corners = _corners(ix, iy, W, H, mode)
    xt = x.transpose(0, 2, 3, 1)
    nI = np.arange(N, like=x).reshape(N, 1, 1)
    out = np.zeros(ix.shape + (C,), x.dtype, like=x)
    x0, y0 = np.floor(ix), np.floor(iy)
    for xc, yc, ok, dx, dy in corners:
        v = xt[nI, np.clip(yc, 0, H - 1), np.clip(xc, 0, W - 1)] * ok[..., None]
        if mode == "nearest":
            out = v.astype(x.dtype)
            continue
        wx = (ix - x0) if dx else (x0 + 1 - ix)
        wy = (iy - y0) if dy else (y0 + 1 - iy)
        out += v * (wx * wy).astype(x.dtype)[..., None]
    y = contiguous(out.transpose(0, 3, 1, 2))
    if grad.enabled and (input._rg or grid._rg):
        n = GridSampler2DBackward0((edge(input), edge(grid)))
        n.interpolation_mode, n.padding_mode, n.align_corners = mode, padding_mode, align_corners
        n.geom = (ix, iy, ax, bx, ay, by, corners)
        n._saved = (save_in(input), save_in(grid))
        return make(y, True, n)
    return make(y)


# -- grid_sampler_3d: the same on (N, C, D, H, W) volumes with (x, y, z) grids ---------------------------------------
__all__ += ["grid_sampler_3d"]


def _corners3(ix, iy, iz, W, H, D, mode):
    """[(xi, yi, zi, in-bounds mask, (dx, dy, dz))] for the trilinear corners, or the nearest point."""
    if mode == "nearest":
        xn, yn, zn = (np.rint(v).astype(np.int64) for v in (ix, iy, iz))
        ok = (xn >= 0) & (xn < W) & (yn >= 0) & (yn < H) & (zn >= 0) & (zn < D)
        return [(xn, yn, zn, ok, None)]
    x0, y0, z0 = (np.floor(v).astype(np.int64) for v in (ix, iy, iz))
    out = []
    for dz in (0, 1):
        for dy in (0, 1):
            for dx in (0, 1):
                xc, yc, zc = x0 + dx, y0 + dy, z0 + dz
                ok = (xc >= 0) & (xc < W) & (yc >= 0) & (yc < H) & (zc >= 0) & (zc < D)
                out.append((xc, yc, zc, ok, (dx, dy, dz)))
    return out


def _w1(ns, it, i0, d):
    """The linear weight along one axis of a corner: it - i0 (upper corner) or i0 + 1 - it (lower)."""
    return (it - ns.const(i0, it)) if d else (ns.const(i0 + 1, it) - it)


class GridSampler3DBackward0(Node):
    __slots__ = ("interpolation_mode", "padding_mode", "align_corners", "geom")
    _saved_names = ("input", "grid")

    def backward(self, ns, g):
        x, grid = ns.unpack(self)
        (ix, iy, iz), (ax, ay, az), (bx, by, bz), corners = self.geom
        N, C, D, H, W = x.shape
        gt = ns.permute(g, (0, 2, 3, 4, 1))                               # (N, Do, Ho, Wo, C)
        xt = ns.permute(x, (0, 2, 3, 4, 1))                               # (N, D, H, W, C)
        nI = np.broadcast_to(np.arange(N, like=ix).reshape(N, 1, 1, 1), ix.shape)
        its = [grid[..., k] * ns.const(a, grid[..., k]) + ns.const(b, grid[..., k])
               for k, a, b in ((0, ax, bx), (1, ay, by), (2, az, bz))]
        i0s = [np.floor(v).astype(np.int64) for v in (ix, iy, iz)]
        want_x = self.next_functions[0][0] is not None
        want_g = self.next_functions[1][0] is not None
        gin, gds = None, [None, None, None]
        for xc, yc, zc, ok, ds in corners:
            m = ok.astype(ix.dtype)[..., None]
            idx = (nI, np.clip(zc, 0, D - 1), np.clip(yc, 0, H - 1), np.clip(xc, 0, W - 1))
            if ds is None:                                                # nearest
                if want_x:
                    gin = ns.index_add_zeros((N, D, H, W, C), idx, gt * ns.const(m, gt))
                continue
            ws = [ns.unsqueeze(_w1(ns, its[k], i0s[k], ds[k]), -1) for k in range(3)]
            if want_x:
                c = ns.index_add_zeros((N, D, H, W, C), idx, gt * (ws[0] * ws[1] * ws[2] * ns.const(m, gt)))
                gin = c if gin is None else gin + c
            if want_g:
                s = gt * (_gather(ns, xt, idx) * ns.const(m, gt))
                for k in range(3):
                    a, b = [ws[j] for j in range(3) if j != k]
                    t = ns.sum(s * a * b, (4,)) * (1 if ds[k] else -1)
                    gds[k] = t if gds[k] is None else gds[k] + t
        rx = ry = None
        if want_x:
            rx = ns.permute(gin, (0, 4, 1, 2, 3)) if gin is not None else ns.zeros(tuple(x.shape), x)
        if want_g:
            if gds[0] is None:
                ry = ns.zeros(tuple(grid.shape), grid)
            else:
                parts = [gds[k] * ns.const(a, gds[k]) for k, a in enumerate((ax, ay, az))]
                ry = stack(parts, -1) if ns.is_tensor_mode else np.stack(parts, -1)
        if rx is not None:      # PyTorch's node saves input and grid: its gradient requires grad
            rx = attach_self(ns, rx, self)
        return (rx, ry)


def grid_sampler_3d(input, grid, mode, padding_mode, align_corners):
    """Trilinear (or nearest) sampling of (N, C, D, H, W) input at (N, Do, Ho, Wo, 3) grid points, with torch's
    unnormalisation and padding modes; GridSampler3DBackward0 (differentiable in turn, as the 2-D one)."""
    x, gd = input._data, grid._data
    N, C, D, H, W = x.shape
    ix, ax = _source(gd[..., 0], W, padding_mode, align_corners)
    iy, ay = _source(gd[..., 1], H, padding_mode, align_corners)
    iz, az = _source(gd[..., 2], D, padding_mode, align_corners)
    bs = tuple((i - a * gd[..., k]).astype(i.dtype) for k, (i, a) in enumerate(((ix, ax), (iy, ay), (iz, az))))
    corners = _corners3(ix, iy, iz, W, H, D, mode)
    xt = x.transpose(0, 2, 3, 4, 1)
    nI = np.arange(N, like=x).reshape(N, 1, 1, 1)
    out = np.zeros(ix.shape + (C,), x.dtype, like=x)
    f0 = [np.floor(v) for v in (ix, iy, iz)]
    for xc, yc, zc, ok, ds in corners:
        v = xt[nI, np.clip(zc, 0, D - 1), np.clip(yc, 0, H - 1), np.clip(xc, 0, W - 1)] * ok[..., None]
        if ds is None:
            out = v.astype(x.dtype)
            continue
        w = np.ones_like(ix)
        for i, i0, d in zip((ix, iy, iz), f0, ds):
            w = w * ((i - i0) if d else (i0 + 1 - i))
        out += v * w.astype(x.dtype)[..., None]
    y = contiguous(out.transpose(0, 4, 1, 2, 3))
    if grad.enabled and (input._rg or grid._rg):
        n = GridSampler3DBackward0((edge(input), edge(grid)))
        n.interpolation_mode, n.padding_mode, n.align_corners = mode, padding_mode, align_corners
        n.geom = ((ix, iy, iz), (ax, ay, az), bs, corners)
        n._saved = (save_in(input), save_in(grid))
        return make(y, True, n)
    return make(y)
