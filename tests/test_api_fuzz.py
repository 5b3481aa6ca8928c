"""API fuzz: hundreds of deliberately bad calls, each run identically on torch and on glassgrad.

Every row of CASES is (label, lambda T: ...): the same lambda is given the `torch` module and the
`glassgrad` module (tensors are built inside it from that module).  Each row's outcome is classified:

  same type      both raise, and glassgrad's exception is an instance of the builtin class torch's
                 exception derives from (torch.OutOfMemoryError, LinAlgError... -> RuntimeError), raised
                 by a `raise` of glassgrad's own -- or, where torch's error is itself a raw one (its
                 AttributeError for F.tanh([1]), its AssertionError...), by the same raw type, or with
                 the very same message (Python's "slice indices must be integers...")
  both succeed   both return, with equal values (tensors: dtype, shape and values; RNG calls are seeded)
  wrong value    both return, values differ
  different type both raise, types differ
  internal error glassgrad's exception comes from its internals where torch raises its own: an
                 AttributeError/KeyError/MemoryError/OverflowError/..., an exception class of NumPy's,
                 or one raised inside NumPy or by a Python builtin in glassgrad's code
  silent accept  torch raises, glassgrad returns
  refused        torch returns, glassgrad raises

The test asserts every row is "same type" or "both succeed", except the few in ALLOWED (each with its
reason).  glassgrad must refuse huge sizes before allocating: each glassgrad call runs under tracemalloc
and may allocate at most GG_PEAK_LIMIT bytes; the whole run also lowers the address-space limit so that
a huge allocation by either library fails instead of exhausting the machine.

    .venv/bin/python tests/test_api_fuzz.py       # prints the summary table (and the rows that fail)
"""
import ast
import builtins
import functools
import math
import os
import resource
import sys
import tracemalloc
import warnings

import numpy as np
import pytest
import torch

import glassgrad

GG_SRC = os.path.dirname(os.path.abspath(glassgrad.__file__))
NP_SRC = os.path.dirname(os.path.abspath(np.__file__))
GG_PEAK_LIMIT = 64 << 20          # bytes one glassgrad call may allocate (the cases use tiny tensors)
INF, NAN = float("inf"), float("nan")


def F(T):
    return T.nn.functional


def x23(T, dtype=None, rg=False):
    """[[0, 1, 2], [3, 4, 5]] as float (default) or `dtype`."""
    return T.arange(6.0).reshape(2, 3).to(dtype or T.float32).requires_grad_(rg)


def v3(T, rg=False):
    return T.tensor([1.0, 2.0, 3.0], requires_grad=rg)


def i3(T):
    return T.tensor([0, 1, 2])


def img(T, c=3, h=5, w=5):
    return T.ones(2, c, h, w)


CASES = []


def case(label, fn):
    CASES.append((label, fn))


# ---------------------------------------------------------------------------------------------------
# creation: sizes
for name in ("zeros", "ones", "empty", "rand", "randn"):
    case(f"{name}('3')", lambda T, n=name: getattr(T, n)("3"))
    case(f"{name}(None)", lambda T, n=name: getattr(T, n)(None))
    case(f"{name}(2.5)", lambda T, n=name: getattr(T, n)(2.5))
    case(f"{name}(2, '3')", lambda T, n=name: getattr(T, n)(2, "3"))
    case(f"{name}([2, None])", lambda T, n=name: getattr(T, n)([2, None]))
    case(f"{name}(-1)", lambda T, n=name: getattr(T, n)(-1))
    case(f"{name}(2, -3)", lambda T, n=name: getattr(T, n)(2, -3))
    case(f"{name}(2**63)", lambda T, n=name: getattr(T, n)(2 ** 63))
    case(f"{name}(2**62)", lambda T, n=name: getattr(T, n)(2 ** 62))
    case(f"{name}(2**40)", lambda T, n=name: getattr(T, n)(2 ** 40))
    case(f"{name}(2**31, 2**31)", lambda T, n=name: getattr(T, n)(2 ** 31, 2 ** 31))
    case(f"{name}(2**20, 2**20, 2**20)", lambda T, n=name: getattr(T, n)(2 ** 20, 2 ** 20, 2 ** 20))
    case(f"{name}(tensor size)", lambda T, n=name: getattr(T, n)(T.tensor([2, 3])))
    case(f"{name}(2, dtype='float')", lambda T, n=name: getattr(T, n)(2, dtype="float"))
    case(f"{name}(2, dtype=np.float32)", lambda T, n=name: getattr(T, n)(2, dtype=np.float32))
    case(f"{name}(2, device='cuda:x')", lambda T, n=name: getattr(T, n)(2, device="cuda:x"))
    case(f"{name}(2, device='foo')", lambda T, n=name: getattr(T, n)(2, device="foo"))
    case(f"{name}(0, 3) ok", lambda T, n=name: getattr(T, n)(0, 3))
case("ones(2**40, dtype=float64)", lambda T: T.ones(2 ** 40, dtype=T.float64))
case("ones(2**33, 2**33, 0) ok", lambda T: T.ones(2 ** 33, 2 ** 33, 0))
case("zeros(2**62, 2**62, 0) (product overflows before the 0)", lambda T: T.zeros(2 ** 62, 2 ** 62, 0))
case("zeros(size=(2, 3)) ok", lambda T: T.zeros(size=(2, 3)))
case("zeros((2, 3.0))", lambda T: T.zeros((2, 3.0)))
case("zeros(True)", lambda T: T.zeros(True))
case("zeros(np.int64(2)) ok", lambda T: T.zeros(np.int64(2)))
case("zeros(2, dtype=int) ok", lambda T: T.zeros(2, dtype=int))
case("zeros(2, dtype=5)", lambda T: T.zeros(2, dtype=5))
case("zeros(2, dtype=T.float32, requires_grad='yes') ok", lambda T: T.zeros(2, requires_grad="yes").requires_grad)
case("ones(2, dtype=int64, requires_grad=True)", lambda T: T.ones(2, dtype=T.int64, requires_grad=True))
case("ones(2, dtype=bool, requires_grad=True)", lambda T: T.ones(2, dtype=T.bool, requires_grad=True))
case("full((2,), 'a')", lambda T: T.full((2,), "a"))
case("full((2,), None)", lambda T: T.full((2,), None))
case("full(2, 1.0)", lambda T: T.full(2, 1.0))
case("full((-1,), 1.0)", lambda T: T.full((-1,), 1.0))
case("full((2**62,), 1.0)", lambda T: T.full((2 ** 62,), 1.0))
case("full((2,), 2**70)", lambda T: T.full((2,), 2 ** 70))
case("full((2,), 300, dtype=uint8)", lambda T: T.full((2,), 300, dtype=T.uint8))
case("full((2,), 1.5, dtype=int64) ok", lambda T: T.full((2,), 1.5, dtype=T.int64))
case("full((2,), [1, 2])", lambda T: T.full((2,), [1, 2]))
case("eye(-1)", lambda T: T.eye(-1))
case("eye(3, -1)", lambda T: T.eye(3, -1))
case("eye('3')", lambda T: T.eye("3"))
case("eye(2**40)", lambda T: T.eye(2 ** 40))
case("eye(2.5)", lambda T: T.eye(2.5))
case("empty_strided((2, 3), (3, 1)) ok", lambda T: T.empty_strided((2, 3), (3, 1)).shape)
case("empty_strided((2, -3), (3, 1))", lambda T: T.empty_strided((2, -3), (3, 1)))
case("empty_strided((2, 3), (1,))", lambda T: T.empty_strided((2, 3), (1,)))
case("scalar_tensor('a')", lambda T: T.scalar_tensor("a"))
case("scalar_tensor(None)", lambda T: T.scalar_tensor(None))
case("zeros_like([1, 2])", lambda T: T.zeros_like([1, 2]))
case("ones_like(None)", lambda T: T.ones_like(None))
case("empty_like('a')", lambda T: T.empty_like("a"))
case("full_like(x, 'a')", lambda T: T.full_like(x23(T), "a"))
case("full_like([1.0], 2)", lambda T: T.full_like([1.0], 2))
case("rand_like(int tensor)", lambda T: T.rand_like(i3(T)))
case("randn_like(bool tensor)", lambda T: T.randn_like(i3(T) > 0))
case("rand_like([1.0])", lambda T: T.rand_like([1.0]))
case("zeros_like(x, dtype='float')", lambda T: T.zeros_like(x23(T), dtype="float"))
case("ones_like(x, device='cuda:x')", lambda T: T.ones_like(x23(T), device="cuda:x"))

# creation: from data
case("tensor('abc')", lambda T: T.tensor("abc"))
case("tensor([1, 'a'])", lambda T: T.tensor([1, "a"]))
case("tensor([[1, 2], [3]])", lambda T: T.tensor([[1, 2], [3]]))
case("tensor([[1, 2], 3])", lambda T: T.tensor([[1, 2], 3]))
case("tensor(None)", lambda T: T.tensor(None))
case("tensor({1: 2})", lambda T: T.tensor({1: 2}))
case("tensor(object())", lambda T: T.tensor(object()))
case("tensor([1, None])", lambda T: T.tensor([1, None]))
case("tensor([1, 2], dtype='float32')", lambda T: T.tensor([1, 2], dtype="float32"))
case("tensor([1, 2], dtype=T.float64) ok", lambda T: T.tensor([1, 2], dtype=T.float64))
case("tensor([2**64])", lambda T: T.tensor([2 ** 64]))
case("tensor([-2**63 - 1])", lambda T: T.tensor([-2 ** 63 - 1]))
case("tensor([1, 2], requires_grad=True)", lambda T: T.tensor([1, 2], requires_grad=True))
case("tensor([1.0], device='cuda:x')", lambda T: T.tensor([1.0], device="cuda:x"))
case("tensor([1.0], device=3.5)", lambda T: T.tensor([1.0], device=3.5))
case("tensor([300], dtype=uint8) ok", lambda T: T.tensor([300], dtype=T.uint8))
case("as_tensor('abc')", lambda T: T.as_tensor("abc"))
case("as_tensor([1, 'a'])", lambda T: T.as_tensor([1, "a"]))
case("as_tensor([1], dtype='int')", lambda T: T.as_tensor([1], dtype="int"))
case("from_numpy([1, 2])", lambda T: T.from_numpy([1, 2]))
case("from_numpy(object array)", lambda T: T.from_numpy(np.array([object()])))
case("from_numpy(complex array)", lambda T: T.from_numpy(np.array([1j])).dtype)
case("FloatTensor('a')", lambda T: T.FloatTensor("a"))
case("FloatTensor(-1)", lambda T: T.FloatTensor(-1))
case("FloatTensor(2, 3) ok", lambda T: T.FloatTensor(2, 3).shape)
case("LongTensor([1.5]) ok", lambda T: T.LongTensor([1.5]))
case("Tensor(2**62)", lambda T: T.Tensor(2 ** 62))

# creation: ranges
case("arange(0, inf)", lambda T: T.arange(0, INF))
case("arange(0, nan)", lambda T: T.arange(0, NAN))
case("arange(inf)", lambda T: T.arange(INF))
case("arange(0, 1, inf)", lambda T: T.arange(0, 1, INF))
case("arange(0, 1, nan)", lambda T: T.arange(0, 1, NAN))
case("arange(0, 10, 0)", lambda T: T.arange(0, 10, 0))
case("arange(0, 1, 0.0)", lambda T: T.arange(0, 1, 0.0))
case("arange(10, 0)", lambda T: T.arange(10, 0))
case("arange(0, 10, -1)", lambda T: T.arange(0, 10, -1))
case("arange(5, 5) ok", lambda T: T.arange(5, 5))
case("arange(10, 0, -3) ok", lambda T: T.arange(10, 0, -3))
case("arange('a')", lambda T: T.arange("a"))
case("arange(None)", lambda T: T.arange(None))
case("arange(0, 1e20, 1e-10)", lambda T: T.arange(0, 1e20, 1e-10))
case("arange(2**62)", lambda T: T.arange(2 ** 62))
case("arange(2**63)", lambda T: T.arange(2 ** 63))
case("arange(0, 10, dtype='int')", lambda T: T.arange(0, 10, dtype="int"))
case("arange(5, dtype=bool)", lambda T: T.arange(5, dtype=T.bool))
case("arange(-0.5, 3, dtype=int64) ok", lambda T: T.arange(-0.5, 3, dtype=T.int64))
case("arange(tensor(3)) ok", lambda T: T.arange(T.tensor(3)))
case("arange(tensor([3, 4]))", lambda T: T.arange(T.tensor([3, 4])))
case("linspace(0, 1, -1)", lambda T: T.linspace(0, 1, -1))
case("linspace(0, 1, 'a')", lambda T: T.linspace(0, 1, "a"))
case("linspace(0, 1, 2.5)", lambda T: T.linspace(0, 1, 2.5))
case("linspace(0, 1, 2**62)", lambda T: T.linspace(0, 1, 2 ** 62))
case("linspace('a', 1, 3)", lambda T: T.linspace("a", 1, 3))
case("linspace(0, inf, 3) ok", lambda T: T.linspace(0, INF, 3))
case("linspace(0, 1, 0) ok", lambda T: T.linspace(0, 1, 0))
case("logspace(0, 1, -2)", lambda T: T.logspace(0, 1, -2))
case("logspace(0, 1, 'a')", lambda T: T.logspace(0, 1, "a"))
case("range(0, inf)", lambda T: T.range(0, INF))
case("range(0, 1, 0)", lambda T: T.range(0, 1, 0))
case("range(5, 0)", lambda T: T.range(5, 0))

