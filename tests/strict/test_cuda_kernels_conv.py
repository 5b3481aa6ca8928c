"""The fused convolution and max-pool kernels (_cuda_kernels/conv.py) against the array code they replace, through the
public ops on CUDA tensors (GLASSGRAD_FUSED=1 vs 0), and the kernels themselves against the framed layout's array
helpers.  The im2col columns, the gridded gradient, col2im and max pooling (values, indices, gradients) are the array
code's exactly (copies, and sums in the array code's order); the weight gradient is one GEMM over all the columns
where the array code sums blocks of them, so it is compared within a bound on the rounding of its sums."""
import numpy as np
import pytest

import glassgrad as gg
from glassgrad._cuda_kernels import conv as kconv
from glassgrad.ops import conv_framed as cf

# (the array code's NaN test sums the window maxima: +inf and -inf ones warn there)
pytestmark = [pytest.mark.usefixtures("fused_kernels"),
              pytest.mark.filterwarnings("ignore:invalid value encountered in reduce:RuntimeWarning")]

F = gg.nn.functional

# (N, C, S, Co, K, stride, padding, dilation, groups)
CONV2D = [
    ((2, 3, (9, 7)), 4, (3, 3), 1, 1, 1, 1),
    ((1, 2, (8, 11)), 3, (3, 2), 2, (1, 2), 1, 1),
    ((3, 4, (10, 9)), 6, (3, 3), (2, 3), 2, (2, 1), 2),
    ((2, 8, (5, 5)), 8, (1, 1), 2, 0, 1, 1),                 # 1x1 stride 2 (ResNet's shortcut)
    ((1, 1, (1, 1)), 1, (1, 1), 1, 0, 1, 1),                 # size 1
    ((2, 3, (7, 6)), 5, (4, 4), 3, 3, 1, 1),                 # padding past the kernel's reach
    ((1, 2, (23, 19)), 16, (5, 3), 1, (2, 0), (1, 3), 1),   # more elements than a block
]
CONV1D = [((2, 3, (13,)), 4, (3,), 2, 1, 2, 1), ((1, 4, (5,)), 2, (5,), 1, 2, 1, 2)]
CONV3D = [((1, 2, (5, 4, 6)), 3, (3, 2, 3), (1, 2, 2), 1, 1, 1)]

TOL = {np.float32: 2e-5, np.float64: 1e-13}


def _run(fused, monkeypatch, fn, arrays, grad_of):
    """fn on CUDA tensors of `arrays` (those with grad_of True require grad), then backward of a fixed cotangent:
    [output, *gradients] as host arrays."""
    monkeypatch.setenv("GLASSGRAD_FUSED", "1" if fused else "0")
    ts = [gg.from_numpy(a).cuda().requires_grad_(r) for a, r in zip(arrays, grad_of)]
    y = fn(*ts)
    y = y[0] if isinstance(y, tuple) else y
    ct = np.random.default_rng(7).standard_normal(tuple(y.shape)).astype(arrays[0].dtype)
    y.backward(gg.from_numpy(ct).cuda())
    return [y.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t, r in zip(ts, grad_of) if r]


