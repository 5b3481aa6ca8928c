"""Op table rows: pooling, padding, interpolation, pixel shuffle (nn.functional; ops/pool.py, ops/pad.py,
ops/upsample.py)."""
import numpy as np

from .core import functional, OpInfo, Sample, ErrorSample, NoGrad, arr, noncontig
from .reduction import distinct


_F = functional


def _D(rng, dt):
    return lambda *s: distinct(rng, s, dt)


def _A(rng, dt):
    return lambda *s: arr(rng, s, dt, -1, 1)


z, f32 = np.zeros, np.float32


# -- max pool ------------------------------------------------------------------------------------------
def _max2d(rng, dt):
    D = _D(rng, dt)
    return [Sample(D(2, 3, 6, 6), 2, name="k2"),
            Sample(D(2, 2, 7, 6), (3, 2), stride=(2, 1), padding=(1, 1), dilation=(1, 2), name="all"),
            Sample(D(2, 2, 7, 7), 3, stride=2, ceil_mode=True, name="ceil"),
            Sample(D(2, 2, 6, 5), 3, stride=2, padding=1, ceil_mode=True, name="ceil_pad"),
            Sample(D(3, 5, 5), 2, stride=1, name="unbatched_overlap"),
            Sample(noncontig(D(2, 3, 4, 4)), 2, name="noncontig"),
            Sample(D(0, 2, 4, 4), 2, name="empty_batch"),
            Sample(D(2, 2, 7, 5), (3, 2), name="tiles_crop")]


def _max2d_errors():
    return [ErrorSample(Sample(z((5, 5), f32), 2), RuntimeError, "non-empty 3D or 4D (batch mode) tensor expected"),
            ErrorSample(Sample(z((1, 2, 5, 5), f32), 2, padding=2), RuntimeError, "pad should be at most half of effective kernel size"),
            ErrorSample(Sample(z((1, 1, 1, 1), f32), 2), RuntimeError, "Output size is too small"),
            ErrorSample(Sample(z((1, 2, 5, 5), f32), 2, dilation=0), RuntimeError, "dilation should be greater than zero, but got dilationH: 0 dilationW: 0"),
            ErrorSample(Sample(z((1, 2, 5, 5), f32), 0), RuntimeError, "stride should not be zero"),
            ErrorSample(Sample(z((1, 2, 5, 5), f32), 0, stride=1), RuntimeError, "kernel size should be greater than zero, but got kH: 0 kW: 0"),
            ErrorSample(Sample(z((1, 2, 5, 5), f32), (2, 3, 4)), RuntimeError, "max_pool2d: kernel_size must either be a single int, or a tuple of two ints"),
            ErrorSample(Sample(z((2, 0, 4, 4), f32), 2), RuntimeError, "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input")]


def _max1d(rng, dt):
    D = _D(rng, dt)
    return [Sample(D(2, 3, 8), 2, name="k2"),
            Sample(D(2, 3, 9), 3, stride=2, padding=1, dilation=2, ceil_mode=True, name="all"),
            Sample(D(3, 7), 3, stride=1, name="unbatched")]


def _max1d_errors():
    return [ErrorSample(Sample(z((5,), f32), 2), RuntimeError, "max_pool1d: Expected 2D or 3D (batch mode) tensor"),
            ErrorSample(Sample(z((2, 5), f32), 0), RuntimeError, "max_pool1d() kernel_size must be greater than zero, but got 0"),
            ErrorSample(Sample(z((2, 5), f32), 2, padding=2), RuntimeError, "max_pool1d() padding should be at most half of kernel size")]


def _max3d(rng, dt):
    D = _D(rng, dt)
    return [Sample(D(1, 2, 4, 5, 4), 2, stride=(1, 2, 2), padding=(1, 0, 1), name="basic"),
            Sample(D(2, 4, 4, 4), (2, 3, 2), ceil_mode=True, stride=2, name="unbatched_ceil"),
            Sample(D(1, 2, 4, 6, 5), 2, name="tiles")]


def _ret_idx(name):
    def op(T, *a, **k):
        return getattr(T.nn.functional, name)(*a, return_indices=True, **k)
    return op


