"""What the op table cannot say about the later op families (ops/stats_extra.py, ops/distance.py, ...):
torch's errors raised by a backward, and warnings; each compared with torch 2.13."""
import warnings

import numpy as np
import pytest
import torch

import glassgrad as gg


def _both(fn):
    """fn(T) on torch and glassgrad: both raise the same type with the same message, or both return."""
    res = []
    for T in (torch, gg):
        try:
            fn(T)
            res.append(None)
        except Exception as e:      # noqa: BLE001  (compared below)
            res.append((type(e), str(e)))
    assert res[0] is not None, "torch did not raise"
    assert res[1] == res[0]


@pytest.mark.parametrize("name", ["cdist", "pdist"])
def test_cdist_pdist_gradients_are_not_differentiable_again(name):
    def f(T):
        a = T.tensor(np.arange(6.0).reshape(3, 2) ** 1.5, requires_grad=True)
        y = T.cdist(a, a * 0.5) if name == "cdist" else T.pdist(a)
        g, = T.autograd.grad(y.sum(), a, create_graph=True)
        assert type(g.grad_fn).__name__ == f"{name.capitalize()}BackwardBackward0"
        T.autograd.grad(g.sum(), a)
    _both(f)


def test_dist_p0_backward_raises_when_other_requires_grad():
    def f(T):
        a, b = T.ones(3, requires_grad=True), T.zeros(3, requires_grad=True)
        T.dist(a, b, 0).backward()
    _both(f)
    a = gg.ones(3, requires_grad=True)
    gg.dist(a, gg.zeros(3), 0).backward()
    assert a.grad is None


def test_cov_warns_without_degrees_of_freedom():
    for T in (torch, gg):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = T.cov(T.tensor([[1.0], [2.0]]))
        assert any("degrees of freedom is <= 0" in str(x.message) for x in w)
        assert np.isnan(r.numpy()).all() or np.isinf(r.numpy()).any()


def test_vander_backward_fails_as_torch():
    """torch.vander writes cumprod's result into the slice cumprod saved: its backward raises."""
    def f(T):
        x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
        T.vander(x).sum().backward()
    for T in (torch, gg):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            f(T)
    x = gg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    assert gg.vander(x, 1).grad_fn is None and gg.vander(x, 1, True).grad_fn is None


@pytest.mark.parametrize("call", ["apply_", "map_", "map2_", "resize_", "resize_nonleaf"])
def test_tensor_methods_refuse_tensors_that_require_grad(call):
    def f(T):
        x = T.ones(2, requires_grad=True)
        o = T.ones(2)
        if call == "apply_":
            x.apply_(lambda v: v)
        elif call == "map_":
            x.map_(o, lambda a, b: a)
        elif call == "map2_":
            x.map2_(o, o, lambda a, b, c: a)
        elif call == "resize_":
            x.resize_(1)
        else:
            (x * 2).resize_(1)
    _both(f)


def test_resize_keeps_storage_and_views():
    for T in (torch, gg):
        base = T.arange(6.0)
        v = base[::2]
        v.resize_(3)
        assert v.tolist() == [0.0, 2.0, 4.0] and v.stride() == (2,)
        w = T.arange(6.0).view(2, 3).t()
        assert w.resize_(2, 3).tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        x = T.arange(4.0)
        x.resize_(2)
        x.resize_(4)
        assert x.tolist() == [0.0, 1.0, 2.0, 3.0]     # shrinking keeps the storage: growing back sees it


def test_as_strided_inplace_grad_fn():
    for T in (torch, gg):
        x = T.arange(6.0, requires_grad=True)
        y = x * 1
        y.as_strided_((2, 2), (1, 2), 1)
        assert type(y.grad_fn).__name__ == "AsStridedBackward1"


def test_histogramdd_outputs_have_no_derivative():
    for T in (torch, gg):
        x = T.tensor([[0.0, 1.0], [1.0, 0.5], [0.2, 0.3]], requires_grad=True)
        h = T.histogramdd(x, 2)
        assert h.hist.requires_grad and h.bin_edges[1].requires_grad
        assert type(h.hist.grad_fn).__name__ == "NotImplemented"
    _both(lambda T: T.histogramdd(T.ones(3, 2, requires_grad=True), 2).hist.sum().backward())
    _both(lambda T: T.histogramdd(T.ones(3, 2, requires_grad=True), 2).bin_edges[1].sum().backward())


