"""Every nn module on the device (issue 17): each module class glassgrad.nn exports is built with a fixed seed,
moved with .cuda() -- the strict stand-in device here (GLASSGRAD_STRICT_DEVICE=1), CuPy on a GPU -- and run
forward + backward on a small input; its outputs, the input gradients and every parameter gradient must equal the
same module's on the CPU (float32 tolerance) and live on the device, as must every parameter and buffer.  Also:
module.to("cuda") / .cpu() / .to(dtype) round trips, a cuda module's state_dict, load_state_dict from a cpu one.

Train-mode randomness (dropout family, RReLU, fractional pooling) is compared with the same seed: these tests draw
a CUDA tensor's random numbers from the CPU stream (tests/strict/conftest.py's host_stream_for_cuda), so both runs
see the same numbers.  The device run's forward and backward make no copy between host and device (recorded by
the strict device, uploads included)."""
import contextlib
import inspect

import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend, nn

RTOL, ATOL = 1e-4, 1e-5

# Inputs: a shape tuple is a float32 standard-normal tensor that requires grad; ("int", high, shape) an int64 tensor
# in [0, high); ("pos", shape) positive floats (requires grad); ("prob", shape) floats in (0.05, 0.95) (requires
# grad); ("sign", shape) +-1 floats; ("t", tensor) the given tensor; ("bool", p, shape) a mask (True with prob. p).
X1, X2, X3 = (2, 4, 9), (2, 4, 7, 6), (2, 4, 5, 6, 5)
CONV = dict(in_channels=4, out_channels=6, kernel_size=3)
SEQ, TGT = (5, 2, 8), (4, 2, 8)          # (T, N, E) for the transformer family