def _conv_case(case, dtype, transposed=False):
    (N, C, S), Co, K, s, p, d, g = case
    rng = np.random.default_rng(sum(S) + C)
    x = rng.standard_normal((N, C) + S).astype(dtype)
    w = rng.standard_normal(((C, Co // g) if transposed else (Co, C // g)) + K).astype(dtype)
    b = rng.standard_normal(Co).astype(dtype)
    return x, w, b, (s, p, d, g)


def _bits(a):
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64 if a.dtype == np.float64 else a.dtype)


def _check_weight_grad(got, want, bound, dtype):
    """|fused - array| within TOL x the sum of the |terms| of each weight-gradient entry."""
    assert np.all(np.abs(got - want) <= TOL[dtype] * bound + 1e-30), np.max(np.abs(got - want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CONV1D + CONV2D + CONV3D)
def test_conv_fused_equals_array_code(case, dtype, monkeypatch):
    x, w, b, (s, p, d, g) = _conv_case(case, dtype)
    nd = x.ndim - 2
    conv = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]

    def fn(xt, wt, bt):
        return conv(xt, wt, bt, s, p, d, g)

    want = _run(False, monkeypatch, fn, [x, w, b], [True, True, True])
    got = _run(True, monkeypatch, fn, [x, w, b], [True, True, True])
    np.testing.assert_array_equal(_bits(got[0]), _bits(want[0]))        # output: the same columns, the same GEMM
    np.testing.assert_array_equal(_bits(got[1]), _bits(want[1]))        # input gradient: col2im in the same order
    np.testing.assert_allclose(got[3], want[3], rtol=TOL[dtype])        # bias gradient: not fused
    # weight gradient: bound the rounding by the same gradient of |x| and |cotangent| (float64)
    monkeypatch.setenv("GLASSGRAD_FUSED", "0")
    ct = np.abs(np.random.default_rng(7).standard_normal(want[0].shape))
    xa = gg.from_numpy(np.abs(x).astype(np.float64)).cuda()
    wa = gg.from_numpy(np.abs(w).astype(np.float64)).cuda().requires_grad_(True)
    conv(xa, wa, None, s, p, d, g).backward(gg.from_numpy(ct).cuda())
    _check_weight_grad(got[2], want[2], wa.grad.cpu().numpy(), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [CONV2D[0], CONV2D[2], CONV1D[0]])
def test_conv_transpose_fused_equals_array_code(case, dtype, monkeypatch):
    x, w, b, (s, p, d, g) = _conv_case(case, dtype, transposed=True)
    conv = F.conv_transpose1d if x.ndim == 3 else F.conv_transpose2d
    op = 1 if min(np.atleast_1d(s)) > 1 else 0

    def fn(xt, wt):
        return conv(xt, wt, None, s, p, op, g, d)

    want = _run(False, monkeypatch, fn, [x, w], [True, True])
    got = _run(True, monkeypatch, fn, [x, w], [True, True])
    np.testing.assert_array_equal(_bits(got[0]), _bits(want[0]))        # the forward is the col2im path
    np.testing.assert_array_equal(_bits(got[1]), _bits(want[1]))        # its input gradient the im2col one
    np.testing.assert_allclose(got[2], want[2], rtol=10 * TOL[dtype], atol=10 * TOL[dtype] * np.abs(want[2]).max())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv_only_weight_grad_and_no_grad(dtype, monkeypatch):
    """The first layer's case (the input needs no gradient: the gridded gradient is built for the weight only)
    and a forward without autograd."""
    x, w, b, (s, p, d, g) = _conv_case(CONV2D[1], dtype)

    def fn(xt, wt):
        return F.conv2d(xt, wt, None, s, p, d, g)

    want = _run(False, monkeypatch, fn, [x, w], [False, True])
    got = _run(True, monkeypatch, fn, [x, w], [False, True])
    np.testing.assert_array_equal(_bits(got[0]), _bits(want[0]))
    np.testing.assert_allclose(got[1], want[1], rtol=10 * TOL[dtype], atol=10 * TOL[dtype] * np.abs(want[1]).max())
    with gg.no_grad():
        y = F.conv2d(gg.from_numpy(x).cuda(), gg.from_numpy(w).cuda(), None, s, p, d, g).cpu().numpy()
    np.testing.assert_array_equal(_bits(y), _bits(want[0]))


@pytest.mark.parametrize("case", [CONV2D[2], CONV3D[0]])
def test_conv_and_pool_with_64_bit_indices(case, monkeypatch):
    """The kernels' long long index variant (sizes of 2^30 elements and more), forced on small sizes."""
    monkeypatch.setattr(kconv, "_INT_INDEX", 1)
    test_conv_fused_equals_array_code(case, np.float32, monkeypatch)
    test_max_pool2d_fused_equals_array_code(POOL2D[3], True, np.float64, monkeypatch)


def test_conv_non_contiguous_input(monkeypatch):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 9, 3, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)

    def fn(xt, wt):
        return F.conv2d(xt.permute(0, 2, 3, 1), wt, None, 1, 1)       # (2, 3, 8, 9), not contiguous

    want = _run(False, monkeypatch, fn, [x, w], [True, True])
    got = _run(True, monkeypatch, fn, [x, w], [True, True])
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CONV2D[:3] + CONV1D + CONV3D)
def test_kernels_equal_framed_helpers(case, dtype, monkeypatch):
    """conv_cols == _Frame.cols(_Frame.put(x)) including the junk columns; to_grid == _to_grid; conv_col2im == the
    slice-adds and take of _conv_input_grad_framed (on any columns, not only W^T @ gy's)."""
    x, w, b, (s, p, d, g) = _conv_case(case, dtype)
    nd = x.ndim - 2
    K = w.shape[2:]
    s, p, d = [v if isinstance(v, tuple) else (v,) * nd for v in (s, p, d)]
    N, C = x.shape[:2]
    xd = gg.from_numpy(x).cuda()._data
    fr = cf._frame(N, x.shape[2:], p, K, d, s)
    O = [(x.shape[2 + i] + 2 * p[i] - d[i] * (K[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    rng = np.random.default_rng(5)
    gy = gg.from_numpy(rng.standard_normal((N, 3) + tuple(O)).astype(dtype)).cuda()._data
    cols = gg.from_numpy(rng.standard_normal((C, int(np.prod(K)), fr.L)).astype(dtype)).cuda()._data
    got = [kconv.conv_cols(xd, fr.Q, K, s, p, d), kconv.to_grid(gy, fr.Q),
           kconv.conv_col2im(cols, N, x.shape[2:], fr.Q, O, K, s, p, d)]
    monkeypatch.setenv("GLASSGRAD_FUSED", "0")
    dst = gg.from_numpy(np.zeros((fr.phases, C, fr.L + fr.slack), dtype)).cuda()._data
    valid = np.zeros((N,) + fr.Q, bool)
    valid[(slice(None),) + tuple(slice(0, o) for o in O)] = True
    for kk, (ph, off) in enumerate(fr.taps):        # the array code's col2im, on columns zero past the valid outputs
        dst[ph, :, off:off + fr.L] += cols[:, kk] * gg.from_numpy(valid.reshape(-1).astype(dtype)).cuda()._data
    want = [fr.cols(fr.put(xd, xd.dtype), 0, fr.L, 1).reshape(C, -1, fr.L), cf._to_grid(gy, fr.Q, gy.dtype),
            fr.take(dst)]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(_bits(a.get()), _bits(b.get()))


def _pool_input(shape, dtype, special):
    rng = np.random.default_rng(int(np.prod(shape)))
    x = rng.standard_normal(shape).astype(dtype)
    x.reshape(-1)[::7] = np.round(x.reshape(-1)[::7])          # ties
    x.reshape(-1)[1::5] = x.reshape(-1)[0:-1:5][:len(x.reshape(-1)[1::5])]
    if special:
        flat = x.reshape(-1)
        flat[3::11] = np.nan
        flat[5::13] = -np.inf
        flat[8::17] = np.inf
        x.reshape(shape[0] * shape[1], -1)[0] = -np.inf     # a whole plane of -inf: windows that pick padding
    return x


# (shape, kernel, stride, padding, dilation, ceil_mode)
POOL2D = [
    ((2, 3, 8, 8), 2, 2, 0, 1, False),                      # tiles the input (MaxPool2d(2))
    ((2, 3, 9, 7), 2, 2, 0, 1, False),                      # tiles, with uncovered rows / columns
    ((1, 2, 9, 11), 3, 2, 1, 1, False),                     # overlapping, padded
    ((2, 2, 10, 9), (3, 2), (2, 1), (1, 1), (2, 1), True),  # dilation, ceil mode
    ((1, 1, 1, 1), 1, 1, 0, 1, False),                      # size 1
    ((1, 3, 5, 5), 3, 3, 1, 1, True),                       # ceil mode's extra window, padded
    ((2, 2, 33, 31), 3, 1, 1, 1, False),                    # more windows than a block
    ((1, 1, 13, 13), 12, 1, 6, 1, False),                   # prod(K) >= 128: int64 offset indices
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("case", POOL2D)
def test_max_pool2d_fused_equals_array_code(case, special, dtype, monkeypatch):
    shape, k, s, p, d, ceil = case
    x = _pool_input(shape, dtype, special)

    def fn(xt):
        return F.max_pool2d(xt, k, s, p, d, ceil, return_indices=True)

    for unbatched in (False, True):
        xs = x[0] if unbatched else x
        monkeypatch.setenv("GLASSGRAD_FUSED", "0")
        want_idx = fn(gg.from_numpy(xs).cuda())[1].cpu().numpy()
        want = _run(False, monkeypatch, fn, [xs], [True])
        monkeypatch.setenv("GLASSGRAD_FUSED", "1")
        got_idx = fn(gg.from_numpy(xs).cuda())[1].cpu().numpy()
        got = _run(True, monkeypatch, fn, [xs], [True])
        np.testing.assert_array_equal(got_idx, want_idx)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(_bits(a), _bits(b))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", [((2, 2, 5, 6, 7), 2, 2, 0, 1, False),
                                  ((1, 2, 6, 5, 7), 3, (1, 2, 2), 1, (1, 1, 2), True)])
def test_max_pool3d_and_1d_fused_equal_array_code(case, dtype, monkeypatch):
    shape, k, s, p, d, ceil = case
    x = _pool_input(shape, dtype, True)
    x1 = x.reshape(shape[0], shape[1], -1)[..., :23]

    for fn, a in ((lambda t: F.max_pool3d(t, k, s, p, d, ceil, return_indices=True), x),
                  (lambda t: F.max_pool1d(t, 3, 2, 1, 2, ceil, return_indices=True), x1)):
        want = _run(False, monkeypatch, fn, [a], [True])
        got = _run(True, monkeypatch, fn, [a], [True])
        for u, v in zip(got, want):
            np.testing.assert_array_equal(_bits(u), _bits(v))


def test_max_pool_non_contiguous_and_gradient_layout(monkeypatch):
    x = _pool_input((2, 6, 4, 5), np.float32, False)

    def fn(xt):
        y = F.max_pool2d(xt.transpose(1, 3), 2, 1, 1)
        return y.transpose(2, 3) * 2        # a gradient that reaches the pool non-contiguous

    want = _run(False, monkeypatch, fn, [x], [True])
    got = _run(True, monkeypatch, fn, [x], [True])
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
