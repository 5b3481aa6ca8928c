"""vmap's batched path: the function runs once on the whole batch, through batching rules for common ops.

A mapped argument reaches the function as a ``Batched`` object (the real batched tensor ``_t``, batch at
dim 0, behind the per-sample interface): its ``shape`` / ``size()`` / ``dim()`` are a sample's, and its
methods and operators are batching rules that compute on ``_t``:

  elementwise   unary methods (exp, sin, tanh, relu, sigmoid, sqrt, ...), the arithmetic and comparison
                operators and add / sub / mul / div / pow / maximum / minimum with a Batched, Tensor or
                number on the right (per-sample ranks right-aligned; tensor operands of one dtype only, since
                torch's promotion treats 0-d tensors apart)
  products      @ / matmul / mm / mv / dot for per-sample ranks 1 and 2
  reductions    sum / mean / amax / amin / var / std over given dims (or all), keepdim; logsumexp,
                argmax / argmin over a dim; softmax / log_softmax
  shapes        reshape / view / flatten / unsqueeze / squeeze / transpose / permute / T / mT / expand /
                basic indexing (ints, slices, None, Ellipsis)
  others        clamp / clip with numbers, masked_fill with a number, to(dtype)

Anything else (another method, a torch.* function or nn module, ``bool()`` / ``float()`` / ``.item()`` on it,
an in-place method, a Tensor on the left of an operator) raises inside the attempt: glassgrad's functions
refuse a non-Tensor argument with a TypeError, and ``Batched`` answers every other attribute and conversion
with ``NotBatchable``, before anything is written.  vmap then restores the random generator and runs its
per-sample loop instead, so the batched path either computes exactly what the loop computes or is not
used.  (A function that catches those exceptions itself and carries on is outside this promise.)
"""
from .._tensor import Tensor, Size

__all__ = ["Batched", "NotBatchable"]


class NotBatchable(Exception):
    """The batched attempt met something without a batching rule (vmap falls back to its loop)."""


def _dims(d, rank):
    """A per-sample dim (int) or dims (tuple / list) -> the batched tensor's dims."""
    if isinstance(d, (tuple, list)):
        return tuple(_dims(x, rank) for x in d)
    if isinstance(d, bool) or not isinstance(d, int) or not -max(rank, 1) <= d < max(rank, 1):
        raise NotBatchable("dim")
    return d % max(rank, 1) + 1


class Batched:
    __slots__ = ("_t",)
    __array_ufunc__ = None          # NumPy must not take it for an array

    def __init__(self, t):
        self._t = t

    @property
    def __class__(self):
        """isinstance(x, torch.Tensor) holds, as for torch's BatchedTensor (a function branching on it takes the
        Tensor branch; glassgrad functions then reach for a Tensor attribute it lacks and raise)."""
        return Tensor

    # -- a sample's metadata --
    @property
    def shape(self):
        return Size(self._t.shape[1:])

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return self._t.dim() - 1

    ndim = property(dim)

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    dtype = property(lambda self: self._t.dtype)
    device = property(lambda self: self._t.device)
    requires_grad = property(lambda self: self._t.requires_grad)

    def is_floating_point(self):
        return self._t.is_floating_point()

    def __getattr__(self, name):
        raise NotBatchable(name)

    def _refuse(self, *args, **kwargs):
        raise NotBatchable("conversion")

    __bool__ = __float__ = __int__ = __index__ = __len__ = __iter__ = __array__ = __contains__ = _refuse
    __setitem__ = __complex__ = _refuse

    def __repr__(self):
        return f"BatchedTensor(bdim=0, value={self._t!r})"

    def _rank_to(self, r):
        """_t with per-sample dims padded on the left to rank r (right-aligned broadcasting)."""
        pad = r - self.dim()
        return self._t if pad == 0 else self._t.reshape((self._t.shape[0],) + (1,) * pad + tuple(self.shape))


def _unary(name):
    def rule(self, *args, **kwargs):
        if args or kwargs:
            raise NotBatchable(name)
        return Batched(getattr(self._t, name)())
    rule.__name__ = name
    return rule


for _n in ("abs", "neg", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin",
           "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "square", "reciprocal",
           "sign", "floor", "ceil", "trunc", "frac", "erf", "erfc", "float", "double", "clone", "detach",
           "contiguous"):
    setattr(Batched, _n, _unary(_n))
Batched.__neg__, Batched.__abs__ = Batched.neg, Batched.abs


