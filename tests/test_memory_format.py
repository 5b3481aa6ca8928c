"""Memory formats (channels_last) against torch: the format objects, strides of every entry point that takes
memory_format, is_contiguous for each format, the preserve rules of clone / to / *_like, gradients through
the conversions, the layouts ops give channels-last inputs, nn.Module.to and the conv weight converters."""
import copy
import pickle

import numpy as np
import pytest
import torch

import glassgrad as gg

FORMATS = ["contiguous_format", "channels_last", "channels_last_3d", "preserve_format"]


def both(fn):
    """fn(lib) for torch and glassgrad: (torch's result, glassgrad's result)."""
    return fn(torch), fn(gg)


def fmt(L, name):
    return getattr(L, name)


def outcome(fn, L):
    """('ok', strides) or (exception type name, message)."""
    try:
        r = fn(L)
    except Exception as e:          # noqa: BLE001  (compared with torch's)
        return type(e).__name__, str(e)
    return "ok", tuple(r.stride()) if hasattr(r, "stride") else r


def same_outcome(fn):
    t, g = outcome(fn, torch), outcome(fn, gg)
    assert t == g


# -- the format objects ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FORMATS + ["legacy_contiguous_format"])
def test_format_objects(name):
    t, g = fmt(torch, name), fmt(gg, name)
    assert repr(g) == repr(t) and str(g) == str(t)
    assert type(g).__name__ == type(t).__name__ == "memory_format"
    assert isinstance(g, gg.memory_format)
    assert pickle.loads(pickle.dumps(g)) is g
    assert copy.copy(g) is g and copy.deepcopy(g) is g
    assert g == g and hash(g) == hash(g)


def test_format_identities():
    assert gg.legacy_contiguous_format is gg.contiguous_format
    assert (torch.legacy_contiguous_format is torch.contiguous_format) is True
    assert gg.channels_last != gg.contiguous_format
    with pytest.raises(TypeError, match="cannot create 'torch.memory_format' instances"):
        gg.memory_format()
    with pytest.raises(TypeError, match="cannot create 'torch.memory_format' instances"):
        torch.memory_format()


# -- torch.empty(memory_format=) ---------------------------------------------------------------------------
SHAPES4 = [(2, 3, 4, 5), (2, 1, 3, 4), (2, 3, 1, 1), (1, 3, 1, 4), (0, 3, 4, 2), (2, 3, 0, 2), (2, 0, 3, 4)]
SHAPES5 = [(2, 3, 4, 5, 6), (2, 1, 3, 1, 2), (0, 2, 3, 4, 5)]


@pytest.mark.parametrize("shape", SHAPES4 + SHAPES5 + [(2, 3), (2, 3, 4)])
@pytest.mark.parametrize("name", FORMATS)
def test_empty_strides(shape, name):
    same_outcome(lambda L: L.empty(*shape, memory_format=fmt(L, name)))


def test_empty_bad_format():
    same_outcome(lambda L: L.empty(2, 3, 4, 5, memory_format=1))


# -- a family of layouts, built the same way in both libraries ----------------------------------------------
def _family():
    cl = "channels_last"
    return {
        "contig": lambda L: L.arange(120.).reshape(2, 3, 4, 5),
        "cl": lambda L: L.arange(120.).reshape(2, 3, 4, 5).contiguous(memory_format=L.channels_last),
        "cl_c1": lambda L: L.arange(24.).reshape(2, 1, 3, 4).contiguous(memory_format=fmt(L, cl)),
        "cl_hw1": lambda L: L.arange(6.).reshape(2, 3, 1, 1).contiguous(memory_format=fmt(L, cl)),
        "nhwc_permuted": lambda L: L.arange(120.).reshape(2, 4, 5, 3).permute(0, 3, 1, 2),
        "permuted": lambda L: L.arange(120.).reshape(2, 3, 4, 5).permute(0, 2, 1, 3),
        "sliced": lambda L: L.arange(240.).reshape(2, 3, 8, 5)[:, :, ::2],
        "cl_sliced_h": lambda L: L.arange(240.).reshape(2, 3, 8, 5).contiguous(memory_format=fmt(L, cl))[:, :, ::2],
        "cl_sliced_c": lambda L: L.arange(240.).reshape(2, 6, 4, 5).contiguous(memory_format=fmt(L, cl))[:, ::2],
        "perm_sliced": lambda L: L.arange(240.).reshape(2, 3, 8, 5).permute(0, 3, 2, 1)[:, :, ::2],
        "expanded": lambda L: L.arange(3.).reshape(1, 3, 1, 1).expand(2, 3, 4, 5),
        "transposed_hw": lambda L: L.arange(120.).reshape(2, 3, 4, 5).transpose(2, 3),
        "cl3d": lambda L: L.arange(720.).reshape(2, 3, 4, 5, 6).contiguous(memory_format=L.channels_last_3d),
        "contig5": lambda L: L.arange(720.).reshape(2, 3, 4, 5, 6),
        "cl3d_sliced": lambda L: L.arange(720.).reshape(2, 3, 4, 5, 6).contiguous(
            memory_format=L.channels_last_3d)[:, :, :, ::2],
        "mat": lambda L: L.arange(12.).reshape(3, 4).t(),
        "vec": lambda L: L.arange(12.)[::3],
        "cl_empty": lambda L: L.empty(0, 3, 4, 2, memory_format=fmt(L, cl)),
        "n111": lambda L: L.arange(4.).reshape(4, 1, 1, 1),
        "n11w_sliced": lambda L: L.arange(20.).reshape(4, 1, 1, 5)[..., :1],
        "n1h1_cl": lambda L: L.arange(8.).reshape(2, 1, 4, 1).contiguous(memory_format=fmt(L, cl)),
        "strided_tie": lambda L: L.arange(100.).as_strided((2, 1, 3), (6, 3, 3)),
        "strided_tie4": lambda L: L.arange(200.).as_strided((2, 3, 1, 4), (40, 4, 4, 12)),
    }


