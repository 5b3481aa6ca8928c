"""A CPU tensor meeting a CUDA tensor in an elementwise op (issue 17): torch's TensorIterator takes the first
device that is not the CPU as the common one, lets a CPU 0-dim tensor (a scalar) join it, and refuses any other
CPU tensor with "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
-- whatever the operands' order.  torch has no CUDA here, so the message is checked against its source text
(torch/_subclasses/fake_tensor.py formats the same message as TensorIterator.cpp)."""
import importlib.util
import os

import numpy as np
import pytest

import glassgrad as gg


def _torch_message(common, other):
    path = os.path.join(importlib.util.find_spec("torch").submodule_search_locations[0], "_subclasses",
                        "fake_tensor.py")
    src = open(path).read()
    head = '"Expected all tensors to be on the same device, but found "'
    tail = 'f"at least two devices, {common_device} and {device}!"'
    assert head in src and tail in src, "torch's wording moved: update this test"
    return f"{head[1:-1]}at least two devices, {common} and {other}!"


OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: gg.sub(a, b),
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "eq": lambda a, b: a == b,
    "maximum": lambda a, b: gg.maximum(a, b),
    "where": lambda a, b: gg.where(b > 0, a, b),
    "lerp": lambda a, b: gg.lerp(a, b, 0.5),
    "lerp_tensor_weight": lambda a, b: gg.lerp(a, a, b),
    "addcmul": lambda a, b: gg.addcmul(a, b, a),
}


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("cuda_first", [True, False])
def test_cpu_tensor_beside_cuda_tensor_raises_torchs_error(name, cuda_first):
    c = gg.arange(1.0, 7.0).reshape(2, 3).cuda()
    h = gg.arange(2.0, 8.0).reshape(2, 3)
    a, b = (c, h) if cuda_first else (h, c)
    with pytest.raises(RuntimeError) as e:
        OPS[name](a, b)
    assert str(e.value) == _torch_message("cuda:0", "cpu")


@pytest.mark.parametrize("name", sorted(OPS))
def test_cpu_scalar_tensor_joins_cuda_tensor(name):
    c = gg.arange(1.0, 7.0).reshape(2, 3)
    s = gg.tensor(3.0)
    want = OPS[name](c, s)
    for a, b in ((c.cuda(), s), (c.cuda(), s.cuda())):
        y = OPS[name](a, b)
        assert y.device.type == "cuda" and y.dtype == want.dtype
        np.testing.assert_array_equal(y.cpu().numpy(), want.numpy())


def test_cpu_scalar_gradient_stays_on_cpu():
    """torch's engine moves each gradient to its input's device: a CPU scalar's .grad is on the CPU."""
    a = gg.arange(1.0, 4.0).cuda().requires_grad_()
    s = gg.tensor(2.0, requires_grad=True)
    (a * s).sum().backward()
    assert a.grad.device.type == "cuda" and s.grad.device.type == "cpu"
    assert s.grad.item() == 6.0
    np.testing.assert_array_equal(a.grad.cpu().numpy(), [2.0, 2.0, 2.0])


def _libtorch_has(text):
    lib = os.path.join(importlib.util.find_spec("torch").submodule_search_locations[0], "lib", "libtorch_cpu.so")
    return text.encode() in open(lib, "rb").read()


@pytest.mark.parametrize("out_on_cuda", [True, False])
def test_out_on_another_device_raises_torchs_error(out_on_cuda):
    """torch's structured kernels (resize_out) refuse an out= tensor on another device than the result."""
    assert _libtorch_has("Expected out tensor to have device "), "torch's wording moved: update this test"
    a = gg.arange(1.0, 4.0)
    x, out = (a, gg.zeros(3).cuda()) if out_on_cuda else (a.cuda(), gg.zeros(3))
    with pytest.raises(RuntimeError) as e:
        gg.add(x, x, out=out)
    want = ("cpu", "cuda:0") if out_on_cuda else ("cuda:0", "cpu")
    assert str(e.value) == f"Expected out tensor to have device {want[0]}, but got {want[1]} instead"
    y = gg.add(a.cuda(), a.cuda(), out=gg.zeros(3).cuda())
    assert y.device.type == "cuda" and y.tolist() == [2.0, 4.0, 6.0]


@pytest.mark.parametrize("name", ["add", "sub", "mul", "div", "maximum"])
@pytest.mark.parametrize("scalar_first", [True, False])
def test_gradient_reaches_a_cpu_graph_behind_a_cpu_scalar(name, scalar_first):
    """torch's engine moves a gradient to its input's device: the CPU graph behind a CPU scalar that joined a CUDA
    op gets CPU gradients, equal to an all-CPU run."""
    grads = []
    for dev in ("cpu", "cuda"):
        w = gg.arange(1.0, 4.0, requires_grad=True)
        a = gg.full((2, 3), 2.5).to(dev).requires_grad_()
        s = (w * w).sum() / 7
        y = OPS[name](s, a) if scalar_first else OPS[name](a, s)
        y.sum().backward()
        assert w.grad.device.type == "cpu" and a.grad.device.type == dev
        grads.append((w.grad.numpy(), a.grad.cpu().numpy()))
    for c, d in zip(*grads):
        np.testing.assert_array_equal(d, c)


@pytest.mark.parametrize("by", ["lengths", "offsets"])
@pytest.mark.parametrize("data_on_cuda", [True, False])
def test_segment_reduce_segments_on_another_device(by, data_on_cuda):
    """torch.segment_reduce checks `data.get_device() == <by>_value.get_device()` (ATen's SegmentReduce.cpp, a
    message-less TORCH_CHECK) before it reads the segments; torch has no CUDA here, so the text is ATen's."""
    x = gg.arange(6.0, device="cuda" if data_on_cuda else "cpu")
    seg = gg.tensor([2, 4] if by == "lengths" else [0, 2, 6], device="cpu" if data_on_cuda else "cuda")
    with pytest.raises(RuntimeError, match=rf"^Expected data\.get_device\(\) == {by}_value\.get_device\(\) to be "
                                           r"true, but got false\.  \(Could this error message be improved\?"):
        gg.segment_reduce(x, "sum", **{by: seg})
    y = gg.segment_reduce(x, "sum", **{by: seg.to(x.device)})
    assert y.device == x.device and y.tolist() == [1.0, 14.0]
