"""channels_last on the device: the layouts (strides) and values of the memory-format entry points and of the ops
that keep a format are those of the same steps on the CPU, and a *_like of a device tensor stays on the device."""
import numpy as np
import pytest

import glassgrad as gg


def _cl(t):
    return t.contiguous(memory_format=gg.channels_last)


STEPS = {
    "contiguous": lambda x: _cl(x),
    "clone": lambda x: _cl(x).clone(),
    "to_cl": lambda x: x.to(memory_format=gg.channels_last),
    "double": lambda x: _cl(x).double(),
    "zeros_like": lambda x: gg.zeros_like(_cl(x)),
    "full_like": lambda x: gg.full_like(_cl(x), 2.0),
    "rand_like": lambda x: gg.rand_like(_cl(x)),
    "randn_like": lambda x: gg.randn_like(_cl(x)),
    "randint_like": lambda x: gg.randint_like(_cl(x), 9),
    "uniform_": lambda x: _cl(x).uniform_(),
    "conv2d": lambda x: gg.nn.functional.conv2d(_cl(x), _cl(gg.ones(4, 3, 3, 3, device=x.device))),
    "max_pool2d": lambda x: gg.nn.functional.max_pool2d(_cl(x), 2),
    "adaptive_avg_pool2d": lambda x: gg.nn.functional.adaptive_avg_pool2d(_cl(x), 1),
    "interpolate": lambda x: gg.nn.functional.interpolate(_cl(x), scale_factor=2),
    "pad": lambda x: gg.nn.functional.pad(_cl(x), (1, 1, 1, 1)),
    "sum_h": lambda x: _cl(x).sum(2),
    "round_trip": lambda x: _cl(x).cuda().cpu().to(x.device),
    "to_device": lambda x: _cl(x).to("cuda").to(x.device, gg.float64),
}


@pytest.mark.parametrize("step", list(STEPS))
def test_channels_last_on_the_device(step):
    base = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5) / 10
    gg.manual_seed(0)
    c = STEPS[step](gg.tensor(base))
    gg.manual_seed(0)
    d = STEPS[step](gg.tensor(base, device="cuda"))
    assert d.device.type == "cuda" and d._data.__class__ is not np.ndarray
    assert d.stride() == c.stride() and d.dtype == c.dtype
    np.testing.assert_allclose(d.cpu().numpy(), c.numpy(), rtol=1e-6)
