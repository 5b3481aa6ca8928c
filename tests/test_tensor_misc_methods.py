"""Small Tensor methods checked against torch: the devices a CPU build lacks (xpu / ipu / mtia raise torch's
errors), is_set_to, module_load, const_data_ptr, dequantize of a plain tensor, is_distributed, and the removed
volatile / reinforce."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad

LIBS = (torch, glassgrad)


@pytest.mark.parametrize("method", ["xpu", "ipu", "mtia"])
def test_devices_this_build_lacks_raise_torchs_error(method):
    got = []
    for T in LIBS:
        with pytest.raises(Exception) as e:
            getattr(T.ones(2), method)()
        got.append((type(e.value), str(e.value)))
    assert got[0] == got[1]


def test_is_set_to_compares_memory_offset_size_and_stride():
    for T in LIBS:
        x = T.arange(6.0)
        cases = [x.view(6), x.view(2, 3), x[1:], x.clone(), x[:], x.view(6).view(6)]
        got = [x.is_set_to(c) for c in cases]
        assert got == [True, False, False, False, True, True]


def test_module_load_copies_or_assigns_as_torch():
    for T in LIBS:
        x, o = T.zeros(3), T.ones(3)
        r = x.module_load(o)
        assert r.data_ptr() == x.data_ptr() and x.tolist() == [1.0, 1.0, 1.0] and not r.requires_grad
        o2 = T.full((3,), 2.0, requires_grad=True)
        r2 = x.module_load(o2, assign=True)
        assert r2.data_ptr() == o2.data_ptr() and not r2.requires_grad and x.tolist() == [1.0, 1.0, 1.0]
        p = T.nn.Parameter(T.zeros(3))
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            p.module_load(o)


def test_pointer_and_plain_tensor_queries():
    for T in LIBS:
        x = T.arange(4.0)
        assert x.const_data_ptr() == x.data_ptr()
        assert x.dequantize() is x
        assert x.is_distributed() is False


def test_volatile_warns_and_reinforce_raises_as_torch():
    msgs = []
    for T in LIBS:
        x = T.ones(2)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert x.volatile is False
        assert [str(m.message) for m in w] == ["volatile was removed (Variable.volatile is always False)"]
        with pytest.raises(RuntimeError) as e:
            x.reinforce(np.float32(1.0))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and msgs[0].startswith("reinforce() was removed.")


def test_strides_of_empty_tensors_as_torch():
    """NumPy gives a fresh empty array zero strides; torch reports its contiguous strides (empty sizes as 1)."""
    makers = [lambda T: T.zeros(0), lambda T: T.zeros(0, 3), lambda T: T.zeros(3, 0), lambda T: T.zeros(2, 0, 4),
              lambda T: T.ones(3, 4)[:, :0], lambda T: T.ones(3, 4).t()[:0], lambda T: T.empty(1, 0),
              lambda T: T.randn(0, 2, 2).contiguous(), lambda T: T.ones(4, 3)[2:2]]
    for make in makers:
        assert make(glassgrad).stride() == make(torch).stride()
