"""glassgrad.multiprocessing against torch.multiprocessing (torch 2.13, the oracle): its names, spawn's processes and
errors, and tensors through shared memory -- share_memory_ / is_shared, pickling with multiprocessing's
ForkingPickler, and queues and spawned processes with the spawn, forkserver and fork start methods (a child's
in-place change seen by the parent).

The children run tests/_mp_workers.py.  A spawned child takes ~0.3 s to start with glassgrad and ~1.2 s with torch,
so torch's are forked where the child runs no torch op, and each test starts few processes.
"""
import gc
import multiprocessing
import multiprocessing.spawn
import os
import pickle
import re
import subprocess
import sys
import time
import warnings
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
import torch
import torch.multiprocessing as tmp

import _mp_workers as W
import glassgrad
import glassgrad.multiprocessing as gmp


def roundtrip(t):
    return ForkingPickler.loads(ForkingPickler.dumps(t))


def _cases(lib):
    """Tensors of every dtype, views (offset, transposed, strided, expanded), a 0-d, a leaf that requires grad and a
    Parameter; the views' base last."""
    base = lib.arange(24, dtype=lib.float32).reshape(4, 6)
    return [lib.arange(6, dtype=lib.float32), lib.arange(6, dtype=lib.float64).reshape(2, 3),
            lib.tensor([1.5, -2.0], dtype=lib.float16), lib.arange(5), lib.arange(5, dtype=lib.int32),
            lib.arange(-2, 3, dtype=lib.int16), lib.arange(-2, 3, dtype=lib.int8), lib.arange(5, dtype=lib.uint8),
            lib.tensor([True, False, True]), lib.tensor(3.5),
            base.t(), base[1:3, 2:], base[:, ::2], base[2], base[3].expand(2, 6),
            lib.zeros(3, requires_grad=True), lib.nn.Parameter(lib.ones(2)), base]


# -- the namespace ---------------------------------------------------------------------------------------------
def test_names_are_torchs():
    assert gmp.__all__ == tmp.__all__
    for name in multiprocessing.__all__:
        assert getattr(gmp, name) is getattr(multiprocessing, name) is getattr(tmp, name), name
    for name in ("spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessRaisedException",
                 "ProcessExitedException", "ENV_VAR_PARALLEL_START", "reductions", "init_reductions"):
        assert type(getattr(gmp, name)) is type(getattr(tmp, name)), name
    assert gmp.ENV_VAR_PARALLEL_START == tmp.ENV_VAR_PARALLEL_START
    assert glassgrad.multiprocessing is gmp


def test_import_torch_alias_serves_it_and_its_spawned_children():
    from glassgrad._torch_alias import torch_alias
    with torch_alias():
        import torch.multiprocessing as aliased
        assert aliased is gmp
        assert "glassgrad_torch_alias" in multiprocessing.spawn.get_preparation_data("x")
    assert "glassgrad_torch_alias" not in multiprocessing.spawn.get_preparation_data("x")
    assert sys.modules["torch.multiprocessing"] is tmp


def test_sharing_strategies_are_torchs():
    assert gmp.get_sharing_strategy() == tmp.get_sharing_strategy() == "file_descriptor"
    assert gmp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies() == {"file_descriptor", "file_system"}
    errors = []
    for lib in (gmp, tmp):
        with pytest.raises(AssertionError) as e:
            lib.set_sharing_strategy("shm")
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    try:
        gmp.set_sharing_strategy("file_system")
        assert gmp.get_sharing_strategy() == "file_system"
        t = glassgrad.arange(3.)
        assert roundtrip(t).data_ptr() == t.data_ptr()
    finally:
        gmp.set_sharing_strategy("file_descriptor")


