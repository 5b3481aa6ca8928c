"""Sparse COO tensors against torch: construction, reprs, conversions, products, sums, softmaxes, masks,
gradients (sparse gradients of sparse leaves, grad_fn names), errors, and a GCN layer trained a few steps."""
import pickle

import numpy as np
import pytest
import torch

import glassgrad as gg
from _sparse_common import I, V, D, W6, sp, hyb, csr, both, same, same_error, _dense

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")]

# -- layouts ------------------------------------------------------------------------------------------------
def test_layout_objects():
    for name in ("strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn"):
        lg, lt = getattr(gg, name), getattr(torch, name)
        assert repr(lg) == repr(lt) == str(lg)
        assert isinstance(lg, gg.layout)
        assert pickle.loads(pickle.dumps(lg)) is lg
    assert gg.sparse_coo != gg.strided and gg.sparse_coo == gg.sparse_coo
    assert gg.zeros(2).layout is gg.strided and not gg.zeros(2).is_sparse
    assert repr(gg.layout) == repr(torch.layout) == "<class 'torch.layout'>"
    with pytest.raises(TypeError, match="cannot create 'torch.layout' instances"):
        gg.layout()


# -- construction and repr -----------------------------------------------------------------------------------
REPRS = {
    "uncoalesced": lambda T: sp(T),
    "coalesced": lambda T: sp(T, coalesced=True),
    "inferred_size": lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor(V)),
    "float64": lambda T: T.sparse_coo_tensor([[0, 1], [1, 0]], [1, 2], (2, 2), dtype=T.float64),
    "int_values": lambda T: T.sparse_coo_tensor([[0, 1], [1, 0]], [1, 2], (2, 2)),
    "int32": lambda T: T.sparse_coo_tensor([[0, 1], [1, 0]], T.tensor([1, 2], dtype=T.int32), (2, 2)),
    "empty": lambda T: T.sparse_coo_tensor(T.zeros(2, 0, dtype=T.long), T.zeros(0), (2, 3)),
    "empty_size_only": lambda T: T.sparse_coo_tensor((2, 3)),
    "empty_int32": lambda T: T.sparse_coo_tensor(T.zeros(1, 0, dtype=T.long), T.zeros(0, dtype=T.int32), (2,)),
    "empty_hybrid": lambda T: T.sparse_coo_tensor(T.zeros(1, 0, dtype=T.long), T.zeros(0, 2), (2, 2)),
    "sparse_dim_0": lambda T: T.sparse_coo_tensor(T.zeros(0, 1, dtype=T.long), T.ones(1, 2), (2,)),
    "hybrid": lambda T: hyb(T),
    "requires_grad": lambda T: sp(T, requires_grad=True),
    "grad_fn_long_line": lambda T: T.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], (2, 2), dtype=T.float64,
                                                       requires_grad=True) * 2,
    "grad_fn_short": lambda T: sp(T, requires_grad=True).coalesce(),
    "values_grad_fn": lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor(V, requires_grad=True), (2, 3)),
    "to_sparse": lambda T: T.tensor([[0., 1., 0.], [2., 0., 3.]]).to_sparse(),
    "to_sparse_1": lambda T: T.tensor([[0., 1., 0.], [2., 0., 3.]]).to_sparse(1),
    "to_sparse_coo": lambda T: T.tensor([[0., 1., 0.], [2., 0., 3.]]).to_sparse_coo(),
    "zeros_to_sparse": lambda T: T.zeros(2, 3).to_sparse(),
    "is_coalesced_flag": lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor(V), (2, 3), is_coalesced=True),
}


@pytest.mark.parametrize("case", sorted(REPRS))
def test_repr_and_metadata(case):
    t, g = both(REPRS[case])
    assert repr(g) == repr(t) and str(g) == str(t)
    same(t, g, 0)
    assert g.shape == t.shape and g.size() == t.size() and g.dim() == t.dim() and g.ndim == t.ndim
    assert g.numel() == t.numel() and g.requires_grad == t.requires_grad and g.is_leaf == t.is_leaf
    assert str(g.device) == str(t.device) and g.is_contiguous() == t.is_contiguous()
    assert g.stride() == t.stride() and g.storage_offset() == t.storage_offset()


