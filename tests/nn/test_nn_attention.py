"""MultiheadAttention, F.multi_head_attention_forward, F.scaled_dot_product_attention (dropout) and the
Transformer modules, differential against torch: seeded parameters bit-equal, state_dict keys, repr,
outputs / attention weights and gradients (inputs and every parameter) with masks, train mode with
dropout under a fixed seed (same RNG use as torch), warnings and errors."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)
TOL = dict(atol=2e-5, rtol=2e-4)
GTOL = dict(atol=1e-4, rtol=1e-4)


def A(t):
    return t.detach().numpy()


def _weights(out):
    return torch.from_numpy(np.cos(np.arange(out.numel(), dtype=np.float32)).reshape(tuple(out.shape)))


def _check_same_module(tm, gm):
    assert repr(tm) == repr(gm)
    assert list(tm.state_dict()) == list(gm.state_dict())
    for (nt, pt), (ng, pg) in zip(tm.named_parameters(), gm.named_parameters()):
        assert nt == ng
        assert np.array_equal(A(pt), A(pg)), nt


def _compare(res):
    (to, tg), (go, gg) = res
    for a, b in zip(go, to):
        if b is None:
            assert a is None
            continue
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(A(a), A(b), **TOL)
    assert len(tg) == len(gg)
    for i, (a, b) in enumerate(zip(gg, tg)):
        assert (a is None) == (b is None), i
        if b is not None:
            np.testing.assert_allclose(A(a), A(b), err_msg=f"grad {i}", **GTOL)


# -- MultiheadAttention ------------------------------------------------------------------------------------
def _bool(rng, shape, p=0.3):
    m = rng.random(shape) < p
    m[..., 0] = False                      # keep one key per row (torch's weights are nan otherwise)
    return m


MHA_CASES = [
    ("plain", dict(embed_dim=8, num_heads=2), {}, {}),
    ("batch_first_no_weights", dict(embed_dim=8, num_heads=2, batch_first=True), dict(need_weights=False), {}),
    ("kdim_vdim_no_bias", dict(embed_dim=8, num_heads=2, kdim=6, vdim=3, bias=False), {}, {}),
    ("bias_kv_zero_attn_masks", dict(embed_dim=8, num_heads=2, add_bias_kv=True, add_zero_attn=True), {},
     dict(attn_mask=lambda r: _bool(r, (4, 5)), key_padding_mask=lambda r: _bool(r, (2, 5)))),
    ("per_head_weights_3d_float_mask", dict(embed_dim=8, num_heads=4), dict(average_attn_weights=False),
     dict(attn_mask=lambda r: r.standard_normal((8, 4, 5)).astype(np.float32))),
    ("padding_mask_no_weights", dict(embed_dim=8, num_heads=2), dict(need_weights=False),
     dict(key_padding_mask=lambda r: _bool(r, (2, 5)))),
    ("dropout_train", dict(embed_dim=8, num_heads=2, dropout=0.3), {"_train": True}, {}),
    ("dropout_train_sdpa", dict(embed_dim=8, num_heads=2, dropout=0.3), {"_train": True, "need_weights": False},
     {}),
    ("dropout_eval", dict(embed_dim=8, num_heads=2, dropout=0.3), {}, {}),
]


@pytest.mark.parametrize("unbatched", [False, True])
@pytest.mark.parametrize("name,kw,fkw,masks", MHA_CASES, ids=[c[0] for c in MHA_CASES])
def test_multihead_attention_matches_torch(name, kw, fkw, masks, unbatched):
    rng = np.random.default_rng(0)
    E, kd, vd = kw["embed_dim"], kw.get("kdim", kw["embed_dim"]), kw.get("vdim", kw["embed_dim"])
    bf = kw.get("batch_first", False)
    fkw = dict(fkw)
    train = fkw.pop("_train", False)

    def shape(L, d):
        return (L, d) if unbatched else ((2, L, d) if bf else (L, 2, d))
    x = [rng.standard_normal(shape(4, E)), rng.standard_normal(shape(5, kd)), rng.standard_normal(shape(5, vd))]
    x = [a.astype(np.float32) for a in x]
    mk = {k: f(rng) for k, f in masks.items()}
    if unbatched and "key_padding_mask" in mk:
        mk["key_padding_mask"] = mk["key_padding_mask"][0]
    if unbatched and "attn_mask" in mk and mk["attn_mask"].ndim == 3:
        mk["attn_mask"] = mk["attn_mask"][:kw["num_heads"]]       # unbatched: (num_heads, L, S)
    res, mods = [], []
    for T in LIBS:
        T.manual_seed(0)
        m = T.nn.MultiheadAttention(**kw)
        m.train(train)
        ts = [T.from_numpy(a.copy()).requires_grad_() for a in x]
        T.manual_seed(1)
        out, w = m(*ts, **{k: T.from_numpy(v.copy()) for k, v in mk.items()}, **fkw)
        loss = (out * T.from_numpy(A(_weights(out)))).sum()
        if w is not None:
            loss = loss + (w * w).sum()
        loss.backward()
        res.append(([out, w], [t.grad for t in ts] + [p.grad for p in m.parameters()]))
        mods.append(m)
    _check_same_module(*mods)
    _compare(res)


def test_multihead_attention_self_attention_causal_fast_hint():
    """query is key is value, need_weights=False, is_causal with the causal mask: the SDPA causal path."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((5, 2, 8)).astype(np.float32)
    res = []
    for T in LIBS:
        T.manual_seed(0)
        m = T.nn.MultiheadAttention(8, 2)
        xt = T.from_numpy(x.copy()).requires_grad_()
        mask = T.nn.Transformer.generate_square_subsequent_mask(5)
        out, w = m(xt, xt, xt, attn_mask=mask, need_weights=False, is_causal=True)
        (out * T.from_numpy(A(_weights(out)))).sum().backward()
        res.append(([out, w], [xt.grad] + [p.grad for p in m.parameters()]))
    _compare(res)