# creation: random
case("randint(0, 2**63, (3,))", lambda T: T.randint(0, 2 ** 63, (3,)))
case("randint(-2**63 - 1, 0, (3,))", lambda T: T.randint(-2 ** 63 - 1, 0, (3,)))
case("randint(5, 5, (3,))", lambda T: T.randint(5, 5, (3,)))
case("randint(5, 2, (3,))", lambda T: T.randint(5, 2, (3,)))
case("randint(10, 3)", lambda T: T.randint(10, 3))
case("randint(0, 10, (-1,))", lambda T: T.randint(0, 10, (-1,)))
case("randint(0, 10, (2**62,))", lambda T: T.randint(0, 10, (2 ** 62,)))
case("randint('a', (3,))", lambda T: T.randint("a", (3,)))
case("randint(10, ('a',))", lambda T: T.randint(10, ("a",)))
case("randint(0, 300, (3,), dtype=uint8)", lambda T: T.randint(0, 300, (3,), dtype=T.uint8))
case("randint(-1, 3, (3,), dtype=uint8)", lambda T: T.randint(-1, 3, (3,), dtype=T.uint8))
case("randint(0, 10, (3,), dtype=float32) ok", lambda T: T.randint(0, 10, (3,), dtype=T.float32))
case("randint(0, 2, (3,), dtype=bool) ok", lambda T: T.randint(0, 2, (3,), dtype=T.bool))
case("randint(0, 3, (3,), dtype=bool)", lambda T: T.randint(0, 3, (3,), dtype=T.bool))
case("randint(0, 10, (3,), requires_grad=True)", lambda T: T.randint(0, 10, (3,), requires_grad=True))
case("randint(10, (3,)) ok", lambda T: T.randint(10, (3,)))
case("randint(2.5, (3,)) ok", lambda T: T.randint(2.5, (3,)))
case("randperm(-1)", lambda T: T.randperm(-1))
case("randperm('a')", lambda T: T.randperm("a"))
case("randperm(2**62)", lambda T: T.randperm(2 ** 62))
case("randperm(300, dtype=uint8)", lambda T: T.randperm(300, dtype=T.uint8))
case("randperm(5) ok", lambda T: T.randperm(5))
case("rand(3, dtype=int64)", lambda T: T.rand(3, dtype=T.int64))
case("randn(3, dtype=bool)", lambda T: T.randn(3, dtype=T.bool))
case("rand(3, generator='a')", lambda T: T.rand(3, generator="a"))
case("normal(0, -1, (3,))", lambda T: T.normal(0, -1, (3,)))
case("normal(0.0, 1.0, (-1,))", lambda T: T.normal(0.0, 1.0, (-1,)))
case("normal(0.0, 1.0, (2**62,))", lambda T: T.normal(0.0, 1.0, (2 ** 62,)))
case("normal(tensor, tensor(-1))", lambda T: T.normal(T.zeros(2), T.tensor([-1.0, 1.0])))
case("normal(tensor(2), tensor(3))", lambda T: T.normal(T.zeros(2), T.ones(3)))
case("normal('a', 1.0, (2,))", lambda T: T.normal("a", 1.0, (2,)))
case("normal(int tensor, 1.0)", lambda T: T.normal(i3(T), 1.0))
case("normal(tensor, 1.0) ok", lambda T: T.normal(T.zeros(3), 1.0))
case("bernoulli(tensor([2., -1.]))", lambda T: T.bernoulli(T.tensor([2.0, -1.0])))
case("bernoulli(tensor([nan]))", lambda T: T.bernoulli(T.tensor([NAN])))
case("bernoulli(tensor([1.5]))", lambda T: T.bernoulli(T.tensor([1.5])))
case("bernoulli(tensor([-0.1]))", lambda T: T.bernoulli(T.tensor([-0.1])))
case("bernoulli(tensor([0., 1.])) ok", lambda T: T.bernoulli(T.tensor([0.0, 1.0])))
case("bernoulli(x, p=1.5)", lambda T: T.bernoulli(T.zeros(3), p=1.5))
case("bernoulli(x, p=-0.5)", lambda T: T.bernoulli(T.zeros(3), p=-0.5))
case("bernoulli(int tensor)", lambda T: T.bernoulli(i3(T)))
case("bernoulli([0.5])", lambda T: T.bernoulli([0.5]))
case("x.bernoulli_(1.5)", lambda T: T.zeros(3).bernoulli_(1.5))
case("x.bernoulli_(tensor([2.]))", lambda T: T.zeros(3).bernoulli_(T.tensor([2.0])))
case("x.bernoulli_(-0.1)", lambda T: T.zeros(3).bernoulli_(-0.1))
case("x.bernoulli_(0.5) ok", lambda T: T.zeros(3).bernoulli_(0.5))
case("multinomial(tensor([-1., 1.]), 1)", lambda T: T.multinomial(T.tensor([-1.0, 1.0]), 1))
case("multinomial(tensor([0., 0.]), 1)", lambda T: T.multinomial(T.tensor([0.0, 0.0]), 1))
case("multinomial(tensor([1., 1.]), 3)", lambda T: T.multinomial(T.tensor([1.0, 1.0]), 3))
case("multinomial(tensor([1., 1.]), 0)", lambda T: T.multinomial(T.tensor([1.0, 1.0]), 0))
case("multinomial(tensor([1., 1.]), -1)", lambda T: T.multinomial(T.tensor([1.0, 1.0]), -1))
case("multinomial(3-D, 1)", lambda T: T.multinomial(T.ones(2, 2, 2), 1))
case("multinomial(0-D, 1)", lambda T: T.multinomial(T.tensor(1.0), 1))
case("multinomial(tensor([inf, 1.]), 1)", lambda T: T.multinomial(T.tensor([INF, 1.0]), 1))
case("multinomial(tensor([nan, 1.]), 1)", lambda T: T.multinomial(T.tensor([NAN, 1.0]), 1))
case("multinomial(int tensor, 1)", lambda T: T.multinomial(T.tensor([1, 1]), 1))
case("multinomial(empty, 1)", lambda T: T.multinomial(T.zeros(0), 1))
case("multinomial([0.5, 0.5], 1)", lambda T: T.multinomial([0.5, 0.5], 1))
case("multinomial(x, 'a')", lambda T: T.multinomial(T.ones(2), "a"))
case("multinomial(x, 3, replacement=True) ok", lambda T: T.multinomial(T.tensor([1.0, 3.0]), 3, True))
case("x.uniform_(1, 0)", lambda T: T.zeros(3).uniform_(1, 0))
case("x.uniform_(0, inf)", lambda T: T.zeros(3).uniform_(0, INF))
case("int x.uniform_()", lambda T: i3(T).uniform_())
case("x.normal_(0, -1)", lambda T: T.zeros(3).normal_(0, -1))
case("int x.normal_()", lambda T: i3(T).normal_())
case("x.random_(5, 2)", lambda T: T.zeros(3).random_(5, 2))
case("x.random_(0)", lambda T: T.zeros(3).random_(0))
case("x.random_(-1)", lambda T: T.zeros(3).random_(-1))
case("x.random_(1, 2, 3)", lambda T: T.zeros(3).random_(1, 2, 3))
case("x.random_(1, 2, 3) on a non-leaf", lambda T: T.zeros(3, requires_grad=True).clone().random_(1, 2, 3))
case("uint8 x.random_(0, 300)", lambda T: T.zeros(3, dtype=T.uint8).random_(0, 300))
case("x.exponential_(-1)", lambda T: T.zeros(3).exponential_(-1))
case("x.exponential_(0)", lambda T: T.zeros(3).exponential_(0))
case("x.geometric_(0)", lambda T: T.zeros(3).geometric_(0))
case("x.geometric_(1.5)", lambda T: T.zeros(3).geometric_(1.5))
case("x.log_normal_(1, -2)", lambda T: T.zeros(3).log_normal_(1, -2))
case("x.cauchy_(0, -1)", lambda T: T.zeros(3).cauchy_(0, -1))
case("manual_seed('a')", lambda T: T.manual_seed("a"))
case("manual_seed(2**64)", lambda T: T.manual_seed(2 ** 64))
case("manual_seed(-2**63 - 1)", lambda T: T.manual_seed(-2 ** 63 - 1))
case("manual_seed(1.5)", lambda T: T.manual_seed(1.5))
case("manual_seed(None)", lambda T: T.manual_seed(None))
case("Generator().manual_seed('a')", lambda T: T.Generator().manual_seed("a"))
case("Generator('cuda:x')", lambda T: T.Generator("cuda:x"))
case("set_rng_state('a')", lambda T: T.set_rng_state("a"))
case("set_rng_state(tensor([1, 2]))", lambda T: T.set_rng_state(T.tensor([1, 2], dtype=T.uint8)))

# ---------------------------------------------------------------------------------------------------
# devices
case("device('cuda:x')", lambda T: T.device("cuda:x"))
case("device('foo')", lambda T: T.device("foo"))
case("device('cuda:-1')", lambda T: T.device("cuda:-1"))
case("device('cuda:0:1')", lambda T: T.device("cuda:0:1"))
case("device('cpu:0') ok", lambda T: str(T.device("cpu:0")))
case("device('')", lambda T: T.device(""))
case("device(None)", lambda T: T.device(None))
case("device(-1)", lambda T: T.device(-1))
case("device(1.5)", lambda T: T.device(1.5))
case("device('cpu', 'a')", lambda T: T.device("cpu", "a"))
case("device('cpu', -1)", lambda T: T.device("cpu", -1))
case("device('cpu:0', 0)", lambda T: T.device("cpu:0", 0))
case("device('cuda:') ", lambda T: T.device("cuda:"))
case("device(' cpu')", lambda T: T.device(" cpu"))
case("device('CPU')", lambda T: T.device("CPU"))
case("device('cuda:1.5')", lambda T: T.device("cuda:1.5"))
case("device('cuda:+1')", lambda T: T.device("cuda:+1"))
case("device('cuda:01')", lambda T: T.device("cuda:01"))
case("device('cuda', 1) ok", lambda T: str(T.device("cuda", 1)))
case("device(type='cpu', index=0) ok", lambda T: str(T.device(type="cpu", index=0)))
case("device([1])", lambda T: T.device([1]))
case("x.to('cuda:x')", lambda T: x23(T).to("cuda:x"))
case("x.to('foo')", lambda T: x23(T).to("foo"))
case("x.to(device='foo')", lambda T: x23(T).to(device="foo"))
case("x.to(3.5)", lambda T: x23(T).to(3.5))
case("x.to(None) ok", lambda T: x23(T).to(None))
case("x.to('cpu') ok", lambda T: x23(T).to("cpu"))
case("x.to('cpu', 'float')", lambda T: x23(T).to("cpu", "float"))
case("x.cpu() ok", lambda T: x23(T).cpu())

# dtypes
case("x.to(dtype='float')", lambda T: x23(T).to(dtype="float"))
case("x.to('float')", lambda T: x23(T).to("float"))
case("x.to(dtype=np.float64)", lambda T: x23(T).to(dtype=np.float64))
case("x.to(dtype=float) ", lambda T: x23(T).to(dtype=float))
case("x.to(dtype=5)", lambda T: x23(T).to(dtype=5))
case("x.to(float64) ok", lambda T: x23(T).to(T.float64))
case("x.to(int64).requires_grad_()", lambda T: x23(T).to(T.int64).requires_grad_())
case("x.to(other=[1])", lambda T: x23(T).to([1]))
case("x.type('foo')", lambda T: x23(T).type("foo"))
case("x.type('torch.FloatTensor') ok", lambda T: x23(T).type("torch.DoubleTensor"))
case("x.type(5)", lambda T: x23(T).type(5))
case("x.type(T.int32) ok", lambda T: x23(T).type(T.int32))
case("int x.requires_grad = True", lambda T: setattr(i3(T), "requires_grad", True))
case("bool x.requires_grad_()", lambda T: (i3(T) > 0).requires_grad_())
case("x.requires_grad_('yes') ok", lambda T: x23(T).requires_grad_("yes").requires_grad)
case("set_default_dtype(int64)", lambda T: T.set_default_dtype(T.int64))
case("set_default_dtype('float')", lambda T: T.set_default_dtype("float"))
case("set_default_dtype(float)", lambda T: T.set_default_dtype(float))
case("promote_types('a', float32)", lambda T: T.promote_types("a", T.float32))
case("promote_types(float32, int64) ok", lambda T: T.promote_types(T.float32, T.int64))
case("result_type('a', 1)", lambda T: T.result_type("a", 1))
case("result_type(x, 'a')", lambda T: T.result_type(x23(T), "a"))
case("can_cast(float32, 'a')", lambda T: T.can_cast(T.float32, "a"))
case("x.float().view(int64)", lambda T: x23(T).view(T.int64))
case("x.view(int32) ok", lambda T: x23(T).view(T.int32))
case("x.new_zeros(2, dtype='float')", lambda T: x23(T).new_zeros(2, dtype="float"))
case("x.new_ones('a')", lambda T: x23(T).new_ones("a"))
case("x.new_ones(-1)", lambda T: x23(T).new_ones(-1))
case("x.new_full((2,), 'a')", lambda T: x23(T).new_full((2,), "a"))
case("x.new_empty(2**62)", lambda T: x23(T).new_empty(2 ** 62))
case("x.new_tensor('a')", lambda T: x23(T).new_tensor("a"))
case("x.new_zeros((2, 2**62))", lambda T: x23(T).new_zeros((2, 2 ** 62)))

# ---------------------------------------------------------------------------------------------------
# elementwise: wrong argument types
for name in ("exp", "sin", "abs", "neg", "sqrt", "sigmoid", "tanh", "relu", "floor", "isnan", "logical_not",
             "sign", "reciprocal"):
    case(f"{name}([1., 2.])", lambda T, n=name: getattr(T, n)([1.0, 2.0]))
    case(f"{name}(None)", lambda T, n=name: getattr(T, n)(None))
    case(f"{name}('a')", lambda T, n=name: getattr(T, n)("a"))
for name in ("exp", "sqrt", "sin", "log"):
    case(f"{name}(1.0)", lambda T, n=name: getattr(T, n)(1.0))
    case(f"int x.{name}_()", lambda T, n=name: getattr(i3(T), n + "_")())
for name in ("add", "sub", "mul", "div", "maximum", "atan2", "pow", "remainder", "fmod", "eq", "lt",
             "logical_and", "hypot"):
    case(f"{name}([1.], [2.])", lambda T, n=name: getattr(T, n)([1.0], [2.0]))
    case(f"{name}(x, 'a')", lambda T, n=name: getattr(T, n)(v3(T), "a"))
    case(f"{name}(x, None)", lambda T, n=name: getattr(T, n)(v3(T), None))
    case(f"{name}(x3, x2) broadcast", lambda T, n=name: getattr(T, n)(v3(T), T.ones(2)))
    case(f"{name}(x, x) ok", lambda T, n=name: getattr(T, n)(v3(T), v3(T)))
