"""torch.masked's reductions and normalisations on strided tensors, composed of ordinary ops as torch
composes them: the masked-out elements are replaced by the operation's identity (torch.where(mask, input,
identity): 0 for sum, 1 for prod, -inf for amax, nan for median, ...) and the plain op runs on the result,
so values, dtypes, grad_fn names and gradients (zero where masked out) are torch's. A mask broadcasts to
the input's shape; a sparse mask of a strided input is made dense. A fully masked-out slice gives the
identity (sum 0, amax -inf), nan (mean, median, var), or the softmax of all -inf (nan), as torch.
Sparse inputs are not supported here (torch's sparse COO / CSR branches)."""
import math

from .. import _dtype
from .._layout import strided
from ..ops import creation as _creation, linalg_norm as _lnorm

_REDUCTIONS = ("sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm", "var", "std",
               "logsumexp")
_SMALL_INTS = (_dtype.uint8, _dtype.bool, _dtype.int8, _dtype.int16, _dtype.int32)


def _identity(op, input, *args):
    """The value a masked-out element takes for `op` (a 0-d tensor of input's dtype); torch's
    NotImplementedError where there is none (amax / amin / logsumexp of bool)."""
    r = _identity_or_none(op, input, *args)
    if r is None:
        raise NotImplementedError(f"identity of {op} on {input.dtype} input")
    return r


def _identity_or_none(op, input, *args):
    dt, dev = input.dtype, input.device

    def full(v, dtype=dt):
        return _creation.tensor(v, dtype=dtype, device=dev)
    fl, signed = dt.is_floating_point, dt.is_signed or dt == _dtype.uint8
    if op in ("sum", "cumsum"):
        return full(0)
    if op in ("prod", "cumprod"):
        return full(1)
    if op in ("amax", "argmax", "logaddexp", "logsumexp"):
        if fl:
            return full(-math.inf)
        if op == "logsumexp" and dt.is_complex:
            return full(complex(-math.inf, 0))
        return full(_dtype.iinfo(dt).min) if signed else None
    if op in ("amin", "argmin"):
        if fl:
            return full(math.inf)
        return full(_dtype.iinfo(dt).max) if signed else None
    if op == "norm":
        if (args[0] if args else 2) == -math.inf:
            if not fl:
                raise AssertionError(f"input must be floating point, got {dt}")
            return full(math.inf)
        return full(0)
    if op == "median":
        return full(math.nan, dt if fl else _dtype.float32)
    return None


def _canonical_dim(dim, ndim):
    """The reduced dims, sorted and non-negative; None / () mean all (torch's errors for repeats and range)."""
    if dim == ():
        dim = None
    if dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    dims = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in dims:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        if d >= ndim or d < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
        dims.append(d % ndim)
    return tuple(sorted(dims))


def _input_mask(input, mask):
    """The mask as a bool tensor of input's shape (broadcast; a sparse mask made dense)."""
    if input.layout is not strided:
        raise ValueError(f"_input_mask expects strided tensor but got {input.layout}"
                         " (glassgrad's torch.masked takes strided inputs only)")
    if mask is None:
        raise ValueError("_input_mask requires explicit mask")
    if mask.shape != input.shape:
        if mask.ndim > input.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of the input)")
        if mask.layout is not strided:
            mask = mask.to_dense()
        mask = mask.clone().broadcast_to(input.shape).to(dtype=_dtype.bool)
    if mask.layout is not strided:
        mask = mask.to_dense()
    return mask.to(dtype=_dtype.bool)


def _combine(op, input, mask, *args):
    """input with its masked-out elements set to op's identity (input itself when there is no mask)."""
    if input.layout is not strided:
        raise ValueError(f"masked {op} expects strided tensor (got {input.layout} tensor)")
    if mask is None:
        return input
    return input.where(_input_mask(input, mask), _identity(op, input, *args))


