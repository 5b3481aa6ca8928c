"""Conformance tests generated from the op table (tests/opinfo): every op, sample and dtype is run
on glassgrad and on torch (the oracle), comparing values, dtypes, shapes, grad_fn names,
gradients, float64 finite differences, second derivatives and error types."""
import zlib

import numpy as np
import pytest

import glassgrad as gg
from opinfo import ALL_OPS
from opinfo.core import Idx, NoGrad, TList
from opinfo.expected_failures import EXPECTED

import torch

CASES = []
for _op in ALL_OPS:
    for _dt in _op.dtypes:
        CASES.append(pytest.param(_op, _dt, id=f"{_op.name}-{_dt}"))


# bfloat16 rows (opinfo.BF16_ROWS): samples are drawn in float32 and rounded to bfloat16; values and gradients
# must lie within BF16_RTOL (two bfloat16 ulps: 2 * 2**-7) relative or BF16_ATOL absolute of torch's (absolute
# for sums that cancel: torch's float32 accumulation order is its vector unit's)
BF16_ATOL, BF16_RTOL = 2e-2, 2 * 2.0 ** -7


def _samples(op, dt):
    rng = np.random.default_rng(zlib.crc32(op.name.encode()))       # stable across processes (string hashing is randomised per process)
    return op.samples(rng, np.dtype(np.float32 if dt == "bfloat16" else dt))


def _tols(op, dt, grad=False):
    if dt == "bfloat16":
        return BF16_ATOL, BF16_RTOL
    return (op.grad_atol, op.grad_rtol) if grad else (op.atol, op.rtol)


def _bf(T, t, bf):
    """A float tensor rounded to bfloat16 on a bfloat16 row."""
    return t.to(T.bfloat16) if bf and t.dtype.is_floating_point else t


def _build(T, arg, diff, bf=False):
    """Turn one sample argument into a tensor of library T; returns (value, [tensors requiring grad])."""
    if isinstance(arg, Idx):
        return T.from_numpy(arg.arr.copy()) if T is torch else T.from_numpy(arg.arr.copy()), []
    if isinstance(arg, NoGrad):
        return _bf(T, _from_np(T, arg.arr), bf), []
    if isinstance(arg, TList):
        out, rg = [], []
        for a in arg.arrs:
            t, r = _build(T, a, diff, bf)
            out.append(t)
            rg += r
        return out, rg
    if isinstance(arg, np.ndarray):
        t = _bf(T, _from_np(T, arg), bf)
        if diff and arg.dtype.kind in "fc":
            t.requires_grad_(True)
            return t, [t]
        return t, []
    return arg, []


def _from_np(T, a):
    # keep the memory layout (non-contiguous samples stay non-contiguous)
    if a.ndim and not a.flags.c_contiguous:
        return T.from_numpy(np.array(a, order="F")) if T is gg else torch.from_numpy(np.array(a, order="F"))
    return T.from_numpy(np.array(a))


def _run(T, op, sample, diff, bf=False):
    leaves = []
    args = []
    for a in sample.args:
        v, r = _build(T, a, diff, bf)
        args.append(v)
        leaves += r
    kwargs = {}
    for k, a in sample.kwargs.items():
        v, r = _build(T, a, diff, bf)
        kwargs[k] = v
        leaves += r
    return op.op(T, *args, **kwargs), leaves


def _flat(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res += _flat(o)
        return res
    return [out]


def _np(t):
    if isinstance(t, (gg.Tensor, torch.Tensor)) and t.is_conj():     # a lazy conjugate (torch's conj bit)
        t = t.resolve_conj()
    if isinstance(t, gg.Tensor):
        return t.detach().float().numpy() if t.dtype == gg.bfloat16 else t.detach().numpy()
    if isinstance(t, torch.Tensor):
        if t._is_zerotensor():          # torch's symbolic zero gradient: compare as real zeros
            t = torch.zeros(t.shape, dtype=t.dtype)
        return t.detach().float().numpy() if t.dtype == torch.bfloat16 else t.detach().numpy()
    return np.asarray(t)


def _xfail(op, kind):
    reason = EXPECTED.get((op.name, kind))
    if reason:
        pytest.xfail(reason)


def _assert_close(a, b, atol, rtol, what):
    if isinstance(b, torch.Tensor):
        assert str(a.dtype) == str(b.dtype), f"{what}: dtype {a.dtype} != torch {b.dtype}"
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} != torch {b.shape}"
    assert a.dtype == b.dtype, f"{what}: dtype {a.dtype} != torch {b.dtype}"
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, atol=atol, rtol=rtol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(a, b, err_msg=what)