SPECS = {
    "Linear": ((5, 3), [(4, 5)]),
    "NonDynamicallyQuantizableLinear": ((5, 3), [(4, 5)]),
    "LazyLinear": ((3,), [(4, 5)]),
    "Bilinear": ((5, 4, 3), [(6, 5), (6, 4)]),
    "Identity": ((), [(3, 4)]),
    "Conv1d": ((), [X1], CONV), "Conv2d": ((), [X2], dict(CONV, padding=1, stride=2)),
    "Conv3d": ((), [X3], dict(CONV, groups=2, dilation=1)),
    "ConvTranspose1d": ((), [X1], dict(CONV, stride=2)),
    "ConvTranspose2d": ((), [X2], dict(CONV, stride=2, output_padding=1)),
    "ConvTranspose3d": ((), [X3], dict(CONV, groups=2)),
    "LazyConv1d": ((6, 3), [X1]), "LazyConv2d": ((6, 3), [X2]), "LazyConv3d": ((6, 3), [X3]),
    "LazyConvTranspose1d": ((6, 3), [X1]), "LazyConvTranspose2d": ((6, 3), [X2]),
    "LazyConvTranspose3d": ((6, 3), [X3]),
    "Fold": ((), [(2, 12, 12)], dict(output_size=(4, 5), kernel_size=2)),
    "Unfold": ((), [X2], dict(kernel_size=2, stride=1, padding=1)),
    "MaxPool1d": ((3, 2), [X1]), "MaxPool2d": ((2,), [X2]), "MaxPool3d": ((2,), [X3]),
    "AvgPool1d": ((3, 2, 1), [X1]), "AvgPool2d": ((2,), [X2], dict(ceil_mode=True)),
    "AvgPool3d": ((2,), [X3], dict(count_include_pad=False, padding=1)),
    "AdaptiveAvgPool1d": ((4,), [X1]), "AdaptiveAvgPool2d": (((3, 4),), [X2]), "AdaptiveAvgPool3d": ((2,), [X3]),
    "AdaptiveMaxPool1d": ((4,), [X1]), "AdaptiveMaxPool2d": (((3, 4),), [X2]), "AdaptiveMaxPool3d": ((2,), [X3]),
    "FractionalMaxPool2d": ((2,), [X2], dict(output_size=(3, 3))),
    "FractionalMaxPool3d": ((2,), [X3], dict(output_ratio=0.5)),
    "LPPool1d": ((2, 3), [("pos", X1)]), "LPPool2d": ((3, 2), [("pos", X2)]), "LPPool3d": ((2, 2), [("pos", X3)]),
    "BatchNorm1d": ((4,), [X1]), "BatchNorm2d": ((4,), [X2]), "BatchNorm3d": ((4,), [X3]),
    "LazyBatchNorm1d": ((), [X1]), "LazyBatchNorm2d": ((), [X2]), "LazyBatchNorm3d": ((), [X3]),
    "SyncBatchNorm": ((4,), [X2]),
    "InstanceNorm1d": ((4,), [X1], dict(affine=True, track_running_stats=True)),
    "InstanceNorm2d": ((4,), [X2], dict(affine=True)), "InstanceNorm3d": ((4,), [X3]),
    "LazyInstanceNorm1d": ((), [X1], dict(affine=True)), "LazyInstanceNorm2d": ((), [X2]),
    "LazyInstanceNorm3d": ((), [X3]),
    "GroupNorm": ((2, 4), [X2]), "LayerNorm": (((7, 6),), [X2]), "RMSNorm": ((6,), [X2]),
    "LocalResponseNorm": ((3,), [X2]), "CrossMapLRN2d": ((3,), [X2]),
    "PReLU": ((4,), [X2]), "RReLU": ((), [X2]), "GLU": ((), [(3, 4, 6)]),
    "Threshold": ((0.1, 20.0), [X2]), "Hardtanh": ((-0.5, 0.5), [X2]), "Softmax": ((1,), [X2]),
    "Softmin": ((1,), [X2]), "LogSoftmax": ((1,), [X2]), "Softmax2d": ((), [X2]),
    "Dropout": ((0.3,), [X2]), "Dropout1d": ((0.3,), [X1]), "Dropout2d": ((0.3,), [X2]),
    "Dropout3d": ((0.3,), [X3]), "AlphaDropout": ((0.3,), [X2]), "FeatureAlphaDropout": ((0.3,), [X2]),
    "Embedding": ((10, 3), [("int", 10, (4, 5))], dict(padding_idx=2, max_norm=1.5)),
    "EmbeddingBag": ((10, 3), [("int", 10, (4, 5))], dict(mode="max")),
    "RNN": ((5, 6, 2), [(4, 3, 5)], dict(nonlinearity="relu", bidirectional=True)),
    "LSTM": ((5, 6, 2), [(3, 4, 5)], dict(batch_first=True, proj_size=3, bidirectional=True)),
    "GRU": ((5, 6), [(4, 3, 5)], dict(bidirectional=True)),
    "RNNCell": ((5, 6), [(3, 5), (3, 6)]), "LSTMCell": ((5, 6), [(3, 5)]), "GRUCell": ((5, 6), [(3, 5), (3, 6)]),
    "MultiheadAttention": ((8, 2), [SEQ, SEQ, SEQ], dict(kdim=8, vdim=8)),
    "TransformerEncoderLayer": ((8, 2, 16, 0.0), [SEQ]),
    "TransformerDecoderLayer": ((8, 2, 16, 0.0), [TGT, SEQ], dict(norm_first=True, activation="gelu")),
    "Transformer": ((), [SEQ, TGT], dict(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                                         dim_feedforward=16, dropout=0.0)),
    "TransformerEncoder": (None, [SEQ]), "TransformerDecoder": (None, [TGT, SEQ]),
    "ConstantPad1d": ((2, 1.5), [X1]), "ConstantPad2d": (((1, 2, 0, 1), -1.0), [X2]),
    "ConstantPad3d": ((1, 0.5), [X3]), "ZeroPad1d": ((2,), [X1]), "ZeroPad2d": (((1, 2, 0, 1),), [X2]),
    "ZeroPad3d": ((1,), [X3]), "ReflectionPad1d": ((2,), [X1]), "ReflectionPad2d": (((1, 2, 0, 1),), [X2]),
    "ReflectionPad3d": ((1,), [X3]), "ReplicationPad1d": ((2,), [X1]), "ReplicationPad2d": ((2,), [X2]),
    "ReplicationPad3d": ((1,), [X3]), "CircularPad1d": ((2,), [X1]), "CircularPad2d": ((1,), [X2]),
    "CircularPad3d": ((1,), [X3]),
    "Upsample": ((), [X2], dict(scale_factor=2, mode="bilinear", align_corners=False)),
    "UpsamplingBilinear2d": ((), [X2], dict(scale_factor=2)), "UpsamplingNearest2d": ((), [X2], dict(size=(9, 8))),
    "PixelShuffle": ((2,), [(2, 8, 3, 4)]), "PixelUnshuffle": ((2,), [(2, 2, 6, 4)]), "ChannelShuffle": ((2,), [X2]),
    "Flatten": ((), [X2]), "Unflatten": ((1, (2, 2)), [X2]),
    "CosineSimilarity": ((), [(4, 6), (4, 6)]), "PairwiseDistance": ((), [(4, 6), (4, 6)]),
    "Sequential": (None, [(4, 5)]), "ModuleList": (None, [(4, 5)]), "ModuleDict": (None, [(4, 5)]),
    "ParameterList": (None, [(4, 5)]), "ParameterDict": (None, [(4, 5)]), "Container": (None, [(4, 5)]),
    "DataParallel": (None, [(4, 5)]),
    "AdaptiveLogSoftmaxWithLoss": ((8, 12, [4, 8]), [(6, 8), ("int", 12, (6,))], dict(div_value=2.0)),
    # losses
    "L1Loss": ((), [(4, 5), (4, 5)]), "MSELoss": ((), [(4, 5), (4, 5)]),
    "HuberLoss": ((), [(4, 5), (4, 5)], dict(delta=0.5)), "SmoothL1Loss": ((), [(4, 5), (4, 5)], dict(beta=0.5)),
    "BCELoss": ((), [("prob", (4, 5)), ("prob", (4, 5))]),
    "BCEWithLogitsLoss": ((), [(4, 5), ("prob", (4, 5))]),
    "CrossEntropyLoss": ((), [(4, 5, 3), ("int", 5, (4, 3))], dict(label_smoothing=0.1, ignore_index=1)),
    "NLLLoss": ((), [(4, 5), ("int", 5, (4,))]), "NLLLoss2d": ((), [(2, 5, 3, 3), ("int", 5, (2, 3, 3))]),
    "KLDivLoss": ((), [(4, 5), ("prob", (4, 5))], dict(reduction="batchmean")),
    "PoissonNLLLoss": ((), [(4, 5), ("pos", (4, 5))]),
    "GaussianNLLLoss": ((), [(4, 5), (4, 5), ("pos", (4, 5))]),
    "CosineEmbeddingLoss": ((), [(4, 5), (4, 5), ("sign", (4,))], dict(margin=0.2)),
    "HingeEmbeddingLoss": ((), [(4, 5), ("sign", (4, 5))]),
    "MarginRankingLoss": ((), [(6,), (6,), ("sign", (6,))], dict(margin=0.1)),
    "MultiLabelMarginLoss": ((), [(3, 5), ("t", [[3, 0, -1, 1, 2], [1, 2, 3, -1, 0], [4, -1, 0, 0, 0]])]),
    "MultiLabelSoftMarginLoss": ((), [(4, 5), ("int", 2, (4, 5))]),
    "MultiMarginLoss": ((), [(4, 5), ("int", 5, (4,))], dict(p=2, margin=0.5)),
    "SoftMarginLoss": ((), [(4, 5), ("sign", (4, 5))]),
    "TripletMarginLoss": ((), [(4, 6), (4, 6), (4, 6)], dict(swap=True)),
    "TripletMarginWithDistanceLoss": ((), [(4, 6), (4, 6), (4, 6)], dict(margin=0.5)),
    "CTCLoss": ((), [(6, 2, 5), ("int", 4, (2, 3)), ("t", [6, 5]), ("t", [3, 2])]),
    "LinearCrossEntropyLoss": ((5, 7), [(4, 5), ("int", 7, (4,))], dict(bias=True, label_smoothing=0.1)),
    "MaxUnpool1d": (None, [X1]), "MaxUnpool2d": (None, [X2]), "MaxUnpool3d": (None, [X3]),
}

