"""DataLoader (num_workers=0) against torch.utils.data.DataLoader: batch order under seeds, the default
generator's state after iterating, lengths, iterable datasets, batch_size=None and argument errors."""
import collections
import re
import warnings

import numpy as np
import pytest

import torch
import glassgrad  # noqa: E402

SEEDS = [0, 1, 42, 2024]


def py(x):
    if hasattr(x, "tolist") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return ("T", str(x.dtype), tuple(x.shape), x.tolist())
    if isinstance(x, collections.abc.Mapping):
        return (type(x).__name__, {k: py(v) for k, v in x.items()})
    if isinstance(x, (tuple, list)):
        return (type(x).__name__,) + tuple(py(v) for v in x)
    return (type(x).__name__, x)


def norm(msg):
    """Error text without object addresses, module paths spelled torch's way."""
    return re.sub(r" at 0x[0-9a-f]+", "", msg).replace("glassgrad.", "torch.")


def both(fn, *args):
    out = []
    for T in (torch, glassgrad):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            try:
                res = ("ok", py(fn(T, *args)))
            except Exception as e:  # noqa: BLE001 -- the error is what is compared
                res = ("err", type(e).__name__, norm(str(e)))
        out.append((res, sorted({str(x.message) for x in w})))
    assert out[0] == out[1]
    return out[0][0]