# ops whose one glassgrad node stands for the end of torch's chain of nodes (matmul: MmBackward0 then
# UnsafeViewBackward0, ...): that node has the chain's inputs, so its next_functions are not torch's last node's
_CHAIN_OPS = ("matmul", "Tensor.__matmul__", "Tensor.matrix_power", "matrix_power", "linalg.matrix_power", "einsum",
              "inner", "kron", "tensordot", "nn.functional.linear", "nn.functional.scaled_dot_product_attention",
              "linalg.svd", "svd", "qr")     # (these three: rows whose sample multiplies the factors back)


@pytest.mark.parametrize("op,dt", CASES)
def test_values_and_grad_fn(op, dt):
    bf = dt == "bfloat16"
    for s in _samples(op, dt):
        t_out, _ = _run(torch, op, s, op.differentiable, bf)
        g_out, _ = _run(gg, op, s, op.differentiable, bf)
        t_flat, g_flat = _flat(t_out), _flat(g_out)
        assert len(t_flat) == len(g_flat), f"{s.name}: number of outputs"
        for i, (t, g) in enumerate(zip(t_flat, g_flat)):
            if not isinstance(t, torch.Tensor):
                assert t == g, f"{s.name}: output {i}"
                continue
            _assert_close(g, t, *_tols(op, dt), f"{op.name}[{s.name}] output {i}")
            assert g.requires_grad == t.requires_grad, f"{s.name}: requires_grad of output {i}"
            if op.check_grad_fn and t.grad_fn is not None:
                _xfail(op, "grad_fn")
                assert g.grad_fn is not None and g.grad_fn.name() == t.grad_fn.name(), \
                    f"{op.name}[{s.name}] grad_fn {g.grad_fn and g.grad_fn.name()} != torch {t.grad_fn.name()}"
                # the node's inputs as torch counts them (a Python number is no edge; an optional tensor is one)
                assert op.name.startswith(_CHAIN_OPS) or len(g.grad_fn.next_functions) == len(t.grad_fn.next_functions), \
                    f"{op.name}[{s.name}] {t.grad_fn.name()}: {len(g.grad_fn.next_functions)} next_functions " \
                    f"!= torch {len(t.grad_fn.next_functions)}"


def _cotangents(outs, rng):
    return [_normal(rng, _np(o).shape, _np(o).dtype) for o in outs]


def _normal(rng, shape, dt):
    if np.dtype(dt).kind == "c":        # complex outputs: a complex cotangent
        return np.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)


DIFF = [c for c in CASES if c.values[0].differentiable]


@pytest.mark.parametrize("op,dt", DIFF)
def test_grads_match_torch(op, dt):
    _xfail(op, "grads")
    rng = np.random.default_rng(0)
    bf = dt == "bfloat16"
    for s in _samples(op, dt):
        t_out, t_leaves = _run(torch, op, s, True, bf)
        g_out, g_leaves = _run(gg, op, s, True, bf)
        t_outs = [o for o in _flat(t_out) if isinstance(o, torch.Tensor) and o.requires_grad]
        g_outs = [o for o in _flat(g_out) if isinstance(o, gg.Tensor) and o.requires_grad]
        assert len(t_outs) == len(g_outs)
        if not t_outs or not t_leaves:
            continue
        cts = _cotangents(t_outs, rng)
        tg = torch.autograd.grad(t_outs, t_leaves, [_bf(torch, torch.from_numpy(c), bf) for c in cts],
                                 allow_unused=True)
        gg_ = gg.autograd.grad(g_outs, g_leaves, [_bf(gg, gg.from_numpy(c), bf) for c in cts], allow_unused=True)
        for i, (a, b) in enumerate(zip(gg_, tg)):
            if b is None:
                assert a is None or not np.any(_np(a)), f"{s.name}: grad {i} should be None/zero"
                continue
            assert a is not None, f"{op.name}[{s.name}]: grad {i} is None, torch has one"
            _assert_close(a, b, *_tols(op, dt, True), f"{op.name}[{s.name}] grad {i}")


GC = [c for c in DIFF if c.values[0].gradcheck and c.values[1] in ("float64", "complex128")]