def _binary(name, reflected=False):
    def rule(self, other, *args, **kwargs):
        if args or kwargs or not isinstance(other, (Batched, Tensor, int, float, bool)):
            raise NotBatchable(name)
        ranks = [x.dim() for x in (self, other) if isinstance(x, (Batched, Tensor))]
        dts = {x.dtype for x in (self, other) if isinstance(x, (Batched, Tensor))}
        if len(dts) > 1:
            raise NotBatchable("mixed dtypes")
        r = max(ranks)
        a = self._rank_to(r)
        b = other._rank_to(r) if isinstance(other, Batched) else other
        if reflected:
            a, b = b, a
        fn = getattr(Tensor, name)
        return Batched(fn(a, b) if isinstance(a, Tensor) else getattr(Tensor, _REFLECT[name])(b, a))
    rule.__name__ = name
    return rule


_REFLECT = {"__add__": "__radd__", "__sub__": "__rsub__", "__mul__": "__rmul__", "__truediv__": "__rtruediv__",
            "__pow__": "__rpow__"}
for _n in ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
           "__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__eq__", "__ne__", "__lt__", "__le__",
           "__gt__", "__ge__"):
    setattr(Batched, _n, _binary(_n))
for _n, _m in (("__radd__", "__add__"), ("__rsub__", "__sub__"), ("__rmul__", "__mul__"),
               ("__rtruediv__", "__truediv__"), ("__rpow__", "__pow__")):
    setattr(Batched, _n, _binary(_m, reflected=True))
Batched.__hash__ = object.__hash__


# -- products -----------------------------------------------------------------------------------------
def _matmul(self, other):
    ra = self.dim()
    if isinstance(other, Tensor) and not isinstance(other, Batched):
        if ra in (1, 2) and other.dim() in (1, 2) and other.dtype == self.dtype:
            return Batched(self._t @ other)
        raise NotBatchable("matmul")
    if not isinstance(other, Batched) or other.dim() not in (1, 2) or ra not in (1, 2) or other.dtype != self.dtype:
        raise NotBatchable("matmul")
    a = self._t.unsqueeze(1) if ra == 1 else self._t
    b = other._t.unsqueeze(2) if other.dim() == 1 else other._t
    out = a @ b
    if other.dim() == 1:
        out = out.squeeze(-1)
    if ra == 1:
        out = out.squeeze(1) if other.dim() == 2 else out.squeeze(-1)
    return Batched(out)


def _product(name, ranks):
    def rule(self, other):
        if (self.dim(), other.dim()) != ranks:
            raise NotBatchable(name)
        return _matmul(self, other)
    return rule


Batched.__matmul__ = Batched.matmul = _matmul
Batched.mm, Batched.mv, Batched.dot = _product("mm", (2, 2)), _product("mv", (2, 1)), _product("dot", (1, 1))


# -- reductions -----------------------------------------------------------------------------------------
def _reduction(name):
    def rule(self, dim=None, keepdim=False, **kwargs):
        if kwargs or self.dim() == 0:
            raise NotBatchable(name)
        dims = tuple(range(1, self._t.dim())) if dim is None else _dims(dim, self.dim())
        if dims == ():
            raise NotBatchable(name)
        return Batched(getattr(self._t, name)(dims, keepdim=keepdim))
    return rule


for _n in ("sum", "mean", "amax", "amin"):
    setattr(Batched, _n, _reduction(_n))


def _softmax(name):
    def rule(self, dim, **kwargs):
        if kwargs or self.dim() == 0:
            raise NotBatchable(name)
        return Batched(getattr(self._t, name)(_dims(dim, self.dim())))
    return rule


Batched.softmax, Batched.log_softmax = _softmax("softmax"), _softmax("log_softmax")


# -- shapes -----------------------------------------------------------------------------------------------
def _sizes(args):
    shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    if not all(isinstance(s, int) and not isinstance(s, bool) for s in shape):
        raise NotBatchable("shape")
    return tuple(shape)


def _reshape(name):
    def rule(self, *shape):
        return Batched(getattr(self._t, name)((self._t.shape[0],) + _sizes(shape)))
    return rule


Batched.reshape, Batched.view = _reshape("reshape"), _reshape("view")


def _flatten(self, start_dim=0, end_dim=-1):
    if self.dim() == 0:
        raise NotBatchable("flatten")
    return Batched(self._t.flatten(_dims(start_dim, self.dim()), _dims(end_dim, self.dim())))