def test_multihead_attention_repr_and_out_proj_class():
    for T in LIBS:
        m = T.nn.MultiheadAttention(8, 2, kdim=4)
        assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(m.out_proj, T.nn.Linear)
        assert m.in_proj_weight is None and m.q_proj_weight.shape == (8, 8) and m.k_proj_weight.shape == (8, 4)
    assert repr(torch.nn.MultiheadAttention(8, 2)) == repr(glassgrad.nn.MultiheadAttention(8, 2))


@pytest.mark.parametrize("args,call,exc,msg", [
    ((8, 3), None, AssertionError, "embed_dim must be divisible by num_heads"),
    ((0, 2), None, ValueError, "embed_dim and num_heads must be greater than 0"),
    ((8, 2), lambda T: ((T.zeros(4, 2, 8), T.zeros(5, 8), T.zeros(5, 8)), {}), AssertionError,
     "For batched (3-D) `query`, expected `key` and `value` to be 3-D but found 2-D and 2-D tensors respectively"),
    ((8, 2), lambda T: ((T.zeros(4, 2, 8), T.zeros(5, 2, 8), T.zeros(5, 2, 8)), {"attn_mask": T.zeros(3, 5)}),
     RuntimeError, "The shape of the 2D attn_mask is torch.Size([3, 5]), but should be (4, 5)."),
    ((8, 2), lambda T: ((T.zeros(4, 2, 8), T.zeros(5, 2, 8), T.zeros(5, 2, 8)),
                        {"attn_mask": T.zeros(4, 5, dtype=T.int64)}),
     AssertionError, "only bool and floating types of attn_mask are supported"),
    ((8, 2), lambda T: ((T.zeros(4, 2, 8), T.zeros(5, 2, 8), T.zeros(5, 2, 8)), {"is_causal": True}),
     RuntimeError, "Need attn_mask if specifying the is_causal hint."),
    ((8, 2), lambda T: ((T.zeros(4, 2, 6), T.zeros(5, 2, 6), T.zeros(5, 2, 6)), {}), AssertionError,
     "was expecting embedding dimension of 8, but got 6"),
])
def test_multihead_attention_errors_match_torch(args, call, exc, msg):
    for T in LIBS:
        with pytest.raises(exc) as ei:
            m = T.nn.MultiheadAttention(*args)
            a, k = call(T)
            m(*a, **k)
        assert msg in str(ei.value), (T.__name__, str(ei.value))


def test_mismatched_mask_types_warn_like_torch():
    for T in LIBS:
        m = T.nn.MultiheadAttention(8, 2)
        x = T.zeros(4, 2, 8)
        with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and attn_mask is deprecated"):
            m(x, x, x, key_padding_mask=T.zeros(2, 4, dtype=T.bool), attn_mask=T.zeros(4, 4))