# Module classes that are not layers one can run: (name, why).
SKIPPED = {
    "Module": "the abstract base class (its forward is not implemented)",
    "RNNBase": "the base of RNN / LSTM / GRU, tested through them",
    "RNNCellBase": "the base of the cells, tested through them",
}


def _build_special(name):
    if name == "TransformerEncoder":
        return nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, 0.0), 2, norm=nn.LayerNorm(8))
    if name == "TransformerDecoder":
        return nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, 0.0), 2)
    if name == "Sequential":
        return nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 2))
    if name == "DataParallel":
        return nn.DataParallel(nn.Linear(5, 2))
    if name.startswith("MaxUnpool"):
        return _Unpool(int(name[-2]))
    return _Holder(name)


class _Unpool(nn.Module):
    """MaxUnpool{1,2,3}d of MaxPool{1,2,3}d's output and indices."""

    def __init__(self, nd):
        super().__init__()
        self.pool = getattr(nn, f"MaxPool{nd}d")(2, return_indices=True)
        self.unpool = getattr(nn, f"MaxUnpool{nd}d")(2)

    def forward(self, x):
        y, i = self.pool(x)
        return self.unpool(y, i, output_size=x.shape[2:]), i


class _Holder(nn.Module):
    """A container class (ModuleList / ModuleDict / ParameterList / ParameterDict / Container) used in a model."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        if kind == "ModuleList":
            self.c = nn.ModuleList([nn.Linear(5, 5), nn.Linear(5, 2)])
        elif kind == "ModuleDict":
            self.c = nn.ModuleDict({"a": nn.Linear(5, 5), "b": nn.Linear(5, 2)})
        elif kind == "ParameterList":
            self.c = nn.ParameterList([nn.Parameter(gg.randn(5, 3)), nn.Parameter(gg.randn(3))])
        elif kind == "ParameterDict":
            self.c = nn.ParameterDict({"w": nn.Parameter(gg.randn(5, 3)), "b": nn.Parameter(gg.randn(3))})
        else:
            self.c = nn.Container(a=nn.Linear(5, 2))

    def forward(self, x):
        if self.kind == "ModuleList":
            return self.c[1](gg.relu(self.c[0](x)))
        if self.kind == "ModuleDict":
            return self.c["b"](gg.relu(self.c["a"](x)))
        if self.kind == "ParameterList":
            return x @ self.c[0] + self.c[1]
        if self.kind == "ParameterDict":
            return x @ self.c["w"] + self.c["b"]
        return self.c.a(x)


def _classes():
    return sorted(n for n in dir(nn) if inspect.isclass(getattr(nn, n)) and issubclass(getattr(nn, n), nn.Module))


NAMES = _classes()
DEFAULT = ((), [(2, 4, 7, 6)])                      # a module of no arguments on one float input (activations)


def _inputs(specs, rng):
    out = []
    for s in specs:
        if isinstance(s, tuple) and s and isinstance(s[0], str):
            kind = s[0]
            if kind == "int":
                out.append(gg.from_numpy(rng.integers(0, s[1], s[2]).astype(np.int64)))
            elif kind == "t":
                out.append(gg.tensor(s[1]))
            elif kind == "bool":
                out.append(gg.from_numpy(rng.random(s[2]) < s[1]))
            elif kind == "sign":
                out.append(gg.from_numpy(np.where(rng.random(s[1]) < 0.5, -1.0, 1.0).astype(np.float32)))
            else:
                a = rng.random(s[1]) * 0.9 + 0.05 if kind == "prob" else rng.random(s[1]) * 2 + 0.1
                out.append(gg.from_numpy(a.astype(np.float32)).requires_grad_(True))
        else:
            out.append(gg.from_numpy(rng.standard_normal(s).astype(np.float32)).requires_grad_(True))
    return out


def _make(name):
    spec = SPECS.get(name, DEFAULT)
    args, kwargs = spec[0], spec[2] if len(spec) > 2 else {}
    gg.manual_seed(0)
    m = _build_special(name) if args is None else getattr(nn, name)(*args, **kwargs)
    return m, spec[1]


def _flat(o):
    if isinstance(o, gg.Tensor):
        return [o]
    if isinstance(o, (tuple, list)):
        return [t for v in o for t in _flat(v)]
    if hasattr(o, "_fields"):
        return [t for v in o for t in _flat(v)]
    return []


def run_case(make, device, call=None, train=True):
    """`make()` -> (module, input specs), on `device`; forward (``call(m, *xs)``, else ``m(*xs)``) in train or
    eval mode, then backward of a fixed random weighting of every float output: (module, inputs, outputs)."""
    m, specs = make()
    xs = _inputs(specs, np.random.default_rng(1))
    if device == "cuda":
        m = m.cuda()
        xs = [x.detach().cuda().requires_grad_(x.requires_grad) for x in xs]
    m.train(train)
    gg.manual_seed(2)                          # the same random stream for dropout / RReLU / fractional pooling
    with _no_copies(device) as copies:
        outs = _flat(call(m, *xs) if call is not None else m(*xs))
    _check_copies(copies, "forward")
    rng = np.random.default_rng(3)
    loss = None
    for o in outs:
        if o.requires_grad and o.dtype.is_floating_point:
            w = gg.from_numpy(rng.standard_normal(tuple(o.shape)).astype(np.float32)).to(o.device)
            t = (o * w).sum()
            loss = t if loss is None else loss + t
    if loss is not None:
        with _no_copies(device) as copies:
            loss.backward()
        _check_copies(copies, "backward")
    return m, xs, outs


def _no_copies(device):
    if device != "cuda" or not backend.STRICT:
        return contextlib.nullcontext([])
    from glassgrad import _strict
    return _strict.recording(uploads=True)


def _check_copies(copies, what):
    # a tensor made from Python data (torch.tensor(...)) is uploaded by necessity; the host-stream switch's draws too
    bad = [c for c in copies if ", in tensor\n" not in c[1] and "random.py" not in c[1]
           and "in rrelu_with_noise" not in c[1]]
    assert not bad, f"{what}: an array of {bad[0][0]} copied between host and device:\n{bad[0][1]}"


def _same(a, b, what):
    assert b.device.type == "cuda", f"{what}: on {b.device}, not cuda"
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape), f"{what}: {b.dtype}{tuple(b.shape)}"
    x, y = a.detach().numpy(), b.detach().cpu().numpy()
    if x.dtype.kind in "fc":
        np.testing.assert_allclose(y, x, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(y, x, err_msg=what)


@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("name", [n for n in NAMES if n not in SKIPPED])
def test_module_on_device_equals_cpu(name, train):
    compare(name, run_case(lambda: _make(name), "cpu", train=train), run_case(lambda: _make(name), "cuda", train=train))


def compare(name, cpu, dev):
    """The device run `dev` equals the CPU run `cpu` (run_case's results): outputs, input / parameter gradients,
    parameters and buffers -- and all of the device's are on the device."""
    (cm, cx, co), (dm, dx, do) = cpu, dev
    assert len(co) == len(do) and co, f"{name}: {len(co)} outputs on the CPU, {len(do)} on the device"
    for i, (a, b) in enumerate(zip(co, do)):
        _same(a, b, f"{name} output {i}")
    for i, (a, b) in enumerate(zip(cx, dx)):
        if a.requires_grad and a.grad is not None:
            assert b.grad is not None, f"{name}: no gradient for input {i} on the device"
            _same(a.grad, b.grad, f"{name} grad of input {i}")
    cp, dp = dict(cm.named_parameters()), dict(dm.named_parameters())
    assert cp.keys() == dp.keys()
    for k in cp:
        _same(cp[k], dp[k], f"{name} parameter {k}")
        if cp[k].grad is not None:
            assert dp[k].grad is not None, f"{name}: no gradient for {k} on the device"
            _same(cp[k].grad, dp[k].grad, f"{name} grad of {k}")
    cb, db = dict(cm.named_buffers()), dict(dm.named_buffers())
    assert cb.keys() == db.keys()
    for k in cb:
        _same(cb[k], db[k], f"{name} buffer {k}")


def test_skip_list_names_real_classes():
    assert set(SKIPPED) <= set(NAMES)
    assert set(SPECS) <= set(NAMES), set(SPECS) - set(NAMES)


def _net():
    gg.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 2))


