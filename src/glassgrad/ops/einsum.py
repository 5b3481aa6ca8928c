"""Tensor contractions by subscripts: einsum and tensordot (one node each, named as PyTorch's top node).

ops: einsum tensordot inner (a tensordot over the last dims)
"""
import numpy as np

from .. import backend
from ._core import Tensor, as_array
from .linalg import _LinalgNode, _wrap, _st, _tensor_arg
from .arithmetic import mul
from .._autocast_state import state as _acs
from . import _autocast as _ac

__all__ = ["einsum", "tensordot", "inner"]


# PyTorch's einsum permutes/reshapes into bmm; its grad_fn is the top of that chain
class SumBackward1(_LinalgNode):            # one operand, summed; backward: _einsum_bw
    __slots__ = ()


class PermuteBackward0(_LinalgNode):        # one operand, nothing summed; backward: _einsum_bw
    __slots__ = ()


class ViewBackward0(_LinalgNode):           # several operands, summed; tensordot; backward: _einsum_bw
    __slots__ = ()


class MulBackward0(_LinalgNode):            # several operands, nothing summed; backward: _einsum_bw
    __slots__ = ()


# -- einsum / tensordot -------------------------------------------------------------------------
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum_bw(n, ns, g, *ops):
    subs, out, sizes, shapes = n.info
    res = []
    for i, s in enumerate(subs):
        if not n.need(i):
            res.append(None)
            continue
        uniq = "".join(dict.fromkeys(s))
        others = [j for j in range(len(subs)) if j != i]
        avail = set(out).union(*[set(subs[j]) for j in others])
        t = "".join(c for c in uniq if c in avail)
        eq = ",".join([out] + [subs[j] for j in others]) + "->" + t
        r = ns.einsum(eq, g, *[ops[j] for j in others])
        full_u = tuple(sizes[c] for c in uniq)
        if t != uniq or tuple(r.shape) != full_u:
            r = ns.reshape(r, tuple(r.shape[t.index(c)] if c in t else 1 for c in uniq))
            r = ns.expand(r, full_u)
        if len(uniq) != len(s):
            full = tuple(sizes[c] for c in s)

            def view_fn(a, s=s, uniq=uniq):
                st = [0] * len(uniq)
                for d, c in enumerate(s):
                    st[uniq.index(c)] += a.strides[d]
                return backend.as_strided(a, tuple(a.shape[s.index(c)] for c in uniq), tuple(st))   # (a writable view)
            r = ns.view_scatter(full, view_fn, r)
        shp = shapes[i]
        red = tuple(d for d, c in enumerate(s) if shp[d] == 1 and sizes[c] != 1)
        if red:
            r = ns.sum(r, red, True)
        res.append(r)
    return tuple(res)


def _np_einsum(eq, *arrs):
    """np.einsum with PyTorch's broadcasting of size-1 dimensions (the array namespace's ns.einsum)."""
    lhs, out = eq.split("->")
    subs = lhs.split(",")
    sizes = {}
    for s, a in zip(subs, arrs):
        for c, d in zip(s, a.shape):
            if sizes.get(c, 1) == 1:
                sizes[c] = d
    arrs = [a if a.shape == tuple(sizes[c] for c in s) else np.broadcast_to(a, tuple(sizes[c] for c in s))
            for s, a in zip(subs, arrs)]
    y = _f32_einsum(eq, arrs)
    return np.ascontiguousarray(y, like=arrs[0])


def _f32_einsum(eq, arrs):
    """np.einsum; bfloat16 (which np.einsum refuses) is contracted in float32 and rounded once."""
    if arrs[0].dtype.kind == "V":
        return np.einsum(eq, *[a.astype(np.float32) for a in arrs], optimize=len(arrs) > 2).astype(arrs[0].dtype)
    return np.einsum(eq, *arrs, optimize=len(arrs) > 2)


def _einsum_core(subs, out, operands, cls):
    sizes = {}
    for i, (s, t) in enumerate(zip(subs, operands)):
        shp = t._data.shape
        seen = {}
        for c, d in zip(s, shp):
            if c in seen and seen[c] != d:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {i} but the sizes don't "
                                   f"match, {d} != {seen[c]}")
            seen[c] = d
        for c, d in seen.items():
            p = sizes.get(c)
            if p is None or p == 1:
                sizes[c] = d
            elif d != p and d != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {d} for operand {i} which does not "
                                   f"broadcast with previously seen size {p}")
    dt0 = operands[0]._data.dtype
    for t in operands[1:]:
        if t._data.dtype != dt0:
            raise RuntimeError(f"expected scalar type {_st(operands[0])} but found {_st(t)}")
    arrs = []
    for s, t in zip(subs, operands):
        a = t._data
        full = tuple(sizes[c] for c in s)
        if a.shape != full:
            a = np.broadcast_to(a, full)
        arrs.append(a)
    eq = ",".join(subs) + "->" + out
    y = _f32_einsum(eq, arrs)
    y = as_array(y).astype(dt0, order="C")          # a fresh C-ordered copy, on the device of y
    return _wrap(y, cls, tuple(operands), _einsum_bw, (list(subs), out, sizes, [t._data.shape for t in operands]))