# -- shared memory in one process --------------------------------------------------------------------------------
def _share_story(lib):
    """share_memory_ moves the storage in place: views and aliases made before follow, NumPy sources do not."""
    out = []
    t = lib.zeros(4)
    before_view, alias = t[1:], t.detach()
    out += [t.is_shared(), t.share_memory_() is t, t.is_shared(), before_view.is_shared(), alias.is_shared(),
            t[2:].is_shared()]
    before_view.add_(1)
    alias.add_(10)
    t[3:].mul_(2)
    out.append(t.tolist())
    v = lib.arange(6.).reshape(2, 3)[:, 1:]
    v.share_memory_()
    out += [v._base.is_shared(), v.is_shared(), v.stride(), v.storage_offset()]
    a = np.zeros(3, np.float32)
    f = lib.from_numpy(a)
    f.share_memory_()
    f.add_(1)
    e = lib.zeros(0)
    e.share_memory_()
    w = lib.ones(2)
    p = lib.nn.Parameter(w)
    p.share_memory_()
    out += [a.tolist(), f.tolist(), f.is_shared(), e.is_shared(), w.is_shared(), type(p).__name__]
    return out


def _module_story(lib):
    m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.BatchNorm1d(2))
    m[0].weight.grad = lib.ones(2, 2)
    out = [m.share_memory() is m, m[0].weight.grad.is_shared(), type(m[0].weight).__name__]
    out += [q.is_shared() for q in m.parameters()] + [b.is_shared() for b in m.buffers()]
    opt = lib.optim.Adagrad(m.parameters())
    opt.share_memory()
    return out + [opt.state[m[0].weight]["sum"].is_shared()]


def test_share_memory_moves_the_storage_in_place_like_torch():
    assert _share_story(glassgrad) == _share_story(torch)


def test_module_and_adagrad_share_memory_like_torch():
    assert _module_story(glassgrad) == _module_story(torch)


def _pickle_story(lib):
    out = []
    y = lib.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError) as e:
        ForkingPickler.dumps(y * 2)
    out.append(str(e.value))
    y.grad = lib.ones(3)
    out.append(y.is_shared())
    r = roundtrip(y)
    out += [y.is_shared(), W.meta(r), r.data_ptr() == y.data_ptr()]
    r = roundtrip(lib.nn.Parameter(lib.ones(2), requires_grad=False))
    out.append(W.meta(r))
    for t in _cases(lib):
        r = roundtrip(t)
        out.append((W.meta(r), r.tolist() == t.tolist(), r.data_ptr() == t.data_ptr()))
    e = lib.zeros(3, 0, requires_grad=True)     # an empty storage arrives as a new one, neither side shared
    r = roundtrip(e)
    return out + [(tuple(r.shape), r.requires_grad, r.is_shared(), e.is_shared())]


def test_forking_pickler_shares_and_refuses_like_torch():
    """The non-leaf refusal, requires_grad kept and .grad dropped, the class kept, the sender moved to shared
    memory, and the receiver on the sender's memory with the same strides and offset."""
    assert _pickle_story(glassgrad) == _pickle_story(torch)


def _hook(grad):
    return grad


def test_backward_hook_warning_like_torch():
    messages = []
    for lib in (glassgrad, torch):
        t = lib.zeros(2, requires_grad=True)
        t.register_hook(_hook)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            ForkingPickler.dumps(t)
        messages.append([(w.category, str(w.message)) for w in rec])
    assert messages[0] == messages[1] and len(messages[0]) == 1


def _memfds():
    """(descriptors, mappings) of glassgrad's shared memory in this process."""
    fds = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds += "glassgrad-shared" in os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            pass
    with open("/proc/self/maps") as f:
        maps = sum("glassgrad-shared" in line for line in f)
    return fds, maps


def test_shared_memory_is_released_with_the_last_tensor():
    gc.collect()
    before, shm_before = _memfds(), set(os.listdir("/dev/shm"))
    tensors = [glassgrad.ones(1000).share_memory_() for _ in range(10)]
    received = [roundtrip(t) for t in tensors]
    fds, maps = _memfds()
    assert fds == before[0] + 10 and maps == before[1] + 10     # one mapping each, the receiver's too
    del tensors
    gc.collect()
    assert _memfds() == (fds, maps)                             # the received tensors still hold it
    del received
    gc.collect()
    assert _memfds() == before
    assert not [n for n in set(os.listdir("/dev/shm")) - shm_before if "glassgrad" in n]


