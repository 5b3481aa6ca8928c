"""torch.linalg: the linear algebra namespace (eig / eigvals give complex results; most others are tested in real dtypes).

A namespace only: every function is an op of ops/linalg_solve.py, ops/linalg_decomp.py, ops/linalg_norm.py
or ops/linalg.py (matmul), re-exported under PyTorch's names.  It sits in the library layer (as
nn.functional does): it imports ops and is imported by glassgrad/__init__ on first use of `torch.linalg`.
"""
from ..ops.linalg import matmul
from ..ops.linalg_solve import LinAlgError, inv, inv_ex, solve, solve_ex, solve_triangular, cholesky, cholesky_ex
from ..ops.linalg_decomp import det, slogdet, eigh, eigvalsh, svd, svdvals, qr, pinv, matrix_exp, cross
from ..ops.linalg_lu import lu_factor, lu_factor_ex, lu, lu_solve, lstsq, householder_product
from ..ops.linalg_ldl import ldl_factor, ldl_factor_ex, ldl_solve
from ..ops.linalg_eig import eig, eigvals
from ..ops.linalg_norm import (vector_norm, matrix_norm, norm, cond, matrix_rank, matrix_power, multi_dot,
                               tensorinv, tensorsolve, vander, vecdot, diagonal)

__all__ = ["LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
           "householder_product", "inv", "inv_ex", "ldl_factor", "ldl_factor_ex",
           "ldl_solve", "lstsq", "lu", "lu_factor", "lu_factor_ex", "lu_solve", "matmul",
           "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet",
           "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
           "vector_norm"]


from .._args import honour_out as _honour_out  # noqa: E402
from ..ops.out import write_out as _write_out  # noqa: E402
_honour_out(globals(), _write_out, ("glassgrad.ops",))     # torch's out= on every function that takes it