def test_lu_unpack_without_data_cannot_backward():
    def f(T):
        LU = T.tensor([[2.0, 1.0], [0.5, 3.0]], requires_grad=True)
        r = T.lu_unpack(LU, T.tensor([1, 2], dtype=T.int32), unpack_data=False)
        assert r.L.requires_grad and tuple(r.L.shape) == (0,)
        r.L.sum().backward()
    _both(f)


def test_lu_unpack_without_data_both_grads():
    def f(T):
        LU = T.tensor([[2.0, 1.0], [0.5, 3.0]], requires_grad=True)
        r = T.lu_unpack(LU, T.tensor([1, 2], dtype=T.int32), unpack_data=False)
        (r.L.sum() + r.U.sum()).backward()
    _both(f)


@pytest.mark.parametrize("name", ["lstsq", "solve", "symeig", "eig"])
def test_methods_removed_in_1_9_raise_as_torch(name):
    def f(T):
        a = T.eye(3)
        getattr(a, name)(a) if name in ("lstsq", "solve") else getattr(a, name)()
    _both(f)


def test_geqrf_has_no_derivative():
    _both(lambda T: T.geqrf(T.eye(3, requires_grad=True) * 2)[0].sum().backward())
    for T in (torch, gg):
        a, tau = T.geqrf(T.eye(3, requires_grad=True) * 2)
        assert type(a.grad_fn).__name__ == "GeqrfBackward0" and a.grad_fn is tau.grad_fn


def test_poisson_binomial_replay_torch():
    rates = np.array([[0.5, 3.0, 12.0], [0.0, 40.0, 7.5]])
    counts, probs = np.array([5.0, 20.0, 100.0, 0.0]), np.array([0.3, 0.9, 0.05, 0.5])
    out = []
    for T in (torch, gg):
        T.manual_seed(7)
        r = T.tensor(rates, requires_grad=True)
        p = T.poisson(r)
        b = T.binomial(T.tensor(counts), T.tensor(probs, requires_grad=True))
        g = T.Generator().manual_seed(11)
        p2 = T.poisson(T.tensor(rates, dtype=T.float32), g)
        p.sum().backward()
        out.append((p.detach().numpy(), b.detach().numpy(), p2.numpy(), r.grad.numpy(), type(p.grad_fn).__name__,
                    type(b.grad_fn).__name__, T.rand(2).numpy()))
    for a, b in zip(*out):
        if isinstance(a, np.ndarray):
            np.testing.assert_array_equal(a, b)
        else:
            assert a == b


@pytest.mark.parametrize("case", ["int_rate", "negative", "int_count", "dtypes", "generator", "binomial_backward"])
def test_poisson_binomial_errors(case):
    def f(T):
        if case == "int_rate":
            T.poisson(T.tensor([1, 2]))
        elif case == "negative":
            T.poisson(T.tensor([-1.0]))
        elif case == "int_count":
            T.binomial(T.tensor([5]), T.tensor([0.5]))
        elif case == "dtypes":
            T.binomial(T.tensor([5.0]), T.tensor([0.5], dtype=T.float64))
        elif case == "generator":
            T.poisson(T.tensor([1.0]), 3)
        else:
            T.binomial(T.tensor([5.0], requires_grad=True), T.tensor([0.5])).sum().backward()
    _both(f)


def test_index_reduce_prod_double_backward_error():
    """torch's Error node: the source gradient of a prod with several zeros sent to one place."""
    def f(T):
        zs = T.tensor([[1.0, 0], [2, 3], [0, 4]], requires_grad=True)
        ss = T.tensor([[0.0, 2], [0, 0], [3, 0.0]], requires_grad=True)
        y = zs.index_reduce(0, T.tensor([0, 0, 1]), ss, "prod")
        g = T.autograd.grad(y.sum(), [zs, ss], create_graph=True)
        assert type(g[1].grad_fn).__name__ == "Error"
        T.autograd.grad(g[1].sum(), [zs, ss])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _both(f)