def test_accessors():
    t, g = both(lambda T: sp(T))
    same(t._indices(), g._indices())
    same(t._values(), g._values())
    tc, gc = t.coalesce(), g.coalesce()
    same(tc.indices(), gc.indices())
    same(tc.values(), gc.values())
    assert gc.coalesce() is gc and g.to_sparse() is g
    d = gg.ones(2, 3)
    assert d.to_dense() is d and d.sparse_dim() == 0 and d.dense_dim() == 2
    same(*both(lambda T: T.sparse_coo_tensor(T.tensor([[0, 1]]), T.tensor([1., 2.]), (3,)).is_coalesced()))
    same(*both(lambda T: T.sparse_coo_tensor(T.tensor(I)[:, :1], T.tensor(V[:1]), (2, 3)).is_coalesced()))
    same(*both(lambda T: T.sparse_coo_tensor(T.tensor(I)[:, :3], T.tensor(V[:3]), (2, 3), is_coalesced=True)
               .is_coalesced()))


def test_values_share_memory():
    v = gg.tensor(V)
    s = gg.sparse_coo_tensor(gg.tensor(I), v, (2, 3))
    v.mul_(2)
    assert s._values().tolist() == [6., 8., 10., 2.]


# -- conversions and elementwise ------------------------------------------------------------------------------
OPS = {
    "to_dense": lambda T: sp(T).to_dense(),
    "to_dense_hybrid": lambda T: hyb(T).to_dense(),
    "coalesce_hybrid": lambda T: hyb(T).coalesce(),
    "to_sparse_hybrid": lambda T: T.tensor(D).to_sparse(1).coalesce().values(),
    "double": lambda T: sp(T).double(),
    "float": lambda T: sp(T, dtype=T.float64).float(),
    "long": lambda T: sp(T).long(),
    "to_dtype": lambda T: sp(T).to(T.float64),
    "type": lambda T: sp(T).type(),
    "clone": lambda T: sp(T).clone(),
    "detach": lambda T: sp(T, requires_grad=True).detach(),
    "t": lambda T: sp(T).t(),
    "t_coalesced": lambda T: sp(T, coalesced=True).t(),
    "torch_t": lambda T: T.t(sp(T)),
    "mul_number": lambda T: sp(T) * 2.5,
    "rmul_number": lambda T: 2 * sp(T),
    "mul_int_by_float": lambda T: sp(T, values=[1, 2, 3, 4]) * 2.5,
    "mul_0d": lambda T: sp(T) * T.tensor(2.),
    "mul_dense": lambda T: sp(T) * T.tensor([1., 2., 3.]),
    "mul_coalesced": lambda T: sp(T, coalesced=True) * 2,
    "div": lambda T: sp(T) / 2,
    "div_int": lambda T: sp(T, values=[1, 2, 3, 4]) / 2,
    "neg": lambda T: -sp(T),
    "add_same": lambda T: sp(T) + sp(T),
    "add_other": lambda T: sp(T) + T.sparse_coo_tensor([[1, 0], [1, 0]], [7., 8.], (2, 3)),
    "add_coalesced": lambda T: sp(T, coalesced=True) + T.sparse_coo_tensor([[1, 0], [1, 0]], [7., 8.], (2, 3)).coalesce(),
    "add_alpha": lambda T: T.add(sp(T), T.sparse_coo_tensor([[1, 0], [1, 0]], [7., 8.], (2, 3)), alpha=2),
    "sub": lambda T: sp(T) - T.sparse_coo_tensor([[1, 0], [1, 0]], [7., 8.], (2, 3)),
    "dense_plus_sparse": lambda T: T.ones(2, 3) + sp(T),
    "dense_minus_sparse": lambda T: T.ones(2, 3) - sp(T),
    "torch_add_dense_sparse": lambda T: T.add(T.ones(2, 3), sp(T)),
    "dense_times_sparse": lambda T: T.tensor(D) * sp(T),
    "select_0": lambda T: sp(T)[1],
    "select_tuple": lambda T: sp(T)[:, 0],
    "select_method": lambda T: sp(T).select(1, 2),
    "select_dense_dim": lambda T: hyb(T).select(2, 1),
    "sparse_mask": lambda T: T.tensor(D).sparse_mask(sp(T)),
    "sparse_mask_coalesced": lambda T: T.tensor(D).sparse_mask(sp(T, coalesced=True)),
    "resize": lambda T: sp(T).sparse_resize_((3, 4), 2, 0),
    "resize_and_clear": lambda T: sp(T).sparse_resize_and_clear_((3, 4), 2, 0),
    "resize_empty": lambda T: T.sparse_coo_tensor((2, 3)).sparse_resize_((4, 1, 2), 1, 2),
    "sparse_mask_sparse": lambda T: sp(T).sparse_mask(sp(T)),
    "spmm_dense": lambda T: T.spmm(T.ones(2, 3), T.ones(3, 2)),
    "dsmm_dense": lambda T: T.dsmm(T.ones(2, 3), T.ones(3, 2)),
}