case("x + 'a'", lambda T: v3(T) + "a")
case("x + None", lambda T: v3(T) + None)
case("x + [1., 2., 3.]", lambda T: v3(T) + [1.0, 2.0, 3.0])
case("x * (1, 2)", lambda T: v3(T) * (1, 2))
case("x @ 'a'", lambda T: v3(T) @ "a")
case("'a' - x", lambda T: "a" - v3(T))
case("x + object()", lambda T: v3(T) + object())
case("x + np.ones(3) ok", lambda T: v3(T) + np.ones(3))
case("x + 2**70", lambda T: i3(T) + 2 ** 70)
case("int x + 2**63", lambda T: i3(T) + 2 ** 63)
case("x + 1j", lambda T: v3(T) + 1j)
case("add(x, y, alpha='a')", lambda T: T.add(v3(T), v3(T), alpha="a"))
case("int add(x, y, alpha=0.5)", lambda T: T.add(i3(T), i3(T), alpha=0.5))
case("add(x, y, alpha=2) ok", lambda T: T.add(v3(T), v3(T), alpha=2))
case("x.add_(x2 bigger)", lambda T: T.ones(3).add_(T.ones(2, 3)))
case("x.mul_(broadcast fail)", lambda T: T.ones(3).mul_(T.ones(2)))
case("int x.add_(1.5)", lambda T: i3(T).add_(1.5))
case("int x /= 2", lambda T: i3(T).div_(2))
case("int x.mul_(float tensor)", lambda T: i3(T).mul_(v3(T)))
case("bool x.add_(1)", lambda T: (i3(T) > 0).add_(1))
case("bool - bool", lambda T: (i3(T) > 0) - (i3(T) > 1))
case("-bool", lambda T: -(i3(T) > 0))
case("~float", lambda T: ~v3(T))
case("float & float", lambda T: v3(T) & v3(T))
case("float | 1", lambda T: v3(T) | 1)
case("float << 1", lambda T: v3(T) << 1)
case("bitwise_xor(float, int)", lambda T: T.bitwise_xor(v3(T), i3(T)))
case("bitwise_not(float)", lambda T: T.bitwise_not(v3(T)))
case("int // 0", lambda T: i3(T) // 0)
case("int % 0", lambda T: i3(T) % 0)
case("int.fmod(0)", lambda T: i3(T).fmod(0))
case("int // tensor 0", lambda T: i3(T) // T.zeros(3, dtype=T.int64))
case("int / 0 ok", lambda T: i3(T) / 0)
case("float // 0 ok", lambda T: v3(T) // 0)
case("pow(int, -1)", lambda T: T.pow(i3(T), -1))
case("int ** tensor(-1)", lambda T: i3(T) ** T.tensor([-1, -1, -1]))
case("pow(2, x) ok", lambda T: T.pow(2, v3(T)))
case("pow('a', x)", lambda T: T.pow("a", v3(T)))
case("clamp(x)", lambda T: T.clamp(v3(T)))
case("clamp(x, min='a')", lambda T: T.clamp(v3(T), min="a"))
case("clamp(x, min=tensor(2)) broadcast", lambda T: T.clamp(v3(T), min=T.ones(2)))
case("clamp(x, 2, 1) ok", lambda T: T.clamp(v3(T), 2, 1))
case("clamp(bool, 0, 1)", lambda T: T.clamp(i3(T) > 0, 0, 1))
case("clamp_(x) leaf", lambda T: v3(T, True).clamp_(0, 1))
case("lerp(x, y, 'a')", lambda T: T.lerp(v3(T), v3(T), "a"))
case("lerp(x, int y, 0.5)", lambda T: T.lerp(v3(T), i3(T), 0.5))
case("lerp(int, int, 0.5)", lambda T: T.lerp(i3(T), i3(T), 0.5))
case("where(float cond, x, y)", lambda T: T.where(v3(T), v3(T), v3(T)))
case("where(cond 2, x3, y3)", lambda T: T.where(T.ones(2, dtype=T.bool), v3(T), v3(T)))
case("where(cond, x, 'a')", lambda T: T.where(v3(T) > 1, v3(T), "a"))
case("where(cond, x, 0.0) ok", lambda T: T.where(v3(T) > 1, v3(T), 0.0))
case("where([True], x, y)", lambda T: T.where([True, False, True], v3(T), v3(T)))
case("round(x, decimals='a')", lambda T: T.round(v3(T), decimals="a"))
case("round(x, decimals=1) ok", lambda T: T.round(v3(T) / 3, decimals=1))
case("round(int, decimals=1)", lambda T: T.round(i3(T), decimals=1))
case("isclose(x, y broadcast)", lambda T: T.isclose(v3(T), T.ones(2)))
case("isclose(float, int)", lambda T: T.isclose(v3(T), i3(T)))
case("allclose(x, y broadcast)", lambda T: T.allclose(v3(T), T.ones(2)))
case("equal(x, 'a')", lambda T: T.equal(v3(T), "a"))
case("equal(x, y shapes) ok", lambda T: T.equal(v3(T), T.ones(2)))
case("nan_to_num(x, nan='a')", lambda T: T.nan_to_num(v3(T), nan="a"))
case("logit(int) ok", lambda T: T.logit(i3(T)))
case("erfinv(int) ok", lambda T: T.erfinv(i3(T)))
case("xlogy(x, y broadcast)", lambda T: T.xlogy(v3(T), T.ones(2)))
case("addcmul(x, y, z broadcast)", lambda T: T.addcmul(v3(T), v3(T), T.ones(2)))
case("addcdiv(int, int, int)", lambda T: T.addcdiv(i3(T), i3(T), i3(T)))
case("copysign(x, 'a')", lambda T: T.copysign(v3(T), "a"))
case("float_power(x, 'a')", lambda T: T.float_power(v3(T), "a"))
case("sigmoid(int) ok", lambda T: T.sigmoid(i3(T)))
case("relu(bool)", lambda T: T.relu(i3(T) > 0))
case("sign(bool) ok", lambda T: T.sign(i3(T) > 0))
case("abs(bool)", lambda T: T.abs(i3(T) > 0))
case("neg(bool) (torch.neg)", lambda T: T.neg(i3(T) > 0))
case("frac(int)", lambda T: T.frac(i3(T)))
case("signbit(bool) ok", lambda T: T.signbit(i3(T) > 0))
case("erf(bool) ok", lambda T: T.erf(i3(T) > 0))
case("sqrt(bool) ok", lambda T: T.sqrt(i3(T) > 0))
case("floor(bool)", lambda T: T.floor(i3(T) > 0))
case("ceil(int) ok", lambda T: T.ceil(i3(T)))

# ---------------------------------------------------------------------------------------------------
# reductions
for name in ("sum", "mean", "prod", "amax", "logsumexp", "std", "var", "argmax", "all", "any", "count_nonzero",
             "nansum"):
    case(f"{name}(x, dim=5)", lambda T, n=name: getattr(T, n)(x23(T), dim=5))
    case(f"{name}(x, dim=-3)", lambda T, n=name: getattr(T, n)(x23(T), dim=-3))
    case(f"{name}(x, dim=1.5)", lambda T, n=name: getattr(T, n)(x23(T), dim=1.5))
    case(f"{name}([1., 2.])", lambda T, n=name: getattr(T, n)([1.0, 2.0]))
for name in ("sum", "mean", "amax", "std", "logsumexp", "count_nonzero"):
    case(f"{name}(x, dim=(0, 0))", lambda T, n=name: getattr(T, n)(x23(T), dim=(0, 0)))
    case(f"{name}(x, dim=(0, -2))", lambda T, n=name: getattr(T, n)(x23(T), dim=(0, -2)))
case("sum(x, dim='a')", lambda T: T.sum(x23(T), dim="a"))
case("sum(x, dim=None) ok", lambda T: T.sum(x23(T), dim=None))
case("sum(x, dtype='float')", lambda T: T.sum(x23(T), dtype="float"))
case("sum(0-d, dim=1)", lambda T: T.sum(T.tensor(1.0), dim=1))
case("sum(0-d, dim=0) ok", lambda T: T.sum(T.tensor(1.0), dim=0))
case("sum(0-d, dim=-1) ok", lambda T: T.sum(T.tensor(1.0), dim=-1))
case("mean(int)", lambda T: T.mean(i3(T)))
case("mean(bool)", lambda T: T.mean(i3(T) > 0))
case("mean(int, dtype=float32) ok", lambda T: T.mean(i3(T), dtype=T.float32))
case("std(int)", lambda T: T.std(i3(T)))
case("var(x, correction='a')", lambda T: T.var(x23(T), correction="a"))
case("var(x, unbiased='a')", lambda T: x23(T).var(unbiased="a"))
case("logsumexp(int) ok", lambda T: T.logsumexp(i3(T), 0))
case("max(empty)", lambda T: T.max(T.zeros(0)))
case("min(empty)", lambda T: T.min(T.zeros(0)))
case("argmax(empty)", lambda T: T.argmax(T.zeros(0)))
case("amax(empty)", lambda T: T.amax(T.zeros(0)))
case("max(empty 2x0, dim=1)", lambda T: T.max(T.zeros(2, 0), dim=1))
case("max(empty 2x0, dim=0) ok", lambda T: T.max(T.zeros(2, 0), dim=0)[0])
case("max(x, dim=5)", lambda T: T.max(x23(T), dim=5))
case("max(x, 'a')", lambda T: T.max(x23(T), "a"))
case("max(x, y broadcast)", lambda T: T.max(v3(T), T.ones(2)))
case("min(x, dim=-3)", lambda T: T.min(x23(T), dim=-3))
case("median(x, dim=5)", lambda T: T.median(x23(T), dim=5))
case("median(empty)", lambda T: T.median(T.zeros(0)))
case("mode(x, dim=5)", lambda T: T.mode(x23(T), dim=5))
case("cumsum(x)", lambda T: T.cumsum(x23(T)))
case("cumsum(x, 5)", lambda T: T.cumsum(x23(T), 5))
case("cumsum(x, 'a')", lambda T: T.cumsum(x23(T), "a"))
case("cumprod(x, -3)", lambda T: T.cumprod(x23(T), -3))
case("cummax(x, 5)", lambda T: T.cummax(x23(T), 5))
case("norm(x, dim=5)", lambda T: T.norm(x23(T), dim=5))
case("norm(x, p='foo')", lambda T: T.norm(x23(T), p="foo"))
case("norm(int)", lambda T: T.norm(i3(T)))
case("topk(x, 10)", lambda T: T.topk(v3(T), 10))
case("topk(x, -1)", lambda T: T.topk(v3(T), -1))
case("topk(x, 1, dim=5)", lambda T: T.topk(v3(T), 1, dim=5))
case("topk(x, 'a')", lambda T: T.topk(v3(T), "a"))
case("topk(x, 1.5)", lambda T: T.topk(v3(T), 1.5))
case("topk(x, 0) ok", lambda T: T.topk(v3(T), 0)[0])
case("kthvalue(x, 0)", lambda T: T.kthvalue(v3(T), 0))
case("kthvalue(x, 4)", lambda T: T.kthvalue(v3(T), 4))
case("kthvalue(x, 1, dim=5)", lambda T: T.kthvalue(v3(T), 1, dim=5))
case("sort(x, dim=5)", lambda T: T.sort(x23(T), dim=5))
case("sort(x, dim='a')", lambda T: T.sort(x23(T), dim="a"))
case("argsort(x, dim=-3)", lambda T: T.argsort(x23(T), dim=-3))
case("msort(0-d)", lambda T: T.msort(T.tensor(1.0)))
case("aminmax(empty)", lambda T: T.aminmax(T.zeros(0)))
case("nanmedian(x, dim=5)", lambda T: T.nanmedian(x23(T), dim=5))
case("x.all(dim=3)", lambda T: x23(T).all(dim=3))
case("trace(1-D)", lambda T: T.trace(v3(T)))
case("trace(3-D)", lambda T: T.trace(T.ones(2, 2, 2)))

# ---------------------------------------------------------------------------------------------------
# shapes and views
case("x.view(5)", lambda T: x23(T).view(5))
case("x.view(-1, -1)", lambda T: x23(T).view(-1, -1))
case("x.view('a')", lambda T: x23(T).view("a"))
case("x.view(2, 2.5)", lambda T: x23(T).view(2, 2.5))
case("x.view(None)", lambda T: x23(T).view(None))
case("x.view(-2, 3)", lambda T: x23(T).view(-2, 3))
case("x.view(0, -1)", lambda T: x23(T).view(0, -1))
case("x.t().view(6)", lambda T: x23(T).t().view(6))
case("x.view(3, 2) ok", lambda T: x23(T).view(3, 2))
case("x.reshape(5)", lambda T: x23(T).reshape(5))
case("x.reshape(-1, 0)", lambda T: x23(T).reshape(-1, 0))
case("x.reshape(-1, 4)", lambda T: x23(T).reshape(-1, 4))
case("x.reshape((2, 'a'))", lambda T: x23(T).reshape((2, "a")))
case("x.reshape(2**31, 2**31)", lambda T: x23(T).reshape(2 ** 31, 2 ** 31))
case("empty.reshape(0, -1)", lambda T: T.zeros(0, 3).reshape(0, -1))
case("reshape(x, [6]) ok", lambda T: T.reshape(x23(T), [6]))
case("x.view_as(v3)", lambda T: x23(T).view_as(v3(T)))
case("x.view_as('a')", lambda T: x23(T).view_as("a"))
case("x.reshape_as(v3)", lambda T: x23(T).reshape_as(v3(T)))
case("x.expand(3)", lambda T: x23(T).expand(3))
case("x.expand(2, 4)", lambda T: x23(T).expand(2, 4))
case("x.expand(-2, 3)", lambda T: v3(T).expand(-2, 3))
case("x.expand(2, -1) ok", lambda T: v3(T).expand(2, -1))
case("x.expand(-1, 3) new dim", lambda T: v3(T).expand(-1, 3))
case("x.expand('a')", lambda T: v3(T).expand("a"))
case("x.expand(2**62, 3)", lambda T: v3(T).expand(2 ** 62, 3).shape)
case("x.expand_as(x23)", lambda T: T.ones(4).expand_as(x23(T)))
case("broadcast_to(x, (5,))", lambda T: T.broadcast_to(v3(T), (5,)))
case("broadcast_tensors mismatch", lambda T: T.broadcast_tensors(v3(T), T.ones(2)))
case("broadcast_shapes((2,), (3,))", lambda T: T.broadcast_shapes((2,), (3,)))
case("broadcast_shapes((2,), 'a')", lambda T: T.broadcast_shapes((2,), "a"))
case("broadcast_shapes((-1,), (3,))", lambda T: T.broadcast_shapes((-1,), (3,)))
case("x.permute(0)", lambda T: x23(T).permute(0))
case("x.permute(0, 0)", lambda T: x23(T).permute(0, 0))
case("x.permute(0, 5)", lambda T: x23(T).permute(0, 5))
case("x.permute('a', 0)", lambda T: x23(T).permute("a", 0))
case("x.permute(1, -2) ok", lambda T: x23(T).permute(1, -2))
case("x.transpose(0, 5)", lambda T: x23(T).transpose(0, 5))
case("x.transpose(0)", lambda T: x23(T).transpose(0))
case("x.transpose(0, 1.5)", lambda T: x23(T).transpose(0, 1.5))
case("3-D x.t()", lambda T: T.ones(2, 2, 2).t())
case("x.mT on 1-D", lambda T: v3(T).mT)
case("x.T on 3-D", lambda T: T.ones(2, 2, 2).T)
case("x.squeeze(5)", lambda T: x23(T).squeeze(5))
case("x.squeeze((0, 0))", lambda T: T.ones(1, 3).squeeze((0, 0)))
case("x.unsqueeze(5)", lambda T: x23(T).unsqueeze(5))
case("x.unsqueeze(-4)", lambda T: x23(T).unsqueeze(-4))
case("x.unsqueeze(-3) ok", lambda T: x23(T).unsqueeze(-3))
case("x.unsqueeze('a')", lambda T: x23(T).unsqueeze("a"))
case("x.unsqueeze()", lambda T: x23(T).unsqueeze())
case("x.flatten(1, 0)", lambda T: x23(T).flatten(1, 0))
case("x.flatten(5)", lambda T: x23(T).flatten(5))
case("x.unflatten(1, (2, 2))", lambda T: x23(T).unflatten(1, (2, 2)))
case("x.unflatten(1, (-1, -1))", lambda T: x23(T).unflatten(1, (-1, -1)))
case("x.unflatten(5, (1, 3))", lambda T: x23(T).unflatten(5, (1, 3)))
case("x.repeat(2)", lambda T: x23(T).repeat(2))
case("x.repeat(-1, 1)", lambda T: x23(T).repeat(-1, 1))
case("x.repeat('a')", lambda T: x23(T).repeat("a"))
case("x.repeat(2**40, 2**40)", lambda T: x23(T).repeat(2 ** 40, 2 ** 40))
case("x.tile('a')", lambda T: x23(T).tile("a"))
case("x.tile(-1)", lambda T: x23(T).tile(-1))
case("x.split([1, 1], dim=1)", lambda T: x23(T).split([1, 1], dim=1))
case("x.split(0)", lambda T: x23(T).split(0))
case("x.split(-1)", lambda T: x23(T).split(-1))
case("x.split(1, dim=5)", lambda T: x23(T).split(1, dim=5))
case("x.split('a')", lambda T: x23(T).split("a"))
case("x.chunk(0)", lambda T: x23(T).chunk(0))
case("x.chunk(-1)", lambda T: x23(T).chunk(-1))
case("x.chunk(2, dim=5)", lambda T: x23(T).chunk(2, dim=5))
case("x.tensor_split(0)", lambda T: x23(T).tensor_split(0))
case("x.narrow(0, 5, 1)", lambda T: x23(T).narrow(0, 5, 1))
case("x.narrow(0, 0, -1)", lambda T: x23(T).narrow(0, 0, -1))
case("x.narrow(0, 1, 5)", lambda T: x23(T).narrow(0, 1, 5))
case("x.narrow(5, 0, 1)", lambda T: x23(T).narrow(5, 0, 1))
case("x.narrow(0, -1, 1) ok", lambda T: x23(T).narrow(0, -1, 1))
case("x.narrow(0, -3, 1)", lambda T: x23(T).narrow(0, -3, 1))
case("x.select(0, 5)", lambda T: x23(T).select(0, 5))
case("x.select(0, -3)", lambda T: x23(T).select(0, -3))
case("x.select(5, 0)", lambda T: x23(T).select(5, 0))
case("x.select(0, 'a')", lambda T: x23(T).select(0, "a"))
case("0-d.select(0, 0)", lambda T: T.tensor(1.0).select(0, 0))
case("x.unfold(0, 5, 1)", lambda T: v3(T).unfold(0, 5, 1))
case("x.unfold(0, 1, 0)", lambda T: v3(T).unfold(0, 1, 0))
case("x.unfold(5, 1, 1)", lambda T: v3(T).unfold(5, 1, 1))
case("x.unfold(0, -1, 1)", lambda T: v3(T).unfold(0, -1, 1))
case("x.movedim(0, 5)", lambda T: x23(T).movedim(0, 5))
case("x.movedim((0, 1), (0,))", lambda T: x23(T).movedim((0, 1), (0,)))
case("x.movedim((0, 0), (0, 1))", lambda T: x23(T).movedim((0, 0), (0, 1)))
case("x.roll(1, dims=5)", lambda T: x23(T).roll(1, dims=5))
case("x.roll((1, 1), dims=0)", lambda T: x23(T).roll((1, 1), dims=0))
case("x.roll('a')", lambda T: x23(T).roll("a"))
case("x.roll(1) ok", lambda T: x23(T).roll(1))
case("x.flip(5)", lambda T: x23(T).flip(5))
case("x.flip(0, 0)", lambda T: x23(T).flip(0, 0))
case("x.flip() ", lambda T: x23(T).flip())
case("fliplr(1-D)", lambda T: T.fliplr(v3(T)))
case("x.swapaxes(0, 5)", lambda T: x23(T).swapaxes(0, 5))
case("cat([x, v3])", lambda T: T.cat([x23(T), v3(T)]))
case("cat([x23, ones(2, 2)], 0)", lambda T: T.cat([x23(T), T.ones(2, 2)], 0))
case("cat([])", lambda T: T.cat([]))
case("cat(x)", lambda T: T.cat(x23(T)))
case("cat([x, 1])", lambda T: T.cat([x23(T), 1]))
case("cat([x, [1.]])", lambda T: T.cat([v3(T), [1.0]]))
case("cat([x], dim=5)", lambda T: T.cat([x23(T)], dim=5))
case("cat([x, x], dim='a')", lambda T: T.cat([x23(T), x23(T)], dim="a"))
case("cat([0-d, 0-d])", lambda T: T.cat([T.tensor(1.0), T.tensor(2.0)]))
case("cat([x, empty 1-D]) ok", lambda T: T.cat([x23(T), T.zeros(0)]))
case("cat([x, int x]) ok", lambda T: T.cat([v3(T), i3(T)]))
case("cat(None)", lambda T: T.cat(None))
case("cat((x, x), 1) ok", lambda T: T.cat((x23(T), x23(T)), 1))
case("stack([x, v3])", lambda T: T.stack([x23(T), v3(T)]))
case("stack([])", lambda T: T.stack([]))
case("stack([x], dim=5)", lambda T: T.stack([x23(T)], dim=5))
case("stack([x], dim=-4)", lambda T: T.stack([x23(T)], dim=-4))
case("stack([x], dim=2) ok", lambda T: T.stack([x23(T)], dim=2))
case("stack(x)", lambda T: T.stack(x23(T)))
case("stack([x, 'a'])", lambda T: T.stack([v3(T), "a"]))
case("hstack([x23, v3])", lambda T: T.hstack([x23(T), v3(T)]))
case("vstack([x23, ones(4)])", lambda T: T.vstack([x23(T), T.ones(4)]))
case("dstack([])", lambda T: T.dstack([]))
case("column_stack([v3, ones(2)])", lambda T: T.column_stack([v3(T), T.ones(2)]))
case("meshgrid(x23)", lambda T: T.meshgrid(x23(T), indexing="ij"))
case("meshgrid(v3, indexing='foo')", lambda T: T.meshgrid(v3(T), indexing="foo"))
case("tril(1-D)", lambda T: T.tril(v3(T)))
case("triu(0-d)", lambda T: T.triu(T.tensor(1.0)))
case("tril(x, 'a')", lambda T: T.tril(x23(T), "a"))
case("diag(3-D)", lambda T: T.diag(T.ones(2, 2, 2)))
case("diag(x, 'a')", lambda T: T.diag(v3(T), "a"))
case("diagonal(x, dim1=0, dim2=0)", lambda T: T.diagonal(x23(T), dim1=0, dim2=0))
case("diagonal(x, dim1=5)", lambda T: T.diagonal(x23(T), dim1=5))
case("diag_embed(x, dim1=0, dim2=0)", lambda T: T.diag_embed(v3(T), dim1=0, dim2=0))
case("x.contiguous('a')", lambda T: x23(T).contiguous("a"))
case("atleast_2d('a')", lambda T: T.atleast_2d("a"))
case("unbind(x, 5)", lambda T: T.unbind(x23(T), 5))
case("repeat_interleave(x, -1)", lambda T: T.repeat_interleave(v3(T), -1))
case("repeat_interleave(x, tensor([1, 2]))", lambda T: T.repeat_interleave(v3(T), T.tensor([1, 2])))
case("repeat_interleave(x, tensor([1, -1, 1]))", lambda T: T.repeat_interleave(v3(T), T.tensor([1, -1, 1])))
case("repeat_interleave(x, 2, dim=5)", lambda T: T.repeat_interleave(v3(T), 2, dim=5))
case("x.sum_to_size(4)", lambda T: x23(T).sum_to_size(4))
case("kron(x, 'a')", lambda T: T.kron(v3(T), "a"))
case("tensordot(x, y, dims=5)", lambda T: T.tensordot(x23(T), x23(T), dims=5))
case("tensordot(x, y, dims=([0], [1]))", lambda T: T.tensordot(x23(T), x23(T), dims=([0], [1])))
case("einsum('ij,jk', x, x)", lambda T: T.einsum("ij,jk", x23(T), x23(T)))
case("einsum('ij', v3)", lambda T: T.einsum("ij", v3(T)))
case("einsum('i!', v3)", lambda T: T.einsum("i!", v3(T)))
case("einsum('ij,jk->ik', x23, x32) ok", lambda T: T.einsum("ij,jk->ik", x23(T), x23(T).t()))
case("x.as_strided((2, 2), (1, 1)) ok", lambda T: x23(T).as_strided((2, 2), (1, 1)))

# ---------------------------------------------------------------------------------------------------
# matmul and friends
case("matmul(2x3, 4x5)", lambda T: T.matmul(x23(T), T.ones(4, 5)))
case("matmul(0-d, x)", lambda T: T.matmul(T.tensor(1.0), v3(T)))
case("matmul(x, 0-d)", lambda T: T.matmul(v3(T), T.tensor(1.0)))
case("matmul(v3, ones(2))", lambda T: T.matmul(v3(T), T.ones(2)))
case("matmul(float, int)", lambda T: T.matmul(x23(T), T.ones(3, 2, dtype=T.int64)))
case("matmul(float32, float64)", lambda T: T.matmul(x23(T), T.ones(3, 2, dtype=T.float64)))
case("matmul(x, [1, 2, 3])", lambda T: T.matmul(x23(T), [1.0, 2.0, 3.0]))
case("matmul batch broadcast fail", lambda T: T.matmul(T.ones(2, 2, 3), T.ones(3, 3, 2)))
case("matmul(bool, bool)", lambda T: T.matmul(T.ones(2, 2, dtype=T.bool), T.ones(2, 2, dtype=T.bool)))
case("matmul(int, int) ok", lambda T: T.matmul(T.ones(2, 2, dtype=T.int64), T.ones(2, 2, dtype=T.int64)))
case("x @ y mismatch", lambda T: x23(T) @ x23(T))
case("mm(1-D, 2-D)", lambda T: T.mm(v3(T), x23(T)))
case("mm(x23, x23)", lambda T: T.mm(x23(T), x23(T)))
case("mm(3-D, 2-D)", lambda T: T.mm(T.ones(2, 2, 3), T.ones(3, 2)))
case("bmm(2-D, 2-D)", lambda T: T.bmm(x23(T), x23(T).t()))
case("bmm batch mismatch", lambda T: T.bmm(T.ones(2, 2, 3), T.ones(3, 3, 2)))
case("bmm inner mismatch", lambda T: T.bmm(T.ones(2, 2, 3), T.ones(2, 4, 2)))
case("dot(v3, ones(2))", lambda T: T.dot(v3(T), T.ones(2)))
case("dot(2-D, 2-D)", lambda T: T.dot(x23(T), x23(T)))
case("dot(float, int)", lambda T: T.dot(v3(T), i3(T)))
case("vdot(v3, ones(2))", lambda T: T.vdot(v3(T), T.ones(2)))
case("mv(x23, ones(2))", lambda T: T.mv(x23(T), T.ones(2)))
case("mv(1-D, 1-D)", lambda T: T.mv(v3(T), v3(T)))
case("outer(2-D, 1-D)", lambda T: T.outer(x23(T), v3(T)))
case("inner(x23, ones(2))", lambda T: T.inner(x23(T), T.ones(2)))
case("addmm(bias mismatch)", lambda T: T.addmm(T.ones(5), x23(T), x23(T).t()))
case("addmm(x, y mismatch)", lambda T: T.addmm(T.ones(2), x23(T), x23(T)))
case("baddbmm mismatch", lambda T: T.baddbmm(T.ones(2, 2, 2), T.ones(2, 2, 3), T.ones(2, 2, 2)))
case("addmv mismatch", lambda T: T.addmv(T.ones(2), x23(T), T.ones(2)))

# ---------------------------------------------------------------------------------------------------
# indexing
case("x[5]", lambda T: x23(T)[5])
case("x[-3]", lambda T: x23(T)[-3])
case("x[0, 5]", lambda T: x23(T)[0, 5])
case("x[1.5]", lambda T: x23(T)[1.5])
case("x['a']", lambda T: x23(T)["a"])
case("x[None, 'a']", lambda T: x23(T)[None, "a"])
case("x[..., ...]", lambda T: x23(T)[..., ...])
case("x[..., 0, ...]", lambda T: x23(T)[..., 0, ...])
case("x[..., None, ...]", lambda T: x23(T)[..., None, ...])
case("x[0, 0, 0]", lambda T: x23(T)[0, 0, 0])
case("x[0, ..., 0, 0]", lambda T: x23(T)[0, ..., 0, 0])
case("x[None, ..., None] ok", lambda T: x23(T)[None, ..., None])
case("x[..., 1] ok", lambda T: x23(T)[..., 1])
case("x[()] ok", lambda T: x23(T)[()])
case("x[[0, 5]]", lambda T: x23(T)[[0, 5]])
case("x[[0, -3]]", lambda T: x23(T)[[0, -3]])
case("x[[0, 1.5]]", lambda T: x23(T)[[0, 1.5]])
case("x[[0, 'a']]", lambda T: x23(T)[[0, "a"]])
case("x[tensor([5])]", lambda T: x23(T)[T.tensor([5])])
case("x[tensor([1.5])]", lambda T: x23(T)[T.tensor([1.5])])
case("x[tensor(1.)]", lambda T: x23(T)[T.tensor(1.0)])
case("x[tensor([0, 1]), tensor([0, 1, 2])]", lambda T: x23(T)[T.tensor([0, 1]), T.tensor([0, 1, 2])])
case("x[mask 3x3]", lambda T: x23(T)[T.ones(3, 3, dtype=T.bool)])
case("x[mask (3,)]", lambda T: x23(T)[T.ones(3, dtype=T.bool)])
case("x[[True, False, True]]", lambda T: x23(T)[[True, False, True]])
case("x[:, [True, False]]", lambda T: x23(T)[:, [True, False]])
case("x[mask 2x3] ok", lambda T: x23(T)[x23(T) > 2])
case("x[::0]", lambda T: x23(T)[::0])
case("x[::-1]", lambda T: x23(T)[::-1])
case("x[::2] ok", lambda T: x23(T)[::2])
case("x[0:'a']", lambda T: x23(T)[0:"a"])
case("x[1.5:]", lambda T: x23(T)[1.5:])
case("x[tensor(1):] ok", lambda T: x23(T)[T.tensor(1):])
case("x[10:20] ok", lambda T: x23(T)[10:20])
case("0-d[0]", lambda T: T.tensor(1.0)[0])
case("x[{0}]", lambda T: x23(T)[{0}])
case("x[None, None, None, 0, 0] ok", lambda T: x23(T)[None, None, None, 0, 0])
case("x[5] = 1", lambda T: x23(T).__setitem__(5, 1.0))
case("x[0] = 'a'", lambda T: x23(T).__setitem__(0, "a"))
case("x[0] = ones(5)", lambda T: x23(T).__setitem__(0, T.ones(5)))
case("x[0] = None", lambda T: x23(T).__setitem__(0, None))
case("x[mask] = ones(7)", lambda T: x23(T).__setitem__(x23(T) > 2, T.ones(7)))
case("x[..., ...] = 1", lambda T: x23(T).__setitem__((Ellipsis, Ellipsis), 1.0))
case("x[0] = 1 (leaf requiring grad)", lambda T: T.ones(2, 3, requires_grad=True).__setitem__(0, 1.0))
case("x[0] = 1 (grad mode off) ok", lambda T: _no_grad_set(T))
case("x[0] = [1, 2, 3] ok", lambda T: _set_and_get(x23(T), 0, [1.0, 2.0, 3.0]))
case("index_select(x, 0, tensor([5]))", lambda T: T.index_select(x23(T), 0, T.tensor([5])))
case("index_select(x, 0, tensor([-1]))", lambda T: T.index_select(x23(T), 0, T.tensor([-1])))
case("index_select(x, 0, float index)", lambda T: T.index_select(x23(T), 0, T.tensor([0.0])))
case("index_select(x, 0, 2-D index)", lambda T: T.index_select(x23(T), 0, T.tensor([[0]])))
case("index_select(x, 5, index)", lambda T: T.index_select(x23(T), 5, T.tensor([0])))
case("index_select(x, 0, [0])", lambda T: T.index_select(x23(T), 0, [0]))
case("index_select(x, 0, int32 index) ok", lambda T: T.index_select(x23(T), 0, T.tensor([1], dtype=T.int32)))
case("gather(x, 1, tensor([[5]]))", lambda T: T.gather(x23(T), 1, T.tensor([[5]])))
case("gather(x, 1, tensor([[-1]]))", lambda T: T.gather(x23(T), 1, T.tensor([[-1]])))
case("gather(x, 1, 1-D index)", lambda T: T.gather(x23(T), 1, T.tensor([0])))
case("gather(x, 1, float index)", lambda T: T.gather(x23(T), 1, T.tensor([[0.0]])))
case("gather(x, 1, int32 index)", lambda T: T.gather(x23(T), 1, T.tensor([[0]], dtype=T.int32)))
case("gather(x, 5, index)", lambda T: T.gather(x23(T), 5, T.tensor([[0]])))
case("gather(x, 0, index too big)", lambda T: T.gather(x23(T), 0, T.zeros(3, 3, dtype=T.int64)))
case("gather(x, 1, index [[0, 1]]) ok", lambda T: T.gather(x23(T), 1, T.tensor([[0, 1]])))
case("scatter(x, 1, tensor([[5]]), 1.)", lambda T: T.scatter(x23(T), 1, T.tensor([[5]]), 1.0))
case("scatter(x, 1, tensor([[-1]]), 1.)", lambda T: T.scatter(x23(T), 1, T.tensor([[-1]]), 1.0))
case("scatter(x, 1, float index, 1.)", lambda T: T.scatter(x23(T), 1, T.tensor([[0.0]]), 1.0))
case("scatter(x, 1, idx, src smaller)", lambda T: T.scatter(x23(T), 1, T.tensor([[0, 1]]), T.ones(1, 1)))
case("scatter(x, 1, idx, src int)", lambda T: T.scatter(x23(T), 1, T.tensor([[0]]), T.ones(1, 1, dtype=T.int64)))
case("scatter(x, 1, idx, 1., reduce='foo')", lambda T: T.scatter(x23(T), 1, T.tensor([[0]]), 1.0, reduce="foo"))
case("scatter(x, 5, idx, 1.)", lambda T: T.scatter(x23(T), 5, T.tensor([[0]]), 1.0))
case("scatter(x, 1, idx, 1.) ok", lambda T: T.scatter(x23(T), 1, T.tensor([[2]]), 1.0))
case("scatter_add(x, 1, tensor([[-1]]), src)", lambda T: T.scatter_add(x23(T), 1, T.tensor([[-1]]), T.ones(1, 1)))
case("scatter_add(x, 1, tensor([[5]]), src)", lambda T: T.scatter_add(x23(T), 1, T.tensor([[5]]), T.ones(1, 1)))
case("scatter_add(x, 0, tensor([[2]]), src)", lambda T: T.scatter_add(x23(T), 0, T.tensor([[2]]), T.ones(1, 1)))
case("scatter_add(x, 1, float index, src)", lambda T: T.scatter_add(x23(T), 1, T.tensor([[0.0]]), T.ones(1, 1)))
case("scatter_add(x, 1, idx, src too small)", lambda T: T.scatter_add(x23(T), 1, T.tensor([[0, 1]]), T.ones(1, 1)))
case("scatter_add(x, 1, idx, src float64)",
     lambda T: T.scatter_add(x23(T), 1, T.tensor([[0]]), T.ones(1, 1, dtype=T.float64)))
case("scatter_add(x, 1, idx, 1.0)", lambda T: T.scatter_add(x23(T), 1, T.tensor([[0]]), 1.0))
case("scatter_add(x, 1, idx, src) ok", lambda T: T.scatter_add(x23(T), 1, T.tensor([[0, 0]]), T.ones(1, 2)))
case("x.scatter_add_(1, tensor([[-1]]), src)", lambda T: x23(T).scatter_add_(1, T.tensor([[-1]]), T.ones(1, 1)))
case("x.scatter_(1, tensor([[3]]), 1.)", lambda T: x23(T).scatter_(1, T.tensor([[3]]), 1.0))
case("scatter_reduce(x, 1, idx -1, src, 'sum')",
     lambda T: T.scatter_reduce(x23(T), 1, T.tensor([[-1]]), T.ones(1, 1), "sum"))
case("scatter_reduce(x, 1, idx, src, 'foo')",
     lambda T: T.scatter_reduce(x23(T), 1, T.tensor([[0]]), T.ones(1, 1), "foo"))
case("index_add(x, 0, tensor([5]), src)", lambda T: T.index_add(x23(T), 0, T.tensor([5]), T.ones(1, 3)))
case("index_add(x, 0, tensor([-1]), src)", lambda T: T.index_add(x23(T), 0, T.tensor([-1]), T.ones(1, 3)))
case("index_add(x, 0, idx, src wrong shape)", lambda T: T.index_add(x23(T), 0, T.tensor([0]), T.ones(1, 2)))
case("index_add(x, 0, float idx, src)", lambda T: T.index_add(x23(T), 0, T.tensor([0.0]), T.ones(1, 3)))
case("index_copy(x, 0, tensor([5]), src)", lambda T: T.index_copy(x23(T), 0, T.tensor([5]), T.ones(1, 3)))
case("index_copy(x, 0, idx, src wrong shape)", lambda T: T.index_copy(x23(T), 0, T.tensor([0]), T.ones(2, 3)))
case("index_fill(x, 0, tensor([5]), 1.)", lambda T: T.index_fill(x23(T), 0, T.tensor([5]), 1.0))
case("index_fill(x, 0, tensor([-3]), 1.)", lambda T: T.index_fill(x23(T), 0, T.tensor([-3]), 1.0))
case("index_fill(x, 0, float idx, 1.)", lambda T: T.index_fill(x23(T), 0, T.tensor([0.0]), 1.0))
case("index_put(x, (tensor([5]),), v)", lambda T: T.index_put(x23(T), (T.tensor([5]),), T.tensor(1.0)))
case("index_put(x, (float idx,), v)", lambda T: T.index_put(x23(T), (T.tensor([0.0]),), T.tensor(1.0)))
case("index_put(x, idx, values wrong shape)", lambda T: T.index_put(x23(T), (T.tensor([0]),), T.ones(5)))
case("masked_fill(x, float mask, 1.)", lambda T: T.masked_fill(x23(T), x23(T), 1.0))
case("masked_fill(x, mask (2,), 1.)", lambda T: T.masked_fill(x23(T), T.ones(2, dtype=T.bool), 1.0))
case("masked_fill(x, mask, tensor 1-D)", lambda T: T.masked_fill(x23(T), x23(T) > 2, T.ones(2)))
case("masked_fill(x, mask, 'a')", lambda T: T.masked_fill(x23(T), x23(T) > 2, "a"))
case("masked_fill(x, int mask, 1.)", lambda T: T.masked_fill(x23(T), T.ones(2, 3, dtype=T.int64), 1.0))
case("masked_fill(x, uint8 mask, 1.)", lambda T: T.masked_fill(x23(T), T.ones(2, 3, dtype=T.uint8), 1.0))
case("masked_fill(int x, mask, 1.5) ok", lambda T: T.masked_fill(i3(T), i3(T) > 0, 1.5))
case("x.masked_fill_(mask 3x3, 1.)", lambda T: x23(T).masked_fill_(T.ones(3, 3, dtype=T.bool), 1.0))
case("masked_select(x, mask (2,))", lambda T: T.masked_select(x23(T), T.ones(2, dtype=T.bool)))
case("masked_select(x, float mask)", lambda T: T.masked_select(x23(T), x23(T)))
case("masked_scatter(x, mask, src too small)", lambda T: T.masked_scatter(x23(T), x23(T) >= 0, T.ones(2)))
case("take(x, tensor([6]))", lambda T: T.take(x23(T), T.tensor([6])))
case("take(x, tensor([-7]))", lambda T: T.take(x23(T), T.tensor([-7])))
case("take(x, tensor([-6])) ok", lambda T: T.take(x23(T), T.tensor([-6])))
case("take(x, float index)", lambda T: T.take(x23(T), T.tensor([0.0])))
case("take(x, [0])", lambda T: T.take(x23(T), [0]))
case("take_along_dim(x, idx 5, 1)", lambda T: T.take_along_dim(x23(T), T.tensor([[5]]), 1))
case("put(x, tensor([6]), src)", lambda T: T.put(x23(T), T.tensor([6]), T.ones(1)))
case("put(x, idx, src size mismatch)", lambda T: T.put(x23(T), T.tensor([0, 1]), T.ones(3)))
case("x.put_(tensor([-7]), src)", lambda T: x23(T).put_(T.tensor([-7]), T.ones(1)))
case("embedding(tensor([10]), w)", lambda T: F(T).embedding(T.tensor([10]), T.ones(10, 3)))
case("embedding(tensor([-1]), w)", lambda T: F(T).embedding(T.tensor([-1]), T.ones(10, 3)))
case("embedding(float idx, w)", lambda T: F(T).embedding(T.tensor([1.0]), T.ones(10, 3)))
case("embedding(idx, 1-D w)", lambda T: F(T).embedding(T.tensor([1]), T.ones(10)))
case("embedding([1], w)", lambda T: F(T).embedding([1], T.ones(10, 3)))
case("embedding(idx, w, padding_idx=20)", lambda T: F(T).embedding(T.tensor([1]), T.ones(10, 3), padding_idx=20))
case("torch.embedding(w, idx 10)", lambda T: T.embedding(T.ones(10, 3), T.tensor([10])))
case("nonzero(0-d) ok", lambda T: T.nonzero(T.tensor(1.0)))
case("nonzero(x, as_tuple='a') ok", lambda T: T.nonzero(x23(T), as_tuple=True))

# ---------------------------------------------------------------------------------------------------
# nn.functional
for name in ("relu", "gelu", "silu", "elu", "leaky_relu", "softplus", "tanh", "sigmoid", "hardtanh", "relu6",
             "mish", "logsigmoid", "softsign", "selu", "hardswish"):
    case(f"F.{name}([1, 2])", lambda T, n=name: getattr(F(T), n)([1, 2]))
    case(f"F.{name}(None)", lambda T, n=name: getattr(F(T), n)(None))
    case(f"F.{name}('a')", lambda T, n=name: getattr(F(T), n)("a"))
for name in ("softmax", "log_softmax", "softmin"):
    case(f"F.{name}(x, dim=5)", lambda T, n=name: getattr(F(T), n)(x23(T), dim=5))
    case(f"F.{name}(x, dim=-3)", lambda T, n=name: getattr(F(T), n)(x23(T), dim=-3))
    case(f"F.{name}([1.], 0)", lambda T, n=name: getattr(F(T), n)([1.0], 0))
    case(f"F.{name}(int x, 0)", lambda T, n=name: getattr(F(T), n)(i3(T), 0))
    case(f"F.{name}(x, dim='a')", lambda T, n=name: getattr(F(T), n)(x23(T), dim="a"))
    case(f"F.{name}(x, 0, dtype='float')", lambda T, n=name: getattr(F(T), n)(x23(T), 0, dtype="float"))
case("softmax(x, 5)", lambda T: T.softmax(x23(T), 5))
case("F.gelu(x, approximate='foo')", lambda T: F(T).gelu(x23(T), approximate="foo"))
case("F.gelu(int)", lambda T: F(T).gelu(i3(T)))
case("F.silu(int)", lambda T: F(T).silu(i3(T)))
case("F.elu(int)", lambda T: F(T).elu(i3(T)))
case("F.relu(bool)", lambda T: F(T).relu(i3(T) > 0))
case("F.hardtanh(x, 2, 1)", lambda T: F(T).hardtanh(x23(T), 2.0, 1.0))
case("F.leaky_relu(x, 'a')", lambda T: F(T).leaky_relu(x23(T), "a"))
case("F.threshold(x, 'a', 0)", lambda T: F(T).threshold(x23(T), "a", 0.0))
case("F.glu(v3)", lambda T: F(T).glu(v3(T)))
case("F.glu(x, dim=5)", lambda T: F(T).glu(x23(T), dim=5))
case("F.glu(0-d)", lambda T: F(T).glu(T.tensor(1.0)))
case("F.prelu(x, w wrong)", lambda T: F(T).prelu(x23(T), T.ones(2)))
case("F.relu(x, inplace=True) leaf", lambda T: F(T).relu(x23(T, rg=True), inplace=True))
case("F.relu_(leaf)", lambda T: F(T).relu_(x23(T, rg=True)))
case("F.silu(x, inplace=True) leaf", lambda T: F(T).silu(x23(T, rg=True), inplace=True))
case("F.linear(x23, ones(4, 5))", lambda T: F(T).linear(x23(T), T.ones(4, 5)))
case("F.linear(x23, w, bias wrong)", lambda T: F(T).linear(x23(T), T.ones(4, 3), T.ones(5)))
case("F.linear([1.], w)", lambda T: F(T).linear([1.0, 2.0, 3.0], T.ones(4, 3)))
case("F.linear(x, [[1.]])", lambda T: F(T).linear(x23(T), [[1.0, 2.0, 3.0]]))
case("F.linear(x, w, 'a')", lambda T: F(T).linear(x23(T), T.ones(4, 3), "a"))
case("F.linear(x, 3-D w)", lambda T: F(T).linear(x23(T), T.ones(4, 3, 1)))
case("F.linear(x, int w)", lambda T: F(T).linear(x23(T), T.ones(4, 3, dtype=T.int64)))
case("F.linear(x, w float64)", lambda T: F(T).linear(x23(T), T.ones(4, 3, dtype=T.float64)))
case("F.linear(0-d, w)", lambda T: F(T).linear(T.tensor(1.0), T.ones(4, 3)))
case("F.linear(x, 1-D w) ok", lambda T: F(T).linear(x23(T), v3(T)))
case("F.bilinear mismatch", lambda T: F(T).bilinear(x23(T), x23(T), T.ones(4, 2, 3)))
case("F.conv2d(2-D input)", lambda T: F(T).conv2d(T.ones(5, 5), T.ones(1, 1, 3, 3)))
case("F.conv2d(5-D input)", lambda T: F(T).conv2d(T.ones(1, 1, 1, 5, 5), T.ones(1, 1, 3, 3)))
case("F.conv2d channel mismatch", lambda T: F(T).conv2d(img(T), T.ones(4, 2, 3, 3)))
case("F.conv2d(x, 3-D w)", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3)))
case("F.conv2d kernel too big", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 7, 7)))
case("F.conv2d stride=0", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), stride=0))
case("F.conv2d stride=-1", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), stride=-1))
case("F.conv2d padding=-1", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), padding=-1))
case("F.conv2d dilation=0", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), dilation=0))
case("F.conv2d groups=2 (3 channels)", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), groups=2))
case("F.conv2d groups=0", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), groups=0))
case("F.conv2d padding='foo'", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), padding="foo"))
case("F.conv2d padding='same', stride=2", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), padding="same",
                                                                  stride=2))
