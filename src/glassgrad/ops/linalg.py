"""Linear algebra: products that end in BLAS.

ops: mm matmul (more: bmm mv dot outer addmm baddbmm einsum tensordot ... in later sections)
"""
import numpy as np

from .. import _dtype
from ._core import Tensor, make, edge, save_in, grad
from ..autograd.graph import Node

__all__ = ["mm", "matmul"]


_CPP = {"float16": "c10::Half", "float32": "float", "float64": "double", "int8": "signed char",
        "int16": "short int", "int32": "int", "int64": "long int", "uint8": "unsigned char", "bool": "bool"}


def _dtype_check(a, b, what="mat1 and mat2"):
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected {what} to have the same dtype, but got: "
                           f"{_CPP[a._data.dtype.name]} != {_CPP[b._data.dtype.name]}")


class MmBackward0(Node):            # y = a @ b; da = gy @ b.T; db = a.T @ gy
    __slots__ = ()
    _saved_names = ("self", "mat2")

    def backward(self, F, g):
        a, b = F.unpack(self)
        ga = None if self.next_functions[0][0] is None else F.matmul(g, F.mT(b))
        gb = None if self.next_functions[1][0] is None else F.matmul(F.mT(a), g)
        return (ga, gb)


def mm(input, mat2, *, out=None):
    a, b = input._data, mat2._data
    if a.ndim != 2:
        raise RuntimeError(f"self must be a matrix")
    if b.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix")
    if a.shape[1] != b.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and "
                           f"{b.shape[0]}x{b.shape[1]})")
    _dtype_check(input, mat2)
    y = np.matmul(a, b)
    if grad.enabled and (input._rg or mat2._rg):
        n = MmBackward0((edge(input), edge(mat2)))
        n._saved = (save_in(input), save_in(mat2))
        return make(y, True, n)
    return make(y)


def matmul(input, other, *, out=None):
    if not isinstance(other, Tensor):
        raise TypeError(f"matmul(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    if input._data.ndim == 2 and other._data.ndim == 2:
        return mm(input, other)
    from . import linalg_more
    return linalg_more.matmul_general(input, other)
