"""The op table on the device (issue 17): every sample runs on the CPU and on the `cuda` device -- the strict
stand-in here (GLASSGRAD_STRICT_DEVICE=1: arrays that refuse any silent trip to the host), CuPy on a GPU --
and must give the same outputs, on the device, with the same gradients, on the device.

No op copies an array between host and device on the way -- a device array to the host, or a host array it made
up to the device (recorded by the strict device; on CuPy, not checked): the few that must -- HOST_ROUND_TRIPS
below, each with its reason -- do it explicitly.

PENDING (pending.py) lists the rows (name-dtype) not yet device-neutral; each is an xfail that must fail: a row that starts
passing fails the test until it is removed, so the list only shrinks."""
import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend
from opinfo import ALL_OPS
from pending import PENDING
from test_ops import _build, _flat, _samples

# ops that compute on the host by design, with the reason; every other row must make no device-to-host array copy
_EIG = "LAPACK's geev has no GPU form: torch's CUDA eig computes on the host (MAGMA) and synchronizes, as documented"
_LDL = "Bunch-Kaufman pivoting (sytrf / sytrs) has no CuPy binding: computed on the host"
HOST_ROUND_TRIPS = {"linalg.eig": _EIG, "linalg.eigvals": _EIG, "linalg.eig_vectors": _EIG,
                    "linalg.eig_vectors_complex": _EIG, "linalg.eigvals_complex": _EIG,
                    "linalg.ldl_factor": _LDL, "linalg.ldl_factor_ex": _LDL, "linalg.ldl_solve": _LDL,
                    "linalg.ldl_factor_empty": _LDL}
# rows that draw random numbers: the value comparison draws through the CPU stream (the host_stream_for_cuda switch
# of conftest.py), so their no-copy check is a second device run on the CUDA generator itself
_RANDOM = ("dropout", "rrelu_training")


def _from_data(where):
    """An upload made by torch.tensor(data) (the op table's lambdas build index tensors so): data -> device."""
    return 'creation.py", line' in where and ", in tensor\n" in where


class _NoCopies:
    """Records the device-to-host array copies made inside the block (strict device only)."""

    def __init__(self, skip=False):
        self.skip = skip

    def __enter__(self):
        if not backend.STRICT:
            self.rec, self.copies = None, []
            return self
        from glassgrad import _strict
        self.rec = _strict.recording(uploads=True)
        self.copies = self.rec.__enter__()
        return self

    def __exit__(self, *exc):
        if self.rec is not None:
            self.rec.__exit__(*exc)

    def check(self, op, what):
        copies = [c for c in self.copies if not _from_data(c[1])]
        if copies and op.name not in HOST_ROUND_TRIPS and not self.skip:
            shape, where = copies[0]
            raise AssertionError(f"{what}: an array of shape {shape} was copied between host and device (an op "
                                 f"makes its arrays on its inputs' device; HOST_ROUND_TRIPS lists the exceptions):"
                                 f"\n{where}")


CASES = [pytest.param(op, dt, id=f"{op.name}-{dt}") for op in ALL_OPS for dt in op.dtypes]
assert PENDING <= {c.id for c in CASES}, "tests/strict/pending.py names a row the op table does not have"


def _to_device(v):
    if isinstance(v, gg.Tensor):
        d = v.detach().to("cuda")
        return d.requires_grad_(True) if v.requires_grad else d
    if isinstance(v, list):
        return [_to_device(x) for x in v]
    return v


def _inputs(s, diff, bf, device):
    args, kwargs, leaves = [], {}, []
    for a in s.args:
        v, _ = _build(gg, a, diff, bf)
        args.append(_to_device(v) if device else v)
    for k, a in s.kwargs.items():
        v, _ = _build(gg, a, diff, bf)
        kwargs[k] = _to_device(v) if device else v
    for v in list(args) + list(kwargs.values()):
        for t in (v if isinstance(v, list) else [v]):
            if isinstance(t, gg.Tensor) and t.requires_grad:
                leaves.append(t)
    return args, kwargs, leaves


def _run(op, s, diff, bf, device):
    args, kwargs, leaves = _inputs(s, diff, bf, device)
    return op.op(gg, *args, **kwargs), leaves


