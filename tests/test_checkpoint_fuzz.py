"""Fuzzing glassgrad.load with mutated valid checkpoints (its own format, safetensors, torch zip archives
written by torch and by glassgrad): every outcome is a successful load or a glassgrad error -- no other
exception, no large allocation.  A fixed example budget keeps it to seconds in CI."""
import io
import tracemalloc
from collections import OrderedDict

import pytest
import torch
from hypothesis import HealthCheck, given, settings, strategies as st

import glassgrad
from glassgrad import safetensors as gs
from glassgrad.serialization import CheckpointError


def _seeds():
    torch.manual_seed(0)
    sd = OrderedDict(w=torch.randn(3, 4), b=torch.arange(4), flag=torch.tensor([True, False]))
    tb = io.BytesIO()
    torch.save({"sd": sd, "step": 3, "lr": 0.1}, tb)
    g = {"sd": glassgrad.nn.Linear(4, 3).state_dict(), "rng": glassgrad.get_rng_state()[:16], "t": (1, "x", None)}
    gb, wb = io.BytesIO(), io.BytesIO()
    glassgrad.save(g, gb)
    glassgrad.save(g, wb, format="torch")
    lb = io.BytesIO()
    torch.save({"sd": sd, "step": 3}, lb, _use_new_zipfile_serialization=False)
    return {"torch_zip": tb.getvalue(), "glassgrad": gb.getvalue(), "glassgrad_as_torch": wb.getvalue(),
            "torch_legacy": lb.getvalue(),
            "safetensors": gs.save({"a": glassgrad.ones(5), "b": glassgrad.zeros(2, 2, dtype=glassgrad.int64)})}


SEEDS = _seeds()
_mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10 ** 6), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.integers(0, 10 ** 6), st.just(0)),
    st.tuples(st.just("insert"), st.integers(0, 10 ** 6), st.integers(0, 255)),
    st.tuples(st.just("delete"), st.integers(0, 10 ** 6), st.integers(1, 64)),
    st.tuples(st.just("overwrite_int"), st.integers(0, 10 ** 6), st.sampled_from([0, 1, 255, 2 ** 31, 2 ** 63 - 1])),
)


def _mutate(data, muts):
    b = bytearray(data)
    for kind, pos, v in muts:
        if not b:
            break
        p = pos % len(b)
        if kind == "flip":
            b[p] ^= v
        elif kind == "truncate":
            del b[p:]
        elif kind == "insert":
            b[p:p] = bytes([v])
        elif kind == "delete":
            del b[p:p + v]
        else:
            b[p:p + 8] = v.to_bytes(8, "little")
    return bytes(b)


def _load_or_glassgrad_error(data, path=None):
    """glassgrad.load(data) either succeeds or raises a glassgrad error, allocating < 64 MiB on the way.
    With `path`, the data is written there and loaded with mmap=True."""
    if path is not None:
        path.write_bytes(data)
    tracemalloc.start()
    try:
        glassgrad.load(io.BytesIO(data)) if path is None else glassgrad.load(path, mmap=True)
    except (CheckpointError, gs.SafetensorError):
        pass
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < 64 * 2 ** 20, f"{peak / 2 ** 20:.0f} MiB for a {len(data)}-byte file"


@pytest.mark.parametrize("seed", sorted(SEEDS))
@settings(max_examples=250, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(muts=st.lists(_mutation, min_size=1, max_size=4))
def test_mutated_checkpoints_load_or_raise_a_glassgrad_error(seed, muts):
    _load_or_glassgrad_error(_mutate(SEEDS[seed], muts))


def _rezip(archive, mutate_name, muts):
    import zipfile
    src = zipfile.ZipFile(io.BytesIO(archive))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:            # CRCs recomputed: the mutation reaches the parser
        for n in src.namelist():
            d = src.read(n)
            dst.writestr(n, _mutate(d, muts) if n.endswith(mutate_name) else d)
    return out.getvalue()


@pytest.mark.parametrize("seed", ["torch_zip", "glassgrad_as_torch"])
@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(muts=st.lists(_mutation, min_size=1, max_size=3))
def test_mutated_pickles_inside_valid_archives(seed, muts):
    _load_or_glassgrad_error(_rezip(SEEDS[seed], "data.pkl", muts))


@pytest.mark.parametrize("seed", ["glassgrad", "torch_zip", "safetensors"])
@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(muts=st.lists(_mutation, min_size=1, max_size=4))
def test_mutated_checkpoints_mapped(seed, muts, tmp_path_factory):
    """The mmap=True path (file mapping, zip local headers read from the mapping) under the same contract."""
    path = tmp_path_factory.getbasetemp() / f"fuzz_{seed}.pt"
    _load_or_glassgrad_error(_mutate(SEEDS[seed], muts), path)
