"""Ternary ops: three tensors in, one out, element by element.

ops: where lerp addcmul addcdiv and the in-place forms lerp_ addcmul_ addcdiv_
"""
import warnings

import numpy as np

from .. import _args, _dtype
from ._core import (holomorphic, Tensor, make, edge, save_in, grad, as_tensor_arg, broadcast_error, broadcast_shape, _red_n,
                    _want, _inplace, mixed_devices)
from ..autograd.graph import Node, guard
from .indexing import nonzero

__all__ = ["where", "lerp", "lerp_", "addcmul", "addcmul_", "addcdiv", "addcdiv_"]


# -- where -------------------------------------------------------------------------------------------
class WhereBackward0(Node):         # y = where(c, a, b); da = where(c, gy, 0); db = where(c, 0, gy)
    __slots__ = ("cond", "ashape", "bshape", "adt", "bdt")
    _saved_names = ("condition",)

    def backward(self, ns, g):
        c = self.cond
        z = ns.zeros_like(g)
        ga = gb = None
        if self.next_functions[0][0] is not None:
            ga = ns.sum_to(ns.where(ns.const(c, g), g, z), self.ashape)
            if ga.dtype != self.adt:
                ga = ns.cast(ga, self.adt)
        if self.next_functions[1][0] is not None:
            gb = ns.sum_to(ns.where(ns.const(c, g), z, g), self.bshape)
            if gb.dtype != self.bdt:
                gb = ns.cast(gb, self.bdt)
        return (ga, gb)


def where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    c = condition._data if isinstance(condition, Tensor) else np.asarray(condition)
    if c.dtype != np.bool_:
        if c.dtype == np.uint8:
            warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be "
                          "removed in a future version of PyTorch. Use a boolean condition instead.",
                          UserWarning, stacklevel=2)
            c = c.astype(bool)
        else:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                               f"{_dtype.from_numpy_dtype(c.dtype).name.capitalize()}")
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            input = as_tensor_arg(input, None)
            other = as_tensor_arg(other, None)
        else:
            input = as_tensor_arg(input, other)
    if not isinstance(other, Tensor):
        other = as_tensor_arg(other, input)
    rt = _dtype.result_type(input, other).np
    ad = input._data if input._data.dtype == rt else input._data.astype(rt)
    bd = other._data if other._data.dtype == rt else other._data.astype(rt)
    if not (c.__class__ is ad.__class__ is bd.__class__):
        c, ad, bd = mixed_devices(c, ad, bd)
    try:
        y = np.where(c, ad, bd)
    except ValueError:
        raise broadcast_error(np.broadcast_shapes(ad.shape, bd.shape) if _bc_ok(ad, bd) else ad.shape,
                              c.shape if _bc_ok(ad, bd) else bd.shape) from None
    if grad.enabled and (input._rg or other._rg):
        n = WhereBackward0((edge(input), edge(other)))
        if isinstance(condition, Tensor):
            guard(n, condition)             # torch saves the condition
        n.cond = c
        n.ashape, n.bshape = ad.shape, bd.shape
        n.adt, n.bdt = input._data.dtype, other._data.dtype
        return make(y, True, n)
    return make(y)


def _bc_ok(a, b):
    try:
        np.broadcast_shapes(a.shape, b.shape)
        return True
    except ValueError:
        return False


# -- lerp --------------------------------------------------------------------------------------------
class LerpBackward0(Node):          # y = s + w (e - s), w a number; ds = gy (1 - w); de = gy w
    __slots__ = ("w", "shapes", "dts")
    _saved_names = ("weight",)

    def backward(self, ns, g):
        w = self.w
        return _red_n(ns, [g * (1 - w) if _want(self, 0) else None, g * w if _want(self, 1) else None],
                      self.shapes, self.dts)


class LerpBackward1(Node):          # w a tensor: ds = gy (1 - w); de = gy w; dw = gy (e - s)
    __slots__ = ("shapes", "dts")
    _saved_names = ("self", "end", "weight")

    def backward(self, ns, g):
        s, e, w = ns.unpack(self)
        cj = ns.conj        # complex: the conjugate Wirtinger gradients (no-ops for real tensors)
        return _red_n(ns, [g * cj(1 - w) if _want(self, 0) else None, g * cj(w) if _want(self, 1) else None,
                          g * cj(e - s) if _want(self, 2) else None], self.shapes, self.dts)