FAMILY = _family()


@pytest.mark.parametrize("case", list(FAMILY))
def test_family_strides_agree(case):
    t, g = both(FAMILY[case])
    assert g.stride() == t.stride() and tuple(g.shape) == tuple(t.shape)
    np.testing.assert_array_equal(g.numpy(), t.numpy())


@pytest.mark.parametrize("case", list(FAMILY))
@pytest.mark.parametrize("name", FORMATS)
def test_is_contiguous(case, name):
    t, g = both(FAMILY[case])
    assert g.is_contiguous(memory_format=fmt(gg, name)) == t.is_contiguous(memory_format=fmt(torch, name))
    assert g.is_contiguous() == t.is_contiguous()


@pytest.mark.parametrize("case", list(FAMILY))
def test_suggested_format(case):
    """suggest_memory_format, seen through to(): it returns the tensor itself when the strides suggest the
    format asked for, and through a convolution's output layout."""
    def run(L, name):
        x = FAMILY[case](L)
        try:
            return x.to(memory_format=fmt(L, name)) is x
        except RuntimeError as e:
            return str(e)
    for name in FORMATS[:3]:
        assert run(gg, name) == run(torch, name), name


def test_is_contiguous_bad_args():
    same_outcome(lambda L: L.randn(2, 3, 4, 5).is_contiguous(memory_format=None))
    same_outcome(lambda L: L.randn(2, 3, 4, 5).is_contiguous(memory_format=1))
    with pytest.raises(TypeError):
        gg.randn(2, 3, 4, 5).is_contiguous(gg.channels_last)


@pytest.mark.parametrize("case", list(FAMILY))
@pytest.mark.parametrize("name", FORMATS)
def test_contiguous(case, name):
    same_outcome(lambda L: FAMILY[case](L).contiguous(memory_format=fmt(L, name)))

    def values(L):
        x = FAMILY[case](L)
        return x.contiguous(memory_format=fmt(L, name)).numpy()
    try:
        t = values(torch)
    except RuntimeError:
        return
    np.testing.assert_array_equal(values(gg), t)


@pytest.mark.parametrize("name", FORMATS)
def test_contiguous_returns_self(name):
    for case in ("contig", "cl", "cl3d"):
        def same(L):
            x = FAMILY[case](L)
            try:
                return x.contiguous(memory_format=fmt(L, name)) is x
            except RuntimeError as e:
                return str(e)
        assert same(gg) == same(torch)


def test_contiguous_bad_args():
    same_outcome(lambda L: L.randn(2, 3, 4, 5).contiguous(memory_format=None))
    same_outcome(lambda L: L.randn(2, 3, 4, 5).contiguous(memory_format=1))
    same_outcome(lambda L: L.tensor(1.).contiguous(memory_format=L.channels_last))


@pytest.mark.parametrize("case", [c for c in FAMILY if c != "cl_empty"])
@pytest.mark.parametrize("name", FORMATS + [None])
def test_clone(case, name):
    kw = (lambda L: {}) if name is None else (lambda L: {"memory_format": fmt(L, name)})
    same_outcome(lambda L: FAMILY[case](L).clone(**kw(L)))
    same_outcome(lambda L: L.clone(FAMILY[case](L), **kw(L)))
    try:
        t = FAMILY[case](torch).clone(**kw(torch)).numpy()
    except RuntimeError:
        return
    np.testing.assert_array_equal(FAMILY[case](gg).clone(**kw(gg)).numpy(), t)


def test_clone_bad_format():
    same_outcome(lambda L: L.randn(2, 3, 4, 5).clone(memory_format=1))


# -- to() and the dtype / device conversions -----------------------------------------------------------------
TO_CALLS = {
    "fmt": lambda L, f: {"args": (), "kw": {"memory_format": f}},
    "dtype_fmt": lambda L, f: {"args": (L.float64,), "kw": {"memory_format": f}},
    "same_dtype_fmt": lambda L, f: {"args": (L.float32,), "kw": {"memory_format": f}},
    "device_fmt": lambda L, f: {"args": ("cpu",), "kw": {"memory_format": f}},
    "device_dtype_fmt": lambda L, f: {"args": ("cpu", L.float64), "kw": {"memory_format": f}},
    "copy_fmt": lambda L, f: {"args": (), "kw": {"memory_format": f, "copy": True}},
    "tensor_fmt": lambda L, f: {"args": (L.zeros(1, dtype=L.float64),), "kw": {"memory_format": f}},
    "kw_dtype_fmt": lambda L, f: {"args": (), "kw": {"dtype": L.float16, "memory_format": f}},
}