@pytest.mark.parametrize("op,dt", GC)
def test_gradcheck_finite_differences(op, dt):
    """float64 central differences of glassgrad's own forward against its backward."""
    _xfail(op, "gradcheck")
    rng = np.random.default_rng(1)
    eps = 1e-6
    for s in _samples(op, dt):
        g_out, leaves = _run(gg, op, s, True)
        outs = [o for o in _flat(g_out) if isinstance(o, gg.Tensor) and o.requires_grad]
        if not outs or not leaves:
            continue
        cts = _cotangents(outs, rng)
        ana = gg.autograd.grad(outs, leaves, [gg.from_numpy(c) for c in cts], allow_unused=True)

        def f():       # the real loss whose gradient the vjp is: sum Re(conj(ct) * out) (torch's convention)
            o2, _ = _run_with(op, s, leaves)
            return sum(float(np.real(np.conj(c) * _np(o)).sum()) for o, c in zip(
                [o for o in _flat(o2) if isinstance(o, gg.Tensor) and (o.dtype.is_floating_point or o.is_complex())],
                cts))
        for leaf, a in zip(leaves, ana):
            data = leaf.detach().numpy()
            flat = data.reshape(-1) if data.flags.c_contiguous else None
            num = np.zeros(data.size, data.dtype)
            for k in range(min(data.size, 30)):
                idx = np.unravel_index(k, data.shape)
                old = data[idx]
                for step in ((1, 1j) if data.dtype.kind == "c" else (1,)):   # complex: d/dRe + i d/dIm
                    data[idx] = old + eps * step
                    fp = f()
                    data[idx] = old - eps * step
                    fm = f()
                    data[idx] = old
                    num[k] += step * (fp - fm) / (2 * eps)
            n = min(data.size, 30)
            av = np.zeros(data.size, data.dtype) if a is None else _np(a).reshape(-1)
            np.testing.assert_allclose(av[:n], num[:n], atol=1e-5, rtol=1e-3,
                                       err_msg=f"{op.name}[{s.name}] finite differences")
            del flat


def _run_with(op, s, leaves):
    """Re-run op with the same leaf tensors (their data may have been perturbed), no grad."""
    it = iter(leaves)
    args = []

    def sub(a):
        if isinstance(a, np.ndarray) and a.dtype.kind in "fc":
            return next(it)
        if isinstance(a, TList):
            return [sub(x) for x in a.arrs]
        return _build(gg, a, False)[0]
    args = [sub(a) for a in s.args]
    kwargs = {k: sub(a) for k, a in s.kwargs.items()}
    with gg.no_grad():
        return op.op(gg, *args, **kwargs), None


GG = [c for c in DIFF if c.values[0].gradgrad and c.values[1] in ("float64", "complex128")]


@pytest.mark.parametrize("op,dt", GG)
def test_second_derivatives_match_torch(op, dt):
    """d/dx <grad(f)(x), v> against torch's double backward."""
    _xfail(op, "gradgrad")
    for s in _samples(op, dt):
        res = []
        for T in (torch, gg):
            out, leaves = _run(T, op, s, True)
            outs = [o for o in _flat(out) if isinstance(o, T.Tensor) and o.requires_grad]
            if not outs or not leaves:
                res.append(None)
                continue
            r = np.random.default_rng(3)
            cts = [T.from_numpy(c) for c in _cotangents(outs, r)]
            g1 = T.autograd.grad(outs, leaves, cts, create_graph=True, allow_unused=True)
            pairs = [(g, T.from_numpy(_normal(np.random.default_rng(4 + i), tuple(g.shape), _np(g).dtype)))
                     for i, g in enumerate(g1) if g is not None and g.requires_grad]
            if not pairs:
                res.append(None)
                continue
            z = sum((g * v.conj()).real.sum() if g.is_complex() else (g * v).sum() for g, v in pairs)
            g2 = T.autograd.grad(z, leaves, allow_unused=True)
            res.append([None if x is None else _np(x) for x in g2])
        if res[0] is None:
            continue
        assert res[1] is not None, f"{op.name}[{s.name}]: glassgrad's gradient is not differentiable"
        for a, b in zip(res[1], res[0]):
            if b is None:
                assert a is None or not np.any(a)
                continue
            a = np.zeros_like(b) if a is None else a
            np.testing.assert_allclose(a, b, atol=1e-6, rtol=1e-5, err_msg=f"{op.name}[{s.name}] 2nd derivative")


ERR = [pytest.param(o, id=o.name) for o in ALL_OPS if o.errors()]


@pytest.mark.parametrize("op", ERR)
def test_errors_match_torch(op):
    _xfail(op, "errors")
    for es in op.errors():
        with pytest.raises(es.error) as te:
            _run(torch, op, es.sample, False)
        with pytest.raises(es.error) as ge:
            _run(gg, op, es.sample, False)
        if es.match:
            assert es.match in str(te.value), f"the oracle's message changed: {te.value}"
            assert es.match in str(ge.value), f"{op.name}: message {ge.value!r} lacks {es.match!r}"


def test_op_table_size():
    """The number of torch functions and Tensor methods the table covers (printed in the summary)."""
    names = {o.name for o in ALL_OPS}
    print(f"\nop table: {len(names)} ops")
    assert len(names) == len(ALL_OPS), "duplicate op names in the table"
