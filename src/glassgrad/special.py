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
                                 igamma as gammainc, igammac as gammaincc)

__all__ = ["digamma", "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
           "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr", "log_softmax", "logit", "logsumexp",
           "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round", "sinc", "softmax", "xlog1py", "xlogy",
           "zeta"]


def softmax(input, dim, *, dtype=None):
    return _softmax.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    return _softmax.log_softmax(input, dim, dtype)