# -- avg pool ------------------------------------------------------------------------------------------
def _avg2d(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(2, 3, 6, 6), 2, name="k2"),
            Sample(A(2, 2, 7, 6), (3, 2), stride=(2, 1), padding=(1, 1), name="pad"),
            Sample(A(2, 2, 7, 6), 3, stride=2, padding=1, ceil_mode=True, name="ceil_pad"),
            Sample(A(2, 2, 7, 6), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, name="nopad_count"),
            Sample(A(2, 2, 6, 6), 3, stride=2, padding=1, divisor_override=4, name="divisor"),
            Sample(A(3, 5, 5), 2, stride=1, name="unbatched_overlap"),
            Sample(noncontig(A(2, 3, 4, 4)), 2, name="noncontig")]


def _avg2d_errors():
    return [ErrorSample(Sample(z((1, 2, 5, 5), f32), 2, divisor_override=0), RuntimeError, "divisor must be not zero"),
            ErrorSample(Sample(z((1, 2, 5, 5), f32), 2, padding=2), RuntimeError, "pad should be at most half of effective kernel size"),
            ErrorSample(Sample(z((1, 2, 5, 5), f32), 2, stride=(1, 2, 3)), RuntimeError, "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints"),
            ErrorSample(Sample(z((1, 1, 1, 1), f32), 2), RuntimeError, "Output size is too small")]


def _avg1d(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(2, 3, 8), 2, name="k2"),
            Sample(A(2, 3, 9), 3, stride=2, padding=1, ceil_mode=True, count_include_pad=False, name="all"),
            Sample(A(3, 7), 3, stride=1, padding=1, name="unbatched")]


def _avg3d(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(1, 2, 4, 5, 4), 2, stride=(1, 2, 2), padding=(1, 0, 1), name="basic"),
            Sample(A(2, 5, 4, 4), (3, 2, 2), stride=2, padding=1, ceil_mode=True, count_include_pad=False,
                   name="unbatched_ceil")]


# -- adaptive -----------------------------------------------------------------------------------------
def _aavg2d(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(2, 3, 6, 6), 3, name="even"), Sample(A(2, 3, 7, 5), (3, 4), name="uneven"),
            Sample(A(3, 5, 5), (2, None), name="none_unbatched"), Sample(A(2, 3, 5, 4), 1, name="global"),
            Sample(A(2, 3, 3, 3), 5, name="upscale")]


def _aavg1d(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(2, 3, 7), 3, name="uneven"), Sample(A(3, 6), 1, name="global_unbatched")]


def _aavg3d(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(1, 2, 4, 5, 3), (2, 3, 2), name="basic"), Sample(A(2, 3, 3, 3), 1, name="global")]


def _amax2d(rng, dt):
    D = _D(rng, dt)
    return [Sample(D(2, 3, 6, 6), 3, name="even"), Sample(D(2, 3, 7, 5), (3, 4), name="uneven"),
            Sample(D(3, 5, 5), (2, None), name="none_unbatched"), Sample(D(2, 3, 5, 4), 1, name="global")]


def _amax1d(rng, dt):
    D = _D(rng, dt)
    return [Sample(D(2, 3, 7), 3, name="uneven"), Sample(D(3, 6), 4, name="unbatched")]


def _amax3d(rng, dt):
    D = _D(rng, dt)
    return [Sample(D(1, 2, 4, 5, 3), (2, 3, 2), name="basic")]


def _adaptive_errors(name):
    def f():
        colon = ":" if "max" in name else ""
        return [ErrorSample(Sample(z((5, 5), f32), 2), RuntimeError, f"{name}(): Expected 3D or 4D tensor, but got{colon} [5, 5]"),
                ErrorSample(Sample(z((1, 2, 5, 5), f32), (2, 2, 2)), RuntimeError,
                            "internal error: output_size.size() must be 2" if "max" in name else f"{name}: output_size must be 2")]
    return f


# -- max_unpool ---------------------------------------------------------------------------------------
def _unpool2d_op(T, x, k, **kw):
    y, i = T.nn.functional.max_pool2d(x, k, return_indices=True, **kw)
    return T.nn.functional.max_unpool2d(y, i, k, **kw)