def _f32(case):
    return lambda L: FAMILY[case](L).float()


@pytest.mark.parametrize("call", list(TO_CALLS))
@pytest.mark.parametrize("case", ["contig", "cl", "permuted", "sliced", "cl_sliced_h", "perm_sliced", "cl3d",
                                  "mat", "cl_hw1"])
@pytest.mark.parametrize("name", FORMATS)
def test_to(call, case, name):
    def run(L):
        x = _f32(case)(L)
        c = TO_CALLS[call](L, fmt(L, name))
        y = x.to(*c["args"], **c["kw"])
        return y, y is x
    t, g = outcome(lambda L: run(L)[0], torch), outcome(lambda L: run(L)[0], gg)
    assert g == t
    if t[0] == "ok":
        (ty, t_alias), (gy, g_alias) = run(torch), run(gg)
        assert g_alias == t_alias
        assert gy.dtype == getattr(gg, str(ty.dtype).split(".")[1])
        np.testing.assert_array_equal(gy.numpy(), ty.numpy())


@pytest.mark.parametrize("case", ["contig", "permuted", "perm_sliced", "cl_sliced_h", "expanded", "mat"])
def test_to_dtype_preserve_rule(case):
    """Without memory_format, a dtype change keeps a dense input's strides, else takes the suggested format."""
    same_outcome(lambda L: FAMILY[case](L).to(L.float32))
    same_outcome(lambda L: FAMILY[case](L).double())


def test_to_bad_format():
    for f in (lambda L: L.randn(2, 3, 4, 5).to(memory_format=1),
              lambda L: L.randn(2, 3, 4, 5).to(L.float64, memory_format="channels_last"),
              lambda L: L.randn(2, 3, 4).to(memory_format=L.channels_last),
              lambda L: L.randn(2, 3, 4, 5).to(memory_format=L.channels_last_3d),
              lambda L: L.randn(2, 3, 4, 5).to(memory_format=None)):
        same_outcome(f)


CASTS = ["float", "double", "half", "bfloat16", "long", "int", "short", "char", "byte", "bool", "cpu", "cfloat",
         "cdouble"]


@pytest.mark.parametrize("method", CASTS)
@pytest.mark.parametrize("name", FORMATS)
def test_cast_methods(method, name):
    def run(L):
        x = FAMILY["cl"](L)
        return getattr(x, method)(memory_format=fmt(L, name))
    same_outcome(run)
    same_outcome(lambda L: getattr(FAMILY["contig"](L), method)(memory_format=fmt(L, name)))
    with pytest.raises(TypeError):
        getattr(FAMILY["contig"](gg), method)(gg.channels_last)


def test_cast_methods_alias():
    for L in (torch, gg):
        x = FAMILY["cl"](L)
        assert x.float(memory_format=L.channels_last) is x
        assert x.cpu(memory_format=L.channels_last) is x
        assert x.float(memory_format=L.contiguous_format) is not x
        y = FAMILY["contig"](L)
        assert y.float(memory_format=L.contiguous_format) is y
        assert y.float(memory_format=L.channels_last) is not y


@pytest.mark.parametrize("dtype", ["torch.DoubleTensor", "torch.FloatTensor", None])
def test_type_memory_format(dtype):
    def run(L):
        d = {None: L.float64, "torch.DoubleTensor": dtype, "torch.FloatTensor": dtype}[dtype]
        return FAMILY["contig"](L).float().type(d, memory_format=L.channels_last)
    same_outcome(run)


# -- the *_like factories -------------------------------------------------------------------------------------
LIKES = {
    "empty_like": lambda L, x, **k: L.empty_like(x, **k),
    "zeros_like": lambda L, x, **k: L.zeros_like(x, **k),
    "ones_like": lambda L, x, **k: L.ones_like(x, **k),
    "full_like": lambda L, x, **k: L.full_like(x, 2.5, **k),
    "rand_like": lambda L, x, **k: L.rand_like(x, **k),
    "randn_like": lambda L, x, **k: L.randn_like(x, **k),
    "randint_like": lambda L, x, **k: L.randint_like(x, 10, **k),
}
LIKE_CASES = [c for c in FAMILY if c not in ("cl_empty",)] + ["big_cl", "big_perm"]
FAMILY_BIG = {
    "big_cl": lambda L: L.zeros(2, 3, 8, 8).contiguous(memory_format=L.channels_last),
    "big_perm": lambda L: L.zeros(4, 8, 6, 2).permute(3, 1, 0, 2),
}