# -- across processes ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
def test_queue_round_trip_shares_memory_like_torch(method):
    """A child gets every case through a Queue, reports what it got, changes each in place and sends one back:
    the report is what torch's ForkingPickler gives, the parent sees the changes, and the tensor sent back is on
    the parent's own memory."""
    ctx = gmp.get_context(method)
    inbox, outbox = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=W.echo_and_mutate, args=(inbox, outbox))
    proc.start()
    cases = _cases(glassgrad)
    try:
        inbox.put(cases)
        report, first, fresh, pid = outbox.get(timeout=60)
        inbox.put("done")
    finally:
        proc.join(30)
    assert proc.exitcode == 0 and pid == proc.pid
    oracle = _cases(torch)
    assert report == [W.meta(roundtrip(t)) for t in oracle]
    W.mutate(oracle)
    assert [t.tolist() for t in cases] == [t.tolist() for t in oracle]
    assert first.data_ptr() == cases[0].data_ptr() and first.tolist() == [1., 2., 3., 4., 5., 6.]
    assert fresh.tolist() == [7.0, 7.0] and fresh.is_shared()


def _fill(mp, lib, method, share):
    out = lib.zeros(2)
    if share:
        out.share_memory_()
    mp.start_processes(W.fill_slot, args=(out, 0.0), nprocs=2, start_method=method)
    return out.tolist()


def test_fork_children_share_only_what_was_shared_like_torch():
    """With fork the arguments are inherited, not pickled: a tensor not shared first is the child's own copy."""
    for share in (False, True):
        assert _fill(gmp, glassgrad, "fork", share) == _fill(tmp, torch, "fork", share) == \
            ([1.0, 2.0] if share else [0.0, 0.0])


def test_spawn_passes_the_index_and_shares_the_arguments():
    out = glassgrad.zeros(2)
    context = gmp.start_processes(W.fill_slot, args=(out, 0.5), nprocs=2, join=False)
    assert isinstance(context, gmp.ProcessContext)
    assert context.pids() == [p.pid for p in context.processes] and all(type(p) is int for p in context.pids())
    assert context.join(timeout=0.01) is False
    while not context.join():
        pass
    assert context.join() is True
    assert out.tolist() == [1.0, 2.0] and out.is_shared()


def _failure(mp, fn, nprocs, method, args=()):
    context = mp.start_processes(fn, args=args, nprocs=nprocs, join=False, start_method=method)
    try:
        while not context.join():
            pass
    except Exception as e:
        assert not any(p.is_alive() for p in context.processes)
        left = [f for f in context.error_files if os.path.exists(f)]
        for f in left:                                  # torch leaves a raising child's traceback file behind
            os.unlink(f)
        assert not left or mp is tmp, left
        return e, context.pids()
    raise AssertionError("no process failed")


def _norm(msg):
    """The child's traceback without the frame of the library's own wrapper (its path and line differ)."""
    return re.sub(r'File "[^"]*spawn\.py", line \d+, in _wrap', 'File "spawn.py", in _wrap', msg)


def test_a_raising_process_stops_the_others_like_torch(caplog):
    t0 = time.monotonic()
    g, gpids = _failure(gmp, W.raise_in_one, 2, "spawn")
    assert time.monotonic() - t0 < 20                           # process 0's minute of sleep was cut short
    t, tpids = _failure(tmp, W.raise_in_one, 2, "fork")
    assert isinstance(g, gmp.ProcessRaisedException) and type(t).__name__ == "ProcessRaisedException"
    assert g.msg.startswith("\n\n-- Process 1 terminated with the following error:\nTraceback (most recent call")
    assert g.msg.endswith("ValueError: boom in process 1\n") and str(g) == g.msg
    assert _norm(g.msg) == _norm(t.msg)
    assert (g.error_index, g.error_pid, t.error_index, t.error_pid) == (1, gpids[1], 1, tpids[1])
    assert f"Terminating process {gpids[0]} via signal SIGTERM" in caplog.messages
    back = pickle.loads(pickle.dumps(g))
    assert (type(back), back.msg, back.error_index, back.error_pid) == (type(g), g.msg, 1, gpids[1])