def test_as_subclass_and_module_load():
    res = []
    for T in (torch, gg):
        class M(T.Tensor):
            pass
        x = T.tensor([1.0, -2.0], requires_grad=True)
        y = x * 2
        z = y.as_subclass(M)
        w = x.as_subclass(M)
        w.sum().backward()
        a = T.ones(2)
        b = a.module_load(T.zeros(2))
        c = a.module_load(T.full((2,), 3.0), assign=True)
        res.append((type(z).__name__, type(z.grad_fn).__name__, z.data_ptr() == y.data_ptr(), z._base is None,
                    w.is_leaf, x.grad.tolist(), a.tolist(), b is a, c.tolist(), c.requires_grad))
    assert res[0] == res[1]
    _both(lambda T: T.ones(2).as_subclass(int))


def test_set_and_is_set_to():
    res = []
    for T in (torch, gg):
        a = T.arange(6.0)
        b = T.zeros(2)
        r = [b.set_(a) is b, b.is_set_to(a), a.is_set_to(b), b.data_ptr() == a.data_ptr(), a.view(2, 3).is_set_to(a)]
        b[0] = 100.0
        r.append(a[0].item())
        c = T.zeros(1).set_(a, 1, (2, 2), (1, 2))
        r += [c.tolist(), c.is_set_to(a), T.zeros(1).set_(a[1:], 2, (2,), (2,)).tolist(), T.ones(3).set_().shape]
        x = T.ones(2, requires_grad=True)
        y = (x * 2).set_(T.arange(2.0))
        r += [type(y.grad_fn).__name__, y.requires_grad]
        res.append(r)
    assert res[0] == res[1]
    _both(lambda T: T.ones(2, requires_grad=True).set_(T.zeros(2)))
    _both(lambda T: T.zeros(2, dtype=T.int64).set_(T.zeros(2)))
    _both(lambda T: (T.ones(2, requires_grad=True) * 2).set_(T.zeros(2)).sum().backward())


@pytest.mark.parametrize("name", ["block_diag", "cartesian_prod"])
def test_tensor_list_functions_refuse_other_items(name):
    _both(lambda T: getattr(T, name)([1.0, 2.0]))
    _both(lambda T: getattr(T, name)(T.ones(2), 3))


