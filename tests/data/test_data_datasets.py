"""glassgrad.utils.data datasets, random_split and samplers against torch.utils.data (the oracle).

Each case is a function of the library module ``T``; it runs once on torch and once on glassgrad and the
results (indices, lengths, the default generator's next draw, error type and text) must be identical.
"""
import warnings

import numpy as np
import pytest

import torch
import glassgrad  # noqa: E402

SEEDS = [0, 1, 7, 1234]


def py(x):
    """A library-independent picture of x (tensors become dtype/shape/values)."""
    if hasattr(x, "tolist") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
        return ("T", str(x.dtype), tuple(x.shape), x.tolist(), x.requires_grad)
    if isinstance(x, dict):
        return {k: py(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return (type(x).__name__,) + tuple(py(v) for v in x)
    if isinstance(x, list):
        return [py(v) for v in x]
    return (type(x).__name__, x)


def both(fn, *args):
    """fn(torch, ...) and fn(glassgrad, ...) must agree, returning the same value or raising alike."""
    out = []
    for T in (torch, glassgrad):
        try:
            out.append(("ok", py(fn(T, *args))))
        except Exception as e:  # noqa: BLE001 -- the error itself is what is compared
            out.append(("err", type(e).__name__, str(e)))
    assert out[0] == out[1]
    return out[0]


# -- datasets ---------------------------------------------------------------------------------------
def _tensor_dataset(T):
    a, b = T.arange(12).reshape(6, 2), T.arange(6).float() * 0.5
    ds = T.utils.data.TensorDataset(a, b)
    return [len(ds), ds[0], ds[5], ds[-1], ds[1:3]]


def _tensor_dataset_mismatch(T):
    return T.utils.data.TensorDataset(T.zeros(3), T.zeros(4))


def _concat(T):
    D = T.utils.data
    a, b, c = D.TensorDataset(T.arange(3)), D.TensorDataset(T.arange(10, 15)), D.TensorDataset(T.arange(20, 22))
    cat = D.ConcatDataset([a, b, c])
    plus = a + b
    return [len(cat), cat.cumulative_sizes, [cat[i] for i in range(len(cat))], cat[-1], cat[-10],
            type(plus).__name__, len(plus), plus[4]]


def _concat_bad_negative(T):
    D = T.utils.data
    return D.ConcatDataset([D.TensorDataset(T.arange(3))])[-4]


def _concat_empty(T):
    return T.utils.data.ConcatDataset([])


def _concat_iterable(T):
    D = T.utils.data

    class It(D.IterableDataset):
        def __iter__(self):
            return iter(range(3))
    return D.ConcatDataset([It()])


def _make_stream(T, lo, hi):
    D = T.utils.data

    class Stream(D.IterableDataset):
        def __iter__(self):
            return iter(range(lo, hi))

        def __len__(self):
            return hi - lo
    return Stream()


def _chain(T):
    D = T.utils.data
    a, b = _make_stream(T, 0, 3), _make_stream(T, 10, 12)
    ch = D.ChainDataset([a, b])
    plus = a + b
    return [list(ch), len(ch), type(plus).__name__, list(plus)]


def _chain_map_style(T):
    D = T.utils.data
    return list(D.ChainDataset([D.TensorDataset(T.arange(3))]))


def _subset(T):
    D = T.utils.data
    base = D.TensorDataset(T.arange(10) * 3)
    s = D.Subset(base, [4, 0, 7])
    return [len(s), s[0], s[2], s.__getitems__([2, 1]), list(s.indices)]


def _stack(T):
    D = T.utils.data
    a, b = D.TensorDataset(T.arange(4)), [10, 11, 12, 13]
    t, d = D.StackDataset(a, b), D.StackDataset(x=a, y=b)
    return [len(t), t[1], d[2], t.__getitems__([0, 3]), d.__getitems__([1])]


def _stack_errors(T, which):
    D = T.utils.data
    if which == "both":
        return D.StackDataset([1], y=[2])
    if which == "none":
        return D.StackDataset()
    return D.StackDataset([1, 2], [3])


def _dataset_base(T):
    return T.utils.data.Dataset()[0]


@pytest.mark.parametrize("fn,args", [
    (_tensor_dataset, ()), (_tensor_dataset_mismatch, ()), (_concat, ()), (_concat_bad_negative, ()),
    (_concat_empty, ()), (_concat_iterable, ()), (_chain, ()), (_chain_map_style, ()), (_subset, ()),
    (_stack, ()), (_stack_errors, ("both",)), (_stack_errors, ("none",)), (_stack_errors, ("size",)),
    (_dataset_base, ()),
], ids=lambda v: getattr(v, "__name__", str(v)))
def test_datasets(fn, args):
    both(fn, *args)


def test_subset_override_needs_getitems():
    for T in (torch, glassgrad):
        class MySubset(T.utils.data.Subset):
            def __getitem__(self, i):
                return 0
        with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
            MySubset([1, 2], [0])


# -- random_split ---------------------------------------------------------------------------------
def _split(T, n, lengths, seed, how):
    D = T.utils.data
    ds = D.TensorDataset(T.arange(n))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        if how == "default":
            T.manual_seed(seed)
            parts = D.random_split(ds, lengths)
        else:
            parts = D.random_split(ds, lengths, generator=T.Generator().manual_seed(seed))
    return [[list(p.indices) for p in parts], [len(p) for p in parts], [str(x.message) for x in w],
            T.rand(2)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("how", ["default", "generator"])
@pytest.mark.parametrize("n,lengths", [
    (10, [3, 7]), (10, [0.3, 0.7]), (30, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]), (7, [0.1, 0.2, 0.3, 0.4]),
    (5, [1.0]), (3, [0.9, 0.1]), (10, [5, 6]), (10, [1.2, -0.2]), (4, [0.5, 0.6]),
])
def test_random_split(n, lengths, seed, how):
    both(_split, n, lengths, seed, how)


# -- samplers ---------------------------------------------------------------------------------------
def _random_sampler(T, seed, replacement, num_samples, explicit, passes):
    S = T.utils.data
    T.manual_seed(seed)
    g = T.Generator().manual_seed(seed + 100) if explicit else None
    s = S.RandomSampler(range(10), replacement=replacement, num_samples=num_samples, generator=g)
    return [len(s)] + [list(s) for _ in range(passes)] + [T.rand(1)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("replacement,num_samples", [(False, None), (False, 4), (False, 23), (True, None),
                                                     (True, 31), (True, 32), (True, 70)])
@pytest.mark.parametrize("explicit", [False, True])
def test_random_sampler(seed, replacement, num_samples, explicit):
    both(_random_sampler, seed, replacement, num_samples, explicit, 2)


@pytest.mark.parametrize("kw", [dict(replacement=1), dict(num_samples=0), dict(num_samples=2.0)],
                         ids=str)
def test_random_sampler_errors(kw):
    assert both(lambda T: T.utils.data.RandomSampler(range(3), **kw))[0] == "err"


def _subset_random(T, seed, explicit):
    T.manual_seed(seed)
    g = T.Generator().manual_seed(seed) if explicit else None
    s = T.utils.data.SubsetRandomSampler([5, 9, 2, 7, 3, 11], generator=g)
    return [len(s), list(s), list(s), T.rand(1)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("explicit", [False, True])
def test_subset_random_sampler(seed, explicit):
    both(_subset_random, seed, explicit)


def _weighted(T, seed, weights, num, replacement, explicit):
    T.manual_seed(seed)
    g = T.Generator().manual_seed(seed) if explicit else None
    s = T.utils.data.WeightedRandomSampler(weights, num, replacement=replacement, generator=g)
    return [len(s), s.weights, list(s), list(s), T.rand(1)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("weights,num,replacement", [
    ([0.1, 0.9, 0.4, 0.7, 3.0, 0.6], 5, True), ([0.9, 0.4, 0.05, 0.2, 0.3, 0.1], 5, False),
    ([1, 2, 3], 40, True), (np.array([0.5, 0.0, 2.0, 1.0]), 3, False),
])
@pytest.mark.parametrize("explicit", [False, True])
def test_weighted_random_sampler(seed, weights, num, replacement, explicit):
    both(_weighted, seed, weights, num, replacement, explicit)


@pytest.mark.parametrize("args", [([1.0, 2.0], 0), ([1.0, 2.0], True), ([1.0, 2.0], 2, "yes"), ([[1.0, 2.0]], 1)],
                         ids=str)
def test_weighted_random_sampler_errors(args):
    assert both(lambda T: T.utils.data.WeightedRandomSampler(*args))[0] == "err"


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False), (2, 5, True),
                                       (0, 2, False)])
def test_batch_and_sequential_sampler(n, bs, drop):
    def fn(T):
        S = T.utils.data
        seq = S.SequentialSampler(range(n))
        b = S.BatchSampler(seq, bs, drop)
        return [list(seq), len(seq), list(b), len(b), list(S.BatchSampler(range(n), bs, drop))]
    both(fn)


@pytest.mark.parametrize("args", [(0, False), (True, False), (2.0, False), (2, None), (2, 1)], ids=str)
def test_batch_sampler_errors(args):
    assert both(lambda T: T.utils.data.BatchSampler(range(4), *args))[0] == "err"


def test_sampler_base():
    def fn(T):
        s = T.utils.data.Sampler()
        return iter(s)
    assert both(fn)[0] == "err"
    assert both(lambda T: T.utils.data.Sampler([1, 2]))[0] == "err"


def _distributed(T, n, replicas, shuffle, drop_last, seed, epochs):
    D = T.utils.data
    ds = list(range(n))
    out = []
    for rank in range(replicas):
        s = D.DistributedSampler(ds, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed,
                                 drop_last=drop_last)
        per = [len(s), s.num_samples, s.total_size]
        for e in epochs:
            s.set_epoch(e)
            per.append(list(s))
        out.append(per)
    return out


@pytest.mark.parametrize("n,replicas", [(10, 3), (12, 4), (5, 8), (1, 2), (7, 1)])
@pytest.mark.parametrize("shuffle,drop_last", [(True, False), (False, False), (True, True), (False, True)])
@pytest.mark.parametrize("seed", [0, 5])
def test_distributed_sampler(n, replicas, shuffle, drop_last, seed):
    both(_distributed, n, replicas, shuffle, drop_last, seed, [0, 1, 3])


@pytest.mark.parametrize("rank", [-1, 3])
def test_distributed_sampler_bad_rank(rank):
    assert both(lambda T: T.utils.data.DistributedSampler(range(4), num_replicas=3, rank=rank))[0] == "err"


def test_distributed_sampler_without_a_process_group_raises_torchs_error():
    with pytest.raises(ValueError) as theirs:
        torch.utils.data.DistributedSampler(range(4))
    with pytest.raises(ValueError) as ours:
        glassgrad.utils.data.DistributedSampler(range(4))
    assert str(ours.value) == str(theirs.value)


def test_public_names():
    ours, theirs = set(glassgrad.utils.data.__all__), set(torch.utils.data.__all__)
    datapipes = {"DFIterDataPipe", "DataChunk", "IterDataPipe", "MapDataPipe", "argument_validation",
                 "functional_datapipe", "guaranteed_datapipes_determinism", "non_deterministic",
                 "runtime_validation", "runtime_validation_disabled"}
    assert ours == theirs - datapipes
    for name in ours:
        assert hasattr(glassgrad.utils.data, name)