case("F.conv2d bias wrong", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), T.ones(3)))
case("F.conv2d stride=(1,)", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3), stride=(1, 1, 1)))
case("F.conv2d int input", lambda T: F(T).conv2d(img(T).long(), T.ones(4, 3, 3, 3, dtype=T.int64)))
case("F.conv2d dtype mismatch", lambda T: F(T).conv2d(img(T), T.ones(4, 3, 3, 3, dtype=T.float64)))
case("F.conv2d([..], w)", lambda T: F(T).conv2d([[1.0]], T.ones(4, 3, 3, 3)))
case("F.conv2d unbatched ok", lambda T: F(T).conv2d(T.ones(3, 5, 5), T.ones(4, 3, 3, 3)))
case("F.conv1d(4-D input)", lambda T: F(T).conv1d(img(T), T.ones(4, 3, 3)))
case("F.conv1d kernel too big", lambda T: F(T).conv1d(T.ones(1, 3, 2), T.ones(4, 3, 3)))
case("F.conv3d(4-D w)", lambda T: F(T).conv3d(T.ones(1, 1, 3, 3, 3), T.ones(1, 1, 3, 3)))
case("F.conv_transpose2d channel mismatch", lambda T: F(T).conv_transpose2d(img(T), T.ones(4, 2, 3, 3)))
case("F.conv_transpose2d output_padding too big",
     lambda T: F(T).conv_transpose2d(img(T), T.ones(3, 2, 3, 3), stride=2, output_padding=2))