def test_to_cuda_cpu_and_dtype_round_trips():
    m = _net()
    ref = {k: v.clone() for k, v in m.state_dict().items()}
    x = gg.randn(2, 3, 6, 6)
    m.eval()
    y_cpu = m(x)
    assert m.to("cuda") is m
    assert all(t.device.type == "cuda" for t in m.state_dict().values())
    y_dev = m(x.cuda())
    _same(y_cpu, y_dev, "forward after .to('cuda')")
    m.to(gg.float64)
    assert all(p.dtype == gg.float64 and p.device.type == "cuda" for p in m.parameters())
    assert m.state_dict()["1.num_batches_tracked"].dtype == gg.int64      # integer buffers keep their dtype
    y64 = m(x.double().cuda())
    assert y64.device.type == "cuda" and y64.dtype == gg.float64
    np.testing.assert_allclose(y64.detach().cpu().numpy(), y_cpu.detach().numpy(), rtol=1e-5, atol=1e-6)
    m.to("cpu", gg.float32)
    for k, v in m.state_dict().items():
        assert v.device.type == "cpu" and v.dtype == ref[k].dtype, k
        np.testing.assert_array_equal(v.numpy(), ref[k].numpy(), err_msg=k)
    m.cuda().cpu()
    assert all(p.device.type == "cpu" for p in m.parameters())
    m.to(device="cuda", dtype=gg.float16)
    assert all(p.device.type == "cuda" and p.dtype == gg.float16 for p in m.parameters())


