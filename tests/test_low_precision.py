"""Every float32 row of the op table, run forward in float16 and in bfloat16 on glassgrad and on torch: the same
dtype, shape and values (within LOW_TOL: a few ulps of the low-precision type, as torch computes most ops in
float32 and rounds once while composites round at each step), and where torch refuses a low-precision input
(LAPACK, most of torch.special, some losses, 3-d pooling) the same exception type and message.

KNOWN lists what differs on purpose, each with its reason."""
import warnings
import zlib

import numpy as np
import pytest
import torch

import glassgrad as gg
from opinfo import ALL_OPS
from opinfo.core import Idx, NoGrad, TList

LOW_TOL = {"float16": dict(rtol=4e-3, atol=2e-2), "bfloat16": dict(rtol=3e-2, atol=6e-2)}

KNOWN = {
    # torch's Pade approximant overflows to inf in float16 / bfloat16 arithmetic for ordinary matrices;
    # glassgrad computes in float32 and rounds the (finite) result once
    "matrix_exp": "torch overflows", "linalg.matrix_exp": "torch overflows", "Tensor.matrix_exp": "torch overflows",
    # torch's float32 -> bfloat16 conversion gives every NaN the bits 0xFFFF (sign set) on its vectorised paths,
    # a CPU-dependent detail; glassgrad keeps the NaN's sign (ml_dtypes)
    "signbit": "NaN sign bit after conversion",
    # torch makes complex32 (chalf) tensors of float16 ones; glassgrad has no complex32 and raises a TypeError saying so
    "complex.view_as_complex": "no complex32", "complex.complex": "no complex32",
    "complex.view_as_complex_copy": "no complex32",
}

ROWS = [op for op in ALL_OPS if "float32" in op.dtypes and op.name not in KNOWN]


def _arg(T, a, dt):
    if isinstance(a, Idx):
        return T.from_numpy(a.arr.copy())
    if isinstance(a, NoGrad):
        a = a.arr
    if isinstance(a, TList):
        return [_arg(T, x, dt) for x in a.arrs]
    if isinstance(a, np.ndarray):
        t = T.from_numpy(np.array(a, order="F" if a.ndim and not a.flags.c_contiguous else "C"))
        return t.to(getattr(T, dt)) if t.dtype.is_floating_point else t
    return a


def _run(T, op, s, dt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return op.op(T, *[_arg(T, a, dt) for a in s.args], **{k: _arg(T, a, dt) for k, a in s.kwargs.items()})


def _flat(o):
    return [x for y in o for x in _flat(y)] if isinstance(o, (tuple, list)) else [o]


def _values(t):
    if isinstance(t, (torch.Tensor, gg.Tensor)):
        t = t.detach()
        return np.asarray(t.float().tolist() if t.dtype.is_floating_point else t.tolist()), str(t.dtype)
    return np.asarray(t), type(t).__name__


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", ROWS, ids=lambda o: o.name)
def test_forward_in_low_precision_as_torch(op, dt):
    rng = np.random.default_rng(zlib.crc32(op.name.encode()))
    for s in op.samples(rng, np.dtype(np.float32)):
        what = f"{op.name}[{s.name}] in {dt}"
        try:
            want = _run(torch, op, s, dt)
        except Exception as e:              # torch refuses: glassgrad must refuse the same way
            with pytest.raises(type(e)) as got:
                _run(gg, op, s, dt)
            first = str(e).splitlines()[0] if str(e) else ""
            assert first[:60] in str(got.value), \
                f"{what}: {got.value!r} vs torch's {e!r}"
            continue
        have = _run(gg, op, s, dt)
        for a, b in zip(_flat(have), _flat(want), strict=True):
            (va, da), (vb, db) = _values(a), _values(b)
            assert da == db, f"{what}: dtype {da} != torch {db}"
            assert va.shape == vb.shape, f"{what}: shape {va.shape} != torch {vb.shape}"
            if va.dtype.kind == "f":
                np.testing.assert_allclose(va, vb, equal_nan=True, err_msg=what, **LOW_TOL[dt])
            else:
                np.testing.assert_array_equal(va, vb, err_msg=what)
