"""Conv / pooling / padding / upsampling / fold modules, differential against torch: same seed -> bit-equal
parameters, same state_dict keys and repr, forward outputs and gradients (input and parameters) within
float32 tolerance."""
import numpy as np
import pytest
import torch

import glassgrad


def A(t):
    return t.detach().numpy()


# (constructor source evaluated with nn = torch.nn / glassgrad.nn, input shape, forward kwargs)
CASES = [
    ("nn.Conv1d(3, 4, 3)", (2, 3, 9), {}),
    ("nn.Conv1d(4, 6, 3, stride=2, padding=1, dilation=2, groups=2, bias=False)", (2, 4, 11), {}),
    ("nn.Conv1d(3, 2, 4, padding='same', padding_mode='reflect')", (2, 3, 9), {}),
    ("nn.Conv1d(3, 2, 3, padding=2, padding_mode='circular')", (3, 8), {}),
    ("nn.Conv2d(16, 7, 1)", (2, 16, 4, 4), {}),
    ("nn.Conv2d(3, 8, 3, stride=2, padding=1)", (2, 3, 9, 8), {}),
    ("nn.Conv2d(4, 4, (3, 2), padding=(1, 2), dilation=(2, 1), groups=4)", (1, 4, 7, 6), {}),
    ("nn.Conv2d(3, 5, 3, padding='same', padding_mode='replicate')", (2, 3, 6, 6), {}),
    ("nn.Conv2d(3, 5, 3, padding=1, padding_mode='reflect', bias=False)", (3, 6, 6), {}),
    ("nn.Conv2d(2, 4, 2, padding='valid')", (2, 2, 5, 5), {}),
    ("nn.Conv3d(2, 3, (2, 3, 2), stride=(1, 2, 1), padding=1)", (1, 2, 4, 5, 4), {}),
    ("nn.ConvTranspose1d(3, 4, 3, stride=2, output_padding=1)", (2, 3, 5), {}),
    ("nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, groups=2, dilation=1, bias=False)", (2, 4, 4, 5), {}),
    ("nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1)", (2, 3, 4, 4), {"output_size": (8, 8)}),
    ("nn.ConvTranspose2d(3, 2, (3, 2), stride=(2, 1), output_padding=(1, 0), dilation=(1, 2))", (3, 4, 4), {}),
    ("nn.ConvTranspose3d(2, 2, 2, stride=2)", (1, 2, 2, 3, 2), {}),
    # parameter-free layers
    ("nn.MaxPool1d(3, stride=2, padding=1)", (2, 3, 9), {}),
    ("nn.MaxPool2d(2)", (2, 3, 6, 6), {}),
    ("nn.MaxPool2d((3, 2), stride=(2, 1), padding=1, dilation=(1, 2), ceil_mode=True, return_indices=True)",
     (2, 3, 7, 8), {}),
    ("nn.MaxPool3d(2, return_indices=True)", (1, 2, 4, 4, 4), {}),
    ("nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False)", (2, 3, 9), {}),
    ("nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, divisor_override=5)", (2, 3, 7, 7), {}),
    ("nn.AvgPool3d((2, 2, 1))", (1, 2, 4, 4, 3), {}),
    ("nn.LPPool2d(2, 2)", (2, 3, 6, 6), {}),
    ("nn.LPPool1d(3, 2, stride=1)", (2, 3, 6), {}),
    ("nn.AdaptiveAvgPool1d(4)", (2, 3, 9), {}),
    ("nn.AdaptiveAvgPool2d((3, None))", (2, 3, 7, 5), {}),
    ("nn.AdaptiveAvgPool2d(1)", (2, 3, 7, 5), {}),
    ("nn.AdaptiveAvgPool3d(2)", (1, 2, 4, 5, 3), {}),
    ("nn.AdaptiveMaxPool1d(3, return_indices=True)", (2, 3, 8), {}),
    ("nn.AdaptiveMaxPool2d((2, 3))", (2, 3, 7, 5), {}),
    ("nn.AdaptiveMaxPool3d(2)", (1, 2, 4, 5, 3), {}),
    ("nn.FractionalMaxPool2d(3, output_ratio=(0.5, 0.6), return_indices=True)", (2, 3, 10, 9), {}),
    ("nn.FractionalMaxPool2d((2, 3), output_size=4)", (3, 8, 9), {}),
    ("nn.ZeroPad1d((1, 2))", (2, 3, 4), {}),
    ("nn.ZeroPad2d(2)", (2, 3, 4, 4), {}),
    ("nn.ConstantPad1d(2, 3.5)", (3, 4), {}),
    ("nn.ConstantPad2d((1, 0, 2, -1), -1.0)", (2, 3, 4, 4), {}),
    ("nn.ConstantPad3d(1, 0.5)", (1, 2, 3, 3, 3), {}),
    ("nn.ReflectionPad1d((2, 1))", (2, 3, 5), {}),
    ("nn.ReflectionPad2d(1)", (2, 3, 4, 4), {}),
    ("nn.ReflectionPad3d((1, 1, 0, 1, 1, 0))", (1, 2, 3, 3, 3), {}),
    ("nn.ReplicationPad1d(3)", (2, 3, 4), {}),
    ("nn.ReplicationPad2d((1, 2, 3, 0))", (3, 4, 4), {}),
    ("nn.ReplicationPad3d(1)", (1, 2, 3, 3, 3), {}),
    ("nn.CircularPad1d(2)", (2, 3, 4), {}),
    ("nn.CircularPad2d((1, 2, 0, 1))", (2, 3, 4, 4), {}),
    ("nn.CircularPad3d(1)", (1, 2, 3, 3, 3), {}),
    ("nn.Upsample(scale_factor=2)", (2, 3, 4, 5), {}),
    ("nn.Upsample(size=(7, 3), mode='bilinear')", (2, 3, 4, 5), {}),
    ("nn.Upsample(scale_factor=1.5, mode='linear', align_corners=True)", (2, 3, 5), {}),
    ("nn.Upsample(scale_factor=(2, 1.5, 1), mode='trilinear')", (1, 2, 3, 4, 3), {}),
    ("nn.Upsample(scale_factor=1.7, mode='nearest-exact', recompute_scale_factor=True)", (2, 3, 4, 5), {}),
    ("nn.UpsamplingNearest2d(scale_factor=3)", (2, 3, 2, 3), {}),
    ("nn.Upsample(scale_factor=(1.5, 2), mode='bicubic', align_corners=False)", (2, 3, 4, 5), {}),
    ("nn.UpsamplingBilinear2d(size=(5, 6))", (2, 3, 3, 4), {}),
    ("nn.PixelShuffle(2)", (2, 8, 3, 3), {}),
    ("nn.PixelUnshuffle(2)", (2, 2, 4, 6), {}),
    ("nn.Unfold(kernel_size=(2, 3), dilation=1, padding=1, stride=2)", (2, 3, 5, 6), {}),
    ("nn.Fold(output_size=(4, 5), kernel_size=2)", (2, 12, 12), {}),
]