def test_state_dict_of_cuda_module_and_load_from_cpu():
    cpu = _net()
    dev = _net().cuda()
    sd = dev.state_dict()
    assert sd.keys() == cpu.state_dict().keys()
    assert all(v.device.type == "cuda" for v in sd.values())
    gg.manual_seed(5)
    other = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 4 * 4, 2))
    with gg.no_grad():
        for p in other.parameters():
            p.mul_(2.0)
    res = dev.load_state_dict(other.state_dict())        # a cpu state_dict into a cuda module
    assert not res.missing_keys and not res.unexpected_keys
    for k, v in dev.state_dict().items():
        assert v.device.type == "cuda", k
        np.testing.assert_array_equal(v.cpu().numpy(), other.state_dict()[k].numpy(), err_msg=k)
    assert all(isinstance(p, nn.Parameter) and p.device.type == "cuda" for p in dev.parameters())
    back = _net()
    back.load_state_dict(dev.state_dict())               # and a cuda state_dict into a cpu module
    for k, v in back.state_dict().items():
        assert v.device.type == "cpu", k
        np.testing.assert_array_equal(v.numpy(), other.state_dict()[k].numpy(), err_msg=k)
    x = gg.randn(2, 3, 6, 6)
    dev.eval()
    back.eval()
    _same(back(x), dev(x.cuda()), "forward after load_state_dict")