def _unsqueeze(self, dim):
    if isinstance(dim, bool) or not isinstance(dim, int) or not -self.dim() - 1 <= dim <= self.dim():
        raise NotBatchable("unsqueeze")
    return Batched(self._t.unsqueeze(dim % (self.dim() + 1) + 1))


def _squeeze(self, dim=None):
    if dim is None:
        return Batched(self._t.reshape((self._t.shape[0],) + tuple(s for s in self.shape if s != 1)))
    return Batched(self._t.squeeze(_dims(dim, self.dim())))


def _transpose(self, dim0, dim1):
    if self.dim() == 0:
        raise NotBatchable("transpose")
    return Batched(self._t.transpose(_dims(dim0, self.dim()), _dims(dim1, self.dim())))


def _permute(self, *dims):
    dims = _sizes(dims)
    if len(dims) != self.dim():
        raise NotBatchable("permute")
    return Batched(self._t.permute((0,) + _dims(dims, self.dim())))


def _T(self):
    if self.dim() > 2:
        raise NotBatchable("T")
    return self if self.dim() < 2 else Batched(self._t.transpose(1, 2))


def _mT(self):
    if self.dim() < 2:
        raise NotBatchable("mT")
    return Batched(self._t.transpose(-2, -1))


def _getitem(self, index):
    index = index if isinstance(index, tuple) else (index,)
    for i in index:
        if not (i is None or i is Ellipsis or isinstance(i, slice) or (isinstance(i, int) and not isinstance(i, bool))):
            raise NotBatchable("indexing")
    if sum(1 for i in index if i is not None and i is not Ellipsis) > self.dim():
        raise NotBatchable("indexing")
    return Batched(self._t[(slice(None),) + index])


Batched.flatten, Batched.unsqueeze, Batched.squeeze = _flatten, _unsqueeze, _squeeze
Batched.transpose = Batched.swapaxes = Batched.swapdims = _transpose
Batched.permute, Batched.__getitem__ = _permute, _getitem
Batched.T, Batched.mT = property(_T), property(_mT)


# -- a few more common methods ----------------------------------------------------------------------------
def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _clamp(self, min=None, max=None):
    if not all(b is None or _is_number(b) for b in (min, max)):
        raise NotBatchable("clamp")
    return Batched(self._t.clamp(min, max))


def _logsumexp(self, dim, keepdim=False):
    if self.dim() == 0:
        raise NotBatchable("logsumexp")
    return Batched(self._t.logsumexp(_dims(dim, self.dim()), keepdim=keepdim))


def _spread(name):
    def rule(self, dim=None, *, correction=1, keepdim=False):
        if self.dim() == 0 or not _is_number(correction):
            raise NotBatchable(name)
        dims = tuple(range(1, self._t.dim())) if dim is None else _dims(dim, self.dim())
        if dims == ():
            raise NotBatchable(name)
        return Batched(getattr(self._t, name)(dims, correction=correction, keepdim=keepdim))
    return rule


def _arg(name):
    def rule(self, dim, keepdim=False):
        if self.dim() == 0 or not isinstance(dim, int):
            raise NotBatchable(name)
        return Batched(getattr(self._t, name)(_dims(dim, self.dim()), keepdim=keepdim))
    return rule


def _to(self, dtype):
    from .._dtype import dtype as _dtype_cls
    if not isinstance(dtype, _dtype_cls):
        raise NotBatchable("to")
    return Batched(self._t.to(dtype))


def _expand(self, *sizes):
    sizes = _sizes(sizes)
    if len(sizes) < self.dim():
        raise NotBatchable("expand")
    return Batched(self._rank_to(len(sizes)).expand((self._t.shape[0],) + sizes))


def _masked_fill(self, mask, value):
    if not _is_number(value) or not isinstance(mask, (Batched, Tensor)):
        raise NotBatchable("masked_fill")
    r = max(self.dim(), mask.dim())
    m = mask._rank_to(r) if isinstance(mask, Batched) else mask
    return Batched(self._rank_to(r).masked_fill(m, value))


Batched.clamp = Batched.clip = _clamp
Batched.logsumexp, Batched.to, Batched.expand, Batched.masked_fill = _logsumexp, _to, _expand, _masked_fill
Batched.var, Batched.std = _spread("var"), _spread("std")
Batched.argmax, Batched.argmin = _arg("argmax"), _arg("argmin")