@pytest.mark.parametrize("fn", list(LIKES))
@pytest.mark.parametrize("case", LIKE_CASES)
@pytest.mark.parametrize("name", FORMATS + [None])
def test_like(fn, case, name):
    src = FAMILY.get(case) or FAMILY_BIG[case]

    def run(L):
        kw = {} if name is None else {"memory_format": fmt(L, name)}
        L.manual_seed(3)
        return LIKES[fn](L, src(L).float(), **kw)
    t, g = outcome(run, torch), outcome(run, gg)
    if case in ("cl_c1", "cl_hw1") and name in (None, "preserve_format") and t[0] == "ok":
        # a C-contiguous input keeps NumPy's strides for its size-1 dims (the fast path): only those differ
        tr, gr = run(torch), run(gg)
        assert all(a == b for a, b, n in zip(tr.stride(), gr.stride(), tr.shape) if n != 1)
    else:
        assert g == t
    if t[0] == "ok" and fn != "empty_like":
        np.testing.assert_array_equal(run(gg).numpy(), run(torch).numpy())


def test_like_errors():
    same_outcome(lambda L: L.zeros_like(L.randn(2, 3, 4, 5), memory_format=1))
    same_outcome(lambda L: L.empty_like(L.randn(2, 3), memory_format=L.channels_last))
    same_outcome(lambda L: L.rand_like(L.randn(2, 3, 4, 5), memory_format=L.channels_last_3d))


def test_randn_like_channels_last_stream():
    """torch draws a non-contiguous result one normal at a time in memory order (no 16-wide fill)."""
    def run(L):
        L.manual_seed(7)
        return L.randn_like(L.zeros(2, 4, 5, 6), memory_format=L.channels_last)
    t, g = both(run)
    assert g.stride() == t.stride()
    np.testing.assert_array_equal(g.numpy(), t.numpy())


# -- gradients through the conversions ------------------------------------------------------------------------
CONVERSIONS = {
    "contiguous_cl": lambda L, x: x.contiguous(memory_format=L.channels_last),
    "clone_cl": lambda L, x: x.clone(memory_format=L.channels_last),
    "clone_preserve": lambda L, x: x.clone(memory_format=L.preserve_format),
    "to_cl": lambda L, x: x.to(memory_format=L.channels_last),
    "to_f64_cl": lambda L, x: x.to(L.float64, memory_format=L.channels_last),
    "double_cl": lambda L, x: x.double(memory_format=L.channels_last),
    "to_copy_cl": lambda L, x: x.to(memory_format=L.channels_last, copy=True),
    "back_to_contig": lambda L, x: x.contiguous(memory_format=L.channels_last).contiguous(),
    "cl_then_to_cf": lambda L, x: x.contiguous(memory_format=L.channels_last).to(memory_format=L.contiguous_format),
}