case("F.max_pool2d kernel too big", lambda T: F(T).max_pool2d(img(T), 7))
case("F.max_pool2d kernel 0", lambda T: F(T).max_pool2d(img(T), 0))
case("F.max_pool2d padding too big", lambda T: F(T).max_pool2d(img(T), 2, padding=2))
case("F.max_pool2d stride 0", lambda T: F(T).max_pool2d(img(T), 2, stride=0))
case("F.max_pool2d(2-D)", lambda T: F(T).max_pool2d(T.ones(5, 5), 2))
case("F.max_pool2d dilation 0", lambda T: F(T).max_pool2d(img(T), 2, dilation=0))
case("F.max_pool2d(int) ok", lambda T: F(T).max_pool2d(img(T).long(), 2))
case("F.max_pool1d kernel too big", lambda T: F(T).max_pool1d(T.ones(1, 2, 3), 5))
case("F.avg_pool2d kernel too big", lambda T: F(T).avg_pool2d(img(T), 7))
case("F.avg_pool2d padding too big", lambda T: F(T).avg_pool2d(img(T), 2, padding=2))
case("F.avg_pool2d(int)", lambda T: F(T).avg_pool2d(img(T).long(), 2))
case("F.avg_pool1d(4-D)", lambda T: F(T).avg_pool1d(img(T), 2))
case("F.adaptive_avg_pool2d(x, -1)", lambda T: F(T).adaptive_avg_pool2d(img(T), -1))
case("F.adaptive_avg_pool2d(x, (1, 2, 3))", lambda T: F(T).adaptive_avg_pool2d(img(T), (1, 2, 3)))
case("F.adaptive_max_pool2d(2-D)", lambda T: F(T).adaptive_max_pool2d(T.ones(5, 5), 2))
case("F.lp_pool2d kernel too big", lambda T: F(T).lp_pool2d(img(T), 2, 7))
case("F.cross_entropy target out of range", lambda T: F(T).cross_entropy(x23(T), T.tensor([0, 5])))
case("F.cross_entropy target -1", lambda T: F(T).cross_entropy(x23(T), T.tensor([0, -1])))
case("F.cross_entropy target -100 ok", lambda T: F(T).cross_entropy(x23(T), T.tensor([0, -100])))
case("F.cross_entropy target batch mismatch", lambda T: F(T).cross_entropy(x23(T), T.tensor([0, 1, 2])))
case("F.cross_entropy float target wrong shape", lambda T: F(T).cross_entropy(x23(T), T.ones(2, 2)))
case("F.cross_entropy int32 target", lambda T: F(T).cross_entropy(x23(T), T.tensor([0, 1], dtype=T.int32)))
case("F.cross_entropy bool target", lambda T: F(T).cross_entropy(x23(T), T.tensor([True, False])))
case("F.cross_entropy int input", lambda T: F(T).cross_entropy(x23(T).long(), T.tensor([0, 1])))
case("F.cross_entropy 2-D target for 2-D input", lambda T: F(T).cross_entropy(x23(T), T.tensor([[0], [1]])))
case("F.cross_entropy reduction='foo'", lambda T: F(T).cross_entropy(x23(T), T.tensor([0, 1]), reduction="foo"))
case("F.cross_entropy label_smoothing=2", lambda T: F(T).cross_entropy(x23(T), T.tensor([0, 1]),
                                                                        label_smoothing=2.0))
case("F.cross_entropy weight wrong size", lambda T: F(T).cross_entropy(x23(T), T.tensor([0, 1]),
                                                                        weight=T.ones(2)))
case("F.cross_entropy([..], target)", lambda T: F(T).cross_entropy([[1.0, 2.0]], T.tensor([0])))
case("F.cross_entropy(x, [0, 1])", lambda T: F(T).cross_entropy(x23(T), [0, 1]))
case("F.cross_entropy(0-d, target)", lambda T: F(T).cross_entropy(T.tensor(1.0), T.tensor(0)))
case("F.cross_entropy 1-D unbatched ok", lambda T: F(T).cross_entropy(v3(T), T.tensor(1)))
case("F.nll_loss target out of range", lambda T: F(T).nll_loss(x23(T), T.tensor([0, 3])))
case("F.nll_loss float target", lambda T: F(T).nll_loss(x23(T), T.tensor([0.0, 1.0])))
case("F.nll_loss 3-D input bad target", lambda T: F(T).nll_loss(T.ones(2, 3, 4), T.zeros(2, 5, dtype=T.int64)))
case("F.nll_loss ignore_index ok", lambda T: F(T).nll_loss(x23(T), T.tensor([0, 7]), ignore_index=7))
case("F.mse_loss broadcast fail", lambda T: F(T).mse_loss(x23(T), T.ones(2)))
case("F.mse_loss reduction='foo'", lambda T: F(T).mse_loss(x23(T), x23(T), reduction="foo"))
case("F.mse_loss int", lambda T: F(T).mse_loss(i3(T), i3(T)))
case("F.mse_loss(x, [..])", lambda T: F(T).mse_loss(v3(T), [1.0, 2.0, 3.0]))
case("F.l1_loss broadcast fail", lambda T: F(T).l1_loss(x23(T), T.ones(2)))
case("F.smooth_l1_loss beta=-1", lambda T: F(T).smooth_l1_loss(v3(T), v3(T), beta=-1.0))
case("F.huber_loss delta=0", lambda T: F(T).huber_loss(v3(T), v3(T), delta=0.0))
case("F.binary_cross_entropy input > 1", lambda T: F(T).binary_cross_entropy(T.tensor([1.5]), T.tensor([1.0])))
case("F.binary_cross_entropy input < 0", lambda T: F(T).binary_cross_entropy(T.tensor([-0.5]), T.tensor([1.0])))
case("F.binary_cross_entropy target shape", lambda T: F(T).binary_cross_entropy(T.tensor([0.5]),
                                                                                 T.tensor([1.0, 0.0])))
