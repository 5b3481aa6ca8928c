"""torch._foreach_*: each function is the per-tensor op applied over lists of tensors, with torch's list
checks and argument forms (a list of tensors, one number, a list of numbers, a 0-dim tensor where torch
takes one, ``alpha=``).  Out-of-place forms return a tuple of new tensors (differentiable through the
per-tensor ops); in-place forms (trailing ``_``) write each tensor in place and return the list given.
The tables below map each name to its per-tensor Tensor method.  (torch's fused kernels give their
results one ``Foreach*Backward`` node; here each result's ``grad_fn`` is the per-tensor op's node.)"""
import numbers

from ._tensor import Tensor
from .ops import arithmetic as _arith

__all__ = []

_UNARY = ("abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 neg "
          "reciprocal round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc").split()
# name: (per-tensor method, the forms of the second operand: L tensor list, S number, s number list,
#        T 0-dim tensor; A: alpha= with L/T)
_BINARY = {"add": ("add", "LSsTA"), "sub": ("sub", "LSsA"), "mul": ("mul", "LSsT"), "div": ("div", "LSsT"),
           "maximum": ("maximum", "LSs"), "minimum": ("minimum", "LSs"), "clamp_min": ("clamp_min", "LSs"),
           "clamp_max": ("clamp_max", "LSs"), "pow": ("pow", "LSs")}
_CLAMP = {"maximum": "clamp_min", "minimum": "clamp_max"}   # (maximum with a number, and in place)


def _tname(x):
    if isinstance(x, Tensor):
        return "Tensor"
    return type(x).__name__


def _bad_args(name, args, kw=()):
    got = ", ".join([_tname(a) for a in args] + [f"{k}={_tname(v)}" for k, v in kw])
    return TypeError(f"{name}() received an invalid combination of arguments - got ({got})")


def _is_tensors(x):
    return isinstance(x, (list, tuple)) and all(isinstance(t, Tensor) for t in x)


def _is_numbers(x):
    return isinstance(x, (list, tuple)) and all(isinstance(v, numbers.Number) for v in x)


def _tensors(name, x, pos, args):
    """Check one argument is a list/tuple of Tensors (torch's TypeErrors)."""
    if not isinstance(x, (list, tuple)):
        raise _bad_args(name, args)
    for i, t in enumerate(x):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument {pos}, but got {type(t).__name__}")
    return x


def _check_lists(*lists):
    n = len(lists[0])
    if n == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in lists[1:]:
        if len(other) != n:
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and {len(other)}")


def _check_scalars(self, scalars):
    if len(scalars) != len(self):
        raise RuntimeError("Tensor list must have same number of elements as scalar list.")


def _second(name, forms, self, other, args, kw):
    """The per-tensor second operands of a binary foreach (a list of len(self))."""
    has_alpha = bool(kw)
    if isinstance(other, Tensor) and "T" not in forms and other.dim() == 0:   # torch's parser: a Number
        other = other.item()
    if isinstance(other, Tensor) and "T" in forms:
        if other.dim() != 0:
            raise RuntimeError(f"scalar tensor expected to be 0 dim but it has {other.dim()} dimensions and "
                               f"{other.numel()} elements.")
        return [other] * len(self)
    if isinstance(other, numbers.Number) and "S" in forms and not has_alpha:
        return [other] * len(self)
    if isinstance(other, (list, tuple)) and (not other or isinstance(other[0], Tensor) or has_alpha):
        _check_lists(self, _tensors(name, other, 1, args))
        return list(other)
    if _is_numbers(other) and "s" in forms and not has_alpha:
        _check_scalars(self, other)
        return list(other)
    raise _bad_args(name, args, kw)


_NONE = object()
_KINDS = {"scalar": lambda v: isinstance(v, numbers.Number) or isinstance(v, Tensor) and v.dim() == 0,
          "scalars": _is_numbers, "other": lambda v: isinstance(v, Tensor) or _is_tensors(v)}


def _keyword(fname, self, other, names, kw):
    """The second operand given by position or by one of torch's keyword names (other= / scalar= / scalars=,
    exponent= for pow), each only for its own kind."""
    given = [n for n in names if n in kw]
    if other is not _NONE and not given:
        return other
    if other is not _NONE or len(given) != 1 or not _KINDS.get(given[0], lambda v: True)(kw[given[0]]):
        raise _bad_args(fname, (self,), kw.items())
    return kw.pop(given[0])


