"""torch.linalg beyond the op table (tests/opinfo/linalg_decomp.py): the namespace, LinAlgError, the named
result tuples and the functions without a derivative."""
import re

import numpy as np
import pytest
import torch

import glassgrad as gg

# complex-only or complex-valued functions glassgrad does not have yet (no complex dtypes)
MISSING = {"eig", "eigvals"}


def test_namespace_has_torch_linalg_names():
    names = {n for n in dir(torch.linalg) if not n.startswith("_") and n != "common_notes"}
    assert names - MISSING <= set(dir(gg.linalg)), sorted(names - MISSING - set(dir(gg.linalg)))


def test_linalg_error_is_a_runtime_error():
    assert issubclass(gg.linalg.LinAlgError, RuntimeError)
    assert gg.linalg.LinAlgError.__name__ == torch.linalg.LinAlgError.__name__
    with pytest.raises(gg.linalg.LinAlgError, match="The diagonal element 2 is zero"):
        gg.linalg.inv(gg.tensor([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(gg.linalg.LinAlgError, match="not positive-definite"):
        gg.linalg.cholesky(gg.tensor([[1.0, 2.0], [2.0, 1.0]]))


def _fields(r):
    return re.findall(r"[(,]\n(\w+)=", repr(r))


@pytest.mark.parametrize("call", [
    lambda T, a: T.linalg.inv_ex(a), lambda T, a: T.linalg.solve_ex(a, a), lambda T, a: T.linalg.cholesky_ex(a),
    lambda T, a: T.linalg.lu_factor_ex(a), lambda T, a: T.linalg.lu_factor(a), lambda T, a: T.linalg.lu(a),
    lambda T, a: T.linalg.slogdet(a), lambda T, a: T.linalg.eigh(a), lambda T, a: T.linalg.svd(a),
    lambda T, a: T.linalg.qr(a), lambda T, a: T.linalg.lstsq(a, a), lambda T, a: T.linalg.ldl_factor(a),
    lambda T, a: T.linalg.ldl_factor_ex(a)])
def test_result_tuples_named_as_torch(call):
    a = np.eye(3) * 2
    t, g = call(torch, torch.from_numpy(a)), call(gg, gg.from_numpy(a))
    assert type(g).__name__ == type(t).__name__ and type(g).__module__ == type(t).__module__
    assert _fields(g) == _fields(t)
    assert [x.dtype.is_floating_point for x in g] == [x.dtype.is_floating_point for x in t]


def test_ex_forms_report_info_instead_of_raising():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    for T in (torch, gg):
        assert int(T.linalg.inv_ex(T.from_numpy(s)).info) == 2
        assert int(T.linalg.solve_ex(T.from_numpy(s), T.from_numpy(s)).info) == 2
        assert int(T.linalg.cholesky_ex(T.from_numpy(np.array([[1.0, 2.0], [2.0, 1.0]]))).info) == 2


def test_no_derivative_where_torch_has_none():
    for T in (torch, gg):
        a = T.from_numpy(np.eye(3)).requires_grad_()
        LD = T.linalg.ldl_factor(a).LD
        assert LD.grad_fn.name() == "torch::autograd::NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
            LD.sum().backward()
        R = T.linalg.qr(a, mode="r").R
        with pytest.raises(RuntimeError, match="which is not computed when mode='r'"):
            R.sum().backward()
        Q = T.linalg.qr(T.from_numpy(np.ones((4, 3)) + np.eye(4, 3)).requires_grad_(), mode="complete").Q
        with pytest.raises(RuntimeError, match="not differentiable when mode='complete' and nrows > ncols"):
            Q.sum().backward()


def test_degenerate_eigenvalues_give_torch_nan():
    a = np.diag([1.0, 1.0, 2.0])
    res = []
    for T in (torch, gg):
        x = T.from_numpy(a).requires_grad_()
        L, V = T.linalg.eigh(x)
        (L.sum() + V.sum()).backward()
        res.append(x.grad.numpy())
    np.testing.assert_array_equal(np.isnan(res[0]), np.isnan(res[1]))