def _build(T, src, seed):
    T.manual_seed(seed)
    return eval(src, {"nn": T.nn})


@pytest.mark.parametrize("src,shape,kw", CASES, ids=[c[0] for c in CASES])
def test_module_matches_torch(src, shape, kw):
    tm, gm = _build(torch, src, 3), _build(glassgrad, src, 3)
    assert repr(gm) == repr(tm)
    assert list(gm.state_dict().keys()) == list(tm.state_dict().keys())
    assert len(list(gm.parameters())) == len(list(tm.parameters()))
    for (tn, tp), (gn, gp) in zip(tm.named_parameters(), gm.named_parameters()):
        assert tn == gn
        np.testing.assert_array_equal(A(gp), A(tp), err_msg=f"initial {tn}")
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    tx, gx = torch.tensor(x, requires_grad=True), glassgrad.tensor(x, requires_grad=True)
    ty, gy = tm(tx, **kw), gm(gx, **kw)
    if isinstance(ty, tuple):                 # (values, indices)
        assert isinstance(gy, tuple) and len(gy) == len(ty)
        np.testing.assert_array_equal(A(gy[1]), A(ty[1]))
        assert gy[1].dtype == glassgrad.int64
        ty, gy = ty[0], gy[0]
    assert tuple(gy.shape) == tuple(ty.shape)
    assert gy.grad_fn.name() == ty.grad_fn.name()
    np.testing.assert_allclose(A(gy), A(ty), atol=2e-5, rtol=1e-5)
    ct = np.random.default_rng(1).standard_normal(tuple(ty.shape)).astype(np.float32)
    (ty * torch.tensor(ct)).sum().backward()
    (gy * glassgrad.tensor(ct)).sum().backward()
    np.testing.assert_allclose(A(gx.grad), A(tx.grad), atol=2e-5, rtol=1e-5)
    for (tn, tp), (gn, gp) in zip(tm.named_parameters(), gm.named_parameters()):
        np.testing.assert_allclose(A(gp.grad), A(tp.grad), atol=5e-5, rtol=1e-5, err_msg=f"grad {tn}")