def lerp(input, end, weight, *, out=None):
    _args.tensor_arg(end, "lerp", "end", 2)
    s, e = input._data, end._data
    wt = isinstance(weight, Tensor)
    if not wt:
        weight = _args.number_arg(weight, "lerp", "weight", 3)
        if s.dtype.kind not in "fVc":
            raise NotImplementedError(f'"lerp_kernel_scalar" not implemented for '
                                      f'\'{_dtype.from_numpy_dtype(s.dtype).name_c}\'')
    for nm, t in (("end", end), ("weight", weight if wt else None)):
        if t is not None and t._data.dtype != s.dtype:
            raise RuntimeError(f"expected dtype {_dtype.cpp_name(s.dtype)} for `{nm}` but got dtype "
                               f"{_dtype.cpp_name(t._data.dtype)}")
    w = weight._data if wt else weight
    if not (s.__class__ is e.__class__ and (not wt or w.__class__ is s.__class__)):
        s, e, w = mixed_devices(s, e, w) if wt else mixed_devices(s, e) + (w,)
    out_dt = s.dtype
    if out_dt.itemsize == 2 and out_dt.kind in "fV":     # float16 / bfloat16: torch computes in float32, rounds once
        s, e = s.astype(np.float32), e.astype(np.float32)
        w = w.astype(np.float32) if wt else w
    try:
        with np.errstate(all="ignore"):
            y = np.where(np.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w)).astype(out_dt)
    except ValueError:
        raise broadcast_error(s.shape, e.shape) from None
    ts = [input, end] + ([weight] if wt else [])
    if grad.enabled and any(t._rg for t in ts):
        n = (LerpBackward1 if wt else LerpBackward0)(tuple(edge(t) for t in ts))
        n.shapes = [t._data.shape for t in ts]
        n.dts = [t._data.dtype for t in ts]
        if wt:
            n._saved = tuple(save_in(t) for t in ts)
        else:
            n.w = weight
        return make(y, True, n)
    return make(y)


def lerp_(x, end, weight):
    return _inplace(lerp, x, end, weight)


# -- addcmul / addcdiv ---------------------------------------------------------------------------------
class AddcmulBackward0(Node):       # y = s + v t1 t2; ds = gy; dt1 = gy v t2; dt2 = gy v t1
    __slots__ = ("value", "shapes", "dts")
    _saved_names = ("tensor1", "tensor2")

    @holomorphic
    def backward(self, ns, g):
        t1, t2 = ns.unpack(self)
        v = self.value
        return _red_n(ns, [g if _want(self, 0) else None, g * (t2 * v) if _want(self, 1) else None,
                          g * (t1 * v) if _want(self, 2) else None], self.shapes, self.dts)


class AddcdivBackward0(AddcmulBackward0):   # y = s + v t1 / t2; ds = gy; dt1 = gy v / t2; dt2 = -gy v t1 / t2^2
    __slots__ = ()

    @holomorphic
    def backward(self, ns, g):
        t1, t2 = ns.unpack(self)
        v = self.value
        return _red_n(ns, [g if _want(self, 0) else None, g * v / t2 if _want(self, 1) else None,
                          -g * v * t1 / (t2 * t2) if _want(self, 2) else None], self.shapes, self.dts)


def _addc(cls, fn, input, t1, t2, value):
    ts = [input, t1, t2]
    rt = _dtype.result_type(*ts).np
    a, b, c = (t._data.astype(rt, copy=False) for t in ts)
    if not (a.__class__ is b.__class__ is c.__class__):
        a, b, c = mixed_devices(a, b, c)
    if cls is AddcdivBackward0 and rt.kind in "iub":
        raise RuntimeError("Integer division with addcdiv is no longer supported, and in a future "
                           " release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
                           "behavior can be implemented as (input + value * torch.trunc(tensor1 / tensor2))"
                           ".to(input.dtype) for integer inputs and as (input + value * tensor1 / tensor2) for "
                           "float inputs. The future addcdiv behavior is just the latter implementation: "
                           "(input + value * tensor1 / tensor2), for all dtypes.")
    value = _args.number_arg(value, "addcmul" if cls is AddcmulBackward0 else "addcdiv", "value")
    broadcast_shape(b.shape, c.shape, a.shape)
    v = np.asarray(value, rt)
    y = (a + fn(b, c) * (v if a.__class__ is np.ndarray else v[()])).astype(rt)      # (CuPy takes no host array)
    if grad.enabled and any(t._rg for t in ts):
        n = cls(tuple(edge(t) for t in ts))
        n.value = value
        n.shapes = [t._data.shape for t in ts]
        n.dts = [t._data.dtype for t in ts]
        n._saved = (save_in(t1), save_in(t2))
        return make(y, True, n)
    return make(y)


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    return _addc(AddcmulBackward0, np.multiply, input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    with np.errstate(all="ignore"):
        return _addc(AddcdivBackward0, np.true_divide, input, tensor1, tensor2, value)


def addcmul_(x, tensor1, tensor2, *, value=1):
    return _inplace(addcmul, x, tensor1, tensor2, value=value)


def addcdiv_(x, tensor1, tensor2, *, value=1):
    return _inplace(addcdiv, x, tensor1, tensor2, value=value)
