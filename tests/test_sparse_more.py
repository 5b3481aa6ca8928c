"""Sparse tensors against torch, continued: unary ops, transpose, small protocol, the coalesced flags of
gradients, sparse CSR tensors, double backward through sparse products, random tensors."""
import numpy as np
import pytest
import torch

import glassgrad as gg
from _sparse_common import I, V, D, W6, CROW, COL, CV, sp, hyb, csr, both, same, same_error, _dense

pytestmark = [pytest.mark.filterwarnings("ignore:Sparse invariant checks"),
              pytest.mark.filterwarnings("ignore:Sparse CSR tensor support is in beta")]

# -- unary ops, transpose, small protocol -------------------------------------------------------------------
UNARY = ("abs", "sin", "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh", "sqrt", "expm1", "log1p", "relu",
         "sign", "sgn", "floor", "ceil", "round", "trunc", "frac", "deg2rad", "rad2deg", "square", "erf", "erfinv",
         "nan_to_num", "isnan", "isinf", "signbit", "isposinf", "isneginf")
V_SMALL = [0.3, 0.4, -0.5, 0.1]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    """Forward as torch (coalesced first, the dense op's dtype rules), then the gradient -- or torch's error,
    where torch's sparse backward calls a dense-only kernel."""
    def run(T):
        leaf = sp(T, requires_grad=name not in ("isnan", "isinf", "signbit", "isposinf", "isneginf"), values=V_SMALL)
        y = getattr(leaf, name)()
        try:
            ints = getattr(sp(T, values=[1, -2, 3, 4]), name)()
        except (RuntimeError, NotImplementedError) as e:
            ints = (type(e).__name__, str(e))
        via_torch = getattr(T, name)(sp(T, values=V_SMALL))
        if not y.requires_grad:
            return y, ints, via_torch
        try:
            y.to_dense().sum().backward()
            g = leaf.grad
        except (RuntimeError, NotImplementedError) as e:
            g = (type(e).__name__, str(e).split(" This could")[0])
        return y, ints, via_torch, g
    same(*both(run), tol=2e-6)


def test_pow_and_relu_functional():
    def run(T):
        s = sp(T, requires_grad=True, values=V_SMALL)
        y, y2 = s.pow(2), s ** 0.5
        r = T.nn.functional.relu(s)
        (y.to_dense().sum() + (y2.to_dense() * 0).sum()).backward()
        return y, y2, r, s.grad
    same(*both(run), tol=1e-6)
    same_error(lambda T: sp(T).pow(T.tensor(2.)))


def test_transpose():
    same(*both(lambda T: sp(T).transpose(0, 1)), tol=0)
    same(*both(lambda T: sp(T, coalesced=True).transpose(1, 0)), tol=0)
    same_error(lambda T: hyb(T).transpose(1, 2))

    def run(T):
        s = sp(T, requires_grad=True)
        (s.transpose(0, 1).to_dense() * T.tensor(W6).t()).sum().backward()
        return s.grad
    same(*both(run))


def test_small_protocol():
    one = lambda T: T.sparse_coo_tensor([[0]], [1.5], (1,))      # noqa: E731
    same(*both(lambda T: (one(T).item(), bool(one(T)), sp(T).element_size(), len(sp(T)), sp(T).itemsize)))
    same(*both(lambda T: (sp(T).new_zeros((2, 3), dtype=T.float64), T.zeros_like(hyb(T), dtype=T.int32))), tol=0)
    for case in (lambda T: sp(T).item(), lambda T: bool(sp(T)), lambda T: sp(T).nbytes, lambda T: sp(T) == sp(T),
                 lambda T: sp(T) < 1, lambda T: sp(T).contiguous(), lambda T: T.sparse.softmax(sp(T).long(), 1),
                 lambda T: sp(T).long().requires_grad_(), lambda T: sp(T, requires_grad=True).long().requires_grad_()):
        same_error(case)