def _make_binary(fname, meth, forms, inplace):
    names = ("exponent",) if meth == "pow" else ("other", "scalar", "scalars")

    def fn(self, other=_NONE, *extra, **kw):
        other = _keyword(fname, self, other, names, kw)
        args = (self, other) + extra
        if extra or set(kw) - {"alpha"} or (kw and "A" not in forms):
            raise _bad_args(fname, args, kw.items())
        _check_lists(_tensors(fname, self, 0, args))
        others = _second(fname, forms, self, other, args, kw.items())
        if inplace:
            for t, o in zip(self, others):
                getattr(t, _CLAMP.get(meth, meth) + "_")(o, **kw)
            return self
        return tuple(getattr(t, _CLAMP.get(meth, meth) if isinstance(o, numbers.Number) else meth)(o, **kw)
                     for t, o in zip(self, others))
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"torch.{fname}: Tensor.{meth}{'_' if inplace else ''} over the lists."
    return fn


def _make_unary(fname, meth):
    def fn(self):
        _check_lists(_tensors(fname, self, 0, (self,)))
        if meth.endswith("_"):
            for t in self:
                getattr(t, meth)()
            return self
        return tuple(getattr(t, meth)() for t in self)
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"torch.{fname}: Tensor.{meth} over the list."
    return fn


def _weights(name, self, w, args, tensor_ok):
    """addcmul/addcdiv's value / lerp's weight: a number, a list of numbers, a list of tensors (lerp) or a
    1-D tensor of scalars (addcmul/addcdiv); a list of len(self)."""
    if isinstance(w, numbers.Number) and not isinstance(w, bool) or (isinstance(w, bool) and tensor_ok):
        return [w] * len(self)
    if isinstance(w, Tensor) and tensor_ok:
        if w.dim() != 1:
            raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {w.dim()} instead.")
        if w.numel() != len(self):
            raise RuntimeError(f"Expected length of scalars to match input of length {len(self)} but got "
                               f"{w.numel()} instead.")
        return w.tolist()
    if _is_numbers(w) and w:
        _check_scalars(self, w)
        return list(w)
    if _is_tensors(w) and w and not tensor_ok:
        _check_lists(self, w)
        return list(w)
    raise _bad_args(name, args)


def _make_addc(fname, meth, inplace):
    def fn(self, tensor1, tensor2, value=1, *, scalars=None):
        if scalars is not None:          # torch's keyword for the list / tensor of scalars
            value = scalars
        scalars = value
        args = (self, tensor1, tensor2, scalars)
        _check_lists(_tensors(fname, self, 0, args), _tensors(fname, tensor1, 1, args),
                     _tensors(fname, tensor2, 2, args))
        vals = _weights(fname, self, scalars, args, True)
        if inplace:
            for t, a, b, v in zip(self, tensor1, tensor2, vals):
                getattr(t, meth + "_")(a, b, value=v)
            return self
        return tuple(getattr(t, meth)(a, b, value=v) for t, a, b, v in zip(self, tensor1, tensor2, vals))
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"torch.{fname}: Tensor.{meth}{'_' if inplace else ''}(t1, t2, value=v) over the lists."
    return fn


def _make_lerp(fname, inplace):
    def fn(self, tensors1, weight=None, *, weights=None):
        if (weight is None) == (weights is None) or weights is not None and not _is_tensors(weights):
            raise _bad_args(fname, (self, tensors1, weight if weights is None else weights))
        weight = weights if weights is not None else weight
        args = (self, tensors1, weight)
        _check_lists(_tensors(fname, self, 0, args), _tensors(fname, tensors1, 1, args))
        ws = _weights(fname, self, weight, args, False)
        if inplace:
            for t, e, w in zip(self, tensors1, ws):
                t.lerp_(e, w)
            return self
        return tuple(t.lerp(e, w) for t, e, w in zip(self, tensors1, ws))
    fn.__name__ = fn.__qualname__ = fname
    fn.__doc__ = f"torch.{fname}: Tensor.lerp{'_' if inplace else ''}(end, weight) over the lists."
    return fn