@pytest.mark.parametrize("case", sorted(OPS))
def test_ops(case):
    same(*both(OPS[case]), tol=0)


# -- products, sums, softmax -----------------------------------------------------------------------------------
PRODUCTS = {
    "sparse.mm": lambda T: T.sparse.mm(sp(T), _dense(T, 3, 2)),
    "sparse.mm_dense_dense": lambda T: T.sparse.mm(T.ones(3, 3), _dense(T, 3, 2)),
    "sparse.addmm": lambda T: T.sparse.addmm(_dense(T, 2, 2), sp(T), _dense(T, 3, 2)),
    "sparse.addmm_scaled": lambda T: T.sparse.addmm(_dense(T, 2, 2), sp(T), _dense(T, 3, 2), beta=0.5, alpha=2),
    "sparse.addmm_broadcast": lambda T: T.sparse.addmm(T.ones(2), sp(T), _dense(T, 3, 2)),
    "mm": lambda T: T.mm(sp(T), _dense(T, 3, 2)),
    "matmul": lambda T: T.matmul(sp(T), _dense(T, 3, 2)),
    "at": lambda T: sp(T) @ _dense(T, 3, 2),
    "method_mm": lambda T: sp(T).mm(_dense(T, 3, 2)),
    "dense_at_sparse": lambda T: _dense(T, 4, 2) @ sp(T),
    "spmm": lambda T: T.spmm(sp(T), _dense(T, 3, 2)),
    "dsmm": lambda T: T.dsmm(sp(T), _dense(T, 3, 2)),
    "smm": lambda T: T.smm(sp(T), _dense(T, 3, 2)),
    "hspmm": lambda T: T.hspmm(sp(T), _dense(T, 3, 2)),
    "hsmm": lambda T: T.hsmm(sp(T), _dense(T, 3, 2)),
    "sspaddmm": lambda T: T.sspaddmm(T.sparse_coo_tensor([[0], [1]], [5.], (2, 2)), sp(T), _dense(T, 3, 2)),
    "saddmm": lambda T: T.saddmm(T.zeros(2, 2).to_sparse(), sp(T), _dense(T, 3, 2)),
    "sparse.sum": lambda T: T.sparse.sum(sp(T)),
    "sparse.sum_dim": lambda T: T.sparse.sum(sp(T), 1),
    "sparse.sum_dim0": lambda T: T.sparse.sum(sp(T), 0),
    "sparse.sum_all_dims": lambda T: T.sparse.sum(sp(T), (0, 1)),
    "sparse.sum_dtype": lambda T: T.sparse.sum(sp(T), 1, dtype=T.float64),
    "sparse.sum_hybrid_dense_dim": lambda T: T.sparse.sum(hyb(T), 2),
    "sparse.sum_hybrid_sparse_dims": lambda T: T.sparse.sum(hyb(T), (0, 1)),
    "sparse.sum_hybrid_mixed": lambda T: T.sparse.sum(hyb(T), (0, 2)),
    "sum": lambda T: sp(T).sum(),
    "sum_dim": lambda T: sp(T).sum(1),
    "sum_keepdim": lambda T: sp(T).sum(dim=1, keepdim=True),
    "torch.sum": lambda T: T.sum(sp(T)),
    "softmax": lambda T: T.sparse.softmax(sp(T), 1),
    "softmax_dim0": lambda T: T.sparse.softmax(sp(T), 0),
    "softmax_dtype": lambda T: T.sparse.softmax(sp(T), 1, dtype=T.float64),
    "softmax_hybrid_dense_dim": lambda T: T.sparse.softmax(hyb(T), 2),
    "softmax_hybrid_sparse_dim": lambda T: T.sparse.softmax(hyb(T), 0),
    "log_softmax": lambda T: T.sparse.log_softmax(sp(T), 0),
    "log_softmax_neg_dim": lambda T: T.sparse.log_softmax(sp(T), -1),
}