def test_gradient_coalesced_flags_match_torch():
    """Gradients arrive coalesced (hooks see it); a leaf's .grad keeps the flag only where torch's
    AccumulateGrad clones instead of stealing (a broadcast gradient, a sum of two, shared indices)."""
    cases = {"sparse.mm": lambda T, s: T.sparse.mm(s, T.ones(3, 2)).sum(),
             "to_dense": lambda T, s: (s.to_dense() * 2).sum(), "sum": lambda T, s: T.sparse.sum(s),
             "softmax": lambda T, s: T.sparse.softmax(s, 1).to_dense().sum(),
             "mul": lambda T, s: (s * 2).to_dense().sum(), "add": lambda T, s: (s + s).to_dense().sum(),
             "values": lambda T, s: (s.coalesce().values() * T.tensor([1., 2., 3.])).sum(),
             "abs": lambda T, s: s.abs().to_dense().sum(), "sign": lambda T, s: s.sign().to_dense().sum()}
    for name, f in cases.items():
        for coalesced in (False, True):
            def run(T):
                leaf = sp(T, requires_grad=True)
                if coalesced:
                    leaf = leaf.detach().coalesce().requires_grad_()
                seen = []
                leaf.register_hook(lambda g: seen.append((g.is_sparse, g.is_coalesced())))
                f(T, leaf).backward()
                return seen, leaf.grad.is_coalesced(), leaf.grad._nnz()
            t, g = both(run)
            assert t == g, (name, coalesced)


def test_values_dtype_conversion_keeps_the_graph():
    def run(T):
        v = T.tensor(V, requires_grad=True)
        s = T.sparse_coo_tensor(T.tensor(I), v, (2, 3), dtype=T.float64)
        (s.to_dense() * T.tensor(W6, dtype=T.float64)).sum().backward()
        return s, v.grad
    same(*both(run))


# -- CSR -------------------------------------------------------------------------------------------------------
CSR_CASES = {
    "ctor": lambda T: csr(T),
    "ctor_inferred": lambda T: T.sparse_csr_tensor(CROW, COL, CV),
    "ctor_float64_rg": lambda T: csr(T, True, dtype=T.float64),
    "ctor_int32": lambda T: T.sparse_csr_tensor(T.tensor(CROW, dtype=T.int32), T.tensor(COL, dtype=T.int32),
                                                T.tensor(CV), (2, 3)),
    "dense_to_csr": lambda T: T.tensor(D).to_sparse_csr(),
    "zeros_to_csr": lambda T: T.zeros(2, 3).to_sparse_csr(),
    "to_sparse_layout": lambda T: T.tensor(D).to_sparse(layout=T.sparse_csr),
    "coo_to_csr": lambda T: sp(T).to_sparse_csr(),
    "csr_to_dense": lambda T: csr(T).to_dense(),
    "csr_to_coo": lambda T: csr(T).to_sparse(),
    "csr_to_coo2": lambda T: csr(T).to_sparse_coo(),
    "csr_accessors": lambda T: (csr(T).crow_indices(), csr(T).col_indices(), csr(T).values(), csr(T)._nnz(),
                                csr(T).sparse_dim(), csr(T).dense_dim(), csr(T).is_sparse, csr(T).is_sparse_csr),
    "csr_mm": lambda T: csr(T) @ _dense(T, 3, 2),
    "csr_torch_mm": lambda T: T.mm(csr(T), _dense(T, 3, 2)),
    "csr_mul": lambda T: csr(T) * 2,
    "csr_add": lambda T: csr(T) + T.tensor([[1., 0., 0.], [0., 0., 4.]]).to_sparse_csr(),
    "csr_double": lambda T: csr(T).double(),
    "csr_clone": lambda T: csr(T).clone(),
}


@pytest.mark.parametrize("case", sorted(CSR_CASES))
def test_csr(case):
    t, g = both(CSR_CASES[case])
    assert repr(g) == repr(t)
    if not isinstance(t, tuple) and t.layout == torch.sparse_csr:
        assert str(g.layout) == "torch.sparse_csr" and g.shape == t.shape and g._nnz() == t._nnz()


