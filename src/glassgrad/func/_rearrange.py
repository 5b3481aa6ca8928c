"""torch.func.rearrange: einops-style reordering of a tensor's elements (functorch.einops.rearrange).

The pattern is parsed with torch's rules and error messages (``ParsedExpression``); then, where torch binds
first-class dimensions, the tensor is reshaped into its elementary axes (sizes inferred from the group sizes
and ``axes_lengths``, with torch's DimensionBindError messages), permuted to the right side's order and
reshaped into the right side's groups; left-side unit axes ("1" or "()") are summed away last, as torch's
first-class-dimension code does (so a "1" over a dimension larger than one sums it, as in torch).
"""
import keyword
import warnings

from .._tensor import Tensor
from ..ops.shape import stack

__all__ = ["rearrange", "DimensionBindError"]

_ELL = "\u2026"


class DimensionBindError(Exception):
    """functorch.dim's error for sizes that do not fit a pattern."""


class _Anon:
    pass


def _check_name(name):
    if not name.isidentifier():
        return False, "not a valid python identifier"
    if name[0] == "_" or name[-1] == "_":
        return False, "axis name should should not start or end with underscore"
    if keyword.iskeyword(name):
        warnings.warn(f"It is discouraged to use axes names that are keywords: {name}", RuntimeWarning)
    if name == "axis":
        warnings.warn("It is discouraged to use 'axis' as an axis name and will raise an error in future",
                      FutureWarning)
    return True, ""


class _Parsed:
    """One side of a pattern: `composition` is a list of groups (lists of names / _Anon) and _ELL."""

    def __init__(self, expression):
        self.has_ellipsis, self.ell_in_brackets = False, None
        self.identifiers, self.non_unit_anon, self.composition = set(), False, []
        if "." in expression:
            if "..." not in expression:
                raise ValueError("Expression may contain dots only inside ellipsis (...)")
            if expression.count("...") != 1 or expression.count(".") != 3:
                raise ValueError("Expression may contain dots only inside ellipsis (...); only one ellipsis for tensor ")
            expression = expression.replace("...", _ELL)
            self.has_ellipsis = True
        self._group, current = None, None
        for char in expression:
            if char in "() ":
                if current is not None:
                    self._add(current)
                current = None
                if char == "(":
                    if self._group is not None:
                        raise ValueError("Axis composition is one-level (brackets inside brackets not allowed)")
                    self._group = []
                elif char == ")":
                    if self._group is None:
                        raise ValueError("Brackets are not balanced")
                    self.composition.append(self._group)
                    self._group = None
            elif char.isalnum() or char in ("_", _ELL):
                current = char if current is None else current + char
            else:
                raise ValueError(f"Unknown character '{char}'")
        if self._group is not None:
            raise ValueError(f"Imbalanced parentheses in expression: '{expression}'")
        if current is not None:
            self._add(current)

    def _add(self, x):
        if x in self.identifiers:
            raise ValueError(f"Indexing expression contains duplicate dimension '{x}'")
        if x == _ELL:
            self.identifiers.add(_ELL)
            if self._group is None:
                self.composition.append(_ELL)
                self.ell_in_brackets = False
            else:
                self._group.append(_ELL)
                self.ell_in_brackets = True
            return
        is_number = x.isdecimal()
        if is_number and int(x) == 1:
            if self._group is None:
                self.composition.append([])
            return
        ok, reason = _check_name(x)
        if not (is_number or ok):
            raise ValueError(f"Invalid axis identifier: {x}\n{reason}")
        if is_number:
            if int(x) < 1:
                raise ValueError(f"Anonymous axis should have positive length, not {int(x)}")
            self.non_unit_anon = True
            x = _Anon()
        self.identifiers.add(x)
        (self.composition if self._group is None else self._group).append(x if self._group is not None else [x])


def _parse(pattern, axes_lengths):
    try:
        left_str, right_str = pattern.split("->")
    except ValueError:
        raise ValueError("Pattern must contain a single '->' separator") from None
    if _ELL in axes_lengths:
        raise ValueError(f"'{_ELL}' is not an allowed axis identifier")
    left, right = _Parsed(left_str), _Parsed(right_str)
    if not left.has_ellipsis and right.has_ellipsis:
        raise ValueError(f"Ellipsis found in right side, but not left side of a pattern {pattern}")
    if left.has_ellipsis and left.ell_in_brackets:
        raise ValueError(f"Ellipsis is parenthesis in the left side is not allowed: {pattern}")
    for length in axes_lengths.values():
        if type(length) is not int:
            raise TypeError(f"rearrange axis lengths must be integers, got: {type(length)}")
    if left.non_unit_anon or right.non_unit_anon:
        raise ValueError("rearrange only supports unnamed axes of size 1")
    difference = left.identifiers ^ right.identifiers
    if difference:
        raise ValueError(f"Identifiers only on one side of rearrange expression (should be on both): {difference}")
    unmatched = axes_lengths.keys() - left.identifiers
    if unmatched:
        raise ValueError(f"Identifiers not found in rearrange expression: {unmatched}")
    return left, right