CTOR_ERRORS = [
    ("nn.Conv2d(3, 4, 3, groups=0)", ValueError, "groups must be a positive integer"),
    ("nn.Conv2d(3, 4, 3, groups=2)", ValueError, "in_channels must be divisible by groups"),
    ("nn.Conv2d(4, 3, 3, groups=2)", ValueError, "out_channels must be divisible by groups"),
    ("nn.Conv2d(3, 4, 3, padding='foo')", ValueError, "Invalid padding string 'foo'"),
    ("nn.Conv2d(3, 4, 3, padding='same', stride=2)", ValueError, "padding='same' is not supported"),
    ("nn.Conv2d(3, 4, 3, padding_mode='foo')", ValueError, "padding_mode must be one of"),
    ("nn.ConvTranspose2d(3, 4, 3, padding_mode='reflect')", ValueError, 'Only "zeros" padding mode is supported'),
    ("nn.FractionalMaxPool2d(2)", ValueError, "requires specifying either an output size, or a pooling ratio"),
    ("nn.FractionalMaxPool2d(2, output_size=3, output_ratio=0.5)", ValueError, "only one of output_size and output_ratio"),
    ("nn.FractionalMaxPool2d(2, output_ratio=1.5)", ValueError, "output_ratio must be between 0 and 1"),
]


@pytest.mark.parametrize("src,err,match", CTOR_ERRORS, ids=[c[0] for c in CTOR_ERRORS])
def test_constructor_errors_match_torch(src, err, match):
    for T in (torch, glassgrad):
        with pytest.raises(err, match=match.replace("(", r"\(").replace(")", r"\)")):
            eval(src, {"nn": T.nn})


def test_conv_transpose_output_size_error():
    for T in (torch, glassgrad):
        T.manual_seed(0)
        m = T.nn.ConvTranspose2d(3, 2, 3, stride=2)
        with pytest.raises(ValueError, match="requested an output size of"):
            m(T.zeros(1, 3, 4, 4), output_size=(20, 20))


def test_conv_reset_parameters_and_dtype():
    tm, gm = _build(torch, "nn.Conv2d(3, 4, 3)", 5), _build(glassgrad, "nn.Conv2d(3, 4, 3)", 5)
    torch.manual_seed(9)
    glassgrad.manual_seed(9)
    tm.reset_parameters()
    gm.reset_parameters()
    np.testing.assert_array_equal(A(gm.weight), A(tm.weight))
    np.testing.assert_array_equal(A(gm.bias), A(tm.bias))
    gm64 = glassgrad.nn.Conv1d(2, 3, 2, dtype=glassgrad.float64)
    assert gm64.weight.dtype == glassgrad.float64 and gm64.bias.dtype == glassgrad.float64


@pytest.mark.parametrize("name,kw", [("upsample", {"scale_factor": 2, "mode": "bilinear"}),
                                     ("upsample_nearest", {"scale_factor": 2}),
                                     ("upsample_bilinear", {"size": (3, 5)})])
