"""glassgrad's DistributedDataParallel against torch's own, each on 2 processes (torchrun + gloo for torch,
glassgrad run for glassgrad) running the same unmodified program, bench/ddp_program.py: a conv net with
BatchNorm (buffers broadcast from rank 0 before each forward), SGD with momentum, a shuffling
DistributedSampler over 3 epochs.  Per-rank losses at every step and every parameter and buffer at the end
must agree; float64 so the comparison does not depend on the CPU's vector unit (bench/ddp_compare.py
reports the float32 figures)."""
import importlib.util
import os
import tempfile

import pytest

BENCH = os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, "bench", "ddp_compare.py")
spec = importlib.util.spec_from_file_location("ddp_compare", BENCH)
ddp_compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ddp_compare)


@pytest.mark.parametrize("variant", ["torch", "single-nobn", "single-syncbn"])
def test_ddp_matches_torch_ddp_and_one_process(variant):
    """"torch": glassgrad DDP vs torch DDP; "single-nobn": glassgrad DDP vs one process on the global batch
    (no BatchNorm: the averaged gradient is the global batch's); "single-syncbn": DDP with the BatchNorm
    converted to SyncBatchNorm vs one process with BatchNorm on the global batch (running stats included)."""
    with tempfile.TemporaryDirectory() as tmp:
        rows = ddp_compare.compare(variant, "float64", tmp)
    assert [r[0] for r in rows] == [0, 1]
    for rank, dloss, drel, name in rows:
        assert dloss < 1e-10, f"rank {rank}: losses differ by {dloss}"
        assert drel < 1e-9, f"rank {rank}: {name} differs by {drel} (relative)"