def _unpool2d(rng, dt):
    D = _D(rng, dt)
    return [Sample(D(2, 3, 4, 4), 2, name="k2"), Sample(D(2, 2, 6, 4), (3, 2), name="k32"),
            Sample(D(2, 4, 4), 2, stride=2, name="unbatched")]


def _lp2d(rng, dt):
    A = lambda *s: arr(rng, s, dt, 0.2, 1.5)  # noqa: E731
    return [Sample(A(2, 3, 6, 6), 2, 2, name="p2"), Sample(A(2, 3, 7, 6), 3.0, (3, 2), stride=(2, 1), name="p3_stride"),
            Sample(A(2, 3, 7, 7), 2, 3, stride=2, ceil_mode=True, name="ceil")]


def _lp1d(rng, dt):
    A = lambda *s: arr(rng, s, dt, 0.2, 1.5)  # noqa: E731
    return [Sample(A(2, 3, 8), 2, 2, name="p2"), Sample(A(3, 9), 1.5, 3, stride=2, name="unbatched")]


def _unpool1d_op(T, x, k, **kw):
    y, i = T.nn.functional.max_pool1d(x, k, return_indices=True, **kw)
    return T.nn.functional.max_unpool1d(y, i, k, **kw)


def _unpool1d(rng, dt):
    D = _D(rng, dt)
    return [Sample(D(2, 3, 8), 2, name="k2"), Sample(D(3, 9), 3, name="unbatched")]


# -- pad ----------------------------------------------------------------------------------------------
def _pad_const(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(2, 3, 4), (1, 2), name="last"), Sample(A(2, 3, 4), (1, 2, 0, 1), value=1.5, name="two_dims"),
            Sample(A(2, 3, 4, 5), (-1, 2, 1, -2), name="negative"), Sample(A(3,), (2, 0), name="1d"),
            Sample(A(2, 3), (1, 1, 1, 1), name="all_dims"), Sample(noncontig(A(3, 4)), (1, 1), name="noncontig"),
            Sample(A(0, 3), (1, 1), name="empty")]


def _pad_errors():
    return [ErrorSample(Sample(z((2, 3), f32), (1,)), RuntimeError, "Padding length must be divisible by 2"),
            ErrorSample(Sample(z((2, 3), f32), (1,) * 6), RuntimeError, "Padding length should be less than or equal to two times the input dimension"),
            ErrorSample(Sample(z((2, 3), f32), (1, 1), mode="reflect", value=1.0), RuntimeError, "doesn't take in value argument"),
            ErrorSample(Sample(z((2, 3, 4, 5), f32), (1, 1), mode="reflect"), NotImplementedError, "Padding size 2 is not supported for 4D input tensor"),
            ErrorSample(Sample(z((2, 3, 4, 5), f32), (5, 5, 1, 1), mode="reflect"), RuntimeError, "Padding size should be less than the corresponding input dimension"),
            ErrorSample(Sample(z((2, 3, 4, 5), f32), (6, 1, 1, 1), mode="circular"), RuntimeError, "Padding value causes wrapping around more than once."),
            ErrorSample(Sample(z((2, 3, 4, 5), f32), (1, 1), mode="foo"), NotImplementedError, "Unrecognised padding mode foo"),
            ErrorSample(Sample(z((2, 0, 4), f32), (1, 1), mode="reflect"), RuntimeError, "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions")]


def _pad_mode(mode):
    def gen(rng, dt):
        A = _A(rng, dt)
        out = [Sample(A(2, 3, 5), (2, 1), mode=mode, name="1d"),
               Sample(A(3, 5), (1, 2), mode=mode, name="1d_unbatched"),
               Sample(A(2, 2, 4, 5), (1, 2, 2, 1), mode=mode, name="2d"),
               Sample(A(2, 4, 5), (3, 0, 1, 3), mode=mode, name="2d_unbatched"),
               Sample(A(1, 2, 3, 3, 4), (1, 1, 2, 0, 1, 2), mode=mode, name="3d"),
               Sample(A(2, 2, 4, 5), (-1, 2, 1, -1), mode=mode, name="negative"),
               Sample(noncontig(A(2, 3, 5)), (2, 2), mode=mode, name="noncontig")]
        return out
    return gen


