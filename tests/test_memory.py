"""A finished training step leaves nothing behind: its graph is freed by reference counting alone (no
cycles for the garbage collector), and RSS stays flat over many steps (bench/leak.py runs 10,000)."""
import gc
import os
import subprocess
import sys
import weakref

import pytest

import glassgrad as torch
import glassgrad.nn as nn

ROOT = os.path.join(os.path.dirname(__file__), "..")


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.LayerNorm(32), nn.Dropout(0.1), nn.Linear(32, 5))


def test_a_finished_steps_graph_is_freed_without_the_garbage_collector():
    model = _model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    hook_calls = []
    model[0].register_forward_hook(lambda m, i, o: hook_calls.append(1))
    model[4].weight.register_hook(lambda g: None)
    x, y = torch.randn(8, 20), torch.randint(0, 5, (8,))
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            opt.zero_grad()
            out = model(x)
            loss = nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            refs = [weakref.ref(loss.grad_fn), weakref.ref(out.grad_fn), weakref.ref(out)]
            node = loss.grad_fn
            while node is not None and node.next_functions:     # walk to a node deep in the graph
                node = next((n for n, _ in node.next_functions if n is not None), None)
                if node is not None and type(node).__name__ != "AccumulateGrad":
                    refs.append(weakref.ref(node))
            del out, loss, node
            assert [r() for r in refs] == [None] * len(refs)
    finally:
        gc.enable()
    assert len(hook_calls) == 3


def test_rss_stays_flat_over_many_steps():
    code = f"""
import sys
sys.argv = ["leak", "--steps", "2000", "--every", "500", "--no-gc"]
sys.path.insert(0, {os.path.join(ROOT, 'bench')!r})
import leak
leak.main()   # the workload is plain PyTorch code, run on glassgrad through glassgrad._torch_alias
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600,
                         env=dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1"))
    assert out.returncode == 0, out.stderr
    rows = [ln.split() for ln in out.stdout.splitlines()[1:]]
    rss = {int(r[0]): float(r[1]) for r in rows}
    # after warm-up (step 500), 1,500 more steps may not grow RSS by more than 2 MiB (a leaked graph of this
    # MLP is ~1.2 MiB per step)
    assert rss[2000] - rss[500] < 2.0, out.stdout


def _faults_per_step(env_extra):
    code = f"""
import resource, sys
sys.argv = ["x"]
sys.path.insert(0, {os.path.join(ROOT, 'bench')!r})
sys.path.insert(0, {os.path.join(ROOT, 'src')!r})
from glassgrad import _torch_alias
_torch_alias.install()
from workloads import gpt
step, _ = gpt.setup(True)
for _ in range(3):
    step()
f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0) / 5)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, OPENBLAS_NUM_THREADS="1", **env_extra))
    assert out.returncode == 0, out.stderr
    return float(out.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt: Linux only")
def test_training_steps_reuse_memory_instead_of_page_faulting():
    """glassgrad/_malloc.py: a step's arrays come back from the heap, not as fresh zero-filled pages."""
    kept, system = _faults_per_step({}), _faults_per_step({"GLASSGRAD_MALLOC": "system"})
    assert system > 1000                # the GPT step's activations and gradients fault in with glibc's defaults
    assert kept < system / 10