@pytest.mark.parametrize("case", sorted(PRODUCTS))
def test_products_sums_softmax(case):
    same(*both(PRODUCTS[case]), tol=1e-6)


# -- gradients ----------------------------------------------------------------------------------------------------
GRADS = {
    "sparse.mm": lambda T, s: T.sparse.mm(s, _dense(T, 3, 2)).pow(2).sum(),
    "sparse.addmm": lambda T, s: T.sparse.addmm(T.ones(2, 2), s, _dense(T, 3, 2), beta=0.5, alpha=2).pow(2).sum(),
    "mm": lambda T, s: T.mm(s, _dense(T, 3, 2)).pow(2).sum(),
    "at": lambda T, s: (s @ _dense(T, 3, 2)).pow(2).sum(),
    "dense_at_sparse": lambda T, s: (_dense(T, 4, 2) @ s).pow(2).sum(),
    "to_dense": lambda T, s: (s.to_dense() * T.tensor(W6)).sum(),
    "sparse.sum": lambda T, s: T.sparse.sum(s),
    "sparse.sum_dim": lambda T, s: T.sparse.sum(s, 1).to_dense().pow(2).sum(),
    "sum": lambda T, s: s.sum() * 3,
    "softmax": lambda T, s: (T.sparse.softmax(s, 1).to_dense() * T.tensor(W6)).sum(),
    "log_softmax": lambda T, s: (T.sparse.log_softmax(s, 0).to_dense() * T.tensor(W6)).sum(),
    "mul": lambda T, s: ((s * 2).to_dense() * T.tensor(W6)).sum(),
    "mul_dense": lambda T, s: ((s * T.tensor(W6)).to_dense()).sum(),
    "div": lambda T, s: ((s / 4).to_dense() * T.tensor(W6)).sum(),
    "neg": lambda T, s: ((-s).to_dense() * T.tensor(W6)).sum(),
    "add": lambda T, s: ((s + s).to_dense() * T.tensor(W6)).sum(),
    "dense_plus_sparse": lambda T, s: ((T.ones(2, 3) + s) * T.tensor(W6)).sum(),
    "dense_minus_sparse": lambda T, s: ((T.ones(2, 3) - s) * T.tensor(W6)).sum(),
    "dense_times_sparse": lambda T, s: ((T.tensor(W6) * s).to_dense()).sum(),
    "abs_operator": lambda T, s: (abs(s).to_dense() * T.tensor(W6)).sum(),
    "t": lambda T, s: (s.t().to_dense() * T.tensor(W6).t()).sum(),
    "clone": lambda T, s: (s.clone().to_dense() * T.tensor(W6)).sum(),
    "double": lambda T, s: (s.double().to_dense() * T.tensor(W6, dtype=T.float64)).sum(),
    "coalesce_values": lambda T, s: (s.coalesce().values() * T.tensor([1., 2., 3.])).sum(),
}


@pytest.mark.parametrize("coalesced", [False, True])
@pytest.mark.parametrize("case", sorted(GRADS))
def test_sparse_leaf_gradients(case, coalesced):
    """The gradient of a sparse leaf (sparse for the sparse ops, dense for mm / matmul / Tensor.sum, as torch)."""
    def run(T):
        leaf = T.sparse_coo_tensor(T.tensor(I), T.tensor(V), (2, 3), requires_grad=True)
        s = leaf.coalesce() if coalesced else leaf
        if coalesced:
            s.retain_grad()
        GRADS[case](T, s).backward()
        return s.grad
    same(*both(run), tol=1e-5)


@pytest.mark.parametrize("case", sorted(GRADS))
def test_gradients_through_values(case):
    """sparse_coo_tensor(indices, values) with values requiring grad: the dense gradient of the values."""
    def run(T):
        v = T.tensor(V, requires_grad=True)
        s = T.sparse_coo_tensor(T.tensor(I), v, (2, 3))
        assert type(s.grad_fn).__name__ in ("SparseCooTensorWithDimsAndTensorsBackward0",) or \
            s.grad_fn.name() == "SparseCooTensorWithDimsAndTensorsBackward0"
        GRADS[case](T, s).backward()
        return v.grad
    same(*both(run), tol=1e-5)