@pytest.mark.parametrize("conv", list(CONVERSIONS))
def test_conversion_grads(conv):
    w = np.random.default_rng(0).standard_normal((2, 3, 4, 5))

    def run(L):
        x = L.tensor(np.arange(120.).reshape(2, 3, 4, 5) / 7, dtype=L.float32, requires_grad=True)
        y = CONVERSIONS[conv](L, x)
        (y * L.tensor(w, dtype=y.dtype)).sum().backward()
        return x, y
    (tx, ty), (gx, gy) = both(run)
    assert type(gy.grad_fn).__name__ == type(ty.grad_fn).__name__
    assert gy.stride() == ty.stride()
    np.testing.assert_allclose(gx.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    assert gx.grad.stride() == tx.grad.stride()


def test_channels_last_leaf_grad_layout():
    """torch's gradient layout contract: a dense leaf's .grad takes the leaf's strides."""
    def run(L):
        x = L.randn(2, 3, 4, 5).contiguous(memory_format=L.channels_last).requires_grad_()
        (x * 2).sum().backward()
        g1 = x.grad.stride()
        (x.contiguous() * 3).sum().backward()          # accumulated in place: the layout stays
        p = L.randn(4, 2, 3).permute(1, 2, 0).requires_grad_()
        p.exp().sum().backward()
        q = L.randn(4, 6)[:, ::2].requires_grad_()       # not dense: the gradient is contiguous
        q.exp().sum().backward()
        return g1, x.grad.stride(), p.grad.stride(), q.grad.stride(), x.grad.numpy()
    t, g = both(run)
    assert g[:4] == t[:4]
    np.testing.assert_allclose(g[4], t[4])


# -- views and reshapes of channels-last tensors --------------------------------------------------------------
@pytest.mark.parametrize("op", ["view_flat", "view_same", "reshape_flat", "flatten", "permute_view",
                                "unsqueeze", "transpose_contig", "select_c", "narrow_w", "squeeze_hw1"])
def test_views_of_channels_last(op):
    ops = {
        "view_flat": lambda x: x.view(2, -1),
        "view_same": lambda x: x.view(2, 3, 4, 5),
        "reshape_flat": lambda x: x.reshape(2, -1),
        "flatten": lambda x: x.flatten(1),
        "permute_view": lambda x: x.permute(0, 2, 3, 1).view(-1, 3),
        "unsqueeze": lambda x: x.unsqueeze(2),
        "transpose_contig": lambda x: x.transpose(1, 3).contiguous(),
        "select_c": lambda x: x[:, 1],
        "narrow_w": lambda x: x.narrow(3, 1, 2),
        "squeeze_hw1": lambda x: x[:, :, :1, :1].squeeze(),
    }
    same_outcome(lambda L: ops[op](FAMILY["cl"](L)))
    try:
        t = ops[op](FAMILY["cl"](torch)).numpy()
    except RuntimeError:
        return
    np.testing.assert_array_equal(ops[op](FAMILY["cl"](gg)).numpy(), t)


# -- resize_ / resize_as_ with a memory format -----------------------------------------------------------------
@pytest.mark.parametrize("case", ["same_size", "new_size", "preserve", "rank", "contig_from_cl", "cl3d"])
def test_resize_memory_format(case):
    calls = {
        "same_size": lambda L: L.arange(24.).reshape(1, 2, 3, 4).resize_(1, 2, 3, 4, memory_format=L.channels_last),
        "new_size": lambda L: L.arange(24.).resize_(2, 3, 2, 2, memory_format=L.channels_last),
        "preserve": lambda L: L.arange(24.).resize_(2, 3, 2, 2, memory_format=L.preserve_format),
        "rank": lambda L: L.arange(24.).resize_(2, 3, 4, memory_format=L.channels_last),
        "contig_from_cl": lambda L: L.arange(24.).reshape(1, 2, 3, 4).contiguous(
            memory_format=L.channels_last).resize_(1, 2, 3, 4, memory_format=L.contiguous_format),
        "cl3d": lambda L: L.arange(48.).resize_(2, 3, 2, 2, 2, memory_format=L.channels_last_3d),
    }
    same_outcome(calls[case])
    try:
        t = calls[case](torch).numpy()
    except RuntimeError:
        return
    np.testing.assert_array_equal(calls[case](gg).numpy(), t)


@pytest.mark.parametrize("name", FORMATS + [None])
def test_resize_as_memory_format(name):
    def run(L):
        kw = {} if name is None else {"memory_format": fmt(L, name)}
        tmpl = L.zeros(2, 3, 2, 2).contiguous(memory_format=L.channels_last)
        return L.arange(24.).resize_as_(tmpl, **kw)
    same_outcome(run)
    try:
        t = run(torch).numpy()
    except RuntimeError:
        return
    np.testing.assert_array_equal(run(gg).numpy(), t)


# -- nn.Module.to and the conv weight converters ----------------------------------------------------------------
def _net(L):
    L.manual_seed(0)
    return L.nn.Sequential(L.nn.Conv2d(3, 4, 3), L.nn.BatchNorm2d(4), L.nn.Linear(5, 2),
                           L.nn.ConvTranspose2d(4, 2, 2), L.nn.Conv3d(2, 2, 1))


@pytest.mark.parametrize("args", ["cl", "cl3d", "contig", "f64_cl", "preserve", "bad"])
def test_module_to_memory_format(args):
    calls = {
        "cl": lambda L, m: m[:4].to(memory_format=L.channels_last),
        "cl3d": lambda L, m: m[4:].to(memory_format=L.channels_last_3d),
        "contig": lambda L, m: m.to(memory_format=L.contiguous_format),
        "f64_cl": lambda L, m: m[:4].to(L.float64, memory_format=L.channels_last),
        "preserve": lambda L, m: m.to(memory_format=L.preserve_format),
        "bad": lambda L, m: m.to("cpu", memory_format=1),
    }

    def run(L):
        m = _net(L)
        ids = [id(p) for p in m.parameters()]
        try:
            calls[args](L, m)
        except Exception as e:        # noqa: BLE001
            return type(e).__name__, str(e)
        assert ids == [id(p) for p in m.parameters()]
        return [(n, p.stride(), str(p.dtype)) for n, p in m.named_parameters()]
    assert run(gg) == run(torch)


def test_module_to_channels_last_rejects_5d():
    same_outcome(lambda L: _net(L).to(memory_format=L.channels_last))


@pytest.mark.parametrize("which", ["2d_cl", "2d_contig", "2d_cl3d", "2d_preserve", "3d_cl3d", "3d_cl"])
def test_convert_conv_weight_memory_format(which):
    def run(L):
        m = _net(L)
        w0 = m[0].weight
        f = L.nn.utils.convert_conv3d_weight_memory_format if which.startswith("3d") else \
            L.nn.utils.convert_conv2d_weight_memory_format
        name = {"cl": "channels_last", "contig": "contiguous_format", "cl3d": "channels_last_3d",
                "preserve": "preserve_format"}[which.split("_", 1)[1]]
        try:
            r = f(m, fmt(L, name))
        except Exception as e:        # noqa: BLE001
            return type(e).__name__, str(e)
        assert r is m and m[0].weight is w0
        return [(n, p.stride(), p.detach().numpy().tolist()) for n, p in m.named_parameters()]
    assert run(gg) == run(torch)


# -- the layouts ops give channels-last inputs ------------------------------------------------------------------
def _F(L):
    return L.nn.functional


_R = np.random.default_rng(1)
_X4 = _R.standard_normal((2, 3, 6, 6)).astype(np.float32)
_W4 = _R.standard_normal((4, 3, 3, 3)).astype(np.float32)
_X5 = _R.standard_normal((2, 3, 4, 4, 4)).astype(np.float32)
_W5 = _R.standard_normal((2, 3, 1, 1, 1)).astype(np.float32)
_B = _R.standard_normal(4).astype(np.float32)

OPS = {
    "neg": lambda L, x, w, c, b: -x,
    "exp": lambda L, x, w, c, b: x.exp(),
    "add_bias": lambda L, x, w, c, b: x + b[:3].view(1, 3, 1, 1),
    "add_same": lambda L, x, w, c, b: x + x,
    "relu": lambda L, x, w, c, b: _F(L).relu(x),
    "relu_inplace": lambda L, x, w, c, b: _F(L).relu(x.clone(), inplace=True),
    "gelu": lambda L, x, w, c, b: _F(L).gelu(x),
    "silu": lambda L, x, w, c, b: _F(L).silu(x),
    "conv2d": lambda L, x, w, c, b: _F(L).conv2d(x, w, b, padding=1),
    "conv2d_cl_weight_only": lambda L, x, w, c, b: _F(L).conv2d(c, w, b),
    "conv2d_cl_input_only": lambda L, x, w, c, b: _F(L).conv2d(x, w.contiguous(), b),
    "conv2d_stride2": lambda L, x, w, c, b: _F(L).conv2d(x, w, b, stride=2),
    "conv_transpose2d": lambda L, x, w, c, b: _F(L).conv_transpose2d(
        x, w.transpose(0, 1).contiguous(memory_format=L.channels_last), stride=2),
    "conv1d_contig": lambda L, x, w, c, b: _F(L).conv1d(x[:, :, 0], w[:, :, 0]),
    "batch_norm_train": lambda L, x, w, c, b: _F(L).batch_norm(x, None, None, b[:3], b[1:], training=True),
    "batch_norm_eval": lambda L, x, w, c, b: _F(L).batch_norm(x, L.zeros(3), L.ones(3), b[:3], b[1:]),
    "group_norm": lambda L, x, w, c, b: _F(L).group_norm(x, 3),
    "layer_norm": lambda L, x, w, c, b: _F(L).layer_norm(x, (6,)),
    "instance_norm": lambda L, x, w, c, b: _F(L).instance_norm(x),
    "rms_norm": lambda L, x, w, c, b: _F(L).rms_norm(x, (6,)),
    "rms_norm_permuted": lambda L, x, w, c, b: _F(L).rms_norm(c.permute(0, 2, 1, 3), (6,), b[:1].expand(6)),
    "max_pool2d": lambda L, x, w, c, b: _F(L).max_pool2d(x, 2),
    "max_pool2d_indices": lambda L, x, w, c, b: _F(L).max_pool2d(x, 3, 2, 1, return_indices=True)[1],
    "avg_pool2d": lambda L, x, w, c, b: _F(L).avg_pool2d(x, 2),
    "lp_pool2d": lambda L, x, w, c, b: _F(L).lp_pool2d(x, 2, 2),
    "adaptive_avg_pool2d_1": lambda L, x, w, c, b: _F(L).adaptive_avg_pool2d(x, 1),
    "adaptive_avg_pool2d_3": lambda L, x, w, c, b: _F(L).adaptive_avg_pool2d(x, 3),
    "adaptive_max_pool2d": lambda L, x, w, c, b: _F(L).adaptive_max_pool2d(x, 2, return_indices=True)[0],
    "adaptive_max_pool2d_idx": lambda L, x, w, c, b: _F(L).adaptive_max_pool2d(x, 2, return_indices=True)[1],
    "interpolate_nearest": lambda L, x, w, c, b: _F(L).interpolate(x, scale_factor=2),
    "interpolate_bilinear": lambda L, x, w, c, b: _F(L).interpolate(x, scale_factor=2, mode="bilinear"),
    "interpolate_bicubic": lambda L, x, w, c, b: _F(L).interpolate(x, size=(5, 7), mode="bicubic"),
    "interpolate_area": lambda L, x, w, c, b: _F(L).interpolate(x, size=(3, 3), mode="area"),
    "pad_constant": lambda L, x, w, c, b: _F(L).pad(x, (1, 1, 1, 1)),
    "pad_reflect": lambda L, x, w, c, b: _F(L).pad(x, (1, 1, 1, 1), mode="reflect"),
    "pad_replicate": lambda L, x, w, c, b: _F(L).pad(x, (1, 2, 1, 0), mode="replicate"),
    "pad_circular": lambda L, x, w, c, b: _F(L).pad(x, (1, 1, 1, 1), mode="circular"),
    "pixel_shuffle": lambda L, x, w, c, b: _F(L).pixel_shuffle(x[:, :1].expand(2, 4, 6, 6).contiguous(
        memory_format=L.channels_last), 2),
    "softmax_c": lambda L, x, w, c, b: x.softmax(1),
    "log_softmax_w": lambda L, x, w, c, b: x.log_softmax(-1),
    "dropout_eval": lambda L, x, w, c, b: _F(L).dropout(x, 0.5, training=False),
    "cat_c": lambda L, x, w, c, b: L.cat([x, x], 1),
    "mean_hw": lambda L, x, w, c, b: x.mean((2, 3)),
    "flatten": lambda L, x, w, c, b: x.flatten(1),
    "half": lambda L, x, w, c, b: x.half(),
    "flip_w": lambda L, x, w, c, b: x.flip(-1),
    "flip_n_permuted": lambda L, x, w, c, b: c.permute(0, 2, 1, 3).flip(0),
    "masked_fill": lambda L, x, w, c, b: x.masked_fill(x > 0, 0.),
    "channel_shuffle": lambda L, x, w, c, b: _F(L).channel_shuffle(L.cat([x, x], 1), 2),
    "max_unpool2d": lambda L, x, w, c, b: _F(L).max_unpool2d(*_F(L).max_pool2d(x, 2, return_indices=True), 2),
}

OPS5 = {
    "conv3d": lambda L, x, w: _F(L).conv3d(x, w),
    "max_pool3d": lambda L, x, w: _F(L).max_pool3d(x, 2),
    "avg_pool3d": lambda L, x, w: _F(L).avg_pool3d(x, 2),
    "adaptive_avg_pool3d": lambda L, x, w: _F(L).adaptive_avg_pool3d(x, 2),
    "interpolate_nearest3d": lambda L, x, w: _F(L).interpolate(x, scale_factor=2),
    "interpolate_trilinear": lambda L, x, w: _F(L).interpolate(x, scale_factor=2, mode="trilinear"),
    "pad3d": lambda L, x, w: _F(L).pad(x, (1, 1, 1, 1, 1, 1)),
    "batch_norm3d": lambda L, x, w: _F(L).batch_norm(x, None, None, training=True),
    "relu3d": lambda L, x, w: x.relu(),
}


def _inputs4(L):
    x = L.tensor(_X4).contiguous(memory_format=L.channels_last)
    return x, L.tensor(_W4).contiguous(memory_format=L.channels_last), L.tensor(_X4), L.tensor(_B)


@pytest.mark.parametrize("op", list(OPS))
def test_op_layouts_channels_last(op):
    t = OPS[op](torch, *_inputs4(torch))
    g = OPS[op](gg, *_inputs4(gg))
    assert g.stride() == t.stride()
    np.testing.assert_allclose(g.float().numpy(), t.float().numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", list(OPS5))
def test_op_layouts_channels_last_3d(op):
    def run(L):
        return OPS5[op](L, L.tensor(_X5).contiguous(memory_format=L.channels_last_3d),
                        L.tensor(_W5).contiguous(memory_format=L.channels_last_3d))
    t, g = both(run)
    assert g.stride() == t.stride()
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-4, atol=1e-5)


# -- a small CNN trained two steps in channels_last -------------------------------------------------------------
def _cnn(L):
    return L.nn.Sequential(L.nn.Conv2d(3, 8, 3, padding=1), L.nn.BatchNorm2d(8), L.nn.ReLU(), L.nn.MaxPool2d(2),
                           L.nn.Conv2d(8, 16, 3, padding=1, bias=False), L.nn.BatchNorm2d(16), L.nn.ReLU(),
                           L.nn.Upsample(scale_factor=2), L.nn.AvgPool2d(2), L.nn.AdaptiveAvgPool2d(1),
                           L.nn.Flatten(), L.nn.Linear(16, 5))


@pytest.mark.parametrize("convert", ["module_to", "convert_conv2d"])
def test_cnn_steps_channels_last(convert):
    torch.manual_seed(0)
    tm = _cnn(torch)
    gm = _cnn(gg)
    gm.load_state_dict({k: gg.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    for L, m in ((torch, tm), (gg, gm)):
        if convert == "module_to":
            m.to(memory_format=L.channels_last)
        else:
            L.nn.utils.convert_conv2d_weight_memory_format(m, L.channels_last)
    x = np.random.default_rng(2).standard_normal((4, 3, 8, 8)).astype(np.float32)
    y = np.array([0, 1, 2, 3])
    opts = [L.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for L, m in ((torch, tm), (gg, gm))]
    for _ in range(2):
        losses = []
        for L, m, opt in ((torch, tm, opts[0]), (gg, gm, opts[1])):
            xin = L.tensor(x).contiguous(memory_format=L.channels_last)
            out = m(xin)
            loss = L.nn.functional.cross_entropy(out, L.tensor(y))
            opt.zero_grad()
            loss.backward()
            losses.append(loss.item())
        np.testing.assert_allclose(losses[1], losses[0], rtol=1e-5)
        for (n, pt), (_, pg) in zip(tm.named_parameters(), gm.named_parameters()):
            np.testing.assert_allclose(pg.grad.numpy(), pt.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=n)
            assert pg.stride() == pt.stride() and pg.grad.stride() == pt.grad.stride(), n
        for opt in opts:
            opt.step()


# -- in-place random fills draw in memory order (torch's TensorIterator order) -----------------------------------
FILL_TARGETS = {
    "cl": lambda L: L.empty(2, 3, 4, 5).contiguous(memory_format=L.channels_last),
    "cl_small": lambda L: L.empty(1, 2, 2, 2).contiguous(memory_format=L.channels_last),
    "permuted": lambda L: L.empty(2, 4, 5, 3).permute(0, 3, 1, 2),
    "sliced": lambda L: L.empty(2, 3, 8, 5)[:, :, ::2],
    "transposed": lambda L: L.empty(6, 7).t(),
    "cl_sliced": lambda L: L.empty(2, 3, 8, 5).contiguous(memory_format=L.channels_last)[:, :, ::2],
    "cl3d": lambda L: L.empty(1, 2, 3, 2, 2).contiguous(memory_format=L.channels_last_3d),
}
FILLS = {
    "uniform_": lambda L, x: x.uniform_(-1, 2),
    "normal_": lambda L, x: x.normal_(),
    "random_": lambda L, x: x.random_(0, 100),
    "bernoulli_": lambda L, x: x.bernoulli_(0.3),
    "exponential_": lambda L, x: x.exponential_(),
    "geometric_": lambda L, x: x.geometric_(0.3),
    "log_normal_": lambda L, x: x.log_normal_(),
    "cauchy_": lambda L, x: x.cauchy_(),
    "kaiming_uniform_": lambda L, x: L.nn.init.kaiming_uniform_(x),
    "trunc_normal_": lambda L, x: L.nn.init.trunc_normal_(x),
    "trunc_normal_narrow": lambda L, x: L.nn.init.trunc_normal_(x, a=-0.1, b=0.3),
}


@pytest.mark.parametrize("target", list(FILL_TARGETS))
@pytest.mark.parametrize("fill", list(FILLS))
def test_inplace_random_fill_order(target, fill):
    def run(L):
        L.manual_seed(5)
        x = FILL_TARGETS[target](L)
        y = FILLS[fill](L, x)
        assert y is x
        return x
    t, g = both(run)
    assert g.stride() == t.stride()
    np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-6)


# -- copies keep the layout: deepcopy, pickle, a module's deepcopy (timm's model EMA) -------------------------------
COPY_CASES = {
    "cl": lambda L: L.randn(2, 3, 4, 5).contiguous(memory_format=L.channels_last),
    "cl3d_grad": lambda L: L.randn(2, 3, 2, 2, 3).contiguous(memory_format=L.channels_last_3d).requires_grad_(),
    "transposed": lambda L: L.randn(3, 4).t(),
    "contig": lambda L: L.randn(2, 3),
}


@pytest.mark.parametrize("case", list(COPY_CASES))
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copies_keep_layout(case, how):
    def run(L):
        L.manual_seed(0)
        x = COPY_CASES[case](L)
        y = copy.deepcopy(x) if how == "deepcopy" else pickle.loads(pickle.dumps(x))
        assert np.array_equal(y.detach().numpy(), x.detach().numpy())
        return y.stride(), y.requires_grad
    assert run(gg) == run(torch)


def test_module_deepcopy_and_pickle_keep_channels_last():
    def run(L):
        m = L.nn.Conv2d(3, 4, 3).to(memory_format=L.channels_last)
        return copy.deepcopy(m).weight.stride(), pickle.loads(pickle.dumps(m)).weight.stride()
    assert run(gg) == run(torch)


# -- reductions and scans of channels-last (or permuted) tensors are C-ordered, as torch's ----------------------------
REDUCTIONS = {
    "sum": lambda L, x, d: x.sum(d), "sum_keepdim": lambda L, x, d: x.sum(d, keepdim=True),
    "mean": lambda L, x, d: x.mean(d), "var": lambda L, x, d: x.var(d), "std": lambda L, x, d: x.std(d),
    "prod": lambda L, x, d: x.prod(d), "amax": lambda L, x, d: x.amax(d), "amin": lambda L, x, d: x.amin(d),
    "logsumexp": lambda L, x, d: x.logsumexp(d), "norm": lambda L, x, d: x.norm(dim=d),
    "vector_norm": lambda L, x, d: L.linalg.vector_norm(x, dim=d), "all": lambda L, x, d: (x > 0).all(d),
    "any": lambda L, x, d: (x > 0).any(d), "nansum": lambda L, x, d: x.nansum(d),
    "count_nonzero": lambda L, x, d: (x > 0).count_nonzero(d), "var_mean": lambda L, x, d: L.var_mean(x, d)[0],
    "cumsum": lambda L, x, d: x.cumsum(d), "cumprod": lambda L, x, d: x.cumprod(d),
    "logcumsumexp": lambda L, x, d: x.logcumsumexp(d), "max": lambda L, x, d: x.max(d)[0],
}


@pytest.mark.parametrize("red", list(REDUCTIONS))
@pytest.mark.parametrize("src", ["cl", "permuted"])
def test_reductions_of_channels_last(red, src):
    make_x = {"cl": lambda L: L.tensor(_X4).contiguous(memory_format=L.channels_last),
              "permuted": lambda L: L.tensor(_X4).permute(0, 2, 1, 3)}[src]
    for d in range(4):
        t, g = both(lambda L: REDUCTIONS[red](L, make_x(L), d))
        assert g.is_contiguous() == t.is_contiguous(), d
        assert g.view(-1).shape == t.view(-1).shape         # a view of the result works, as in torch
        np.testing.assert_allclose(g.double().numpy(), t.double().numpy(), rtol=1e-5, atol=1e-6)