def _sum_dtype(input, dtype):
    if dtype is None:
        return _dtype.int64 if input.dtype in _SMALL_INTS else input.dtype
    return dtype


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dim_ = _canonical_dim(dim, input.ndim)
    return _combine("sum", input, mask).sum(dim_, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = _sum_dtype(input, dtype)
    dim_ = _canonical_dim(dim, input.ndim)
    result = _combine("prod", input, mask).to(dtype=dtype)
    for d in reversed(dim_):
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    return _combine("sum", input, mask).cumsum(dim_, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    return _combine("prod", input, mask).cumprod(dim_, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amax", input, mask)
    return x.amax(_canonical_dim(dim, x.ndim), bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amin", input, mask)
    return x.amin(_canonical_dim(dim, x.ndim), bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return _combine("argmax", input, mask).argmax(dim, bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return _combine("argmin", input, mask).argmin(dim, bool(keepdim)).to(dtype=dtype)


def _counted(input, dim, keepdim, dtype, mask):
    """(the masked sum, the number of elements it took) -- the two halves of a masked mean."""
    if input.layout is not strided:
        raise ValueError(f"masked mean expects strided or sparse_csr tensor (got {input.layout} tensor)")
    if mask is None:
        count = sum(_creation.ones(input.shape, dtype=_dtype.int64, device=input.device), dim, keepdim=keepdim)
        return sum(input, dim, keepdim=keepdim, dtype=dtype), count
    inmask = _input_mask(input, mask)
    return sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask), inmask.sum(dim=dim, keepdim=bool(keepdim))


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either a floating point or "
                         f"complex dtype. Got: {dtype}")
    total, count = _counted(input, dim, keepdim, dtype, mask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=_dtype.float32)
    output = _combine("median", input, mask).nanmedian(dim_, keepdim).values
    if is_float:
        return output
    if not output.isnan().any():
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)
    return _combine("logsumexp", input, mask).logsumexp(dim_, keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    dtype = input.dtype if dtype is None else dtype
    if input.layout is not strided or other.layout is not strided:
        raise ValueError(f"masked logaddexp expects strided tensors (got {input.layout} tensor for input, "
                         f"{other.layout} for other)")
    a = _combine("logaddexp", input, input_mask)
    return a.logaddexp(_combine("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("norm", input, mask, ord)
    return _lnorm.vector_norm(x, ord, _canonical_dim(dim, input.ndim), bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = _dtype.float32
    compute = dtype if (dtype.is_floating_point or dtype.is_complex) else _dtype.float32
    if input.layout is not strided:
        raise ValueError(f"masked std/var expects strided tensor (got {input.layout} tensor)")
    inmask = None if mask is None else _input_mask(input, mask)
    sample_total, count = _counted(input, dim, True, dtype, inmask)
    if input.dtype == _dtype.bool:      # torch.subtract's refusal (glassgrad's subtraction would promote)
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")
    x = input - sample_total / count
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        count = count.to(compute.to_real() if compute.is_complex else compute) - correction
        count = count.maximum(count.new_zeros([]))
    output = (total / count).to(dtype=dtype)
    return output.sqrt() if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


def _normalisation(name, identity, input, dim, dtype, mask):
    dtype = input.dtype if dtype is None else dtype
    dim_ = _canonical_dim(dim, input.ndim)[0]
    if input.layout is not strided:
        raise ValueError(f"masked {name} expects strided tensor (got {input.layout} tensor)")
    return _combine(identity, input, mask), dim_, dtype


def softmax(input, dim, *, dtype=None, mask=None):
    x, d, dtype = _normalisation("softmax", "amax", input, dim, dtype, mask)
    return x.softmax(d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    x, d, dtype = _normalisation("log_softmax", "amax", input, dim, dtype, mask)
    return x.log_softmax(d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    x, d, dtype = _normalisation("softmin", "amin", input, dim, dtype, mask)
    return (-x).softmax(d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return x / nrm.maximum(nrm.new_full([], eps))