def test_copies_and_conversions_stay_on_device():
    import copy
    m = _net().cuda()
    for what, r in [("deepcopy", copy.deepcopy(m)), ("to_empty", copy.deepcopy(m).to_empty(device="cuda")),
                    ("half", copy.deepcopy(m).half()), ("double", copy.deepcopy(m).double())]:
        ts = list(r.parameters()) + list(r.buffers())
        assert all(t.device.type == "cuda" for t in ts), what
    d = copy.deepcopy(m)
    for k, v in d.state_dict().items():
        np.testing.assert_array_equal(v.cpu().numpy(), m.state_dict()[k].cpu().numpy(), err_msg=k)
    assert copy.deepcopy(m).double()[4].weight.dtype == gg.float64


@pytest.mark.parametrize("how", ["forward", "load_state_dict", "deepcopy"])
def test_lazy_module_moved_before_materializing(how):
    """A Lazy module moved with .cuda() before its first call materializes on the device (torch: the
    uninitialized parameters and buffers keep their class through .cuda() and remember the device)."""
    import copy
    gg.manual_seed(0)
    m = nn.Sequential(nn.LazyConv2d(3, 2), nn.LazyBatchNorm2d(), nn.Flatten(), nn.LazyLinear(2)).cuda()
    assert isinstance(m[1].running_mean, nn.parameter.UninitializedBuffer)
    if how == "deepcopy":
        m = copy.deepcopy(m)
    x = gg.randn(2, 4, 5, 5)
    if how == "load_state_dict":
        gg.manual_seed(1)
        ref = nn.Sequential(nn.Conv2d(4, 3, 2), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(48, 2))
        m.load_state_dict(ref.state_dict())
        ref.eval()
        m.eval()
        _same(ref(x), m(x.cuda()), "forward after load_state_dict")
    else:
        m(x.cuda())
    assert all(t.device.type == "cuda" for t in list(m.parameters()) + list(m.buffers()))
    assert not any(nn.parameter.is_lazy(t) for t in list(m.parameters()) + list(m.buffers()))