class Squares:
    """A map-style dataset that is not a Dataset subclass: (index, float index**2, label string)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return i, float(i * i), f"s{i}"


def _make_stream(T, n, with_len=True):
    base = T.utils.data.IterableDataset

    class Stream(base):
        def __iter__(self):
            return iter(range(n))

    if with_len:
        Stream.__len__ = lambda self: n
    Stream.__repr__ = lambda self: "Stream"
    return Stream()


def _epochs(T, loader_kw, seed, how, epochs=2, n=10):
    T.manual_seed(seed)
    kw = dict(loader_kw)
    if how == "generator":
        kw["generator"] = T.Generator().manual_seed(seed + 1)
    loader = T.utils.data.DataLoader(T.utils.data.TensorDataset(T.arange(n), T.arange(n) * 0.5), **kw)
    out = [len(loader)]
    for _ in range(epochs):
        out.append([b for b in loader])
    out.append(T.rand(3))                     # the default generator must have advanced exactly alike
    if how == "generator":
        out.append(T.rand(2, generator=kw["generator"]))
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("how", ["default", "generator"])
@pytest.mark.parametrize("loader_kw", [
    dict(batch_size=4, shuffle=True), dict(batch_size=4, shuffle=True, drop_last=True), dict(batch_size=4),
    dict(batch_size=3, drop_last=True), dict(batch_size=1, shuffle=True), dict(batch_size=None, shuffle=True),
    dict(batch_size=20, shuffle=True), dict(batch_size=20, shuffle=True, drop_last=True),
], ids=str)
def test_batch_order(loader_kw, seed, how):
    both(_epochs, loader_kw, seed, how)


def _sampler_loader(T, kind, seed):
    D = T.utils.data
    T.manual_seed(seed)
    g = T.Generator().manual_seed(seed)
    ds = Squares(11)
    if kind == "random_replacement":
        kw = dict(sampler=D.RandomSampler(ds, replacement=True, num_samples=40), batch_size=8)
    elif kind == "random_gen":
        kw = dict(sampler=D.RandomSampler(ds, generator=g), batch_size=3)
    elif kind == "subset":
        kw = dict(sampler=D.SubsetRandomSampler([1, 3, 5, 7, 9], generator=g), batch_size=2)
    elif kind == "weighted":
        kw = dict(sampler=D.WeightedRandomSampler([float(i % 3) + 0.1 for i in range(11)], 15), batch_size=4)
    elif kind == "distributed":
        kw = dict(sampler=D.DistributedSampler(ds, num_replicas=3, rank=1, seed=seed), batch_size=2)
    elif kind == "batch_sampler":
        kw = dict(batch_sampler=D.BatchSampler(D.RandomSampler(ds), 4, drop_last=False))
    elif kind == "list_batch_sampler":
        kw = dict(batch_sampler=[[0, 1], [5, 2, 3], [10]])
    elif kind == "list_sampler":
        kw = dict(sampler=[4, 4, 0, 2], batch_size=3)
    else:
        kw = dict(sampler=D.SequentialSampler(ds), batch_size=None)
    loader = D.DataLoader(ds, **kw)
    return [len(loader), list(loader), list(loader), T.rand(2)]


@pytest.mark.parametrize("seed", SEEDS[:3])
@pytest.mark.parametrize("kind", ["random_replacement", "random_gen", "subset", "weighted", "distributed",
                                  "batch_sampler", "list_batch_sampler", "list_sampler", "no_batching"])
def test_samplers_in_loader(kind, seed):
    both(_sampler_loader, kind, seed)


def _custom_collate(T):
    loader = T.utils.data.DataLoader(Squares(5), batch_size=2, collate_fn=lambda batch: [b[0] for b in batch])
    return list(loader)


def _getitems(T):
    class Batched(T.utils.data.Dataset):
        calls = []

        def __len__(self):
            return 6

        def __getitem__(self, i):
            raise AssertionError("__getitems__ should be used")

        def __getitems__(self, idx):
            self.calls.append(list(idx))
            return [T.tensor(i) for i in idx]
    ds = Batched()
    out = list(T.utils.data.DataLoader(ds, batch_size=4))
    return [out, ds.calls]


def _subset_loader(T):
    D = T.utils.data
    T.manual_seed(3)
    train, val = D.random_split(D.TensorDataset(T.arange(20).float()), [0.75, 0.25])
    return [list(D.DataLoader(train, batch_size=5, shuffle=True)), list(D.DataLoader(val, batch_size=5))]


def _stack_loader(T):
    D = T.utils.data
    ds = D.StackDataset(a=D.TensorDataset(T.arange(5)), b=Squares(5))
    return list(D.DataLoader(ds, batch_size=2))


@pytest.mark.parametrize("fn", [_custom_collate, _getitems, _subset_loader, _stack_loader],
                         ids=lambda f: f.__name__)
def test_loader_datasets(fn):
    both(fn)


def _stream_loader(T, n, kw, with_len, take_len):
    loader = T.utils.data.DataLoader(_make_stream(T, n, with_len), **kw)
    out = [len(loader)] if take_len else []
    out.append(list(loader))
    return out


@pytest.mark.parametrize("n,kw,with_len,take_len", [
    (10, dict(batch_size=4), True, True), (10, dict(batch_size=4, drop_last=True), True, True),
    (8, dict(batch_size=4, drop_last=True), True, True), (5, dict(), True, True),
    (5, dict(batch_size=None), True, True), (5, dict(batch_size=2), False, True),
    (5, dict(batch_size=2), False, False), (0, dict(batch_size=2), True, True),
    (5, dict(batch_size=2, shuffle=False), True, False),
], ids=str)
def test_iterable_dataset(n, kw, with_len, take_len):
    both(_stream_loader, n, kw, with_len, take_len)


def test_iterable_dataset_length_warning():
    def fn(T):
        class Liar(T.utils.data.IterableDataset):
            def __iter__(self):
                return iter(range(5))

            def __len__(self):
                return 3

            def __repr__(self):
                return "Liar"
        loader = T.utils.data.DataLoader(Liar(), batch_size=None)
        return [len(loader), list(loader)]
    both(fn)


def _chain_loader(T):
    D = T.utils.data
    return list(D.DataLoader(D.ChainDataset([_make_stream(T, 3), _make_stream(T, 2)]), batch_size=2))


def test_chain_dataset_loader():
    both(_chain_loader)


# -- argument errors -------------------------------------------------------------------------------------
def _ctor(T, kw, iterable=False, iterate=False):
    ds = _make_stream(T, 4) if iterable else Squares(4)
    kw = dict(kw)
    if kw.get("sampler") == "seq":
        kw["sampler"] = T.utils.data.SequentialSampler(ds)
    if kw.get("batch_sampler") == "bs":
        kw["batch_sampler"] = [[0, 1]]
    loader = T.utils.data.DataLoader(ds, **kw)
    if iterate:
        return list(loader)
    return [loader.batch_size, loader.drop_last, type(loader.sampler).__name__,
            type(loader.batch_sampler).__name__, loader.prefetch_factor]


@pytest.mark.parametrize("kw,iterable,iterate", [
    (dict(sampler="seq", shuffle=True), False, False),
    (dict(batch_sampler="bs", batch_size=2), False, False),
    (dict(batch_sampler="bs", shuffle=True), False, False),
    (dict(batch_sampler="bs", sampler="seq"), False, False),
    (dict(batch_sampler="bs", drop_last=True), False, False),
    (dict(batch_sampler="bs"), False, False),
    (dict(batch_size=None, drop_last=True), False, False),
    (dict(num_workers=-1), False, False),
    (dict(timeout=-1), False, False),
    (dict(prefetch_factor=2), False, False),
    (dict(persistent_workers=True), False, False),
    (dict(num_workers=1, prefetch_factor=-1), False, False),
    (dict(multiprocessing_context="fork"), False, False),
    (dict(num_workers=1, multiprocessing_context="nope"), False, False),
    (dict(num_workers=1, multiprocessing_context=3), False, False),
    (dict(shuffle=True), True, False),
    (dict(sampler="seq"), True, False),
    (dict(batch_sampler="bs"), True, False),
    (dict(shuffle=False), True, False),
    (dict(timeout=1), False, True),
    (dict(batch_size=0), False, False),
    (dict(), False, False),
    (dict(shuffle=True, batch_size=None), False, False),
], ids=str)
def test_constructor(kw, iterable, iterate):
    both(_ctor, kw, iterable, iterate)


def test_conflict_messages():
    """The key ValueError texts (spelled out so a change in either library shows)."""
    D = glassgrad.utils.data
    ds = Squares(4)
    with pytest.raises(ValueError, match="^sampler option is mutually exclusive with shuffle$"):
        D.DataLoader(ds, sampler=[0, 1], shuffle=True)
    with pytest.raises(ValueError, match="^batch_sampler option is mutually exclusive with batch_size, shuffle, "
                                         "sampler, and drop_last$"):
        D.DataLoader(ds, batch_sampler=[[0]], batch_size=2)


@pytest.mark.parametrize("attr", ["batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
                                  "persistent_workers", "num_workers"])
def test_frozen_attributes(attr):
    def fn(T):
        loader = T.utils.data.DataLoader(Squares(3))
        setattr(loader, attr, getattr(loader, attr))
        return getattr(loader, attr) is not None
    both(fn)


def test_pin_memory_warns_without_accelerator():
    def fn(T):
        return list(T.utils.data.DataLoader(Squares(2), batch_size=2, pin_memory=True))
    if glassgrad.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("an accelerator is present: pinning is then not a warning")
    both(fn)


def test_iterator_not_picklable():
    import pickle

    def fn(T):
        return pickle.dumps(iter(T.utils.data.DataLoader(Squares(2))))
    assert both(fn)[0] == "err"


def test_get_worker_info_in_main_process():
    assert glassgrad.utils.data.get_worker_info() is None