def _host(t):
    t = t.detach()
    if t.is_conj():
        t = t.resolve_conj()
    t = t.cpu()
    return t.float().numpy() if t.dtype == gg.bfloat16 else t.numpy()


def _same(a, b, op, what):
    """`b` (device) equals `a` (CPU): device, dtype, shape, values (the same NumPy code; BLAS paths may round
    differently from NumPy's matmul, so the op's own tolerance)."""
    assert b.device.type == "cuda", f"{what}: on {b.device}, not cuda"
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape), f"{what}: {b.dtype}{tuple(b.shape)}"
    x, y = _host(a), _host(b)
    if x.dtype.kind in "fc":
        np.testing.assert_allclose(y, x, atol=op.atol, rtol=op.rtol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(y, x, err_msg=what)


def _cuda_stream_run(op, s, bf):
    """A random row once more on the CUDA generator itself: on the device, no copy between host and device."""
    from glassgrad.ops.random import _HOST_STREAM
    args, kwargs, _ = _inputs(s, op.differentiable, bf, True)
    outer, _HOST_STREAM[0] = _HOST_STREAM[0], False
    try:
        with _NoCopies() as rec:
            outs = [o for o in _flat(op.op(gg, *args, **kwargs)) if isinstance(o, gg.Tensor)]
    finally:
        _HOST_STREAM[0] = outer
    rec.check(op, f"{op.name}[{s.name}] forward on the CUDA generator")
    assert all(o.device.type == "cuda" for o in outs)


def _check(op, dt):
    bf = dt == "bfloat16"
    random = any(k in op.name for k in _RANDOM)
    rng = np.random.default_rng(0)
    for s in _samples(op, dt):
        c_out, c_leaves = _run(op, s, op.differentiable, bf, False)
        gg.set_default_device("cuda")           # factories inside the op (windows, tril_indices, ...) too
        try:
            args, kwargs, d_leaves = _inputs(s, op.differentiable, bf, True)
            with _NoCopies(skip=random) as rec:
                d_out = op.op(gg, *args, **kwargs)
            rec.check(op, f"{op.name}[{s.name}] forward")
            if random:
                _cuda_stream_run(op, s, bf)
        finally:
            gg.set_default_device("cpu")
        c_outs = [o for o in _flat(c_out) if isinstance(o, gg.Tensor)]
        d_outs = [o for o in _flat(d_out) if isinstance(o, gg.Tensor)]
        assert len(c_outs) == len(d_outs)
        for i, (a, b) in enumerate(zip(c_outs, d_outs)):
            _same(a, b, op, f"{op.name}[{s.name}] output {i}")
        if not op.differentiable:
            continue
        c_g = [o for o in c_outs if o.requires_grad]
        d_g = [o for o in d_outs if o.requires_grad]
        if not c_g or not c_leaves:
            continue
        cts = [rng.standard_normal(tuple(o.shape)).astype(_host(o).dtype) for o in c_g]
        ga = gg.autograd.grad(c_g, c_leaves, [gg.from_numpy(c).to(o.dtype) for c, o in zip(cts, c_g)],
                              allow_unused=True)
        d_cts = [gg.from_numpy(c).to(o.dtype).to("cuda") for c, o in zip(cts, d_g)]
        with _NoCopies(skip=random) as rec:
            gb = gg.autograd.grad(d_g, d_leaves, d_cts, allow_unused=True)
        rec.check(op, f"{op.name}[{s.name}] backward")
        for i, (a, b) in enumerate(zip(ga, gb)):
            if a is None:
                assert b is None or not np.any(_host(b)), f"{op.name}[{s.name}] grad {i}"
                continue
            _same(a, b, op, f"{op.name}[{s.name}] grad {i}")


@pytest.mark.parametrize("op,dt", CASES)
def test_op_on_device_equals_cpu(op, dt):
    if f"{op.name}-{dt}" in PENDING:
        with pytest.raises(Exception):      # (passing now? remove the row from tests/strict/pending.py)
            _check(op, dt)
        pytest.xfail(f"{op.name}-{dt}: not device-neutral yet (tests/strict/pending.py)")
    _check(op, dt)