case("F.binary_cross_entropy int target", lambda T: F(T).binary_cross_entropy(T.tensor([0.5]), T.tensor([1])))
case("F.binary_cross_entropy target 2 ok", lambda T: F(T).binary_cross_entropy(T.tensor([0.5]), T.tensor([2.0])))
case("F.bce_with_logits target shape", lambda T: F(T).binary_cross_entropy_with_logits(v3(T), T.ones(2)))
case("F.bce_with_logits pos_weight broadcast",
     lambda T: F(T).binary_cross_entropy_with_logits(v3(T), v3(T), pos_weight=T.ones(2)))
case("F.kl_div broadcast fail", lambda T: F(T).kl_div(x23(T), T.ones(2), reduction="batchmean"))
case("F.kl_div reduction='foo'", lambda T: F(T).kl_div(x23(T), x23(T), reduction="foo"))
case("F.cosine_similarity mismatch", lambda T: F(T).cosine_similarity(x23(T), T.ones(2, 2)))
case("F.cosine_similarity dim=5", lambda T: F(T).cosine_similarity(x23(T), x23(T), dim=5))
case("F.pairwise_distance mismatch", lambda T: F(T).pairwise_distance(x23(T), T.ones(2, 2)))
case("F.normalize dim=5", lambda T: F(T).normalize(x23(T), dim=5))
case("F.normalize([1.])", lambda T: F(T).normalize([1.0, 2.0]))
case("F.margin_ranking_loss mismatch", lambda T: F(T).margin_ranking_loss(v3(T), T.ones(2), v3(T)))
case("F.dropout p=1.5", lambda T: F(T).dropout(v3(T), 1.5))
case("F.dropout p=-0.1", lambda T: F(T).dropout(v3(T), -0.1))
case("F.dropout p='a'", lambda T: F(T).dropout(v3(T), "a"))
case("F.dropout(int)", lambda T: F(T).dropout(i3(T), 0.5))
case("F.dropout([1.])", lambda T: F(T).dropout([1.0], 0.5))
case("F.dropout p=0 ok", lambda T: F(T).dropout(v3(T), 0.0))
case("F.dropout2d p=2", lambda T: F(T).dropout2d(img(T), 2.0))
case("F.alpha_dropout p=2", lambda T: F(T).alpha_dropout(v3(T), 2.0, True))
case("F.one_hot negative", lambda T: F(T).one_hot(T.tensor([-1, 0])))
case("F.one_hot too small", lambda T: F(T).one_hot(T.tensor([0, 3]), 2))
case("F.one_hot float", lambda T: F(T).one_hot(T.tensor([0.0, 1.0])))
case("F.one_hot int32", lambda T: F(T).one_hot(T.tensor([0, 1], dtype=T.int32)))
case("F.one_hot num_classes=-2", lambda T: F(T).one_hot(T.tensor([0, 1]), -2))
case("F.one_hot([0, 1])", lambda T: F(T).one_hot([0, 1]))
case("F.one_hot empty ok", lambda T: F(T).one_hot(T.zeros(0, dtype=T.int64), 3))
case("F.one_hot empty, no num_classes", lambda T: F(T).one_hot(T.zeros(0, dtype=T.int64)))
case("F.pad odd length", lambda T: F(T).pad(x23(T), (1,)))
case("F.pad too long", lambda T: F(T).pad(x23(T), (1, 1, 1, 1, 1, 1)))
case("F.pad mode='foo'", lambda T: F(T).pad(x23(T), (1, 1), mode="foo"))
case("F.pad reflect too big", lambda T: F(T).pad(T.ones(1, 1, 3), (3, 3), mode="reflect"))
case("F.pad reflect 1-D", lambda T: F(T).pad(v3(T), (1, 1), mode="reflect"))
case("F.pad negative too big", lambda T: F(T).pad(x23(T), (-2, -2)))
case("F.pad 'a'", lambda T: F(T).pad(x23(T), "a"))
case("F.pad value='a'", lambda T: F(T).pad(x23(T), (1, 1), value="a"))
case("F.pad negative ok", lambda T: F(T).pad(x23(T), (-1, 0)))
case("F.interpolate no size", lambda T: F(T).interpolate(img(T)))
case("F.interpolate size and scale", lambda T: F(T).interpolate(img(T), size=3, scale_factor=2.0))
case("F.interpolate mode='foo'", lambda T: F(T).interpolate(img(T), size=3, mode="foo"))
case("F.interpolate bilinear on 3-D", lambda T: F(T).interpolate(T.ones(1, 2, 3), size=4, mode="bilinear"))
case("F.interpolate size wrong length", lambda T: F(T).interpolate(img(T), size=(2, 2, 2)))
case("F.interpolate size 0", lambda T: F(T).interpolate(img(T), size=0))
case("F.interpolate scale -1", lambda T: F(T).interpolate(img(T), scale_factor=-1.0))
case("F.interpolate align_corners with nearest",
     lambda T: F(T).interpolate(img(T), size=3, mode="nearest", align_corners=True))
case("F.layer_norm shape mismatch", lambda T: F(T).layer_norm(x23(T), (2,)))
case("F.layer_norm weight wrong", lambda T: F(T).layer_norm(x23(T), (3,), weight=T.ones(2)))
case("F.layer_norm shape too long", lambda T: F(T).layer_norm(x23(T), (1, 2, 3)))
case("F.layer_norm int", lambda T: F(T).layer_norm(x23(T).long(), (3,)))
case("F.batch_norm running stats mismatch", lambda T: F(T).batch_norm(x23(T), T.zeros(2), T.ones(2)))
case("F.batch_norm weight mismatch",
     lambda T: F(T).batch_norm(x23(T), T.zeros(3), T.ones(3), weight=T.ones(2)))
case("F.batch_norm one value per channel", lambda T: F(T).batch_norm(T.ones(1, 3), None, None, training=True))
case("F.batch_norm 1-D input", lambda T: F(T).batch_norm(v3(T), T.zeros(3), T.ones(3)))
case("F.group_norm groups don't divide", lambda T: F(T).group_norm(T.ones(2, 3, 4), 2))
case("F.group_norm groups 0", lambda T: F(T).group_norm(T.ones(2, 3, 4), 0))
case("F.instance_norm running mismatch",
     lambda T: F(T).instance_norm(T.ones(2, 3, 4), T.zeros(2), T.ones(2), use_input_stats=False))
case("F.rms_norm shape mismatch", lambda T: F(T).rms_norm(x23(T), (2,)))
case("F.local_response_norm 2-D", lambda T: F(T).local_response_norm(v3(T), 2))
case("F.unfold 3-D input", lambda T: F(T).unfold(T.ones(1, 3, 3), 2))
case("F.unfold kernel too big", lambda T: F(T).unfold(img(T), 7))
case("F.fold bad size", lambda T: F(T).fold(T.ones(1, 4, 3), (3, 3), 2))
case("F.pixel_shuffle not divisible", lambda T: F(T).pixel_shuffle(img(T), 2))
case("F.pixel_shuffle 2-D", lambda T: F(T).pixel_shuffle(T.ones(4, 4), 2))
case("F.pixel_unshuffle not divisible", lambda T: F(T).pixel_unshuffle(img(T), 2))
case("F.scaled_dot_product_attention mismatch",
     lambda T: F(T).scaled_dot_product_attention(T.ones(1, 2, 3), T.ones(1, 2, 4), T.ones(1, 2, 4)))
case("F.grid_sample mode='foo'", lambda T: F(T).grid_sample(img(T), T.zeros(2, 2, 2, 2), mode="foo"))
case("F.grid_sample grid wrong", lambda T: F(T).grid_sample(img(T), T.zeros(2, 2, 2, 3)))
case("F.affine_grid theta wrong", lambda T: F(T).affine_grid(T.ones(2, 3, 3), (2, 3, 4, 4)))
case("F.ctc_loss bad lengths",
     lambda T: F(T).ctc_loss(T.ones(5, 2, 4).log_softmax(2), T.ones(2, 3, dtype=T.int64),
                              T.tensor([6, 5]), T.tensor([3, 3])))
case("F.embedding_bag bad mode", lambda T: F(T).embedding_bag(T.tensor([[1]]), T.ones(10, 3), mode="foo"))
case("F.multi_margin_loss target out of range",
     lambda T: F(T).multi_margin_loss(x23(T), T.tensor([0, 3])))
case("F.triplet_margin_loss mismatch",
     lambda T: F(T).triplet_margin_loss(x23(T), x23(T), T.ones(2, 2)))
case("F.poisson_nll_loss broadcast", lambda T: F(T).poisson_nll_loss(x23(T), T.ones(2)))
case("F.gaussian_nll_loss var negative",
     lambda T: F(T).gaussian_nll_loss(v3(T), v3(T), T.tensor([-1.0, 1.0, 1.0])))
case("F.softplus(x, beta='a')", lambda T: F(T).softplus(x23(T), beta="a"))

# ---------------------------------------------------------------------------------------------------
# nn modules and optimizers
case("nn.Linear(-1, 2)", lambda T: T.nn.Linear(-1, 2))
case("nn.Linear('a', 2)", lambda T: T.nn.Linear("a", 2))
case("nn.Linear(2**31, 2**31)", lambda T: T.nn.Linear(2 ** 31, 2 ** 31))
case("nn.Linear(3, 2)(x wrong)", lambda T: T.nn.Linear(4, 2)(x23(T)))
case("nn.Linear(3, 2)([1., 2., 3.])", lambda T: T.nn.Linear(3, 2)([1.0, 2.0, 3.0]))
case("nn.Conv2d(3, 4, 3, groups=2)", lambda T: T.nn.Conv2d(3, 4, 3, groups=2))
case("nn.Conv2d(3, 4, 0)", lambda T: T.nn.Conv2d(3, 4, 0))
case("nn.Conv2d(3, 4, 3, padding='foo')", lambda T: T.nn.Conv2d(3, 4, 3, padding="foo"))
case("nn.Conv2d(3, 4, 3, padding_mode='foo')", lambda T: T.nn.Conv2d(3, 4, 3, padding_mode="foo"))
case("nn.Conv2d(3, 4, 3, stride=2, padding='same')", lambda T: T.nn.Conv2d(3, 4, 3, stride=2, padding="same"))
case("nn.Conv2d(3, 4, 3)(wrong channels)", lambda T: T.nn.Conv2d(3, 4, 3)(T.ones(1, 2, 5, 5)))
case("nn.Dropout(1.5)", lambda T: T.nn.Dropout(1.5))
case("nn.Dropout(-1)", lambda T: T.nn.Dropout(-1))
case("nn.Embedding(10, 3)(tensor([10]))", lambda T: T.nn.Embedding(10, 3)(T.tensor([10])))
case("nn.Embedding(10, 3, padding_idx=10)", lambda T: T.nn.Embedding(10, 3, padding_idx=10))
case("nn.Embedding(-1, 3)", lambda T: T.nn.Embedding(-1, 3))
case("nn.BatchNorm1d(3)(x 2x4)", lambda T: T.nn.BatchNorm1d(3)(T.ones(2, 4)))
case("nn.BatchNorm2d(3)(3-D)", lambda T: T.nn.BatchNorm2d(3)(T.ones(2, 3, 4)))
case("nn.LayerNorm(4)(x23)", lambda T: T.nn.LayerNorm(4)(x23(T)))
case("nn.GroupNorm(2, 3)", lambda T: T.nn.GroupNorm(2, 3))
case("nn.MaxPool2d(0)(img)", lambda T: T.nn.MaxPool2d(0)(img(T)))
case("nn.Sequential(1)", lambda T: T.nn.Sequential(1))
case("nn.ModuleList([1])", lambda T: T.nn.ModuleList([1]))
case("nn.LSTM(3, 4)(wrong feature size)", lambda T: T.nn.LSTM(3, 4)(T.ones(2, 1, 5)))
case("nn.LSTM(3, 4)(2-D ok)", lambda T: T.nn.LSTM(3, 4)(T.ones(2, 3))[0].shape)
case("nn.GRU(3, 4)(4-D)", lambda T: T.nn.GRU(3, 4)(T.ones(1, 2, 1, 3)))
case("nn.MultiheadAttention(5, 2)", lambda T: T.nn.MultiheadAttention(5, 2))
case("nn.Parameter('a')", lambda T: T.nn.Parameter("a"))
case("nn.Parameter(int, requires_grad=True)", lambda T: T.nn.Parameter(i3(T)))
case("module.register_buffer('a.b', x)", lambda T: T.nn.Module().register_buffer("a.b", v3(T)))
case("module.register_parameter('w', x)", lambda T: T.nn.Module().register_parameter("w", v3(T)))
case("module.add_module(1, m)", lambda T: T.nn.Module().add_module(1, T.nn.ReLU()))
case("module.to('cuda:x')", lambda T: T.nn.Linear(2, 2).to("cuda:x"))
case("module.to(dtype=int64)", lambda T: T.nn.Linear(2, 2).to(T.int64))
case("optim.SGD([], lr=0.1)", lambda T: T.optim.SGD([], lr=0.1))
case("optim.SGD(params, lr=-1)", lambda T: T.optim.SGD([T.ones(2, requires_grad=True)], lr=-1.0))
case("optim.SGD(params, momentum=-1)",
     lambda T: T.optim.SGD([T.ones(2, requires_grad=True)], lr=0.1, momentum=-1.0))
case("optim.SGD(params, nesterov, no momentum)",
     lambda T: T.optim.SGD([T.ones(2, requires_grad=True)], lr=0.1, nesterov=True))
case("optim.SGD(tensor)", lambda T: T.optim.SGD(T.ones(2, requires_grad=True), lr=0.1))
case("optim.Adam(params, betas=(1.5, 0.9))",
     lambda T: T.optim.Adam([T.ones(2, requires_grad=True)], betas=(1.5, 0.9)))
case("optim.Adam(params, eps=-1)", lambda T: T.optim.Adam([T.ones(2, requires_grad=True)], eps=-1.0))
case("optim.Adam(params, weight_decay=-1)",
     lambda T: T.optim.Adam([T.ones(2, requires_grad=True)], weight_decay=-1.0))
case("optim.Adam([non-leaf])", lambda T: T.optim.Adam([v3(T, True) * 2]))
case("optim.SGD([1.0])", lambda T: T.optim.SGD([1.0], lr=0.1))

# ---------------------------------------------------------------------------------------------------
# Tensor methods, conversions, autograd misuse
case("x.item() multi", lambda T: x23(T).item())
case("int(x) multi", lambda T: int(x23(T)))
case("float(x) multi", lambda T: float(x23(T)))
case("bool(x) multi", lambda T: bool(x23(T)))
case("bool(empty)", lambda T: bool(T.zeros(0)))
case("x.__index__ float", lambda T: [1, 2, 3][T.tensor(1.0)])
case("range(tensor multi)", lambda T: builtins.range(T.tensor([1, 2])))
case("[..][tensor(1)] ok", lambda T: [1, 2, 3][T.tensor(1)])
case("x.numpy() requires grad", lambda T: v3(T, True).numpy())
case("x.tolist() ok", lambda T: x23(T).tolist())
case("len(0-d)", lambda T: len(T.tensor(1.0)))
case("iter(0-d)", lambda T: iter(T.tensor(1.0)))
case("x.size(5)", lambda T: x23(T).size(5))
case("x.size('a')", lambda T: x23(T).size("a"))
case("x.stride(5)", lambda T: x23(T).stride(5))
case("x.shape[5]", lambda T: x23(T).shape[5])
case("x.size(-3)", lambda T: x23(T).size(-3))
case("x.backward() non-scalar", lambda T: v3(T, True).mul(2).backward())
case("x.backward() no grad", lambda T: v3(T).sum().backward())
case("x.backward(gradient wrong shape)", lambda T: v3(T, True).mul(2).backward(T.ones(2)))
case("x.backward(gradient='a')", lambda T: v3(T, True).mul(2).backward("a"))
case("x.backward(inputs=[])", lambda T: v3(T, True).sum().backward(inputs=[]))
case("autograd.grad unused input",
     lambda T: T.autograd.grad(v3(T, True).sum(), [v3(T, True)]))
