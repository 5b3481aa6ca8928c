"""The graph side of torch.poisson and torch.binomial, whose draws replay torch's C++ samplers in
distributions/_samplers.py (called by glassgrad/_sampling.py): argument checks, PoissonBackward0 (a zero
gradient, as torch's) and binomial's NotImplemented node.

ops: (nodes and checks for) poisson binomial
"""
import numpy as np

from .. import _args, _dtype, backend
from ._core import make, edge, grad, NotImplementedNode
from ..autograd.graph import Node
from .random import Generator, beside

__all__ = []


def check_generator(name, generator, pos):
    if generator is not None and not isinstance(generator, Generator):
        raise TypeError(f"{name}(): argument 'generator' (position {pos}) must be torch.Generator, not "
                        f"{_args.type_name(generator)}")


def check_poisson(input, generator):
    _args.tensor_arg(input, "poisson", "input", 1)
    check_generator("poisson", generator, 2)
    if input._data.dtype.kind not in "fV":
        raise NotImplementedError(f"\"poisson_cpu\" not implemented for '{_dtype.c_name(input._data.dtype)}'")


def check_binomial(count, prob, generator):
    _args.tensor_arg(count, "binomial", "count", 1)
    _args.tensor_arg(prob, "binomial", "prob", 2)
    check_generator("binomial", generator, 3)
    if count._data.dtype.kind not in "fV":
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                           f"{_dtype.c_name(count._data.dtype)}")
    if prob._data.dtype != count._data.dtype:
        raise RuntimeError(f"Found dtype {_dtype.c_name(prob._data.dtype)} but expected "
                           f"{_dtype.c_name(count._data.dtype)}")


class PoissonBackward0(Node):
    """torch's derivative of poisson: zeros_like(self)."""
    __slots__ = ("shape", "dtype")

    def backward(self, ns, g):
        return (ns.const(np.zeros(self.shape, self.dtype, like=backend.like(ns.data(g))), g),)


def poisson_result(values, input):
    values = beside(input._data, values)            # (host draws under the tests' host-stream switch: moved)
    if not (grad.enabled and input._rg):
        return make(values)
    n = PoissonBackward0((edge(input),))
    n.shape, n.dtype = input._data.shape, input._data.dtype
    return make(values, True, n)


def binomial_result(values, count, prob):
    values = beside(count._data, values)
    ins = [t for t in (count, prob) if t._rg]
    if not (grad.enabled and ins):
        return make(values)
    n = NotImplementedNode(tuple(edge(t) for t in ins))
    n.what = "aten::binomial"
    return make(values, True, n)