def test_csr_gradients():
    def run(T):
        v = T.tensor(CV, requires_grad=True)
        c = T.sparse_csr_tensor(CROW, COL, v, (2, 3))
        x = _dense(T, 3, 2).requires_grad_()
        leaf = csr(T, True)
        d = T.tensor(D, requires_grad=True)
        ((c.to_dense() * T.tensor(W6)).sum() + (c @ x).pow(2).sum() + (T.sparse.mm(leaf, x) ** 2).sum()
         + (d.to_sparse_csr() @ x).sum() + (leaf * 3).to_dense().sum()).backward()
        names = [type(n).__name__ if T is torch else n.name() for n in
                 (c.grad_fn, (c @ x).grad_fn, d.to_sparse_csr().grad_fn, c.to_dense().grad_fn)]
        return v.grad, x.grad, d.grad, leaf.grad, names
    t, g = both(run)
    same(t[:3], g[:3], 1e-5)
    assert repr(g[3].to_dense()) == repr(t[3].to_dense()) and g[3].layout == gg.sparse_csr
    assert t[4] == g[4]


CSR_ERRORS = {
    "crow_last": lambda T: T.sparse_csr_tensor([0, 1, 4], COL, CV, (2, 3), check_invariants=True),
    "crow_first": lambda T: T.sparse_csr_tensor([1, 1, 3], COL, CV, (2, 3), check_invariants=True),
    "col_sorted": lambda T: T.sparse_csr_tensor([0, 2, 3], COL, CV, (2, 3), check_invariants=True),
    "col_range": lambda T: T.sparse_csr_tensor(CROW, [1, 0, 5], CV, (2, 3), check_invariants=True),
    "indices": lambda T: csr(T).indices(),
    "is_coalesced": lambda T: csr(T).is_coalesced(),
    "_values": lambda T: csr(T)._values(),
    "view": lambda T: csr(T).view(6),
    "stride": lambda T: csr(T).stride(),
    "is_contiguous": lambda T: csr(T).is_contiguous(),
    "numpy": lambda T: csr(T).numpy(),
    "to_sparse_dim": lambda T: csr(T).to_sparse(1),
    "to_sparse_csr_dense_dim": lambda T: csr(T).to_sparse_csr(1),
    "dense_crow": lambda T: T.ones(2).crow_indices(),
    "mm_shape": lambda T: csr(T) @ T.ones(4, 2),
}


@pytest.mark.parametrize("case", sorted(CSR_ERRORS))
def test_csr_errors(case):
    same_error(CSR_ERRORS[case])


def test_double_backward_through_sparse_products():
    """create_graph=True: the dense operand's gradient of sparse.addmm / mm is itself differentiable (a GCN's
    gradient penalty); double backward into the sparse operand raises."""
    def run(T):
        rng = np.random.default_rng(0)
        e = rng.integers(0, 6, size=(2, 12))
        adj = T.sparse_coo_tensor(T.tensor(e), T.tensor(rng.random(12)), (6, 6)).coalesce()
        x = T.tensor(rng.standard_normal((6, 4)))
        W = T.tensor(rng.standard_normal((4, 3)), requires_grad=True)
        b = T.tensor(rng.standard_normal((6, 3)), requires_grad=True)
        out = T.sparse.addmm(b, adj, (x @ W).tanh(), beta=0.5, alpha=2.0) + T.mm(adj, x @ W) \
            + (T.tensor(rng.standard_normal((2, 6))) @ adj).sum()
        gW, gb = T.autograd.grad((out ** 2).sum(), (W, b), create_graph=True)
        (gW.pow(2).sum() + gb.pow(3).sum()).backward()
        return W.grad / W.grad.abs().max(), b.grad / b.grad.abs().max()
    same(*both(run), tol=1e-12)
    with pytest.raises(RuntimeError, match="double backward into a sparse operand"):
        s = sp(gg, requires_grad=True)
        x = gg.ones(3, 2, requires_grad=True)
        gx, = gg.autograd.grad((gg.sparse.mm(s, x) ** 2).sum(), x, create_graph=True)
        gg.autograd.grad(gx.sum(), s)


def _random_sparse(T, seed, sd, dd, nnz):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 4, sd + dd))
    idx = np.stack([rng.integers(0, s, nnz) for s in shape[:sd]]) if sd else np.zeros((0, nnz), np.int64)
    return T.sparse_coo_tensor(T.tensor(idx), T.tensor(rng.standard_normal((nnz,) + shape[sd:])), shape,
                               requires_grad=True), shape


