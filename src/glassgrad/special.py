"""torch.special: the special functions, under torch's names.

Most are the ops of the torch namespace under another name (gammaln is lgamma, expit is sigmoid, psi is
digamma, multigammaln is mvlgamma, ...); those torch.special alone has live in ops/special*.py (named
special_<name> there, as PyTorch's ATen names them).  Functions without a derivative in PyTorch (the Bessel
functions of the newer set, the orthogonal polynomials) return tensors that do not require grad, as torch's.
"""
from .ops.unary import erf, erfc, erfinv, exp2, expm1, log1p, logit, sigmoid as expit  # noqa: F401
from .ops.binary import xlogy  # noqa: F401
from .ops.statistics import logsumexp  # noqa: F401
from .ops import softmax as _softmax
from .ops.special import (lgamma as gammaln, digamma, digamma as psi, polygamma, mvlgamma as multigammaln,  # noqa: F401
                          i0, sinc, special_i0e as i0e, special_i1 as i1, special_i1e as i1e, special_entr as entr,
                          special_erfcx as erfcx, special_ndtr as ndtr, special_ndtri as ndtri,
                          special_log_ndtr as log_ndtr, special_round as round)
from .ops.special_binary import (special_xlog1py as xlog1py, special_zeta as zeta,  # noqa: F401
                                 special_gammainc as gammainc, special_gammaincc as gammaincc)
from .ops.special_poly import (  # noqa: F401
    special_chebyshev_polynomial_t as chebyshev_polynomial_t, special_chebyshev_polynomial_u as chebyshev_polynomial_u,
    special_chebyshev_polynomial_v as chebyshev_polynomial_v, special_chebyshev_polynomial_w as chebyshev_polynomial_w,
    special_shifted_chebyshev_polynomial_t as shifted_chebyshev_polynomial_t,
    special_shifted_chebyshev_polynomial_u as shifted_chebyshev_polynomial_u,
    special_shifted_chebyshev_polynomial_v as shifted_chebyshev_polynomial_v,
    special_shifted_chebyshev_polynomial_w as shifted_chebyshev_polynomial_w,
    special_hermite_polynomial_h as hermite_polynomial_h, special_hermite_polynomial_he as hermite_polynomial_he,
    special_laguerre_polynomial_l as laguerre_polynomial_l, special_legendre_polynomial_p as legendre_polynomial_p)
from .ops.special_bessel import (  # noqa: F401
    special_bessel_j0 as bessel_j0, special_bessel_j1 as bessel_j1, special_bessel_y0 as bessel_y0,
    special_bessel_y1 as bessel_y1, special_modified_bessel_i0 as modified_bessel_i0,
    special_modified_bessel_i1 as modified_bessel_i1, special_modified_bessel_k0 as modified_bessel_k0,
    special_modified_bessel_k1 as modified_bessel_k1, special_scaled_modified_bessel_k0 as scaled_modified_bessel_k0,
    special_scaled_modified_bessel_k1 as scaled_modified_bessel_k1,
    special_spherical_bessel_j0 as spherical_bessel_j0, special_airy_ai as airy_ai)

__all__ = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma", "entr", "erf",
           "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln",
           "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri",
           "polygamma", "psi", "round", "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy", "zeta"]


def softmax(input, dim, *, dtype=None):
    return _softmax.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _softmax.log_softmax(input, dim, dtype)


from ._args import honour_out as _honour_out  # noqa: E402
from .ops.out import write_out as _write_out  # noqa: E402
_honour_out(globals(), _write_out, ("glassgrad.",))     # torch's out= on every function that takes it