case("autograd.grad(y, x) x not requiring grad", lambda T: T.autograd.grad(v3(T, True).sum(), [v3(T)]))
case("autograd.grad('a', x)", lambda T: T.autograd.grad("a", [v3(T, True)]))
case("backward twice", lambda T: _backward_twice(T))
case("x.grad = wrong shape", lambda T: setattr(v3(T, True), "grad", T.ones(2)))
case("x.grad = 'a'", lambda T: setattr(v3(T, True), "grad", "a"))
case("x.grad = int tensor", lambda T: setattr(v3(T, True), "grad", i3(T)))
case("non-leaf.requires_grad_(False)", lambda T: (v3(T, True) * 2).requires_grad_(False))
case("x.register_hook(no grad)", lambda T: v3(T).register_hook(lambda g: g))
case("x.register_hook('a')", lambda T: v3(T, True).register_hook("a"))
case("x.retain_grad() no grad", lambda T: v3(T).retain_grad())
case("x.fill_('a')", lambda T: v3(T).fill_("a"))
case("x.fill_(tensor 1-D)", lambda T: v3(T).fill_(T.ones(2)))
case("x.fill_(None)", lambda T: v3(T).fill_(None))
case("x.zero_() leaf", lambda T: v3(T, True).zero_())
case("x.add_(1) leaf", lambda T: v3(T, True).add_(1))
case("x.mul_(2) leaf", lambda T: v3(T, True).mul_(2))
case("x += 1 leaf", lambda T: v3(T, True).__iadd__(1))
case("x.exp_() leaf", lambda T: v3(T, True).exp_())
case("x.sigmoid_() leaf", lambda T: v3(T, True).sigmoid_())
case("x.copy_(y) leaf", lambda T: v3(T, True).copy_(v3(T)))
case("x.uniform_() leaf", lambda T: v3(T, True).uniform_())
case("x.masked_fill_() leaf", lambda T: v3(T, True).masked_fill_(v3(T) > 1, 0.0))
case("x.index_add_() leaf", lambda T: v3(T, True).index_add_(0, T.tensor([0]), T.ones(1)))
case("x.scatter_() leaf", lambda T: v3(T, True).scatter_(0, T.tensor([0]), 1.0))
case("view of leaf .add_(1)", lambda T: v3(T, True)[:2].add_(1))
case("x.t_() leaf ok", lambda T: x23(T, True).t_().shape)
case("x.copy_(y wrong shape)", lambda T: v3(T).copy_(T.ones(2)))
case("x.copy_('a')", lambda T: v3(T).copy_("a"))
case("x.copy_([1., 2., 3.])", lambda T: v3(T).copy_([1.0, 2.0, 3.0]))
case("x.expand(3, 3).add_(1)", lambda T: v3(T).expand(3, 3).add_(1))
case("x.clamp_(min='a')", lambda T: v3(T).clamp_(min="a"))
case("x.new(-1)", lambda T: v3(T).new(-1))
case("x.type_as('a')", lambda T: v3(T).type_as("a"))
case("x.element_size() ok", lambda T: v3(T).element_size())
case("x.dim(1)", lambda T: v3(T).dim(1))
case("x.detach_() view", lambda T: v3(T, True)[:2].detach_())
case("x.data = 'a'", lambda T: setattr(v3(T), "data", "a"))
case("hash(x) ok", lambda T: isinstance(hash(v3(T)), int))
case("x in y ok", lambda T: 2.0 in v3(T))
case("'a' in x", lambda T: "a" in v3(T))
case("x == 'a' ok", lambda T: v3(T) == "a")
case("x < 'a'", lambda T: v3(T) < "a")
case("x < None", lambda T: v3(T) < None)
case("x.eq(y broadcast)", lambda T: v3(T).eq(T.ones(2)))
case("no_grad('a')", lambda T: T.no_grad("a"))
case("set_grad_enabled('a')", lambda T: T.set_grad_enabled("a"))
case("x.histc() int", lambda T: i3(T).histc())
case("histc(x, bins=0)", lambda T: T.histc(v3(T), bins=0))
case("histc(x, bins=-1)", lambda T: T.histc(v3(T), bins=-1))
case("histc(x, min=2, max=1)", lambda T: T.histc(v3(T), bins=3, min=2, max=1))
case("histc(x, max=nan)", lambda T: T.histc(v3(T), bins=3, min=0, max=NAN))
case("histc(x, 3, 0, inf)", lambda T: T.histc(v3(T), bins=3, min=0, max=INF))
case("histc(x) ok", lambda T: T.histc(v3(T)))
case("histc(x, 4, 0, 3) ok", lambda T: T.histc(v3(T), 4, 0, 3))
case("histc(x, 2, 5, 5) ok", lambda T: T.histc(v3(T), 2, 5, 5))
case("histc([1.])", lambda T: T.histc([1.0]))
case("histc(x, 'a')", lambda T: T.histc(v3(T), "a"))
case("histc(x requires grad).backward()", lambda T: T.histc(v3(T, True), 3).sum().backward())


def _no_grad_set(T):
    x = T.ones(2, 3, requires_grad=True)
    with T.no_grad():
        x[0] = 2.0
    return x


def _set_and_get(x, i, v):
    x[i] = v
    return x


def _backward_twice(T):
    y = v3(T, True).exp().sum()
    y.backward()
    y.backward()


# more rows for the fixes: values where torch succeeds, torch's errors where it does not
case("zeros(size=3)", lambda T: T.zeros(size=3))
case("zeros(2, size=(3,))", lambda T: T.zeros(2, size=(3,)))
case("zeros(2, True) ok", lambda T: T.zeros(2, True))
case("zeros(tensor(2), tensor([3])) ok", lambda T: T.zeros(T.tensor(2), T.tensor([3])))
case("zeros(np.float64(2))", lambda T: T.zeros(np.float64(2)))
case("zeros(-1, 2**62)", lambda T: T.zeros(-1, 2 ** 62))
case("tensor([1, [2, 3]])", lambda T: T.tensor([1, [2, 3]]))
case("tensor([1, None], dtype=float32)", lambda T: T.tensor([1, None], dtype=T.float32))
case("tensor([-255], dtype=uint8) ok", lambda T: T.tensor([-255], dtype=T.uint8))
case("tensor([-256], dtype=uint8)", lambda T: T.tensor([-256], dtype=T.uint8))
case("tensor([1.5, 300], dtype=int8)", lambda T: T.tensor([1.5, 300], dtype=T.int8))
case("tensor(nan, dtype=int64)", lambda T: T.tensor(NAN, dtype=T.int64))
case("tensor(2**64, dtype=float32) ok", lambda T: T.tensor(2 ** 64, dtype=T.float32))
case("tensor(np.array([300]), dtype=uint8) ok", lambda T: T.tensor(np.array([300]), dtype=T.uint8))
case("full((2,), -1, dtype=uint8) ok", lambda T: T.full((2,), -1, dtype=T.uint8))
case("full((2,), 2**63)", lambda T: T.full((2,), 2 ** 63))
case("full((2,), tensor([1.]))", lambda T: T.full((2,), T.tensor([1.0])))
case("full((2,), tensor(1.)) ok", lambda T: T.full((2,), T.tensor(1.0)))
case("long x.fill_(2**63)", lambda T: i3(T).fill_(2 ** 63))
case("byte x.fill_(300)", lambda T: T.zeros(3, dtype=T.uint8).fill_(300))
case("byte x.fill_(-1) ok", lambda T: T.zeros(3, dtype=T.uint8).fill_(-1))
case("x.fill_(2**70)", lambda T: v3(T).fill_(2 ** 70))
case("x.fill_(True) ok", lambda T: v3(T).fill_(True))
case("x.geometric_(0.5) ok", lambda T: T.zeros(5).geometric_(0.5))
case("x.log_normal_(0, 0.5) ok", lambda T: T.zeros(5).log_normal_(0, 0.5))
case("x.cauchy_(0, 0.5) ok", lambda T: T.zeros(5).cauchy_(0, 0.5))
case("x.exponential_('a')", lambda T: T.zeros(3).exponential_("a"))
case("x.uniform_('a')", lambda T: T.zeros(3).uniform_("a"))
case("x.random_(1.5)", lambda T: T.zeros(3).random_(1.5))
case("int x.cauchy_()", lambda T: i3(T).cauchy_())
case("int x.log_normal_()", lambda T: i3(T).log_normal_())
case("multinomial(bool, 1)", lambda T: T.multinomial(T.ones(2, dtype=T.bool), 1))
case("randperm(300, dtype=int8)", lambda T: T.randperm(300, dtype=T.int8))
case("randperm(3, dtype=bool)", lambda T: T.randperm(3, dtype=T.bool))
case("randperm(3, dtype=float32) ok", lambda T: T.randperm(3, dtype=T.float32))
case("manual_seed('5') ok", lambda T: T.manual_seed("5").initial_seed())
case("Generator().manual_seed(True)", lambda T: T.Generator().manual_seed(True))
case("set_rng_state(float tensor)", lambda T: T.set_rng_state(T.zeros(5056)))
case("arange(0, 3, 0.5, dtype=int64)", lambda T: T.arange(0, 3, 0.5, dtype=T.int64))
case("arange(300, dtype=uint8) ok", lambda T: T.arange(300, dtype=T.uint8))
case("arange(-1, 3, dtype=uint8) ok", lambda T: T.arange(-1, 3, dtype=T.uint8))
case("arange(0, 10, 2**63)", lambda T: T.arange(0, 10, 2 ** 63))
case("arange(1e300, 1e300 + 1) ok", lambda T: T.arange(1e300, 1e300 + 1))
case("linspace(0, 1, True)", lambda T: T.linspace(0, 1, True))
case("linspace(tensor([0.]), 1, 3)", lambda T: T.linspace(T.tensor([0.0]), 1, 3))
case("linspace(0, 1, tensor(3)) ok", lambda T: T.linspace(0, 1, T.tensor(3)))
case("linspace(0, 1, 3, dtype=int64) ok", lambda T: T.linspace(0, 1, 3, dtype=T.int64))
case("logspace(0, 1, 0) ok", lambda T: T.logspace(0, 1, 0))
case("eye(3, 2**62)", lambda T: T.eye(3, 2 ** 62))
case("eye(0) ok", lambda T: T.eye(0))
case("range(0, 1, 0.3) ok", lambda T: T.range(0, 1, 0.3))
case("device(0)", lambda T: T.device(0))
case("device(True)", lambda T: T.device(True))
case("device('cuda', True)", lambda T: T.device("cuda", True))
case("device('cuda', 2**63)", lambda T: T.device("cuda", 2 ** 63))
case("device('cuda:99999999999')", lambda T: T.device("cuda:99999999999"))
case("device(device('cuda:1'), 2)", lambda T: T.device(T.device("cuda:1"), 2))
case("device('cuda:0', None)", lambda T: T.device("cuda:0", None))
case("device('cuda', None) ok", lambda T: str(T.device("cuda", None)))
case("device(b'cpu') ok", lambda T: str(T.device(b"cpu")))
case("device('cpu') == 'cpu' ok", lambda T: T.device("cpu") == "cpu")
case("x.to(2)", lambda T: x23(T).to(2))
case("x.to(True) ok", lambda T: x23(T).to(True))
case("x.to(float64, True) ok", lambda T: x23(T).to(T.float64, True))
case("x.to(x, float64)", lambda T: x23(T).to(x23(T), T.float64))
case("x.to(float64, float32)", lambda T: x23(T).to(T.float64, T.float32))
case("x.to(foo=1)", lambda T: x23(T).to(foo=1))
case("x.to(float64, copy='a')", lambda T: x23(T).to(T.float64, copy="a"))
case("x.to(None, None) ok", lambda T: x23(T).to(None, None))
case("x.to(float) ok", lambda T: x23(T).to(float))
case("x.t().view(int8)", lambda T: x23(T).t().view(T.int8))
case("0-d.view(int8)", lambda T: T.tensor(1.0).view(T.int8))
case("x.view(int16) ok", lambda T: x23(T).view(T.int16))
case("x.requires_grad = 1", lambda T: setattr(v3(T), "requires_grad", 1))
case("x.requires_grad_(None)", lambda T: v3(T).requires_grad_(None))
case("ones(2, requires_grad=1)", lambda T: T.ones(2, requires_grad=1))
case("set_grad_enabled(1)", lambda T: T.set_grad_enabled(1))
case("x.copy_(2.0) ok", lambda T: v3(T).copy_(2.0))
case("x.copy_(ones(2, 3))", lambda T: v3(T).copy_(T.ones(2, 3)))
case("x.type(float)", lambda T: v3(T).type(float))
case("x.eq([1., 2., 3.])", lambda T: v3(T).eq([1.0, 2.0, 3.0]))
case("x == None ok", lambda T: v3(T) == None)  # noqa: E711
case("x != 'a' ok", lambda T: v3(T) != "a")
case("x == [1., 2., 3.] ok", lambda T: v3(T) == [1.0, 2.0, 3.0])
case("None in x", lambda T: None in v3(T))
case("[1] in x", lambda T: [1] in v3(T))
case("2. in x ok", lambda T: 2.0 in v3(T))
case("x & 'a'", lambda T: i3(T) & "a")
case("x ** 'a'", lambda T: v3(T) ** "a")
case("x * 'a'", lambda T: v3(T) * "a")
case("x.add([1., 2., 3.])", lambda T: v3(T).add([1.0, 2.0, 3.0]))
case("add(2, x) ok", lambda T: T.add(2, v3(T)))
case("mul(2.5, x) ok", lambda T: T.mul(2.5, v3(T)))
case("maximum(x, [1.])", lambda T: T.maximum(v3(T), [1.0]))
case("int x + 2**63 ok", lambda T: i3(T) + 2 ** 63)
case("uint8 x + 300 ok", lambda T: T.tensor([1, 2], dtype=T.uint8) + 300)
case("x.div(2, rounding_mode='foo')", lambda T: v3(T).div(2, rounding_mode="foo"))
case("clamp(x, min=None, max=None)", lambda T: T.clamp(v3(T), min=None, max=None))
case("clamp(x, min=[1.])", lambda T: T.clamp(v3(T), min=[1.0]))
case("round(int, decimals=0) ok", lambda T: T.round(i3(T)))
case("lerp(x, [1.], 0.5)", lambda T: T.lerp(v3(T), [1.0], 0.5))
case("lerp(x, x, True) ok", lambda T: T.lerp(v3(T), v3(T), True))
case("nan_to_num(x, posinf='a')", lambda T: T.nan_to_num(v3(T), posinf="a"))
case("nan_to_num(int, nan=1.5) ok", lambda T: T.nan_to_num(i3(T), nan=1.5))
case("std(x, dim=True)", lambda T: T.std(x23(T), dim=[True]))
case("x.flip(0, 1) ok", lambda T: x23(T).flip(0, 1))
case("x.flip((0, 1)) ok", lambda T: x23(T).flip((0, 1)))
case("x.sum_to_size(1, 3) ok", lambda T: x23(T).sum_to_size(1, 3))
case("x.sum_to_size(3, 3)", lambda T: x23(T).sum_to_size(3, 3))
case("x.squeeze((0,)) ok", lambda T: T.ones(1, 3).squeeze((0,)))
case("x.tensor_split([1, 'a'])", lambda T: x23(T).tensor_split([1, "a"]))
case("x.chunk('a')", lambda T: x23(T).chunk("a"))
case("x.unfold(0, 1.5, 1)", lambda T: v3(T).unfold(0, 1.5, 1))
case("x.split([1, 2], dim=1) ok", lambda T: x23(T).split([1, 2], dim=1))
case("broadcast_shapes(2, (3, 2)) ok", lambda T: T.broadcast_shapes(2, (3, 2)))
case("broadcast_tensors(x, 'a')", lambda T: T.broadcast_tensors(v3(T), "a"))
case("meshgrid([x, 'a'])", lambda T: T.meshgrid([v3(T), "a"], indexing="ij"))
case("vstack(x)", lambda T: T.vstack(x23(T)))
case("3-D x[..., 0, ...] ok", lambda T: T.arange(24.0).reshape(2, 3, 4)[..., 0, ...])
case("3-D x[0, ..., 1, ...] ok", lambda T: T.arange(24.0).reshape(2, 3, 4)[0, ..., 1, ...])
case("3-D x[..., ..., ...] ok", lambda T: T.arange(24.0).reshape(2, 3, 4)[..., ..., ...])
case("3-D x[..., ..., 0]", lambda T: T.arange(24.0).reshape(2, 3, 4)[..., ..., 0])
case("x[..., 0, ...] = 7 ok", lambda T: _set_and_get(x23(T), (Ellipsis, 0, Ellipsis), 7.0))
case("x[[0, 1.9]] ok", lambda T: x23(T)[[0, 1.9]])
case("x[[1.2]] ok", lambda T: x23(T)[[1.2]])
case("x[[True, 1]] ok", lambda T: x23(T)[[True, 1]])
case("x[(0, 1.5)]", lambda T: x23(T)[(0, 1.5)])
case("x[0] = np.ones(3)", lambda T: x23(T).__setitem__(0, np.ones(3)))
case("x[0] = np.float64(7) ok", lambda T: _set_and_get(x23(T), 0, np.float64(7)))
case("x[0] = tensor(5) ok", lambda T: _set_and_get(x23(T), 0, T.tensor(5)))
case("x['a'] = 1", lambda T: x23(T).__setitem__("a", 1.0))
case("index_add(x, 0, idx, src float64)",
     lambda T: T.index_add(x23(T), 0, T.tensor([0]), T.ones(1, 3, dtype=T.float64)))
