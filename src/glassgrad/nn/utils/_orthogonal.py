"""parametrizations.orthogonal's parametrization (_Orthogonal): matrix_exp, cayley or householder maps, with
torch's trivialization (``base``) and its right_inverse (geqrf + householder_product; randn for the
completion of a non-square matrix, so the RNG advances as torch's)."""
from enum import Enum, auto

import numpy as np

from ..._tensor import Tensor, _make
from ...backend import contiguous
from ...autograd.grad_mode import no_grad
from ...linalg import householder_product, matrix_exp, solve
from ...ops.creation import eye, tensor as _tensor, zeros_like
from ...ops.shape import cat
from ...ops.random import randn
from ..modules.module import Module

__all__ = ["_OrthMaps", "_Orthogonal"]


def _geqrf(A):
    """LAPACK geqrf (torch.geqrf) per matrix: NumPy's raw QR returns its output transposed."""
    a = A._data
    flat = a.reshape((-1,) + a.shape[-2:])
    hs, taus = [], []
    for m in flat:
        h, tau = np.linalg.qr(m, mode="raw")
        hs.append(h.T)
        taus.append(tau)
    X = np.stack(hs).reshape(a.shape) if hs else np.zeros(a.shape, a.dtype, like=a)
    t = np.stack(taus).reshape(a.shape[:-2] + (min(a.shape[-2:]),)) if taus else np.zeros(a.shape[:-2] + (0,), like=a)
    if a.__class__ is not np.ndarray:           # device arrays (np.linalg.qr ran there): copies in A's dtype
        return _make(contiguous(X.astype(a.dtype))), _make(contiguous(t.astype(a.dtype)))
    return _tensor(np.ascontiguousarray(X), dtype=A.dtype), _tensor(np.ascontiguousarray(t), dtype=A.dtype)


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    Id = eye(k, dtype=Q.dtype, device=Q.device)
    eps = 10.0 * n * float(np.finfo(Q._data.dtype).eps)
    return bool(np.allclose((Q.mH @ Q)._data, Id._data, rtol=1e-5, atol=eps))


def _make_orthogonal(A):
    X, tau = _geqrf(A)
    Q = householder_product(X, tau)
    Q *= X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = solve(Id.add(A, alpha=-0.5), Id.add(A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. Got a tensor of shape "
                             f"{Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix exponential or the Cayley "
                                          "parametrizations when use_trivialization=False.")
            A, tau = _geqrf(Q)
            d = A._data.diagonal(axis1=-2, axis2=-1)
            signs = np.sign(d)
            signs[tau._data == 0.0] *= -1
            idx = np.arange(min(A.shape[-2:]), like=A._data)
            A._data[..., idx, idx] = signs
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = randn(*(tuple(Q.size()[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        neg_Id = zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def _check_weight(module, name):
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    return weight