@pytest.mark.parametrize("fn,args", [(W.exit_with, (3,)), (W.kill_self, ())], ids=["exit_code", "signal"])
def test_an_exiting_process_like_torch(fn, args):
    g, gpids = _failure(gmp, fn, 1, "spawn", args)
    t, tpids = _failure(tmp, fn, 1, "fork", args)
    assert isinstance(g, gmp.ProcessExitedException) and type(t).__name__ == "ProcessExitedException"
    assert (g.msg, g.error_index, g.exit_code, g.signal_name) == (t.msg, t.error_index, t.exit_code, t.signal_name)
    assert g.msg in ("process 0 terminated with exit code 3", "process 0 terminated with signal SIGKILL")
    assert (g.error_pid, t.error_pid) == (gpids[0], tpids[0])
    back = pickle.loads(pickle.dumps(g))
    assert (back.msg, back.exit_code, back.signal_name) == (g.msg, g.exit_code, g.signal_name)


def test_spawn_warns_like_torch_and_still_spawns():
    """spawn(start_method="fork") warns and spawns anyway: an unshared argument is pickled, so the child's write
    is seen (with fork it would not be).  SpawnContext's rename warning."""
    caught = []
    for mp in (gmp, tmp):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            mp.spawn(W.fill_slot, args=(None, 0.0), nprocs=0, start_method="fork")
            mp.SpawnContext([], [])
        caught.append([(w.category, str(w.message)) for w in rec])
    assert caught[0] == caught[1] and [c for c, _ in caught[0]] == [FutureWarning, UserWarning]
    out = glassgrad.zeros(1)
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        gmp.spawn(W.fill_slot, args=(out, 0.0), start_method="fork")
    assert out.tolist() == [1.0]


def _hogwild(lib, mp):
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(lib.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]))
        model.bias.copy_(lib.tensor([0.05, -0.05]))
    x = lib.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0], [0.0, 1.0, -1.0], [2.0, -2.0, 1.0]])
    y = lib.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [-1.0, 0.5]])
    out = lib.zeros(2).share_memory_()
    model.share_memory()
    mp.spawn(W.hogwild, args=(model, x, y, out), nprocs=2)
    return model.weight.tolist(), model.bias.tolist(), out.tolist()


def test_hogwild_training_in_a_child_updates_the_parents_model_like_torch():
    g, t = _hogwild(glassgrad, gmp), _hogwild(torch, tmp)
    assert g[2] == t[2] == [1.0, 2.0]
    np.testing.assert_allclose(g[0], t[0], rtol=1e-6)
    np.testing.assert_allclose(g[1], t[1], rtol=1e-6)
    assert not np.allclose(g[0], [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]])      # it trained


SCRIPT = '''
import torch
import torch.multiprocessing as mp


def work(i, t):
    t[i] = 1.0 if torch.__name__ == "glassgrad" else -1.0


if __name__ == "__main__":
    t = torch.zeros(2)
    mp.spawn(work, args=(t,), nprocs=2)
    print("out", t.tolist(), t.is_shared())
'''


def test_glassgrad_run_spawns_children_on_glassgrad_without_warnings(tmp_path):
    """An unmodified torch script under `glassgrad run`: the spawned children import torch as glassgrad too, and
    nothing is left for the resource tracker to warn about (warnings are errors here)."""
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    r = subprocess.run([sys.executable, "-W", "error", "-m", "glassgrad", "run", str(script)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stderr == "", r.stdout + r.stderr
    assert r.stdout == "out [1.0, 1.0] True\n"
