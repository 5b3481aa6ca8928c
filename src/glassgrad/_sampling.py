"""torch.poisson and torch.binomial: the draws of torch's C++ samplers (replayed in distributions/_samplers.py,
so the same seed gives torch's samples) with the graph of ops/sampling.py.  The library layer, as
torch.distributions; distributions is imported on the first call, so `import glassgrad` does not load it."""
from .ops import sampling as _s

__all__ = ["poisson", "binomial"]


def poisson(input, generator=None):
    _s.check_poisson(input, generator)
    from .distributions import _samplers
    return _s.poisson_result(_samplers.poisson(input, generator)._data, input)


def binomial(count, prob, generator=None):
    _s.check_binomial(count, prob, generator)
    from .distributions import _samplers
    return _s.binomial_result(_samplers.binomial(count, prob, generator)._data, count, prob)