# -- F.scaled_dot_product_attention with dropout ----------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3, 4, 8), (3, 4, 8)])
def test_sdpa_dropout_uses_the_shared_rng_like_torch(shape):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(shape).astype(np.float32) for _ in range(3))
    res = []
    for T in LIBS:
        ts = [T.from_numpy(a.copy()).requires_grad_() for a in (q, k, v)]
        T.manual_seed(3)
        out = T.nn.functional.scaled_dot_product_attention(*ts, dropout_p=0.4)
        out2 = T.nn.functional.scaled_dot_product_attention(*ts, dropout_p=0.4)
        (out * T.from_numpy(A(_weights(out)))).sum().backward()
        assert out.grad_fn.name() == "UnsafeViewBackward0"
        res.append(([out, out2], [t.grad for t in ts]))
    _compare(res)
    assert not np.allclose(A(res[1][0][0]), A(res[1][0][1]))


def test_multi_head_attention_forward_functional_matches_torch():
    rng = np.random.default_rng(5)
    E, H = 8, 2
    arrs = dict(q=(4, 2, E), k=(5, 2, E), w=(3 * E, E), b=(3 * E,), ow=(E, E), ob=(E,), bk=(1, 1, E), bv=(1, 1, E))
    vals = {n: rng.standard_normal(s).astype(np.float32) for n, s in arrs.items()}
    res = []
    for T in LIBS:
        t = {n: T.from_numpy(a.copy()).requires_grad_() for n, a in vals.items()}
        out, w = T.nn.functional.multi_head_attention_forward(
            t["q"], t["k"], t["k"], E, H, t["w"], t["b"], t["bk"], t["bv"], True, 0.0, t["ow"], t["ob"],
            training=False, key_padding_mask=T.tensor([[False] * 5, [False, False, True, False, True]]))
        ((out * T.from_numpy(A(_weights(out)))).sum() + (w ** 2).sum()).backward()
        res.append(([out, w], [t[n].grad for n in arrs]))
    _compare(res)


# -- Transformer modules -----------------------------------------------------------------------------------
KW = dict(d_model=8, nhead=2, dim_feedforward=16)
CAUSAL5 = np.triu(np.full((5, 5), -np.inf, np.float32), 1)
PAD = np.array([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], bool)
MPAD = np.array([[0, 0, 0, 1, 1, 0], [0, 0, 0, 0, 0, 0]], bool)


def _make(T, what, kw):
    if what == "TransformerEncoder":
        layer = T.nn.TransformerEncoderLayer(**kw)
        return T.nn.TransformerEncoder(layer, 2, norm=T.nn.LayerNorm(kw["d_model"]))
    if what == "TransformerDecoder":
        return T.nn.TransformerDecoder(T.nn.TransformerDecoderLayer(**kw), 2, norm=T.nn.LayerNorm(kw["d_model"]))
    return getattr(T.nn, what)(**kw)


TR_CASES = [
    ("TransformerEncoderLayer", KW, False, {}, False),
    ("TransformerEncoderLayer", dict(KW, activation="gelu", norm_first=True, batch_first=True), True, {}, False),
    ("TransformerEncoderLayer", dict(KW, dropout=0.0, bias=False), True, dict(src_mask=CAUSAL5), False),
    ("TransformerEncoderLayer", KW, False, dict(src_key_padding_mask=PAD[0]), True),
    ("TransformerEncoder", dict(KW, batch_first=True), False, dict(src_key_padding_mask=PAD), False),
    ("TransformerEncoder", dict(KW, norm_first=True), True, dict(mask=CAUSAL5, is_causal=True), False),
    ("TransformerDecoderLayer", dict(KW, norm_first=True), True, dict(tgt_mask=CAUSAL5), False),
    ("TransformerDecoderLayer", dict(KW, bias=False, activation="gelu"), False, {}, True),
    ("TransformerDecoder", KW, True, dict(tgt_mask=CAUSAL5, memory_key_padding_mask=MPAD), False),
    ("Transformer", dict(KW, num_encoder_layers=2, num_decoder_layers=1), True, dict(tgt_mask=CAUSAL5), False),
    ("Transformer", dict(KW, num_encoder_layers=1, num_decoder_layers=1, batch_first=True, dropout=0.0), True,
     dict(src_key_padding_mask=np.array([[0, 0, 0, 0, 0, 1], [0] * 6], bool)), False),
]


