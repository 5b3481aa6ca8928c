"""Tensors made on the device stay there (issue 17): factories allocate on it, random draws of device tensors land
on it, a CPU value assigned into a CUDA tensor is copied across (torch's copy_), a CUDA tensor pickles back onto
CUDA.  Values are compared with the same steps on the CPU."""
import copy
import pickle

import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend


def _on_device(t):
    return t.device.type == "cuda" and t._data.__class__ is not np.ndarray


@pytest.mark.parametrize("make", [
    lambda d: gg.zeros(2, 3, device=d), lambda d: gg.ones(4, device=d, dtype=gg.int64),
    lambda d: gg.empty(3, device=d), lambda d: gg.full((2,), 1.5, device=d),
    lambda d: gg.zeros_like(gg.ones(3).to(d)), lambda d: gg.full_like(gg.ones(2, 2).to(d), 7),
    lambda d: gg.ones_like(gg.ones(3).to(d), dtype=gg.float64), lambda d: gg.arange(7, device=d),
    lambda d: gg.arange(0.1, 2.3, 0.3, device=d, dtype=gg.float32), lambda d: gg.eye(3, 4, device=d),
    lambda d: gg.eye(2, dtype=gg.int64, device=d),
], ids=["zeros", "ones", "empty", "full", "zeros_like", "full_like", "ones_like", "arange", "arange_float", "eye",
        "eye_int"])
def test_factories_on_the_device(make):
    c, d = make("cpu"), make("cuda")
    assert _on_device(d) and d.dtype == c.dtype and d.shape == c.shape
    np.testing.assert_array_equal(d.cpu().numpy(), c.numpy())       # (glassgrad's empty memory is zeroed)


def test_default_device_factories():
    gg.set_default_device("cuda")
    try:
        assert _on_device(gg.zeros(2)) and _on_device(gg.full((2,), 3.0)) and _on_device(gg.arange(3))
    finally:
        gg.set_default_device(None)
    assert gg.zeros(2).device.type == "cpu"


@pytest.mark.parametrize("draw", [
    lambda x: gg.bernoulli(x), lambda x: gg.bernoulli(x, 0.25), lambda x: gg.multinomial(x.reshape(-1) + 0.1, 3),
    lambda x: gg.normal(x, 1.0), lambda x: gg.normal(0.0, x + 0.5), lambda x: x.clone().uniform_(),
    lambda x: x.clone().normal_(), lambda x: x.clone().bernoulli_(0.5), lambda x: x.clone().exponential_(),
], ids=["bernoulli", "bernoulli_p", "multinomial", "normal_mean", "normal_std", "uniform_", "normal_", "bernoulli_",
        "exponential_"])
def test_random_draws_of_device_tensors(draw):
    """The generators replay torch's CPU streams: a device tensor gets the same numbers, on the device."""
    x = gg.full((2, 3), 0.5)
    gg.manual_seed(3)
    c = draw(x)
    gg.manual_seed(3)
    d = draw(x.cuda())
    assert _on_device(d)
    np.testing.assert_array_equal(d.cpu().numpy(), c.numpy())


def test_setitem_copies_a_cpu_value_into_a_cuda_tensor():
    v = gg.arange(1.0, 4.0, requires_grad=True)
    y = gg.zeros(2, 3).cuda()
    y[1] = v
    assert _on_device(y) and y.cpu().tolist() == [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]
    (y * 2).sum().backward()
    assert v.grad.device.type == "cpu" and v.grad.tolist() == [2.0, 2.0, 2.0]


def test_cpu_index_tensor_of_a_cuda_tensor():
    """torch moves a CPU index tensor to the indexed tensor's device."""
    x = gg.arange(12.0).reshape(3, 4)
    i = gg.tensor([2, 0])
    y = x.cuda()[i]
    assert _on_device(y)
    np.testing.assert_array_equal(y.cpu().numpy(), x[i].numpy())


def test_cuda_tensor_pickles_back_onto_cuda():
    x = gg.arange(4.0).cuda().requires_grad_()
    for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
        assert _on_device(y) and y.requires_grad and y.cpu().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert backend.device_of(pickle.loads(pickle.dumps(gg.ones(2)))._data).type == "cpu"
