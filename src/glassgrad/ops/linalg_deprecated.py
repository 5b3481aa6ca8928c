"""torch's messages for its old linear-algebra names: the deprecation warnings of the ones that still work
(torch.qr, cholesky, lu, lu_solve, triangular_solve, chain_matmul, frobenius_norm, nuclear_norm; issued once per process, as torch's
TORCH_WARN_ONCE) and the RuntimeError of the ones torch 1.9 removed but still defines (torch.symeig, eig,
lstsq, solve, matrix_rank and their Tensor methods), so old code fails here as it fails under torch.

ops: symeig eig lstsq solve matrix_rank
"""
from ._core import warn_once

__all__ = ["symeig", "eig", "lstsq", "solve", "matrix_rank"]

_AT = " (Triggered internally at /__w/pytorch/pytorch/aten/src/ATen/native/{}.)"
_DEPRECATED = {
    "qr": "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future PyTorch release.\n"
          "The boolean parameter 'some' has been replaced with a string parameter 'mode'.\nQ, R = torch.qr(A, some)\n"
          "should be replaced with\nQ, R = torch.linalg.qr(A, 'reduced' if some else 'complete')"
          + _AT.format("BatchLinearAlgebra.cpp:2505"),
    "cholesky": "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a future "
                "PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\nL = torch.linalg.cholesky(A)\nand\n"
                "U = torch.cholesky(A, upper=True)\nshould be replaced with\nU = torch.linalg.cholesky(A).mH\nThis "
                "transform will produce equivalent results for all valid (symmetric positive definite) inputs."
                + _AT.format("BatchLinearAlgebra.cpp:1765"),
    "lu_solve": "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a future PyTorch "
                "release.\nNote that torch.linalg.lu_solve has its arguments reversed.\nX = torch.lu_solve(B, LU, "
                "pivots)\nshould be replaced with\nX = torch.linalg.lu_solve(LU, pivots, B)"
                + _AT.format("BatchLinearAlgebra.cpp:2230"),
    "triangular_solve": "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
                        "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments reversed "
                        "and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, A).solution\n"
                        "should be replaced with\nX = torch.linalg.solve_triangular(A, B)."
                        + _AT.format("BatchLinearAlgebra.cpp:2273"),
    "lu": "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and will be removed "
          "in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots "
          "= torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, compute_pivots, "
          "get_infos=True)\nshould be replaced with\nLU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)"
          + _AT.format("BatchLinearAlgebra.cpp:2073"),
    "chain_matmul": "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
                    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than multiple "
                    "parameters." + _AT.format("LinearAlgebra.cpp:1102"),
    "frobenius_norm": "at::frobenius_norm is deprecated and it is just left for JIT compatibility. It will be removed "
                      "in a future PyTorch release. Please use `linalg.vector_norm(A, 2., dim, keepdim)` instead"
                      + _AT.format("LinearAlgebra.cpp:3175"),
    "nuclear_norm": "at::nuclear_norm is deprecated and it is just left for JIT compatibility. It will be removed in a "
                    "future PyTorch release. Please use `linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead"
                    + _AT.format("LinearAlgebra.cpp:3229"),
}


def deprecated(name):
    """Issue torch's deprecation warning for the old name `name` (once per process)."""
    warn_once(_DEPRECATED[name], stacklevel=5)


_REMOVED = "This function was deprecated since version 1.9 and is now removed. "
_SYMEIG = (_REMOVED + "The default behavior has changed from using the upper triangular portion of the matrix by "
           "default to using the lower triangular portion.\n\nL, _ = torch.symeig(A, upper=upper) should be replaced "
           "with:\nL = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, "
           "eigenvectors=True) should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_EIG = (_REMOVED + "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` rather than real "
        "tensors mimicking complex tensors.\n\nL, _ = torch.eig(A) should be replaced with:\nL_complex = "
        "torch.linalg.eigvals(A)\n\nand\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")
_LSTSQ = (_REMOVED + "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n`torch.linalg.lstsq` has "
          "reversed arguments and does not return the QR decomposition in the returned tuple (although it returns "
          "other information about the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
          "The returned solution in `torch.lstsq` stored the residuals of the solution in the last m - n columns of "
          "the returned value whenever m > n. In torch.linalg.lstsq, the residuals are in the field 'residuals' of "
          "the returned named tuple.\n\nThe unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution"
          "[:A.size(1)]\nshould be replaced with:\nX = torch.linalg.lstsq(A, B).solution")
_SOLVE = (_REMOVED + "`torch.solve` is deprecated in favor of `torch.linalg.solve`. `torch.linalg.solve` has its "
          "arguments reversed and does not return the LU factorization.\n\nTo get the LU factorization see "
          "`torch.lu`, which can be used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution "
          "should be replaced with:\nX = torch.linalg.solve(A, B)")
_MATRIX_RANK = ("This function was deprecated since version 1.9 and is now removed.\nPlease use the "
                "`torch.linalg.matrix_rank` function instead. The parameter 'symmetric' was renamed in "
                "`torch.linalg.matrix_rank()` to 'hermitian'.")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(_SYMEIG)


def eig(input, eigenvectors=False, *, out=None):
    raise RuntimeError(_EIG)


def lstsq(input, A, *, out=None):
    raise RuntimeError(_LSTSQ)


def solve(input, A, *, out=None):
    raise RuntimeError(_SOLVE)


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(_MATRIX_RANK)