# -- interpolate --------------------------------------------------------------------------------------
def _interp(mode):
    def gen(rng, dt):
        A = _A(rng, dt)
        nd = {"linear": 1, "bilinear": 2, "trilinear": 3, "bicubic": 2}.get(mode)
        shapes = {1: (2, 3, 5), 2: (2, 2, 4, 5), 3: (1, 2, 3, 4, 3)}
        out = []
        for n in ([nd] if nd else [1, 2, 3]):
            s = shapes[n]
            out += [Sample(A(*s), scale_factor=2, mode=mode, name=f"{n}d_x2"),
                    Sample(A(*s), size=tuple(7 - i for i in range(n)), mode=mode, name=f"{n}d_size"),
                    Sample(A(*s), scale_factor=(1.7, 1.4, 1.5)[:n], mode=mode, name=f"{n}d_frac"),
                    Sample(A(*s), scale_factor=0.6, mode=mode, name=f"{n}d_down"),
                    Sample(A(*s), scale_factor=1.7, mode=mode, recompute_scale_factor=True, name=f"{n}d_recompute")]
            if nd:
                out += [Sample(A(*s), scale_factor=1.7, mode=mode, align_corners=True, name=f"{n}d_align"),
                        Sample(A(*s), size=tuple(1 for _ in range(n)), mode=mode, align_corners=True, name=f"{n}d_align1"),
                        Sample(A(*s), size=tuple(3 for _ in range(n)), mode=mode, align_corners=False, name=f"{n}d_down"),
                        Sample(A(*s), scale_factor=(1.1, 2.0, 1.5)[:n], mode=mode, name=f"{n}d_kept_size")]
        out.append(Sample(noncontig(A(*shapes[nd or 2])), scale_factor=3, mode=mode, name="noncontig"))
        return out
    return gen


def _interp_nearest_kept(rng, dt):
    """PyTorch's nearest backward (not its forward) treats out == in and out == 2 * in as exact copies /
    halvings even when a scale_factor says otherwise: glassgrad matches both, so the finite-difference
    check cannot hold for these samples."""
    A = _A(rng, dt)
    return [Sample(A(2, 3, 5), scale_factor=2.1, mode="nearest", name="1d_doubled"),
            Sample(A(2, 2, 3, 5), scale_factor=(1.1, 2.1), mode="nearest", name="2d_kept_and_doubled"),
            Sample(A(1, 2, 3, 2, 5), scale_factor=(1.1, 1.5, 2.1), mode="nearest", name="3d_kept_and_doubled")]


def _interp_area(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(2, 3, 7, 5), size=(3, 2), mode="area", name="2d"),
            Sample(A(2, 3, 7), scale_factor=0.5, mode="area", name="1d_scale")]


def _interp_errors():
    return [ErrorSample(Sample(z((1, 2, 4, 4), f32), size=2, scale_factor=2), ValueError, "only one of size or scale_factor should be defined"),
            ErrorSample(Sample(z((1, 2, 4, 4), f32)), ValueError, "either size or scale_factor should be defined"),
            ErrorSample(Sample(z((1, 2, 4, 4), f32), size=(2, 2, 2)), ValueError, "Input and output must have the same number of spatial dimensions"),
            ErrorSample(Sample(z((1, 2, 4, 4), f32), size=2, align_corners=True), ValueError, "align_corners option can only be set with the interpolating modes"),
            ErrorSample(Sample(z((1, 2, 4), f32), size=2, mode="bilinear"), NotImplementedError, "Got 3D input, but bilinear mode needs 4D input"),
            ErrorSample(Sample(z((1, 2, 4, 4), f32), size=(0, 2)), RuntimeError, "Input and output sizes should be greater than 0, but got input (H: 4, W: 4) output (H: 0, W: 2)"),
            ErrorSample(Sample(z((1, 2, 4, 4), f32), size=2, recompute_scale_factor=True), ValueError, "recompute_scale_factor is not meaningful with an explicit size")]


def _shuffle(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(2, 8, 3, 4), 2, name="r2"), Sample(A(9, 2, 2), 3, name="unbatched"),
            Sample(A(2, 3, 8, 3, 3), 2, name="extra_batch")]


def _unshuffle(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(2, 2, 4, 6), 2, name="r2"), Sample(A(1, 6, 3), 3, name="unbatched")]


