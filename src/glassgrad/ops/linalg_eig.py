"""torch.linalg's general (non-Hermitian) eigendecomposition: eig and eigvals, with complex results.

ops: eig eigvals (node LinalgEigBackward0, PyTorch's linalg_eig_backward)

NumPy's eig is LAPACK's geev, as PyTorch's CPU kernel: eigenvectors of unit norm with their largest component
real, in geev's order.  Results are always complex (complex64 for float32 input, complex128 for float64);
a real input's gradient is the real part of the complex one (PyTorch's handle_r_to_c).
"""
import numpy as np

from .. import _dtype, backend
from .linalg_solve import _LaNode, wrap, named, solve, low_kernel
from .linalg import matmul
from .complex import conj, real, imag
from .shape import diag_embed
from .ternary import where
from .creation import eye
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = []


def _phase_check(VhgV):
    d = imag(VhgV.diagonal(0, -2, -1))._data
    if not np.allclose(d, 0, rtol=1e-2, atol=1e-2):
        raise RuntimeError("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on this quantity, so "
                           "it is ill-defined.")


class LinalgEigBackward0(_LaNode):   # gA = V^-H (P(V^H gV) / conj(E) + diag(gL)) V^H, E_ij = L_j - L_i
    __slots__ = ()
    n_outputs = 2
    _saved_names = ("self", "eigenvalues", "eigenvectors")

    @staticmethod
    def formula(grads, A, L, V):
        gL, gV = grads
        Vh = conj(V.mT)
        if gV is not None:
            VhgV = matmul(Vh, gV)
            _phase_check(VhgV)
            gA = VhgV - matmul(Vh, V * real(VhgV.diagonal(0, -2, -1)).unsqueeze(-2))
            Lc = conj(L)
            n = L.shape[-1]
            E = Lc.unsqueeze(-2) - Lc.unsqueeze(-1)
            E = where(eye(n, dtype=_dtype.bool, device=L.device), E * 0 + 1, E)
            gA = gA / E
            if gL is not None:
                gA = where(eye(n, dtype=_dtype.bool, device=L.device), diag_embed(gL), gA)
        else:
            gA = diag_embed(gL)
        gA = solve(Vh, matmul(gA, Vh))
        if not A.is_complex():
            gA = real(gA)
        return (gA,)


def _eig_arrays(A, fname):
    a = A._data
    if a.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are {a.shape[-2]} by "
                           f"{a.shape[-1]} matrices")
    if a.dtype.kind in "fV":
        low_kernel("linalg_eig_out_cpu", a, on_empty=True)
    ct = _dtype.from_numpy_dtype(a.dtype).to_complex().np      # torch's error for integer inputs
    if not a.size:
        L, V = np.zeros(a.shape[:-1], ct, like=a), np.zeros(a.shape, ct, like=a)
    elif a.__class__ is np.ndarray:
        L, V = np.linalg.eig(a)
    else:       # CuPy has no general (non-Hermitian) eig (LAPACK geev): on the host, as torch's CUDA eig syncs too
        dev = backend.device_of(a)
        L, V = (backend.to_device(x, dev) for x in np.linalg.eig(backend.to_host(a)))
    return L.astype(ct), V.astype(ct)


def eig(A, *, out=None):
    if _acs.on:
        return _ac.fp32(eig, A, out=out)
    L, V = _eig_arrays(A, "linalg.eig")
    Lt, Vt = wrap((L, V), LinalgEigBackward0, (A,), saved_in=(0,), saved_out=(0, 1))
    return named("linalg_eig", ("eigenvalues", "eigenvectors"), (Lt, Vt))


def eigvals(A, *, out=None):
    if _acs.on:
        return _ac.fp32(eigvals, A, out=out)
    L, V = _eig_arrays(A, "linalg.eigvals")
    if A._rg:
        return wrap((L, V), LinalgEigBackward0, (A,), saved_in=(0,), saved_out=(0, 1))[0]
    return wrap((L,), LinalgEigBackward0, (A,))[0]