def test_dense_operand_gradients():
    def run(T):
        x = _dense(T, 3, 2).requires_grad_()
        y = _dense(T, 4, 2).requires_grad_()
        m = T.ones(2, 2, requires_grad=True)
        s = sp(T)
        (T.sparse.mm(s, x).sum() + (s @ x).pow(2).sum() + (y @ s).pow(2).sum()
         + T.sparse.addmm(m, s, x, beta=3).pow(2).sum()).backward()
        return x.grad, y.grad, m.grad
    same(*both(run), tol=1e-5)


def test_to_sparse_gradient():
    def run(T):
        x = T.tensor(D, requires_grad=True)
        s, s1 = x.to_sparse(), x.to_sparse(1)
        names = type(s.grad_fn).__name__ if T is torch else s.grad_fn.name()
        names1 = type(s1.grad_fn).__name__ if T is torch else s1.grad_fn.name()
        ((s.to_dense() * T.tensor(W6)).sum() + (s1.to_dense() ** 2).sum()).backward()
        return x.grad, names, names1
    same(*both(run))


def test_sparse_mask_gradient():
    def run(T):
        x = T.tensor(D, requires_grad=True)
        r = x.sparse_mask(sp(T))
        (r.to_dense() * T.tensor(W6)).sum().backward()
        return r, x.grad
    same(*both(run))


def test_grad_accumulates_and_leaf_grad_fns():
    def run(T):
        s = sp(T, requires_grad=True)
        x = _dense(T, 3, 2)
        T.sparse.mm(s, x).sum().backward()
        T.sparse.mm(s, x).pow(2).sum().backward()
        return s.grad.coalesce(), T.sparse.mm(s, x).grad_fn.next_functions[0][0] is None
    same(*both(run), tol=1e-5)


def test_requires_grad_():
    t, g = both(lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor(V), (2, 3)).requires_grad_())
    assert g.requires_grad and g.is_leaf and repr(g) == repr(t)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_gcn_training_matches_torch(dtype):
    def run(T):
        rng = np.random.default_rng(0)
        n, f, h = 7, 5, 3
        e = rng.integers(0, n, size=(2, 20))
        dt = getattr(T, dtype)
        adj = T.sparse_coo_tensor(T.tensor(e), T.tensor(rng.random(20), dtype=dt), (n, n)).coalesce()
        x = T.tensor(rng.standard_normal((n, f)), dtype=dt)
        W1 = T.tensor(rng.standard_normal((f, h)), dtype=dt, requires_grad=True)
        W2 = T.tensor(rng.standard_normal((h, 2)), dtype=dt, requires_grad=True)
        target = T.tensor(rng.integers(0, 2, n))
        opt = T.optim.Adam([W1, W2], lr=0.05)
        losses = []
        for _ in range(5):
            opt.zero_grad()
            hid = T.sparse.mm(adj, x @ W1).relu()
            out = T.sparse.mm(adj, hid @ W2)
            loss = T.nn.functional.cross_entropy(out, target)
            loss.backward()
            opt.step()
            losses.append(loss.detach())
        return T.stack(losses), W1.detach(), W2.detach()
    same(*both(run), tol=1e-12 if dtype == "float64" else 2e-5)


