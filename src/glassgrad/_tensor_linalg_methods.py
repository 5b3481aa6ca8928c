"""The Tensor methods of the linear-algebra family (ops/linalg.py, addmm.py, linalg_legacy.py), each a
one-line delegation to its op module; ``Tensor`` inherits them with those of ``_tensor_methods.py``.
"""
from . import ops as _ops


class TensorLinalgMethods:
    __slots__ = ()

    # -- ops/linalg.py ----------------------------------------------------------------
    def matmul(self, other):
        return _ops.linalg.matmul(self, other)
    def mm(self, mat2):
        return _ops.linalg.mm(self, mat2)
    def bmm(self, mat2):
        return _ops.linalg.bmm(self, mat2)
    def mv(self, vec):
        return _ops.linalg.mv(self, vec)
    def dot(self, other):
        return _ops.linalg.dot(self, other)
    def vdot(self, other):
        return _ops.linalg.vdot(self, other)
    def inner(self, other):
        return _ops.einsum.inner(self, other)
    def outer(self, vec2):
        return _ops.linalg.outer(self, vec2)
    def ger(self, vec2):
        return _ops.linalg.ger(self, vec2)
    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return _ops.addmm.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    def addmm_(self, mat1, mat2, *, beta=1, alpha=1):
        return _ops.addmm.addmm_(self, mat1, mat2, beta=beta, alpha=alpha)
    def addmv(self, mat, vec, *, beta=1, alpha=1):
        return _ops.addmm.addmv(self, mat, vec, beta=beta, alpha=alpha)
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return _ops.addmm.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return _ops.addmm.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def addmv_(self, mat, vec, *, beta=1, alpha=1):
        return _ops.addmm.addmv_(self, mat, vec, beta=beta, alpha=alpha)
    def baddbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return _ops.addmm.baddbmm_(self, batch1, batch2, beta=beta, alpha=alpha)
    def addbmm_(self, batch1, batch2, *, beta=1, alpha=1):
        return _ops.addmm.addbmm_(self, batch1, batch2, beta=beta, alpha=alpha)
    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        return _ops.addmm.addr(self, vec1, vec2, beta=beta, alpha=alpha)
    def addr_(self, vec1, vec2, *, beta=1, alpha=1):
        return _ops.addmm.addr_(self, vec1, vec2, beta=beta, alpha=alpha)
    def kron(self, other):
        return _ops.linalg.kron(self, other)

    # -- ops/linalg_legacy.py: torch's top-level spellings of torch.linalg ------------------
    def det(self):
        return _ops.linalg_legacy.det(self)
    def logdet(self):
        return _ops.linalg_legacy.logdet(self)
    def slogdet(self):
        return _ops.linalg_legacy.slogdet(self)
    def inverse(self):
        return _ops.linalg_legacy.inverse(self)
    def pinverse(self, rcond=1e-15):
        return _ops.linalg_legacy.pinverse(self, rcond)
    def svd(self, some=True, compute_uv=True):
        return _ops.linalg_legacy.svd(self, some, compute_uv)
    def qr(self, some=True):
        return _ops.linalg_legacy.qr(self, some)
    def matrix_exp(self):
        return _ops.linalg_legacy.matrix_exp(self)
    def matrix_power(self, n):
        return _ops.linalg_legacy.matrix_power(self, n)
    def cross(self, other, dim=None):
        return _ops.linalg_legacy.cross(self, other, dim)
    def lu(self, pivot=True, get_infos=False):
        return _ops.linalg_legacy.lu(self, pivot, get_infos)
    def orgqr(self, input2):
        return _ops.linalg_legacy.orgqr(self, input2)
    def lu_solve(self, LU_data, LU_pivots):
        return _ops.linalg_legacy.lu_solve(self, LU_data, LU_pivots)

    # -- ops/linalg_cholesky.py --------------------------------------------------------
    def cholesky(self, upper=False):
        return _ops.linalg_cholesky.cholesky(self, upper)
    def cholesky_solve(self, input2, upper=False):
        return _ops.linalg_cholesky.cholesky_solve(self, input2, upper)
    def cholesky_inverse(self, upper=False):
        return _ops.linalg_cholesky.cholesky_inverse(self, upper)
    def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
        return _ops.linalg_cholesky.triangular_solve(self, A, upper, transpose, unitriangular)

    # -- ops/linalg_deprecated.py: removed in torch 1.9, still defined, raising torch's RuntimeError ---------
    def symeig(self, eigenvectors=False, upper=True):
        return _ops.linalg_deprecated.symeig(self, eigenvectors, upper)
    def eig(self, eigenvectors=False):
        return _ops.linalg_deprecated.eig(self, eigenvectors)
    def lstsq(self, A):
        return _ops.linalg_deprecated.lstsq(self, A)
    def solve(self, A):
        return _ops.linalg_deprecated.solve(self, A)