def _shuffle_errors():
    return [ErrorSample(Sample(z((2, 5, 3, 3), f32), 2), RuntimeError, "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor"),
            ErrorSample(Sample(z((3, 3), f32), 2), RuntimeError, "pixel_shuffle expects input to have at least 3 dimensions")]


def _unshuffle_errors():
    return [ErrorSample(Sample(z((2, 5, 3, 3), f32), 2), RuntimeError, "pixel_unshuffle expects height to be divisible by downscale_factor"),
            ErrorSample(Sample(z((2, 5, 4, 4), f32), 0), RuntimeError, "pixel_unshuffle expects a positive downscale_factor, but got 0")]


def _grid_sample(rng, dt):
    A = _A(rng, dt)

    def grid(*s):
        return arr(rng, s, dt, -1.3, 1.3)
    out = []
    for mode in ("bilinear", "nearest"):
        for pm in ("zeros", "border", "reflection"):
            for ac in (False, True):
                out.append(Sample(A(2, 3, 4, 5), grid(2, 3, 6, 2), mode=mode, padding_mode=pm, align_corners=ac,
                                  name=f"{mode}_{pm}_{ac}"))
    out.append(Sample(noncontig(A(1, 2, 5, 4)), grid(1, 2, 2, 2), align_corners=False, name="noncontig"))
    return out


def _grid_errors():
    return [ErrorSample(Sample(z((1, 2, 4, 4), f32), z((1, 3, 3, 2), f32), mode="foo", align_corners=False), ValueError, "expected mode to be 'bilinear', 'nearest' or 'bicubic'"),
            ErrorSample(Sample(z((1, 2, 4, 4), f32), z((1, 3, 3, 2), f32), padding_mode="foo", align_corners=False), ValueError, "expected padding_mode to be 'zeros', 'border', or 'reflection'"),
            ErrorSample(Sample(z((1, 2, 4, 4), f32), z((2, 3, 3, 2), f32), align_corners=False), RuntimeError, "expected grid and input to have same batch size"),
            ErrorSample(Sample(z((1, 2, 4, 4), f32), z((1, 3, 3, 3), f32), align_corners=False), RuntimeError, "expected grid to have size 2 in last dimension")]


def _affine(rng, dt):
    A = _A(rng, dt)
    return [Sample(A(2, 2, 3), (2, 3, 4, 5), align_corners=False, name="2d"),
            Sample(A(2, 2, 3), (2, 3, 4, 5), align_corners=True, name="2d_align"),
            Sample(A(1, 2, 3), (1, 1, 1, 3), align_corners=False, name="unit")]


def _affine_errors():
    return [ErrorSample(Sample(z((2, 3, 3), f32), (2, 3, 4, 5), align_corners=False), ValueError, "Expected a batch of 2D affine matrices of shape Nx2x3"),
            ErrorSample(Sample(z((2, 2, 3), f32), (2, 3, 4), align_corners=False), NotImplementedError, "affine_grid only supports 4D and 5D sizes"),
            ErrorSample(Sample(z((2, 2, 3), f32), (2, 3, 0, 5), align_corners=False), ValueError, "Expected non-zero, positive output size")]


def _fracmax(rng, dt):
    D = _D(rng, dt)

    def smp(*s):
        return NoGrad(rng.uniform(0, 1, s).astype(dt))
    return [Sample(D(2, 3, 9, 9), 2, output_size=4, _random_samples=smp(2, 3, 2), name="size"),
            Sample(D(2, 2, 11, 8), (3, 2), output_ratio=(0.5, 0.7), _random_samples=smp(2, 2, 2), name="ratio"),
            Sample(D(3, 10, 10), 3, output_size=(5, 7), _random_samples=smp(1, 3, 2), name="unbatched")]


def _fracmax_errors():
    return [ErrorSample(Sample(z((1, 2, 9, 9), f32), 4, output_size=8), RuntimeError, "pool height 4 too large relative to input height 9"),
            ErrorSample(Sample(z((1, 2, 9, 9), f32), 2), ValueError, "requires specifying either an output_size or an output_ratio")]