def test_deprecated_upsample_functions_warn_and_match(name, kw):
    x = np.random.default_rng(2).standard_normal((1, 2, 2, 3)).astype(np.float32)
    outs = []
    for T in (torch, glassgrad):
        with pytest.warns(UserWarning, match=f"`nn.functional.{name}` is deprecated"):
            outs.append(A(getattr(T.nn.functional, name)(T.tensor(x), **kw)))
    # torch's float32 interpolation kernels (weights and blends, vectorised) round per CPU: rtol 1e-5 plus 1e-5 of
    # the output's scale (the old 1e-6 was ~4 ulps of it); a wrong source pixel or weight moves values by O(0.1)
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5 * np.abs(outs[0]).max())


@pytest.mark.parametrize("src,shape", [("nn.CircularPad2d(1)", (4, 4)), ("nn.CircularPad1d(1)", (1, 2, 3, 4))])
def test_circular_pad_module_dim_errors(src, shape):
    for T in (torch, glassgrad):
        m = eval(src, {"nn": T.nn})
        with pytest.raises(ValueError, match="expected"):
            m(T.zeros(*shape))


def test_conv_weight_grad_accumulates_over_calls():
    """The same Conv2d used twice: parameter gradients accumulate like torch's."""
    res = []
    for T in (torch, glassgrad):
        T.manual_seed(1)
        m = T.nn.Conv2d(2, 3, 3, padding=1)
        x = T.ones(1, 2, 4, 4)
        (m(x).sum() + m(m.weight.new_ones(1, 2, 4, 4) * 2).pow(2).sum()).backward()
        res.append((A(m.weight.grad), A(m.bias.grad)))
    np.testing.assert_allclose(res[1][0], res[0][0], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(res[1][1], res[0][1], rtol=1e-5, atol=1e-4)


def test_grid_sample_affine_grid_default_align_corners_warns():
    theta = np.array([[[0.9, 0.1, 0.05], [-0.2, 1.1, 0.0]]], np.float32)
    x = np.random.default_rng(3).standard_normal((1, 2, 4, 5)).astype(np.float32)
    outs = []
    for T in (torch, glassgrad):
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
            g = T.nn.functional.affine_grid(T.tensor(theta), [1, 2, 3, 3])
        with pytest.warns(UserWarning, match="Default grid_sample and affine_grid behavior has changed"):
            outs.append(A(T.nn.functional.grid_sample(T.tensor(x), g)))
    # the sampling grid comes from a float32 batched GEMM (affine_grid) and grid_sample blends four pixels with
    # vectorised float32 arithmetic, both rounded per CPU; the libraries already differ by 8e-7 at a scale of 1.6,
    # a tenth of the old atol=1e-6.  rtol 1e-5 plus 1e-5 of the output's scale: a wrong corner convention or
    # pixel shifts values by O(0.1).
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-5, atol=1e-5 * np.abs(outs[0]).max())


def _cnn(T):
    nn = T.nn
    T.manual_seed(11)
    return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(6, 8, 3, stride=2, padding=1, padding_mode="reflect"),
                         nn.ReLU(), nn.AdaptiveAvgPool2d((2, 2)), nn.Flatten(), nn.Linear(32, 5))


def test_small_cnn_training_steps_match_torch():
    """A LeNet-style stack: repr, and three manual SGD steps give the same parameters as torch."""
    tm, gm = _cnn(torch), _cnn(glassgrad)
    assert repr(gm) == repr(tm)
    rng = np.random.default_rng(4)
    for _ in range(3):
        x = rng.standard_normal((4, 3, 12, 12)).astype(np.float32)
        for T, m in ((torch, tm), (glassgrad, gm)):
            m.zero_grad()
            loss = (m(T.tensor(x)) ** 2).mean()
            loss.backward()
            with T.no_grad():
                for p in m.parameters():
                    p -= 0.1 * p.grad
    for (tn, tp), (gn, gp) in zip(tm.named_parameters(), gm.named_parameters()):
        assert tn == gn
        np.testing.assert_allclose(A(gp), A(tp), atol=1e-5, rtol=1e-4, err_msg=tn)