@pytest.mark.parametrize("what,kw,train,masks,unbatched", TR_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(TR_CASES)])
def test_transformer_modules_match_torch(what, kw, train, masks, unbatched):
    rng = np.random.default_rng(1)
    E, bf = kw["d_model"], kw.get("batch_first", False)

    def shape(L):
        return (L, E) if unbatched else ((2, L, E) if bf else (L, 2, E))
    x = rng.standard_normal(shape(5)).astype(np.float32)
    mem = rng.standard_normal(shape(6)).astype(np.float32)
    res, mods = [], []
    for T in LIBS:
        T.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = _make(T, what, kw)
        m.train(train)
        xt, mt = T.from_numpy(x.copy()).requires_grad_(), T.from_numpy(mem.copy()).requires_grad_()
        mk = {k: (T.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v) for k, v in masks.items()}
        T.manual_seed(42)                                   # the dropout draws
        if what.startswith("TransformerEncoder"):
            out = m(xt, **mk)
        elif what == "Transformer":
            out = m(mt, xt, **mk)
        else:
            out = m(xt, mt, **mk)
        (out * T.from_numpy(A(_weights(out)))).sum().backward()
        res.append(([out], [xt.grad, mt.grad] + [p.grad for p in m.parameters()]))
        mods.append(m)
    _check_same_module(*mods)
    _compare(res)


def test_encoder_nested_fast_path_zeroes_padded_positions_like_torch():
    """In eval mode without grad, torch runs a batch_first encoder on a nested tensor: padded positions of
    the output come back as zeros (then the final norm)."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 8)).astype(np.float32)
    outs = []
    for T in LIBS:
        T.manual_seed(0)
        enc = T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(**KW, batch_first=True), 2)
        enc.eval()
        with T.no_grad():
            outs.append(A(enc(T.from_numpy(x.copy()), src_key_padding_mask=T.from_numpy(PAD.copy()))))
    np.testing.assert_allclose(outs[1], outs[0], **TOL)
    assert np.all(outs[0][0, 3:] == 0)


def test_encoder_warns_about_nested_tensor_like_torch():
    msgs = []
    for T in LIBS:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(8, 2, 16, norm_first=True), 2)
            T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True), 2)
            T.nn.TransformerEncoder(T.nn.TransformerEncoderLayer(8, 1, 16, batch_first=True), 2,
                                    enable_nested_tensor=False)
        msgs.append([str(x.message) for x in w])
    assert msgs[0] == msgs[1] and len(msgs[0]) == 1
    assert "encoder_layer.norm_first was True" in msgs[0][0]


def test_encoder_deep_copies_layers_and_generate_mask():
    for T in LIBS:
        layer = T.nn.TransformerEncoderLayer(8, 2, 16)
        enc = T.nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
        assert len(enc.layers) == 3 and enc.layers[0] is not layer and enc.layers[0] is not enc.layers[1]
        assert np.array_equal(A(enc.layers[2].linear1.weight), A(layer.linear1.weight))
    np.testing.assert_array_equal(A(glassgrad.nn.Transformer.generate_square_subsequent_mask(4)),
                                  A(torch.nn.Transformer.generate_square_subsequent_mask(4)))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        glassgrad.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        torch.nn.TransformerEncoderLayer(8, 2, activation="tanh")


@pytest.mark.parametrize("case", ["padding_mask", "plain", "causal", "mha_weights"])
def test_eval_without_grad_matches_torch_fused_inference(case):
    """torch's eval-mode no-grad fast paths (_transformer_encoder_layer_fwd, _native_multi_head_attention)
    give the same values as the layer-by-layer computation."""
    x = np.random.default_rng(0).standard_normal((2, 5, 8)).astype(np.float32)
    outs = []
    for T in LIBS:
        T.manual_seed(0)
        layer = T.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).eval()
        mha = T.nn.MultiheadAttention(8, 2, batch_first=True).eval()
        xt = T.from_numpy(x.copy())
        with T.no_grad():
            if case == "padding_mask":
                o = [layer(xt, src_key_padding_mask=T.from_numpy(PAD.copy()))]
            elif case == "plain":
                o = [layer(xt)]
            elif case == "causal":
                o = [layer(xt, src_mask=T.nn.Transformer.generate_square_subsequent_mask(5), is_causal=True)]
            else:
                o = list(mha(xt, xt, xt, key_padding_mask=T.from_numpy(PAD.copy())))
        outs.append([A(t) for t in o])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, **TOL)