FUZZ = {
    "to_dense": lambda T, s, sh: s.to_dense(),
    "coalesce": lambda T, s, sh: s.coalesce(),
    "sum": lambda T, s, sh: T.sparse.sum(s),
    "sum_last": lambda T, s, sh: T.sparse.sum(s, len(sh) - 1),
    "softmax0": lambda T, s, sh: T.sparse.softmax(s, 0),
    "log_softmax_last": lambda T, s, sh: T.sparse.log_softmax(s, len(sh) - 1),
    "add": lambda T, s, sh: s + s.detach() * 2,
    "select": lambda T, s, sh: s.select(0, 0),
}


@pytest.mark.parametrize("name", sorted(FUZZ))
def test_random_sparse_tensors(name):
    """Random shapes (1-3 sparse dims, 0-1 dense dims, duplicates, nnz 0-6): values, the gradient's layout,
    pattern, flag and values, or torch's backward error."""
    for seed in range(36):
        def run(T):
            s, sh = _random_sparse(T, seed, seed % 3 + 1, (seed // 3) % 2, seed % 7)
            y = FUZZ[name](T, s, sh)
            yd = y.to_dense() if y.is_sparse else y
            try:
                (yd * T.tensor(np.random.default_rng(seed + 1).standard_normal(tuple(yd.shape)))).sum().backward()
            except (RuntimeError, NotImplementedError) as e:
                return y, (type(e).__name__, str(e).split(" This could")[0])
            return y, s.grad
        same(*both(run), tol=1e-10)


# -- sparse @ sparse -------------------------------------------------------------------------------------------
SPSP = {"sparse.mm": lambda T, a, b: T.sparse.mm(a, b), "mm": lambda T, a, b: T.mm(a, b),
        "at": lambda T, a, b: a @ b, "matmul": lambda T, a, b: T.matmul(a, b)}


@pytest.mark.parametrize("op", sorted(SPSP))
def test_sparse_times_sparse(op):
    """A coalesced sparse product (explicit zeros where sums cancel), SparseSparseMatmulBackward0 / MmBackward0,
    sparse gradients (torch.sparse.mm's zeroed outside each operand's pattern), on random operands."""
    for seed in range(25):
        def run(T):
            rng = np.random.default_rng(seed)
            m, k, n = (int(v) for v in rng.integers(1, 5, 3))
            nnz_a, nnz_b = (int(v) for v in rng.integers(0, 7, 2))
            a = T.sparse_coo_tensor(T.tensor(np.stack([rng.integers(0, m, nnz_a), rng.integers(0, k, nnz_a)])),
                                    T.tensor(rng.standard_normal(nnz_a)), (m, k), requires_grad=True)
            b = T.sparse_coo_tensor(T.tensor(np.stack([rng.integers(0, k, nnz_b), rng.integers(0, n, nnz_b)])),
                                    T.tensor(rng.standard_normal(nnz_b)), (k, n), requires_grad=True)
            y = SPSP[op](T, a, b)
            (y.to_dense() * T.tensor(rng.standard_normal((m, n)))).sum().backward()
            return y, a.grad, b.grad
        same(*both(run), tol=1e-12)
    same_error(lambda T: T.sparse.mm(sp(T), T.sparse_coo_tensor([[0], [0]], [1.], (4, 2))))
    same_error(lambda T: T.sparse.mm(sp(T), sp(T).t().double()))


# -- index_select --------------------------------------------------------------------------------------------
def _five(T, coalesced=False):
    s = T.sparse_coo_tensor([[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]], [3., 4., 5., 1., 7.], (3, 3), requires_grad=True)
    return s.coalesce() if coalesced else s


INDEX_SELECT = {
    "rows_repeated": lambda T: _five(T).index_select(0, T.tensor([2, 0, 0])),
    "torch_cols": lambda T: T.index_select(_five(T), 1, T.tensor([2])),
    "coalesced_cols": lambda T: _five(T, True).index_select(1, T.tensor([0, 2])),
    "one_row": lambda T: _five(T, True).index_select(0, T.tensor([2])),
    "empty": lambda T: _five(T).index_select(0, T.tensor([], dtype=T.long)),
    "negative_dim": lambda T: _five(T).index_select(-1, T.tensor([1])),
    "dense_dim": lambda T: hyb(T).index_select(2, T.tensor([1, 1, 0])),
}


@pytest.mark.parametrize("case", sorted(INDEX_SELECT))
def test_index_select(case):
    t, g = both(INDEX_SELECT[case])
    same(t, g, 0)
    assert repr(g) == repr(t)


@pytest.mark.parametrize("case", ["range", "2d", "float", "backward"])
def test_index_select_errors(case):
    same_error({"range": lambda T: _five(T).index_select(0, T.tensor([5])),
                "2d": lambda T: _five(T).index_select(0, T.tensor([[0]])),
                "float": lambda T: _five(T).index_select(0, T.tensor([0.])),
                "backward": lambda T: _five(T).index_select(0, T.tensor([1])).to_dense().sum().backward()}[case])


def test_sparse_grad_then_dense_grad_accumulates_dense():
    """A sparse leaf's sparse .grad plus a later dense gradient (torch.mm's) is a dense .grad, as torch's."""
    def run(T):
        s = sp(T, requires_grad=True)
        x = _dense(T, 3, 2)
        T.sparse.mm(s, x).sum().backward()
        first = s.grad
        T.mm(s, x).pow(2).sum().backward()
        return first, s.grad
    same(*both(run), tol=1e-5)


def test_sparse_times_sparse_elementwise():
    """Coalesced operands: their intersection (MulBackward0, gradients on it); uncoalesced ones raise (torch's
    rule for them is not reproduced)."""
    def run(T):
        a = T.sparse_coo_tensor([[0, 1, 1, 0], [2, 0, 2, 2]], [3., 4., 5., 1.], (2, 3)).coalesce().requires_grad_()
        b = T.sparse_coo_tensor([[1, 0, 0], [2, 2, 1]], [7., 8., 9.], (2, 3)).coalesce().requires_grad_()
        y = a * b
        (y.to_dense() * T.arange(6.).reshape(2, 3)).sum().backward()
        h = hyb(T).coalesce()
        return y, a.grad, b.grad, h * h, T.mul(a.detach(), b.detach().double())
    same(*both(run), tol=0)
    same_error(lambda T: sp(T, coalesced=True) * T.sparse_coo_tensor([[0], [0]], [1.], (1, 1)).coalesce())
    with pytest.raises(RuntimeError, match="coalesced operands only"):
        sp(gg) * sp(gg)


@pytest.mark.parametrize("op", ["div", "mul"])
def test_zero_dim_tensor_operand_gets_its_gradient(op):
    def run(T):
        s = sp(T, requires_grad=True)
        t = T.tensor(2., requires_grad=True)
        y = s / t if op == "div" else s * t
        (y.to_dense() * T.tensor(W6)).sum().backward()
        return y, s.grad, t.grad
    same(*both(run), tol=1e-6)


@pytest.mark.parametrize("shape", [(2, 3), (3,), (1, 3)])
def test_sparse_times_dense_gives_the_dense_factor_its_gradient(shape):
    """The dense factor's gradient is sparse, as torch's (g * self), summed over broadcast dims."""
    def run(T):
        s = sp(T, requires_grad=True)
        d = T.tensor(np.random.default_rng(3).standard_normal(shape), dtype=T.float32, requires_grad=True)
        y = s * d
        try:
            (y.to_dense() * T.tensor(W6)).sum().backward()
        except NotImplementedError as e:        # torch cannot view a sparse gradient down to fewer dims
            return y, str(e).split(" This could")[0]
        return y, s.grad, d.grad
    same(*both(run), tol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_unsqueeze(dim):
    same(*both(lambda T: (sp(T, requires_grad=True).unsqueeze(dim), T.unsqueeze(hyb(T), dim))), tol=0)
    same_error(lambda T: sp(T, requires_grad=True).unsqueeze(dim).to_dense().sum().backward())
    same_error(lambda T: sp(T).unsqueeze(3))