case("index_add(x, 0, [0], src)", lambda T: T.index_add(x23(T), 0, [0], T.ones(1, 3)))
case("index_add(x, 0, idx, 1.0)", lambda T: T.index_add(x23(T), 0, T.tensor([0]), 1.0))
case("index_add(x, 0, int32 idx, src) ok", lambda T: T.index_add(x23(T), 0, T.tensor([0], dtype=T.int32), T.ones(1, 3)))
case("index_copy(x, 0, tensor([-1]), src)", lambda T: T.index_copy(x23(T), 0, T.tensor([-1]), T.ones(1, 3)))
case("index_copy(x, 0, float idx, src)", lambda T: T.index_copy(x23(T), 0, T.tensor([0.0]), T.ones(1, 3)))
case("index_copy(x, 0, idx, src wrong slice)", lambda T: T.index_copy(x23(T), 0, T.tensor([0]), T.ones(1, 2)))
case("index_fill(x, 0, tensor([-1]), 1.) ok", lambda T: T.index_fill(x23(T), 0, T.tensor([-1]), 1.0))
case("index_fill(x, 0, [0], 1.)", lambda T: T.index_fill(x23(T), 0, [0], 1.0))
case("index_fill(x, 0, idx, 'a')", lambda T: T.index_fill(x23(T), 0, T.tensor([0]), "a"))
case("index_select(x, 0, tensor([2]))", lambda T: T.index_select(x23(T), 0, T.tensor([2])))
case("gather(x, 1, [[0]])", lambda T: T.gather(x23(T), 1, [[0]]))
case("scatter(x, 1, idx, src float64)",
     lambda T: T.scatter(x23(T), 1, T.tensor([[0]]), T.ones(1, 1, dtype=T.float64)))
case("scatter(x, 1, idx, 'a')", lambda T: T.scatter(x23(T), 1, T.tensor([[0]]), "a"))
case("scatter(x, 1, idx, value='a')", lambda T: T.scatter(x23(T), 1, T.tensor([[0]]), value="a"))
case("scatter_reduce(x, 1, idx, src float64, 'sum')",
     lambda T: T.scatter_reduce(x23(T), 1, T.tensor([[0]]), T.ones(1, 1, dtype=T.float64), "sum"))
case("scatter_reduce(x, 1, idx, src too small, 'sum')",
     lambda T: T.scatter_reduce(x23(T), 1, T.tensor([[0, 1]]), T.ones(1, 1), "sum"))
case("take(x, tensor([-1])) ok", lambda T: T.take(x23(T), T.tensor([-1])))
case("x.put_(tensor([-1]), src) ok", lambda T: x23(T).put_(T.tensor([-1]), T.ones(1)))
case("put(x, idx, src float64)", lambda T: T.put(x23(T), T.tensor([0]), T.ones(1, dtype=T.float64)))
case("masked_fill(x, mask, tensor(1.)) ok", lambda T: T.masked_fill(x23(T), x23(T) > 2, T.tensor(1.0)))
case("F.adaptive_max_pool2d(x, -1)", lambda T: F(T).adaptive_max_pool2d(img(T), -1))
case("F.adaptive_avg_pool2d(x, (2, -1))", lambda T: F(T).adaptive_avg_pool2d(img(T), (2, -1)))
case("F.adaptive_avg_pool2d(x, 'a')", lambda T: F(T).adaptive_avg_pool2d(img(T), "a"))
case("F.adaptive_avg_pool2d(x, 0) ok", lambda T: F(T).adaptive_avg_pool2d(img(T), 0))
case("F.binary_cross_entropy target -0.5", lambda T: F(T).binary_cross_entropy(T.tensor([0.5]), T.tensor([-0.5])))
case("F.binary_cross_entropy target nan", lambda T: F(T).binary_cross_entropy(T.tensor([0.5]), T.tensor([NAN])))
case("F.group_norm int", lambda T: F(T).group_norm(T.ones(2, 4, 3, dtype=T.int64), 2))
case("F.batch_norm int", lambda T: F(T).batch_norm(T.ones(2, 3, dtype=T.int64), None, None, training=True))
case("F.rms_norm int", lambda T: F(T).rms_norm(T.ones(2, 3, dtype=T.int64), (3,)))
case("F.layer_norm(x, 3)", lambda T: F(T).layer_norm(x23(T), 3))
case("F.layer_norm(x, ('a',))", lambda T: F(T).layer_norm(x23(T), ("a",)))
case("F.elu(x, alpha='a')", lambda T: F(T).elu(x23(T), alpha="a"))
case("F.hardtanh(x, 'a')", lambda T: F(T).hardtanh(x23(T), "a"))
case("F.celu(x, alpha='a')", lambda T: F(T).celu(x23(T), alpha="a"))
case("F.softshrink(x, 'a')", lambda T: F(T).softshrink(x23(T), "a"))
case("F.pad(x, (1, 1), value=True) ok", lambda T: F(T).pad(x23(T), (1, 1), value=True))
case("F.pad(x, (1, 'a'))", lambda T: F(T).pad(x23(T), (1, "a")))
case("F.tanh([1, 2]) (torch: AttributeError)", lambda T: F(T).tanh([1, 2]))
case("F.mse_loss(x, 'a') (torch: AttributeError)", lambda T: F(T).mse_loss(v3(T), "a"))
case("F.conv2d(x, [[1.]])", lambda T: F(T).conv2d(img(T), [[1.0]]))
case("F.nll_loss(x, [0, 1])", lambda T: F(T).nll_loss(x23(T), [0, 1]))
case("F.embedding(idx, [[1.]])", lambda T: F(T).embedding(T.tensor([0]), [[1.0]]))
case("F.prelu(x, [0.25])", lambda T: F(T).prelu(x23(T), [0.25]))
case("torch.conv2d([[1.]], w)", lambda T: T.conv2d([[1.0]], T.ones(4, 3, 3, 3)))
case("autograd.grad([y, 1], x)", lambda T: T.autograd.grad([v3(T, True).sum(), 1], v3(T, True)))
case("autograd.backward('a')", lambda T: T.autograd.backward("a"))
case("autograd.grad(y, 'a')", lambda T: T.autograd.grad(v3(T, True).sum(), "a"))
case("zeros(2, device='cuda')", lambda T: T.zeros(2, device="cuda"))
case("x.to('cuda')", lambda T: v3(T).to("cuda"))
case("x.cuda()", lambda T: v3(T).cuda())
case("nn.Linear(3, 2).to('cuda')", lambda T: T.nn.Linear(3, 2).to("cuda"))


# ---------------------------------------------------------------------------------------------------
# Cases where matching torch is impossible or wrong: label -> reason.
ALLOWED = {
    "take_along_dim(x, idx 5, 1)": "torch's CPU take_along_dim does not check the index range and reads out of "
                                   "bounds (undefined behaviour: its value depends on memory layout); glassgrad "
                                   "raises gather's RuntimeError for an index out of range instead",
}
if glassgrad.cuda.is_available():       # the oracle is torch's CPU build: it refuses CUDA, glassgrad has a GPU
    ALLOWED.update({k: "this machine has a CUDA device for glassgrad (CuPy) while the oracle, torch's CPU build, "
                       "refuses CUDA" for k in ("zeros(2, device='cuda')", "x.to('cuda')", "x.cuda()",
                                            "nn.Linear(3, 2).to('cuda')")})


# ---------------------------------------------------------------------------------------------------
# running and classifying
def _builtin_base(cls):
    for k in cls.__mro__:
        if k.__module__ == "builtins":
            return k
    return Exception


@functools.lru_cache(maxsize=None)
def _statements(path):
    with open(path) as f:
        tree = ast.parse(f.read())
    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]


def _is_raise(path, lineno):
    """Whether the innermost statement at path:lineno is a `raise`."""
    around = [n for n in _statements(path) if n.lineno <= lineno <= n.end_lineno]
    inner = max(around, key=lambda n: (n.lineno, -n.end_lineno), default=None)
    return isinstance(inner, ast.Raise)


INTERNAL_TYPES = (AttributeError, KeyError, MemoryError, OverflowError, ZeroDivisionError, RecursionError,
                  AssertionError, NameError, UnboundLocalError, SystemError)


def _origin(exc):
    """'glassgrad' (a raise of glassgrad's own), 'caller' (raised outside glassgrad and NumPy, e.g. Python's
    argument binding for the call itself) or 'internal'."""
    if type(exc).__module__.split(".")[0] == "numpy" or isinstance(exc, INTERNAL_TYPES):
        return "internal"
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    path = os.path.abspath(tb.tb_frame.f_code.co_filename)
    if path.startswith(NP_SRC):
        return "internal"
    if path.startswith(GG_SRC):
        return "glassgrad" if _is_raise(path, tb.tb_lineno) else "internal"
    return "caller"


def _call(T, fn):
    T.manual_seed(0)
    try:
        return True, fn(T)
    except Exception as e:      # noqa: BLE001  (every exception is an outcome here)
        return False, e


def _norm(v):
    """A comparable form of a call's result."""
    if isinstance(v, (torch.Tensor, glassgrad.Tensor)):
        v = v.detach()
        return ("tensor", str(v.dtype), tuple(v.shape), v.numpy().copy())
    if isinstance(v, (torch.dtype, glassgrad.dtype, torch.device, glassgrad.device)):
        return ("str", str(v))
    if isinstance(v, (tuple, list)):
        return ("seq", tuple(_norm(x) for x in v))
    if v is None or isinstance(v, (bool, int, float, str)):
        return ("value", v)
    return ("type", type(v).__name__)


def _equal(a, b):
    if a[0] != b[0] or len(a) != len(b):
        return False
    if a[0] == "tensor":
        if a[1:3] != b[1:3]:
            return False
        x, y = a[3], b[3]
        if x.dtype.kind == "f":
            return np.allclose(x, y, rtol=1e-5, atol=1e-6, equal_nan=True)
        return np.array_equal(x, y)
    if a[0] == "seq":
        return len(a[1]) == len(b[1]) and all(_equal(x, y) for x, y in zip(a[1], b[1]))
    if a[0] == "value" and isinstance(a[1], float) and isinstance(b[1], float):
        return a[1] == b[1] or (math.isnan(a[1]) and math.isnan(b[1]))
    return a[1:] == b[1:]


def run_case(fn):
    """(outcome, torch's result, glassgrad's result, glassgrad's peak allocation in bytes)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = [(T, T.get_default_dtype(), T.is_grad_enabled()) for T in (torch, glassgrad)]
        try:
            t_ok, t_res = _call(torch, fn)
            tracemalloc.reset_peak()
            start = tracemalloc.get_traced_memory()[0]
            g_ok, g_res = _call(glassgrad, fn)
            peak = tracemalloc.get_traced_memory()[1] - start
        finally:       # a call may have changed global state: put it back
            for T, dt, enabled in state:
                T.set_default_dtype(dt)
                T.set_grad_enabled(enabled)
    if t_ok and g_ok:
        same = _equal(_norm(t_res), _norm(g_res))
        return ("both succeed" if same else "wrong value"), t_res, g_res, peak
    if not t_ok and g_ok:
        return "silent accept", t_res, g_res, peak
    if t_ok and not g_ok:
        return ("internal error" if _origin(g_res) == "internal" else "refused"), t_res, g_res, peak
    base = _builtin_base(type(t_res))
    if not isinstance(g_res, base):
        return ("internal error" if _origin(g_res) == "internal" else "different type"), t_res, g_res, peak
    if _origin(g_res) != "internal" or issubclass(base, INTERNAL_TYPES) or str(g_res) == str(t_res):
        # a raw error is fine where torch's is just as raw (torch's own AttributeError, AssertionError...)
        # or says the very same thing (Python's slice or int() messages)
        return "same type", t_res, g_res, peak
    return "internal error", t_res, g_res, peak


class _Guarded:
    """tracemalloc on, and the address-space limit lowered to what the process uses now + 4 GiB: a huge
    allocation by either library then fails (MemoryError / RuntimeError) instead of taking the machine."""

    def __enter__(self):
        self.tracing = tracemalloc.is_tracing()
        if not self.tracing:
            tracemalloc.start()
        self.limit = resource.getrlimit(resource.RLIMIT_AS)
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        soft = used + (4 << 30)
        if self.limit[1] == resource.RLIM_INFINITY or soft < self.limit[1]:
            resource.setrlimit(resource.RLIMIT_AS, (soft, self.limit[1]))
        return self

    def __exit__(self, *exc):
        resource.setrlimit(resource.RLIMIT_AS, self.limit)
        if not self.tracing:
            tracemalloc.stop()


OUTCOMES = ("same type", "both succeed", "different type", "internal error", "silent accept", "wrong value",
            "refused")


@functools.lru_cache(maxsize=1)
def results():
    """{label: (outcome, torch's result, glassgrad's result, peak bytes)} over all CASES."""
    out = {}
    with _Guarded():
        for label, fn in CASES:
            out[label] = run_case(fn)
    return out


def summary():
    """The table: calls tried and how many fall under each outcome."""
    res = results()
    counts = {k: 0 for k in OUTCOMES}
    for outcome, *_ in res.values():
        counts[outcome] += 1
    lines = [f"{'calls tried':<16}{len(res):>5}"] + [f"{k:<16}{v:>5}" for k, v in counts.items()]
    lines.append(f"{'allow-listed':<16}{len(ALLOWED):>5}")
    return "\n".join(lines)


def _describe(r):
    if isinstance(r, BaseException):
        return f"{type(r).__name__}: {str(r)[:150]}"
    return repr(r)[:150]


# ---------------------------------------------------------------------------------------------------
# tests
def test_labels_are_unique():
    labels = [c[0] for c in CASES]
    assert len(labels) == len(set(labels))
    assert set(ALLOWED) <= set(labels)
    assert len(CASES) >= 400


@pytest.mark.parametrize("label", [c[0] for c in CASES])
def test_call_matches_torch(label):
    outcome, t_res, g_res, peak = results()[label]
    assert peak < GG_PEAK_LIMIT, f"glassgrad allocated {peak} bytes"
    if label in ALLOWED:
        assert outcome not in ("same type", "both succeed"), "allow-listed but now matches torch: drop the entry"
        return
    assert outcome in ("same type", "both succeed"), \
        f"{outcome}: torch -> {_describe(t_res)} | glassgrad -> {_describe(g_res)}"


def test_classifier():
    """The classification itself: a raise of glassgrad's own vs one from NumPy or deep in glassgrad."""
    def np_error(T):
        return np.zeros(-1)
    assert run_case(lambda T: T.ones(2) if T is torch else np_error(T))[0] == "refused"
    assert run_case(lambda T: T.zeros(-1))[0] == "same type"
    assert run_case(lambda T: T.zeros(2))[0] == "both succeed"
    assert run_case(lambda T: T.zeros(2) if T is torch else T.ones(2))[0] == "wrong value"
    assert run_case(lambda T: T.zeros(-1) if T is torch else T.ones(2))[0] == "silent accept"
    assert run_case(lambda T: T.zeros(-1) if T is torch else {}["k"])[0] == "internal error"
    assert run_case(lambda T: T.zeros(-1) if T is torch else T.tensor([1.0]).foo)[0] == "internal error"


def test_allocation_is_measured():
    """The peak check can fail: a glassgrad call that allocates 128 MiB is measured as such."""
    with _Guarded():
        outcome, _, _, peak = run_case(lambda T: T.zeros(2) if T is torch else T.from_numpy(np.zeros(2 ** 24)))
    assert outcome == "wrong value" and peak >= GG_PEAK_LIMIT


if __name__ == "__main__":
    res = results()
    for label, (outcome, t_res, g_res, peak) in res.items():
        if outcome not in ("same type", "both succeed") or "-v" in sys.argv:
            why = f"\n    allowed:   {ALLOWED[label]}" if label in ALLOWED else ""
            print(f"[{outcome}] {label}\n    torch:     {_describe(t_res)}\n    glassgrad: {_describe(g_res)}{why}")
    print(summary())