_tol = dict(atol=2e-5, rtol=1e-5)
OPS = [
    OpInfo("nn.functional.max_pool2d", _F("max_pool2d"), _max2d, errors=_max2d_errors),
    OpInfo("nn.functional.max_pool2d_indices", _ret_idx("max_pool2d"), _max2d),
    OpInfo("nn.functional.max_pool1d", _F("max_pool1d"), _max1d, errors=_max1d_errors),
    OpInfo("nn.functional.max_pool1d_indices", _ret_idx("max_pool1d"), _max1d),
    OpInfo("nn.functional.max_pool3d", _ret_idx("max_pool3d"), _max3d),
    OpInfo("nn.functional.avg_pool2d", _F("avg_pool2d"), _avg2d, errors=_avg2d_errors, **_tol),
    OpInfo("nn.functional.avg_pool1d", _F("avg_pool1d"), _avg1d, **_tol),
    OpInfo("nn.functional.avg_pool3d", _F("avg_pool3d"), _avg3d, **_tol),
    OpInfo("nn.functional.adaptive_avg_pool2d", _F("adaptive_avg_pool2d"), _aavg2d,
           errors=_adaptive_errors("adaptive_avg_pool2d"), **_tol),
    OpInfo("nn.functional.adaptive_avg_pool1d", _F("adaptive_avg_pool1d"), _aavg1d, **_tol),
    OpInfo("nn.functional.adaptive_avg_pool3d", _F("adaptive_avg_pool3d"), _aavg3d, **_tol),
    OpInfo("nn.functional.adaptive_max_pool2d", _ret_idx("adaptive_max_pool2d"), _amax2d,
           errors=_adaptive_errors("adaptive_max_pool2d")),
    OpInfo("nn.functional.adaptive_max_pool1d", _ret_idx("adaptive_max_pool1d"), _amax1d),
    OpInfo("nn.functional.adaptive_max_pool3d", _F("adaptive_max_pool3d"), _amax3d),
    OpInfo("nn.functional.max_unpool2d", _unpool2d_op, _unpool2d),
    OpInfo("nn.functional.max_unpool1d", _unpool1d_op, _unpool1d),
    OpInfo("nn.functional.lp_pool2d", _F("lp_pool2d"), _lp2d, **_tol),
    OpInfo("nn.functional.lp_pool1d", _F("lp_pool1d"), _lp1d, **_tol),
    OpInfo("nn.functional.pad", _F("pad"), _pad_const, errors=_pad_errors),
    OpInfo("nn.functional.pad_reflect", _F("pad"), _pad_mode("reflect")),
    OpInfo("nn.functional.pad_replicate", _F("pad"), _pad_mode("replicate")),
    OpInfo("nn.functional.pad_circular", _F("pad"), _pad_mode("circular")),
    OpInfo("nn.functional.interpolate_nearest", _F("interpolate"), _interp("nearest"), errors=_interp_errors),
    OpInfo("nn.functional.interpolate_nearest_scale_quirk", _F("interpolate"), _interp_nearest_kept, gradcheck=False),
    OpInfo("nn.functional.interpolate_nearest_exact", _F("interpolate"), _interp("nearest-exact")),
    OpInfo("nn.functional.interpolate_linear", _F("interpolate"), _interp("linear"), **_tol),
    OpInfo("nn.functional.interpolate_bilinear", _F("interpolate"), _interp("bilinear"), **_tol),
    OpInfo("nn.functional.interpolate_trilinear", _F("interpolate"), _interp("trilinear"), **_tol),
    OpInfo("nn.functional.interpolate_bicubic", _F("interpolate"), _interp("bicubic"), **_tol),
    OpInfo("nn.functional.interpolate_area", _F("interpolate"), _interp_area, **_tol),
    OpInfo("nn.functional.grid_sample", _F("grid_sample"), _grid_sample, errors=_grid_errors, **_tol),
    OpInfo("nn.functional.affine_grid", _F("affine_grid"), _affine, errors=_affine_errors),
    OpInfo("nn.functional.fractional_max_pool2d", _ret_idx("fractional_max_pool2d"), _fracmax,
           errors=_fracmax_errors),
    OpInfo("nn.functional.pixel_shuffle", _F("pixel_shuffle"), _shuffle, errors=_shuffle_errors),
    OpInfo("nn.functional.pixel_unshuffle", _F("pixel_unshuffle"), _unshuffle, errors=_unshuffle_errors),
]