# -- errors ------------------------------------------------------------------------------------------------------
ERRORS = {
    "nnz_mismatch": lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor(V[:3]), (2, 3)),
    "size_len": lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor(V), (2,)),
    "1d_indices": lambda T: T.sparse_coo_tensor(T.tensor(I[0]), T.tensor(V), (2, 3)),
    "values_size": lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor(V).reshape(4, 1), (2, 3, 2)),
    "negative_size": lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor(V), (2, -3)),
    "invariants_bound": lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor(V), (1, 3), check_invariants=True),
    "invariants_negative": lambda T: T.sparse_coo_tensor(-T.tensor(I), T.tensor(V), (2, 3), check_invariants=True),
    "negative_inferred": lambda T: T.sparse_coo_tensor(T.tensor([[-1, 0]]), T.tensor([1., 2.])),
    "int_requires_grad": lambda T: T.sparse_coo_tensor(T.tensor(I), T.tensor([1, 2, 3, 4]), (2, 3),
                                                       requires_grad=True),
    "indices_uncoalesced": lambda T: sp(T).indices(),
    "values_uncoalesced": lambda T: sp(T).values(),
    "dense_values": lambda T: T.ones(2).values(),
    "dense_indices": lambda T: T.ones(2).indices(),
    "dense_is_coalesced": lambda T: T.ones(2).is_coalesced(),
    "dense_coalesce": lambda T: T.ones(2).coalesce(),
    "dense__indices": lambda T: T.ones(2)._indices(),
    "dense__values": lambda T: T.ones(2)._values(),
    "dense__nnz": lambda T: T.ones(2)._nnz(),
    "dense_resize": lambda T: T.ones(2).sparse_resize_((1, 3), 2, 0),
    "to_sparse_dim": lambda T: T.ones(2, 3).to_sparse(3),
    "to_sparse_0": lambda T: T.ones(2, 3).to_sparse(0),
    "to_dense_dtype": lambda T: sp(T).to_dense(T.float64),
    "sparse_to_sparse_dim": lambda T: sp(T).to_sparse(1),
    "view": lambda T: sp(T).view(6),
    "reshape": lambda T: sp(T).reshape(6),
    "exp": lambda T: sp(T).exp(),
    "torch.exp": lambda T: T.exp(sp(T)),
    "numpy": lambda T: sp(T).numpy(),
    "data_ptr": lambda T: sp(T).data_ptr(),
    "slice": lambda T: sp(T)[1:],
    "add_dense": lambda T: sp(T) + T.ones(2, 3),
    "dense_plus_sparse_size": lambda T: T.ones(2, 3) + T.sparse_coo_tensor([[0], [0]], [1.], (1, 1)),
    "torch_add_dense_sparse_size": lambda T: T.add(T.ones(2, 3), T.sparse_coo_tensor([[0], [0]], [1.], (1, 1))),
    "add_size": lambda T: sp(T) + T.sparse_coo_tensor([[1], [1]], [7.], (2, 4)),
    "div_tensor": lambda T: sp(T) / T.tensor([1., 2., 3.]),
    "mm_dtype": lambda T: T.sparse.mm(sp(T), T.ones(3, 2, dtype=T.float64)),
    "mm_shape": lambda T: T.sparse.mm(sp(T), T.ones(4, 2)),
    "mm_1d": lambda T: T.sparse.mm(sp(T), T.ones(3)),
    "mm_long": lambda T: T.mm(sp(T).long(), T.ones(3, 2)),
    "addmm_broadcast": lambda T: T.sparse.addmm(T.ones(3, 3), sp(T), T.ones(3, 2)),
    "sum_dim_twice": lambda T: T.sparse.sum(sp(T), (1, 1)),
    "sum_dim_range": lambda T: T.sparse.sum(sp(T), 2),
    "sparse_mask_dense": lambda T: T.ones(2, 3).sparse_mask(T.ones(2, 3)),
    "sparse_mask_size": lambda T: T.ones(2, 3).sparse_mask(T.sparse_coo_tensor([[1], [1]], [7.], (2, 4))),
    "resize_shrink": lambda T: sp(T).sparse_resize_((1, 3), 2, 0),
    "resize_sparse_dims": lambda T: sp(T).sparse_resize_((2, 3, 1), 3, 0),
    "resize_dense_dims": lambda T: sp(T).sparse_resize_((2, 3, 1), 2, 1),
    "resize_len": lambda T: sp(T).sparse_resize_((2, 3, 1), 2, 0),
    "t_hybrid": lambda T: hyb(T).t(),
    "sparse.sum_dense": lambda T: T.sparse.sum(T.ones(2, 3)),
    "sparse.sum_dense_dim": lambda T: T.sparse.sum(T.ones(2, 3), 1),
    "sparse.softmax_dense": lambda T: T.sparse.softmax(T.ones(2, 3), 1),
    "sparse.log_softmax_dense": lambda T: T.sparse.log_softmax(T.ones(2, 3), 1),
    "hspmm_dense": lambda T: T.hspmm(T.ones(2, 3), T.ones(3, 2)),
    "smm_dense": lambda T: T.smm(T.ones(2, 3), T.ones(3, 2)),
    "sspaddmm_dense_mat1": lambda T: T.sspaddmm(T.zeros(2, 2).to_sparse(), T.ones(2, 3), T.ones(3, 2)),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors(case):
    same_error(ERRORS[case])