def einsum(*args):
    if not args or not isinstance(args[0], str):
        raise TypeError("einsum(): argument 'equation' must be str")
    equation = args[0]
    operands = list(args[1][0:]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
    if _acs.on and len(operands) > 1:          # torch's einsum contracts through bmm, which autocast lowers
        return _ac.lower(einsum, equation, *operands)
    eq = equation.replace(" ", "")
    for i, ch in enumerate(equation):
        if not (ch.isascii() and (ch.isalpha() or ch in ".,->" or ch == " ")):
            raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                               "subscripts must be in [a-zA-Z]")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) > len(operands):
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    used = set(c for c in eq if c.isalpha())
    free = [c for c in _LETTERS if c not in used]
    ne = 0
    for i, (term, t) in enumerate(zip(terms, operands)):
        nd = t._data.ndim
        nl = len(term.replace("...", ""))
        if "..." in term:
            if nl > nd:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nl}) is more than the "
                                   f"number of dimensions ({nd}) for operand {i}")
            ne = max(ne, nd - nl)
        elif nl != nd:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nl}) does not match the "
                               f"number of dimensions ({nd}) for operand {i} and no ellipsis was given")
    ell = "".join(free[:ne])
    subs = []
    for term, t in zip(terms, operands):
        if "..." in term:
            k = t._data.ndim - len(term.replace("...", ""))
            term = term.replace("...", ell[ne - k:])
        subs.append(term)
    if arrow:
        for c in rhs.replace("...", ""):
            if not any(c in term for term in terms):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the equation for any "
                                   "input operand")
            if rhs.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once in the output")
        out = rhs.replace("...", ell)
    else:
        allc = "".join(subs)
        out = ell + "".join(sorted(c for c in set(allc) if allc.count(c) == 1 and c not in ell))
    summed = any(c not in out for s in subs for c in s)
    if len(subs) == 1:
        cls = SumBackward1 if summed else PermuteBackward0
    else:
        cls = ViewBackward0 if summed else MulBackward0
    return _einsum_core(subs, out, operands, cls)


def tensordot(a, b, dims=2, out=None):
    if _acs.on:
        return _ac.lower(tensordot, a, b, dims, out)
    na, nb = a._data.ndim, b._data.ndim
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > na or dims > nb:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(-dims, 0)), list(range(dims))
    else:
        da, db = dims
        if isinstance(da, int) or isinstance(db, int):
            bad = da if isinstance(da, int) else db
            raise TypeError(f"tensordot(): argument 'dims_self' (position 3) must be tuple of ints, not "
                            f"{type(bad).__name__}")
        da, db = list(da), list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    for lst, nd in ((da, na), (db, nb)):
        for d in lst:
            if not -max(nd, 1) <= d < max(nd, 1):
                raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, "
                                 f"{max(nd, 1) - 1}], but got {d})")
        w = [d % nd for d in lst]
        for d in w:
            if w.count(d) > 1:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    sa, sb = a._data.shape, b._data.shape
    la = list(_LETTERS[:na])
    lb = list(_LETTERS[na:na + nb])
    for x, y in zip(da, db):
        if sa[x] != sb[y] and sa[x] != 1 and sb[y] != 1:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa[x]} in dim {x} and "
                               f"second has size {sb[y]} in dim {y}")
        lb[y % nb] = la[x % na]
    ca = set(x % na for x in da)
    cb = set(y % nb for y in db)
    out = "".join(c for i, c in enumerate(la) if i not in ca) + "".join(c for i, c in enumerate(lb) if i not in cb)
    return _einsum_core(["".join(la), "".join(lb)], out, [a, b], ViewBackward0)


def inner(input, other, *, out=None):
    _tensor_arg(other, "inner", 2, "other")
    if input._data.ndim == 0 or other._data.ndim == 0:
        return mul(input, other)
    sa, sb = input._data.shape, other._data.shape
    if sa[-1] != sb[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got shapes "
                           f"{list(sa)} and {list(sb)}")
    return tensordot(input, other, ([-1], [-1]))