# -- bad arguments: the exception type torch raises (x = ones(3, 4), i = tensor([0, 1])) ---------------------------
_BAD_CALLS = {
    'quantile q str': lambda T, x, i: T.quantile(x, 'a'),
    'quantile dim float': lambda T, x, i: T.quantile(x, 0.5, dim=1.5),
    'cov corr float': lambda T, x, i: T.cov(x, correction=0.5),
    'cdist p str': lambda T, x, i: T.cdist(x, x, p='a'),
    'pdist 1d': lambda T, x, i: T.pdist(T.ones(3)),
    'dist p str': lambda T, x, i: T.dist(x, x, 'fro'),
    'renorm dim float': lambda T, x, i: T.renorm(x, 2, 0.5, 1),
    'std_mean dim str': lambda T, x, i: T.std_mean(x, 'a'),
    'logcumsumexp dim float': lambda T, x, i: T.logcumsumexp(x, 1.5),
    'hsplit float': lambda T, x, i: T.hsplit(x, 1.5),
    'split_with_sizes int': lambda T, x, i: T.split_with_sizes(x, 3),
    'unsafe_chunk 0': lambda T, x, i: T.unsafe_chunk(x, 0),
    'combinations r float': lambda T, x, i: T.combinations(T.ones(3), 1.5),
    'tril_indices float': lambda T, x, i: T.tril_indices(3.5, 3),
    'vander N float': lambda T, x, i: T.vander(T.ones(3), 2.5),
    'trapezoid dim float': lambda T, x, i: T.trapezoid(x, dim=0.5),
    'gradient spacing str': lambda T, x, i: T.gradient(x, spacing='a'),
    'searchsorted scalar seq': lambda T, x, i: T.searchsorted(3, x),
    'bucketize bound list': lambda T, x, i: T.bucketize(x, [1, 2]),
    'isin list': lambda T, x, i: T.isin(x, [1, 2]),
    'gcd float': lambda T, x, i: T.gcd(x, x),
    'ldexp list': lambda T, x, i: T.ldexp(x, [1]),
    'index_reduce dim float': lambda T, x, i: T.index_reduce(x, 0.5, i, x[:2], 'prod'),
    'kaiser beta str': lambda T, x, i: T.kaiser_window(4, True, 'a'),
    'hann periodic str': lambda T, x, i: T.hann_window(4, 'a'),
    'unravel shape float': lambda T, x, i: T.unravel_index(i, (2.5,)),
    'histogramdd bins float': lambda T, x, i: T.histogramdd(x, 2.5),
    'nonzero_static size float': lambda T, x, i: T.nonzero_static(x, size=1.5),
    'resize_ float': lambda T, x, i: T.ones(3).resize_(1.5),
    'lu_unpack list': lambda T, x, i: T.lu_unpack(x, [1]),
    'frexp int': lambda T, x, i: T.frexp(i),
    'block_diag 3d': lambda T, x, i: T.block_diag(T.ones(1,1,1)),
    'quantile interp int': lambda T, x, i: T.quantile(x, 0.5, interpolation=1),
    'quantile keepdim str': lambda T, x, i: T.quantile(x, 0.5, 1, 'a'),
    'nanquantile q list': lambda T, x, i: T.nanquantile(x, [0.5]),
    'cov fweights list': lambda T, x, i: T.cov(x, fweights=[1, 2, 3, 4]),
    'corrcoef int': lambda T, x, i: T.corrcoef(T.ones(2, 3, dtype=T.int64)),
    'cdist compute_mode bad': lambda T, x, i: T.cdist(x, x, compute_mode='foo'),
    'std_mean correction str': lambda T, x, i: T.std_mean(x, 1, correction='a'),
    'var_mean keepdim str': lambda T, x, i: T.var_mean(x, 1, keepdim='a'),
    'logcumsumexp bool': lambda T, x, i: T.logcumsumexp(T.ones(3, dtype=T.bool), 0),
    'renorm_ int': lambda T, x, i: T.ones(3, 3, dtype=T.int64).renorm_(2, 0, 1),
    'hsplit list float': lambda T, x, i: T.hsplit(x, [1.5]),
    'unsafe_split float': lambda T, x, i: T.unsafe_split(x, 1.5),
    'block_diag empty list ok': lambda T, x, i: T.block_diag(),
    'combinations with_repl str': lambda T, x, i: T.combinations(T.ones(3), 2, 'a'),
    'triu_indices offset float': lambda T, x, i: T.triu_indices(3, 3, 0.5),
    'vander bool incr str': lambda T, x, i: T.vander(T.ones(3), 2, 'a'),
    'trapezoid x scalar kw': lambda T, x, i: T.trapezoid(x, x=2.0),
    'cumulative_trapezoid dx str': lambda T, x, i: T.cumulative_trapezoid(x, dx='a'),
    'argwhere list': lambda T, x, i: T.argwhere([1]),
    'searchsorted side int': lambda T, x, i: T.searchsorted(T.ones(3), x, side=1),
    'searchsorted sorter list': lambda T, x, i: T.searchsorted(T.ones(3), x, sorter=[0, 1, 2]),
    'isin invert str': lambda T, x, i: T.isin(x, x, invert='a'),
    'lcm_ float': lambda T, x, i: T.ones(3).lcm_(T.ones(3)),
    'nextafter int': lambda T, x, i: T.nextafter(i, i),
    'positive list': lambda T, x, i: T.positive([1]),
    'index_reduce reduce int': lambda T, x, i: T.index_reduce(x, 0, i, x[:2], 1),
    'chain_matmul list': lambda T, x, i: T.chain_matmul([x]),
    'frobenius dim str': lambda T, x, i: T.frobenius_norm(x, 'a'),
    'nuclear keep str': lambda T, x, i: T.nuclear_norm(x, (0, 1), 'a'),
    'bartlett dtype bad': lambda T, x, i: T.bartlett_window(4, dtype='float32'),
    'is_same_size list': lambda T, x, i: T.is_same_size(x, [1]),
    'as_strided_ size str': lambda T, x, i: T.as_strided_(x, 'a', (1,)),
    'resize_as_ list': lambda T, x, i: T.resize_as_(x, [1]),
    'geqrf list': lambda T, x, i: T.geqrf([[1.]]),
    'ormqr left str': lambda T, x, i: T.ormqr(T.ones(3, 3), T.ones(3), T.ones(3, 2), 'a'),
    'fill_diagonal_ wrap str': lambda T, x, i: T.ones(3, 3).fill_diagonal_(1, 'a'),
    'fill_diagonal_ value str': lambda T, x, i: T.ones(3, 3).fill_diagonal_('a'),
    'dim_order list str': lambda T, x, i: x.dim_order(ambiguity_check=['a']),
    'apply_ noncallable': lambda T, x, i: T.ones(3).apply_(3),
    'map_ noncallable': lambda T, x, i: T.ones(3).map_(T.ones(3), 3),
    'new_empty_strided neg': lambda T, x, i: x.new_empty_strided((2, -1), (1, 1)),
    'poisson gen str': lambda T, x, i: T.poisson(T.ones(2), 'a'),
    'lu_unpack data str': lambda T, x, i: T.lu_unpack(T.ones(3, 3), T.ones(3, dtype=T.int32), 'a'),
    'gradient edge float': lambda T, x, i: T.gradient(x, edge_order=1.5),
    'unravel indices list': lambda T, x, i: T.unravel_index([1], (2,)),
    'histogramdd range str': lambda T, x, i: T.histogramdd(x, 2, range='ab'),
    'nonzero_static fill float': lambda T, x, i: T.nonzero_static(x, size=1, fill_value=1.5),
}