BACKWARD_ERRORS = {
    "hspmm": lambda T, s: T.hspmm(s, T.ones(3, 2)).to_dense().sum(),
    "smm": lambda T, s: T.smm(s, T.ones(3, 2)).to_dense().sum(),
    "select": lambda T, s: s[1].to_dense().sum(),
    "sum_dim": lambda T, s: s.sum(1).to_dense().sum(),
}


@pytest.mark.parametrize("case", sorted(BACKWARD_ERRORS))
def test_backward_errors(case):
    same_error(lambda T: BACKWARD_ERRORS[case](T, sp(T, requires_grad=True)).backward())


def test_no_derivative_grad_fn_names():
    t, g = both(lambda T: [T.hspmm(sp(T, requires_grad=True), T.ones(3, 2)).grad_fn,
                           T.smm(sp(T, requires_grad=True), T.ones(3, 2)).grad_fn])
    assert [type(n).__name__ for n in t] == [n.name().rsplit("::")[-1] for n in g] == ["NotImplemented"] * 2


def test_check_sparse_tensor_invariants():
    for T in (torch, gg):
        inv = T.sparse.check_sparse_tensor_invariants
        assert not inv.is_enabled()
        with inv():
            assert inv.is_enabled()
            with pytest.raises(RuntimeError, match="size is inconsistent with indices: for dim 0, size is 1 but "
                                                   "found index 1"):
                T.sparse_coo_tensor(T.tensor(I), T.tensor(V), (1, 3))
        assert not inv.is_enabled()

        @inv(enable=True)
        def build():
            return T.sparse_coo_tensor(T.tensor(I), T.tensor(V), (1, 3))
        with pytest.raises(RuntimeError, match="size is inconsistent"):
            build()
        assert not inv.is_enabled()
        s = T.sparse_coo_tensor(T.tensor(I), T.tensor(V), (1, 3), check_invariants=False)   # unchecked, as torch
        assert s._nnz() == 4


def test_pickle_and_deepcopy():
    import copy
    for s in (sp(gg, requires_grad=True), csr(gg, True)):
        for r in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
            assert repr(r) == repr(s) and r.layout is s.layout and r is not s


def test_save_load(tmp_path):
    s = sp(gg, requires_grad=True)
    c = sp(gg, coalesced=True).double()
    h = hyb(gg)
    gg.save({"s": s, "c": c, "h": [h]}, tmp_path / "a.gg", format="glassgrad")
    back = gg.load(tmp_path / "a.gg")
    for a, b in ((s, back["s"]), (c, back["c"]), (h, back["h"][0])):
        assert repr(a) == repr(b) and b.is_sparse and b.is_coalesced() == a.is_coalesced()
    for name in ("b.pt", "b.safetensors"):       # torch's format (the default) and glassgrad's
        gg.save({"s": s, "c": c, "h": [h]}, tmp_path / name)
        back = gg.load(tmp_path / name)
        for a, b in ((s, back["s"]), (c, back["c"]), (h, back["h"][0])):
            assert repr(a.detach()) == repr(b.detach()) and b.is_sparse and b.is_coalesced() == a.is_coalesced()
    theirs = torch.load(tmp_path / "b.pt")                     # torch reads glassgrad's sparse tensors
    for a, b in ((s, theirs["s"]), (c, theirs["c"]), (h, theirs["h"][0])):
        assert b.is_sparse and b.is_coalesced() == a.is_coalesced()
        assert np.array_equal(b.to_dense().numpy(), a.detach().to_dense().numpy())
    with pytest.raises(TypeError, match="sparse CSR"):
        gg.save(s.detach().to_dense().to_sparse_csr(), tmp_path / "x.pt")


def test_load_rejects_bad_sparse(tmp_path):
    from glassgrad.serialization import CheckpointError
    for bad in (gg.sparse_coo_tensor(gg.tensor(I), gg.tensor(V), (1, 3), check_invariants=False),   # out of range
                gg.sparse_coo_tensor(gg.tensor(I), gg.tensor(V), (2, 3), is_coalesced=True)):       # false flag
        for fmt in ("glassgrad", "torch"):
            gg.save(bad, tmp_path / "bad.gg", format=fmt)
            with pytest.raises(CheckpointError):
                gg.load(tmp_path / "bad.gg")