def _install():
    g = globals()
    for op in _UNARY:
        g[f"_foreach_{op}"] = _make_unary(f"_foreach_{op}", op)
        g[f"_foreach_{op}_"] = _make_unary(f"_foreach_{op}_", op + "_")
    g["_foreach_zero_"] = _make_unary("_foreach_zero_", "zero_")
    g["_foreach_clone"] = _make_unary("_foreach_clone", "clone")
    for op, (meth, forms) in _BINARY.items():
        g[f"_foreach_{op}"] = _make_binary(f"_foreach_{op}", meth, forms, False)
        g[f"_foreach_{op}_"] = _make_binary(f"_foreach_{op}_", meth, forms, True)
    for op in ("addcmul", "addcdiv"):
        g[f"_foreach_{op}"] = _make_addc(f"_foreach_{op}", op, False)
        g[f"_foreach_{op}_"] = _make_addc(f"_foreach_{op}_", op, True)
    g["_foreach_lerp"] = _make_lerp("_foreach_lerp", False)
    g["_foreach_lerp_"] = _make_lerp("_foreach_lerp_", True)
    __all__.extend(sorted(n for n in g if n.startswith("_foreach_")))


_install()
_pow_list = _foreach_pow  # noqa: F821  (made by _install)


def _foreach_pow(self, exponent):  # noqa: F811  (exponent= works by name here; _pow_list takes it too)
    """torch._foreach_pow: the list forms, or a number base over a list of exponents (torch.pow(n, t))."""
    if isinstance(self, numbers.Number) and not isinstance(self, bool):
        _check_lists(_tensors("_foreach_pow", exponent, 1, (self, exponent)))
        return tuple(_arith.pow(self, t) for t in exponent)
    return _pow_list(self, exponent)


def _foreach_norm(self, ord=2, dtype=None):
    """torch._foreach_norm: torch.linalg.vector_norm(t, ord, dtype=dtype) of each tensor (a tuple of 0-dim)."""
    from .ops import linalg_norm as _linalg
    if not isinstance(ord, numbers.Number) or isinstance(ord, bool):
        raise TypeError(f"_foreach_norm(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}")
    _check_lists(_tensors("_foreach_norm", self, 0, (self,)))
    return tuple(_linalg.vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_powsum(self, ord=2, dtype=None):
    """torch._foreach_powsum: sum(|t| ** ord) of each tensor (|0| ** 0 = 1; a tuple of 0-dim tensors), floating
    and complex inputs only; as in torch its result has no derivative (grad_fn NotImplemented)."""
    from . import _dtype
    from .ops._core import make, edge, grad, NotImplementedNode
    if not isinstance(ord, numbers.Number) or isinstance(ord, bool):
        raise TypeError(f"_foreach_powsum(): argument 'ord' (position 2) must be Number, not {type(ord).__name__}")
    _check_lists(_tensors("_foreach_powsum", self, 0, (self,)))
    out = []
    for t in self:
        if not (t.is_floating_point() or t.is_complex()):
            raise NotImplementedError(f"\"powsum_cpu\" not implemented for '{_dtype.c_name(t._data.dtype)}'")
        a = t.detach().abs()
        r = (a if dtype is None else a.to(dtype)).pow(ord).sum()
        if t.requires_grad and grad.enabled:
            n = NotImplementedNode((edge(t),))
            n.what = "aten::_foreach_powsum"
            r = make(r._data, True, n)
        out.append(r)
    return tuple(out)


def _foreach_max(self):
    """torch._foreach_max: the maximum of each tensor (a tuple of 0-dim tensors)."""
    _check_lists(_tensors("_foreach_max", self, 0, (self,)))
    for t in self:
        if t.numel() == 0:
            raise RuntimeError("_foreach_max cannot compute the maximum of an empty tensor; max over zero "
                               "elements is undefined.")
    return tuple(t.max() for t in self)


def _foreach_mm(self, mat2):
    """torch._foreach_mm: torch.mm of each pair."""
    args = (self, mat2)
    _check_lists(_tensors("_foreach_mm", self, 0, args), _tensors("_foreach_mm", mat2, 1, args))
    return tuple(a.mm(b) for a, b in zip(self, mat2))


def _foreach_copy_(self, src, non_blocking=False):
    """torch._foreach_copy_: self[i].copy_(src[i]) (broadcast and cast as copy_); returns self."""
    args = (self, src)
    _check_lists(_tensors("_foreach_copy_", self, 0, args), _tensors("_foreach_copy_", src, 1, args))
    for t, s in zip(self, src):
        t.copy_(s, non_blocking)
    return self


__all__.extend(["_foreach_norm", "_foreach_powsum", "_foreach_max", "_foreach_mm", "_foreach_copy_"])
