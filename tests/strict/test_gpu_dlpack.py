"""DLPack on a real GPU (issue 17): a CUDA tensor shared with CuPy and with torch (CUDA) both ways, without a copy.
Needs CuPy on a GPU (and torch with CUDA for the torch leg): skipped elsewhere with that reason;
scripts/gpu_check.sh runs it where one is lent."""
import numpy as np
import pytest

import glassgrad as gg
from glassgrad import backend

pytestmark = pytest.mark.skipif(backend._cupy is None or backend.STRICT,
                                reason="DLPack between devices needs CuPy on a real GPU (the strict stand-in has no "
                                       "device memory to share); scripts/gpu_check.sh runs it where one is lent")


def test_cupy_both_ways_share_memory():
    cp = backend._cupy
    a = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    t = gg.from_dlpack(a)
    assert t.device.type == "cuda" and t.shape == (3, 4)
    a[0, 0] = 42                                              # the same memory: seen through the tensor
    assert t[0, 0].item() == 42
    back = cp.from_dlpack(t)
    t.add_(1)
    assert float(back[0, 0]) == 43 and back.data.ptr == a.data.ptr


def test_torch_cuda_both_ways_share_memory():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA on this GPU machine")
    x = torch.arange(6, dtype=torch.float32, device="cuda")
    t = gg.from_dlpack(x)
    assert t.device.type == "cuda"
    x[1] = 7
    assert t[1].item() == 7
    y = torch.from_dlpack(t)
    t.mul_(2)
    torch.cuda.synchronize()
    assert y.device.type == "cuda" and y.cpu().tolist() == (np.array([0, 7, 2, 3, 4, 5]) * 2).tolist()
