"""DataLoader with worker processes, against torch's: same batches as num_workers=0, torch's per-worker
seeding (glassgrad's default generator, Python's random and NumPy's in each worker), worker_init_fn and
get_worker_info, persistent workers, iterable datasets, errors with the worker's traceback, timeouts, and
no worker process left behind."""
import os
import random
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import torch
import glassgrad  # noqa: E402


def py(x):
    if hasattr(x, "tolist") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return ("T", str(x.dtype), tuple(x.shape), x.tolist())
    if isinstance(x, dict):
        return {k: py(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(py(v) for v in x)
    return (type(x).__name__, x)


class Probe:
    """Map-style dataset whose samples record where and with which RNG state they were made."""

    def __init__(self, T, n):
        self.T, self.n = T, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        T = self.T
        info = T.utils.data.get_worker_info()
        return {"i": T.tensor([i, i * i]), "f": float(i) / 2,
                "worker": -1 if info is None else info.id,
                "nw": 0 if info is None else info.num_workers,
                "seed": -1 if info is None else info.seed,
                "same_ds": info is None or info.dataset is self,
                # RNG draws only inside workers, so the main process's generator sees the same use either way
                "t_rand": T.rand(1) if info else 0.0, "np_rand": float(np.random.rand()) if info else 0.0,
                "py_rand": random.random() if info else 0.0, "initial_seed": T.initial_seed() if info else 0}


def _init_record(worker_id):
    """worker_init_fn: checks get_worker_info and leaves a mark on this worker's dataset copy."""
    for T in (torch, glassgrad):
        info = T.utils.data.get_worker_info()
        if info is not None:
            break
    if info.id != worker_id:
        raise RuntimeError("worker_init_fn got the wrong worker id")
    info.dataset.marked = worker_id


class Marked(Probe):
    def __getitem__(self, i):
        return [i, getattr(self, "marked", -1)]


def _run(T, ds_cls, n, seed, epochs=2, use_gen=False, **kw):
    T.manual_seed(seed)
    if use_gen:
        kw["generator"] = T.Generator().manual_seed(seed + 5)
    loader = T.utils.data.DataLoader(ds_cls(T, n), **kw)
    out = [[py(b) for b in loader] for _ in range(epochs)]
    out.append(T.rand(2).tolist())
    return out


def _worker_free(out):
    """Drop the per-worker fields from a run (to compare against num_workers=0)."""
    strip = ("worker", "nw", "seed", "same_ds", "t_rand", "np_rand", "py_rand", "initial_seed")
    return [[{k: v for k, v in b.items() if k not in strip} for b in ep] if isinstance(ep[0], dict) else ep
            for ep in out[:-1]] + [out[-1]]


@pytest.mark.parametrize("seed,use_gen,kw", [
    (0, False, dict(batch_size=4, shuffle=True)),
    (7, True, dict(batch_size=3, shuffle=True, drop_last=True)),
    (3, False, dict(batch_size=5, prefetch_factor=1)),
    (11, False, dict(batch_size=None, shuffle=True, prefetch_factor=3)),
], ids=str)
def test_workers_match_torch_and_single_process(seed, use_gen, kw):
    ours = _run(glassgrad, Probe, 13, seed, use_gen=use_gen, num_workers=2, **kw)
    theirs = _run(torch, Probe, 13, seed, use_gen=use_gen, num_workers=2, **kw)
    assert ours == theirs                       # batches, worker ids, seeds and in-worker RNG draws
    kw.pop("prefetch_factor", None)
    single = _run(glassgrad, Probe, 13, seed, use_gen=use_gen, num_workers=0, **kw)
    assert _worker_free(ours) == _worker_free(single)
    workers = {b["worker"][3][0] if kw.get("batch_size") else b["worker"][1] for b in ours[0]}
    assert workers == {0, 1}


def test_worker_init_fn_and_worker_info():
    def run(T):
        T.manual_seed(5)
        return [py(b) for b in T.utils.data.DataLoader(Marked(T, 8), batch_size=2, num_workers=2,
                                                         worker_init_fn=_init_record)]
    ours = run(glassgrad)
    assert ours == run(torch)
    assert [b[2][3] for b in ours] == [[0, 0], [1, 1], [0, 0], [1, 1]]      # the marks made by worker_init_fn


def test_persistent_workers():
    def run(T):
        T.manual_seed(9)
        loader = T.utils.data.DataLoader(Probe(T, 9), batch_size=2, shuffle=True, num_workers=2,
                                         persistent_workers=True)
        first = iter(loader)
        pids = [w.pid for w in first._workers]
        out = [[py(b) for b in first]]
        again = iter(loader)
        assert again is first and [w.pid for w in again._workers] == pids
        out.append([py(b) for b in again])
        it = iter(loader)
        out.append(py(next(it)))                       # an epoch abandoned early...
        out.append([py(b) for b in loader])            # ...then a full one
        out.append(T.rand(2).tolist())
        it._shutdown_workers()
        return out
    assert run(glassgrad) == run(torch)


def _stream(T, n, shard):
    class Stream(T.utils.data.IterableDataset):
        def __iter__(self):
            info = T.utils.data.get_worker_info()
            if shard and info is not None:
                return iter(range(info.id, n, info.num_workers))
            return iter(range(n))
    return Stream()


@pytest.mark.parametrize("n,shard,kw", [(7, True, dict(batch_size=2)), (5, False, dict(batch_size=2)),
                                        (6, True, dict(batch_size=None)), (9, True, dict(batch_size=2, drop_last=True)),
                                        (1, True, dict(batch_size=3))], ids=str)
def test_iterable_dataset_workers(n, shard, kw):
    def run(T):
        loader = T.utils.data.DataLoader(_stream(T, n, shard), num_workers=2, **kw)
        return [[py(b) for b in loader] for _ in range(2)]
    assert run(glassgrad) == run(torch)


def test_iterable_dataset_persistent_workers():
    def run(T):
        loader = T.utils.data.DataLoader(_stream(T, 5, True), num_workers=2, batch_size=2, persistent_workers=True)
        out = [[py(b) for b in loader] for _ in range(3)]
        loader._iterator._shutdown_workers()
        return out
    assert run(glassgrad) == run(torch)


class Faulty:
    def __init__(self, T, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"bad sample {i}")
        if i == 6:
            raise KeyError("missing key")
        return i


@pytest.mark.parametrize("bad,exc", [(5, ValueError), (6, KeyError)])
def test_worker_exception_reraised_with_traceback(bad, exc):
    texts = []
    for T in (torch, glassgrad):
        it = iter(T.utils.data.DataLoader(Faulty(T, 8), batch_size=None, sampler=[0, 1, bad, 2], num_workers=2))
        got = []
        with pytest.raises(exc) as info:
            for b in it:
                got.append(int(b))
        it._shutdown_workers()      # torch's iterator would otherwise linger in a reference cycle
        assert got == [0, 1]
        texts.append(str(info.value))
    for text in texts:
        assert text.startswith(f"Caught {exc.__name__} in DataLoader worker process 0.\nOriginal Traceback")
        assert "raise ValueError(f\"bad sample {i}\")" in text or 'raise KeyError("missing key")' in text
    # the last line (the original error) is the same in both
    assert texts[0].strip().splitlines()[-1] == texts[1].strip().splitlines()[-1]


def _bad_init(worker_id):
    if worker_id == 1:
        raise ZeroDivisionError("init failed")


def test_worker_init_fn_exception():
    msgs = []
    for T in (torch, glassgrad):
        it = iter(T.utils.data.DataLoader(Probe(T, 6), batch_size=1, num_workers=2, worker_init_fn=_bad_init))
        with pytest.raises(ZeroDivisionError) as info:
            list(it)
        it._shutdown_workers()
        msgs.append(str(info.value).splitlines()[0])
    assert msgs[0] == msgs[1] == "Caught ZeroDivisionError in DataLoader worker process 1."


class Slow:
    def __init__(self, T, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        time.sleep(0.6)
        return i


def test_timeout():
    loader = glassgrad.utils.data.DataLoader(Slow(glassgrad, 2), num_workers=1, timeout=0.1)
    with pytest.raises(RuntimeError, match=r"^DataLoader timed out after 0\.1 seconds$"):
        list(loader)


class Dies:
    def __init__(self, T, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == 1:
            os._exit(3)
        return i


def test_worker_killed():
    loader = glassgrad.utils.data.DataLoader(Dies(glassgrad, 4), num_workers=1)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited unexpectedly"):
        list(loader)


def test_early_delete_stops_workers():
    it = iter(glassgrad.utils.data.DataLoader(Probe(glassgrad, 50), batch_size=2, num_workers=2))
    next(it)
    workers = list(it._workers)
    assert all(w.is_alive() for w in workers)
    del it
    deadline = time.time() + 5
    while any(w.is_alive() for w in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(w.is_alive() for w in workers)


def test_workers_gone_after_epoch():
    it = iter(glassgrad.utils.data.DataLoader(Probe(glassgrad, 4), batch_size=2, num_workers=2))
    assert len(list(it)) == 2
    assert not any(w.is_alive() for w in it._workers)


def test_in_order_false_gives_all_batches():
    loader = glassgrad.utils.data.DataLoader(list(range(10)), batch_size=2, num_workers=2, in_order=False)
    assert sorted(b.tolist() for b in loader) == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9]]


def test_interpreter_exit_does_not_hang():
    """A script that leaves a persistent loader and an abandoned iterator behind exits at once, cleanly."""
    script = textwrap.dedent("""
        import glassgrad as G
        from glassgrad.utils.data import DataLoader
        keep = DataLoader(list(range(40)), batch_size=2, num_workers=2, persistent_workers=True)
        a = iter(keep); next(a)
        b = iter(DataLoader(list(range(40)), batch_size=2, num_workers=2)); next(b)
        print("pids", *[w.pid for w in a._workers + b._workers])
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    t = time.time()
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30, env=env)
    assert res.returncode == 0, res.stderr
    assert time.time() - t < 15
    pids = [int(p) for p in re.findall(r"\d+", res.stdout)]
    assert len(pids) == 4
    time.sleep(0.2)
    for pid in pids:
        try:
            os.kill(pid, 0)
            alive = not open(f"/proc/{pid}/stat").read().split()[2] == "Z"
        except (ProcessLookupError, FileNotFoundError):
            alive = False
        assert not alive, f"worker {pid} outlived its interpreter"


def test_spawn_context_unpicklable_dataset():
    """With 'spawn' the worker arguments are pickled: a local class cannot be, and the error says why."""
    class Local:
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return i
    results = []
    for T in (torch, glassgrad):
        loader = T.utils.data.DataLoader(Local(), num_workers=1, multiprocessing_context="spawn")
        with pytest.warns(UserWarning, match="Got pickle error when attempting to start a worker Process") as rec:
            with pytest.raises(Exception) as info:
                iter(loader)
        results.append((type(info.value).__name__, len(rec)))
    assert results[0] == results[1]