INITS = {
    "uniform_": (lambda t: nn.init.uniform_(t, -0.5, 2.0)), "normal_": (lambda t: nn.init.normal_(t, 1.0, 0.5)),
    "trunc_normal_wide": (lambda t: nn.init.trunc_normal_(t, 0.0, 1.0, -1.0, 1.5)),
    "trunc_normal_narrow": (lambda t: nn.init.trunc_normal_(t, 0.0, 1.0, 1.0, 1.5)),
    "constant_": (lambda t: nn.init.constant_(t, 0.3)), "ones_": nn.init.ones_, "zeros_": nn.init.zeros_,
    "eye_": (lambda t: nn.init.eye_(t.view(6, -1))), "dirac_": (lambda t: nn.init.dirac_(t, groups=2)),
    "xavier_uniform_": (lambda t: nn.init.xavier_uniform_(t, gain=2.0)), "xavier_normal_": nn.init.xavier_normal_,
    "kaiming_uniform_": (lambda t: nn.init.kaiming_uniform_(t, a=0.1, mode="fan_out")),
    "kaiming_normal_": (lambda t: nn.init.kaiming_normal_(t, nonlinearity="relu")),
    "orthogonal_": (lambda t: nn.init.orthogonal_(t, gain=1.5)),
    "orthogonal_wide": (lambda t: nn.init.orthogonal_(t.view(3, -1))),
    "sparse_": (lambda t: nn.init.sparse_(t.view(6, -1), 0.5)),
}


@pytest.mark.parametrize("name", sorted(INITS))
def test_init_on_device_equals_cpu(name):
    """nn.init fills a cuda tensor in place, on the device, with the CPU's values for the same seed."""
    out = []
    for device in ("cpu", "cuda"):
        t = gg.empty(6, 4, 3, device=device)
        gg.manual_seed(7)
        r = INITS[name](t)
        assert r.device.type == device and t.device.type == device
        out.append(t)
    _same(out[0], out[1], f"nn.init.{name}")


@pytest.mark.parametrize("name", [n for n in NAMES if n not in SKIPPED])
def test_module_built_on_default_cuda_device(name):
    """Built under set_default_device('cuda'), a module's parameters and buffers are allocated on the device with
    the values the same seed gives on the CPU (initialisation computes where the tensors live)."""
    cm, _ = _make(name)
    gg.set_default_device("cuda")
    try:
        dm, _ = _make(name)
    finally:
        gg.set_default_device("cpu")
    for (k, a), (k2, b) in zip(list(cm.named_parameters()) + list(cm.named_buffers()),
                               list(dm.named_parameters()) + list(dm.named_buffers())):
        assert k == k2
        if nn.parameter.is_lazy(a):
            assert nn.parameter.is_lazy(b) and b.device.type == "cuda", k
            continue
        _same(a, b, f"{name} {k}")
