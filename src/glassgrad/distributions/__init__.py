"""torch.distributions: probability distributions with torch's parameters, shapes, validation messages,
log_prob / cdf / entropy / moments, reparameterised sampling, transforms, constraint registries and KL
divergences.

Samples: each distribution draws from glassgrad's replica of torch's generator with the tensor calls torch
makes (torch.normal, normal_, rand, uniform_, exponential_, cauchy_, bernoulli, multinomial), and torch's C++
samplers (_standard_gamma, _sample_dirichlet, poisson, binomial) are replayed element by element
(_samplers.py), so the same seed gives torch's draws and leaves the generator in torch's state.  The samples
are torch's bit for bit, except where they pass through elementwise math or matrix products whose last bit
can differ from torch's vectorised kernels (Laplace, Weibull, Kumaraswamy, the multivariate normals, Wishart,
LKJCholesky, ...: equal to ~1e-15; tests/test_distributions.py INEXACT lists them).  On a CUDA tensor the C++
samplers run on the device from the CUDA generator (_device_samplers.py): torch's distributions and seeding,
not torch's CUDA values (its kernels' per-element curand streams are not replayed).
"""
from . import constraints, transforms  # noqa: F401
from .bernoulli import Bernoulli
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .constraint_registry import biject_to, transform_to
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Beta, Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Chi2, Gamma
from .fishersnedecor import FisherSnedecor
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .independent import Independent
from .inverse_gamma import InverseGamma
from .kumaraswamy import Kumaraswamy
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .lkj_cholesky import LKJCholesky
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .negative_binomial import NegativeBinomial
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .pareto import Pareto
from .poisson import Poisson
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .studentT import StudentT
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F401,F403
from .transforms import __all__ as _transforms_all
from .uniform import Uniform
from .von_mises import VonMises
from .weibull import Weibull
from .wishart import Wishart

__all__ = ["Bernoulli", "Beta", "Binomial", "Categorical", "Cauchy", "Chi2", "ContinuousBernoulli", "Dirichlet",
           "Distribution", "Exponential", "ExponentialFamily", "FisherSnedecor", "Gamma", "GeneralizedPareto",
           "Geometric", "Gumbel", "HalfCauchy", "HalfNormal", "Independent", "InverseGamma", "Kumaraswamy", "LKJCholesky",
           "Laplace", "LogNormal", "LowRankMultivariateNormal", "LogisticNormal", "MixtureSameFamily", "Multinomial", "MultivariateNormal",
           "NegativeBinomial", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Pareto",
           "Poisson", "RelaxedBernoulli", "RelaxedOneHotCategorical", "StudentT", "TransformedDistribution",
           "Uniform", "VonMises", "Weibull", "Wishart", "biject_to", "kl_divergence", "register_kl", "transform_to"]
__all__ += list(_transforms_all)