def _bind_group(names, keys, size, axes_lengths):
    """The sizes of one left group's elementary axes (torch's first-class-dimension binding and errors)."""
    known = [axes_lengths.get(n) if isinstance(n, str) else None for n in names]
    unknown = [i for i, k in enumerate(known) if k is None]
    if len(unknown) > 1:
        raise DimensionBindError(f"cannot infer the sizes of two dimensions at once {keys[unknown[0]]} and "
                                 f"{keys[unknown[1]]}")
    prod = 1
    for k in known:
        prod *= 1 if k is None else k
    if unknown:
        if prod == 0 or size % prod:
            shown = tuple("?" if k is None else k for k in known)
            raise DimensionBindError(f"inferred dimension does not evenly fit into larger dimension: {size} vs {shown}")
        known[unknown[0]] = size // prod
    elif prod != size:
        raise DimensionBindError(f"Dimension sizes to do not match ({size} != {prod}) when matching dimension pack "
                                 f"({', '.join(keys)}{',' if len(keys) == 1 else ''})")
    return known


def _elementary(tensor, left, axes_lengths):
    """The left side's elementary axes: (keys, sizes) in order; a key is a name, an _Anon or (_ELL, j)."""
    n_anon = sum(1 for g in left.composition if g == [])
    if left.has_ellipsis:
        n_ell = tensor.dim() - (len(left.composition) - 1)
        if n_anon + len(left.identifiers) - 1 > tensor.dim():
            raise ValueError(f"Number of dimensions in pattern ({n_anon + len(left.identifiers) - 1}) must be less "
                             f"than or equal to the number of dimensions in the tensor ({tensor.dim()})")
    else:
        n_ell = 0
        if len(left.composition) != tensor.dim():
            raise ValueError(f"Number of dimensions in pattern ({len(left.composition)}) must be equal to the number "
                             f"of dimensions in the tensor ({tensor.dim()})")
    keys, sizes, dim, counter = [], [], 0, 0
    for group in left.composition:
        if group == _ELL:
            for j in range(n_ell):
                keys.append((_ELL, j))
                sizes.append(tensor.shape[dim])
                dim, counter = dim + 1, counter + 1
            continue
        names = group if group else [_Anon()]
        if not group:
            group.append(names[0])          # the unit axis, summed away at the end
        labels = [f"d{counter + i}" for i in range(len(names))]
        sizes.extend(_bind_group(names, labels, tensor.shape[dim], axes_lengths))
        keys.extend(names)
        dim, counter = dim + 1, counter + len(names)
    return keys, sizes


def rearrange(tensor, pattern, **axes_lengths):
    if not isinstance(tensor, Tensor):
        tensor = stack(tensor)
    left, right = _parse(pattern, axes_lengths)
    keys, sizes = _elementary(tensor, left, axes_lengths)
    if not keys:
        return tensor
    anon = [k for k in keys if isinstance(k, _Anon)]
    order, shape = [], []
    for group in right.composition:
        if group == _ELL:
            ell = [k for k in keys if isinstance(k, tuple)]
            order.extend(ell)
            shape.extend(sizes[keys.index(k)] for k in ell)
            continue
        n = 1
        for k in group:
            if k != _ELL:
                order.append(k)
                n *= sizes[keys.index(k)]
            else:
                for e in (k2 for k2 in keys if isinstance(k2, tuple)):
                    order.append(e)
                    n *= sizes[keys.index(e)]
        shape.append(n)
    out = tensor if list(tensor.shape) == sizes else tensor.reshape(sizes)
    perm = [keys.index(k) for k in order + anon]
    if perm != list(range(len(perm))):
        out = out.permute(perm)
    out = out.reshape(shape + [sizes[keys.index(k)] for k in anon]) if anon else out.reshape(shape)
    return out.sum(tuple(range(len(shape), len(shape) + len(anon)))) if anon else out