@pytest.mark.parametrize("label", sorted(_BAD_CALLS))
def test_bad_arguments_raise_torch_types(label):
    kinds = []
    for T in (torch, gg):
        x, i = T.ones(3, 4), T.tensor([0, 1])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _BAD_CALLS[label](T, x, i)
            kinds.append("ok")
        except Exception as e:      # noqa: BLE001  (compared below)
            kinds.append(type(e).__name__)
    assert kinds[1] == kinds[0]


def test_grad_dtype_as_torch():
    res = []
    for T in (torch, gg):
        r = []
        x = T.tensor([1.0, 2.0], requires_grad=True)
        r.append(str(x.grad_dtype))
        x.grad_dtype = T.float64
        (x * 2).sum().backward()
        r.append(str(x.grad.dtype))
        x.grad = None
        x.grad_dtype = None
        (x * 2).sum().backward()
        r += [str(x.grad_dtype), str(x.grad.dtype)]
        x2 = T.tensor([1.0, 2.0], requires_grad=True)
        x2.grad_dtype = None
        x2.backward(T.ones(2, dtype=T.float64))
        x3 = T.tensor([1.0, 2.0], requires_grad=True)
        x3.grad_dtype = T.float64
        g, = T.autograd.grad((x3 ** 2).sum(), x3, create_graph=True)
        r += [str(x2.grad.dtype), str(g.dtype), str(T.ones(2).grad_dtype)]
        res.append(r)
    assert res[0] == res[1]
    _both(lambda T: (T.ones(2, requires_grad=True) * 2).grad_dtype)
    _both(lambda T: setattr(T.ones(2, requires_grad=True) * 2, "grad_dtype", T.float16))
    _both(lambda T: setattr(T.ones(2, requires_grad=True), "grad_dtype", "a"))

    def f(T):
        x = T.ones(2, requires_grad=True)
        x.grad = T.zeros(2)
        x.grad_dtype = T.float64
    _both(f)


def test_removed_variable_features():
    _both(lambda T: T.ones(2).reinforce(1))
    for T in (torch, gg):
        x = T.ones(2)
        assert x.is_distributed() is False
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert x.volatile is False
            x.volatile = True
        assert [str(m.message)[:20] for m in w] == ["volatile was removed"] * 2
