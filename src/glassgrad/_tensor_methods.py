"""The Tensor methods of every op family, each a one-line delegation to its op module.

``Tensor`` inherits these; find where a method's work happens with ``grep "def exp" ops/``.
This file was written once from a list and is edited by hand since.
"""
from . import _args, ops as _ops


def _delegate(family, name):    # x.<name>(...) is ops.<family>.<name>(x, ...) ("a=b": x.a is ops.<family>.b)
    def method(self, *args, **kwargs):
        return getattr(getattr(_ops, family), name.split("=")[-1])(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name.split("=")[0]
    return method


_IN_PLACE = {   # the in-place forms (and aliases) torch's Tensor has, one line each over the family's op
    "unary": "absolute_ acos_ acosh_ arccos_ arccosh arccosh_ arcsin_ arcsinh arcsinh_ arctan_ arctanh arctanh_ asin_ "
             "asinh_ atan_ atanh_ cosh_ erf_ erfc_ erfinv_ exp2_ expm1_ fix_ log10_ log1p_ log2_ logit_ sgn_ sinh_ "
             "tan_ deg2rad_ rad2deg_",
    "binary": "atan2_ arctan2_=atan2_ copysign_ hypot_ xlogy_",
    "compare": "bitwise_left_shift_ bitwise_right_shift_ greater_=gt_ greater_equal_=ge_ less_=lt_ less_equal_=le_ "
               "not_equal_=ne_",
    "arithmetic": "divide_=div_ multiply_=mul_ subtract_=sub_ negative_ float_power_",
    "views": "swapaxes_=transpose_ swapdims_=transpose_", "activation": "hardshrink", "masked": "put",
    "scans": "cumprod_", "gather_scatter": "scatter_reduce_", "statistics": "bincount histogram",
    "sorting": "unique unique_consecutive",
}


class TensorMethods:
    __slots__ = ()

    # -- ops/arithmetic.py, unary.py, binary.py, ternary.py, softmax.py -------------------
    def add(self, other, *, alpha=1):
        return _ops.arithmetic.add(self, other, alpha=alpha)
    def add_(self, other, *, alpha=1):
        return _ops.arithmetic.add_(self, other, alpha=alpha)
    def sub(self, other, *, alpha=1):
        return _ops.arithmetic.sub(self, other, alpha=alpha)
    def sub_(self, other, *, alpha=1):
        return _ops.arithmetic.sub_(self, other, alpha=alpha)
    def subtract(self, other, *, alpha=1):
        return _ops.arithmetic.subtract(self, other, alpha=alpha)
    def mul(self, other):
        return _ops.arithmetic.mul(self, other)
    def mul_(self, other):
        return _ops.arithmetic.mul_(self, other)
    def multiply(self, other):
        return _ops.arithmetic.multiply(self, other)
    def div(self, other, *, rounding_mode=None):
        return _ops.arithmetic.div(self, other, rounding_mode=rounding_mode)
    def div_(self, other, *, rounding_mode=None):
        return _ops.arithmetic.div_(self, other, rounding_mode=rounding_mode)
    def divide(self, other, *, rounding_mode=None):
        return _ops.arithmetic.divide(self, other, rounding_mode=rounding_mode)
    def true_divide(self, other):
        return _ops.arithmetic.true_divide(self, other)
    def true_divide_(self, other):
        return _ops.arithmetic.true_divide_(self, other)
    def floor_divide(self, other):
        return _ops.arithmetic.floor_divide(self, other)
    def floor_divide_(self, other):
        return _ops.arithmetic.floor_divide_(self, other)
    def remainder(self, other):
        return _ops.arithmetic.remainder(self, other)
    def remainder_(self, other):
        return _ops.arithmetic.remainder_(self, other)
    def fmod(self, other):
        return _ops.arithmetic.fmod(self, other)
    def fmod_(self, other):
        return _ops.arithmetic.fmod_(self, other)
    def pow(self, exponent):
        return _ops.arithmetic.pow(self, exponent)
    def pow_(self, exponent):
        return _ops.arithmetic.pow_(self, exponent)
    def float_power(self, exponent):
        return _ops.arithmetic.float_power(self, exponent)
    def neg(self):
        return _ops.arithmetic.neg(self)
    def neg_(self):
        return _ops.arithmetic.neg_(self)
    negative = neg
    def abs(self):
        return _ops.unary.abs(self)
    def abs_(self):
        return _ops.unary.abs_(self)
    absolute = abs
    def sign(self):
        return _ops.unary.sign(self)
    def sign_(self):
        return _ops.unary.sign_(self)
    def sgn(self):
        return _ops.unary.sgn(self)
    def exp(self):
        return _ops.unary.exp(self)
    def exp_(self):
        return _ops.unary.exp_(self)
    def exp2(self):
        return _ops.unary.exp2(self)
    def expm1(self):
        return _ops.unary.expm1(self)
    def log(self):
        return _ops.unary.log(self)
    def log_(self):
        return _ops.unary.log_(self)
    def log2(self):
        return _ops.unary.log2(self)
    def log10(self):
        return _ops.unary.log10(self)
    def log1p(self):
        return _ops.unary.log1p(self)
    def sqrt(self):
        return _ops.unary.sqrt(self)
    def sqrt_(self):
        return _ops.unary.sqrt_(self)
    def rsqrt(self):
        return _ops.unary.rsqrt(self)
    def rsqrt_(self):
        return _ops.unary.rsqrt_(self)
    def sin(self):
        return _ops.unary.sin(self)
    def sin_(self):
        return _ops.unary.sin_(self)
    def cos(self):
        return _ops.unary.cos(self)
    def cos_(self):
        return _ops.unary.cos_(self)
    def tan(self):
        return _ops.unary.tan(self)
    def asin(self):
        return _ops.unary.asin(self)
    def acos(self):
        return _ops.unary.acos(self)
    def atan(self):
        return _ops.unary.atan(self)
    arcsin = asin
    arccos = acos
    arctan = atan
    def atan2(self, other):
        return _ops.binary.atan2(self, other)
    arctan2 = atan2
    def sinh(self):
        return _ops.unary.sinh(self)
    def cosh(self):
        return _ops.unary.cosh(self)
    def tanh(self):
        return _ops.unary.tanh(self)
    def tanh_(self):
        return _ops.unary.tanh_(self)
    def asinh(self):
        return _ops.unary.asinh(self)
    def acosh(self):
        return _ops.unary.acosh(self)
    def atanh(self):
        return _ops.unary.atanh(self)
    def sigmoid(self):
        return _ops.unary.sigmoid(self)
    def sigmoid_(self):
        return _ops.unary.sigmoid_(self)
    def logit(self, eps=None):
        return _ops.unary.logit(self, eps)
    def erf(self):
        return _ops.unary.erf(self)
    def erfc(self):
        return _ops.unary.erfc(self)
    def erfinv(self):
        return _ops.unary.erfinv(self)
    # ops/special.py: the gamma family, i0, sinc (x.polygamma(n) is torch.polygamma(n, x))
    lgamma, lgamma_, digamma, digamma_, polygamma, polygamma_, mvlgamma, mvlgamma_, i0, i0_, sinc, sinc_ = (_delegate(
        "special", n) for n in "lgamma lgamma_ digamma digamma_ polygamma=polygamma_method polygamma_ mvlgamma "
                               "mvlgamma_ i0 i0_ sinc sinc_".split())
    igamma, igamma_, igammac, igammac_ = (_delegate("special_binary", n) for n in "igamma igamma_ igammac igammac_".split())
    def reciprocal(self):
        return _ops.unary.reciprocal(self)
    def reciprocal_(self):
        return _ops.unary.reciprocal_(self)
    def square(self):
        return _ops.arithmetic.square(self)
    def square_(self):
        return _ops.arithmetic.square_(self)
    def clamp(self, min=None, max=None):
        return _ops.binary.clamp(self, min, max)
    def clamp_(self, min=None, max=None):
        return _ops.binary.clamp_(self, min, max)
    def clip(self, min=None, max=None):
        return _ops.binary.clip(self, min, max)
    def clip_(self, min=None, max=None):
        return _ops.binary.clip_(self, min, max)
    def clamp_min(self, min):
        return _ops.binary.clamp_min(self, min)
    def clamp_min_(self, min):
        return _ops.binary.clamp_min_(self, min)
    def clamp_max(self, max):
        return _ops.binary.clamp_max(self, max)
    def clamp_max_(self, max):
        return _ops.binary.clamp_max_(self, max)
    def minimum(self, other):
        return _ops.binary.minimum(self, other)
    def maximum(self, other):
        return _ops.binary.maximum(self, other)
    def fmin(self, other):
        return _ops.binary.fmin(self, other)
    def fmax(self, other):
        return _ops.binary.fmax(self, other)
    def floor(self):
        return _ops.unary.floor(self)
    def floor_(self):
        return _ops.unary.floor_(self)
    def ceil(self):
        return _ops.unary.ceil(self)
    def ceil_(self):
        return _ops.unary.ceil_(self)
    def round(self, *, decimals=0):
        return _ops.unary.round(self, decimals=decimals)
    def round_(self, *, decimals=0):
        return _ops.unary.round_(self, decimals=decimals)
    def trunc(self):
        return _ops.unary.trunc(self)
    def trunc_(self):
        return _ops.unary.trunc_(self)
    fix = trunc
    def frac(self):
        return _ops.unary.frac(self)
    def frac_(self):
        return _ops.unary.frac_(self)
    def lerp(self, end, weight):
        return _ops.ternary.lerp(self, end, weight)
    def lerp_(self, end, weight):
        return _ops.ternary.lerp_(self, end, weight)
    def hypot(self, other):
        return _ops.binary.hypot(self, other)
    def logaddexp(self, other):
        return _ops.binary.logaddexp(self, other)
    def logaddexp2(self, other):
        return _ops.binary.logaddexp2(self, other)
    def heaviside(self, values):
        return _ops.binary.heaviside(self, values)
    def heaviside_(self, values):
        return _ops.binary.heaviside_(self, values)
    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return _ops.unary.nan_to_num(self, nan, posinf, neginf)
    def nan_to_num_(self, nan=0.0, posinf=None, neginf=None):
        return _ops.unary.nan_to_num_(self, nan, posinf, neginf)
    def relu(self):
        return _ops.unary.relu(self)
    def relu_(self):
        return _ops.unary.relu_(self)
    def addcmul(self, tensor1, tensor2, *, value=1):
        return _ops.ternary.addcmul(self, tensor1, tensor2, value=value)
    def addcmul_(self, tensor1, tensor2, *, value=1):
        return _ops.ternary.addcmul_(self, tensor1, tensor2, value=value)
    def addcdiv(self, tensor1, tensor2, *, value=1):
        return _ops.ternary.addcdiv(self, tensor1, tensor2, value=value)
    def addcdiv_(self, tensor1, tensor2, *, value=1):
        return _ops.ternary.addcdiv_(self, tensor1, tensor2, value=value)
    def xlogy(self, other):
        return _ops.binary.xlogy(self, other)
    def deg2rad(self):
        return _ops.unary.deg2rad(self)
    def rad2deg(self):
        return _ops.unary.rad2deg(self)
    def copysign(self, other):
        return _ops.binary.copysign(self, other)
    def log_softmax(self, dim=None, dtype=None):
        return _ops.softmax.log_softmax(self, dim, dtype)
    def softmax(self, dim=None, dtype=None):
        return _ops.softmax.softmax(self, dim, dtype)


    # -- ops/compare.py ---------------------------------------------------------------
    def eq(self, other):
        return _ops.compare.eq(self, other)
    def ne(self, other):
        return _ops.compare.ne(self, other)
    def lt(self, other):
        return _ops.compare.lt(self, other)
    def le(self, other):
        return _ops.compare.le(self, other)
    def gt(self, other):
        return _ops.compare.gt(self, other)
    def ge(self, other):
        return _ops.compare.ge(self, other)
    def eq_(self, other):
        return _ops.compare.eq_(self, other)
    def ne_(self, other):
        return _ops.compare.ne_(self, other)
    def lt_(self, other):
        return _ops.compare.lt_(self, other)
    def le_(self, other):
        return _ops.compare.le_(self, other)
    def gt_(self, other):
        return _ops.compare.gt_(self, other)
    def ge_(self, other):
        return _ops.compare.ge_(self, other)
    def greater(self, other):
        return _ops.compare.greater(self, other)
    def greater_equal(self, other):
        return _ops.compare.greater_equal(self, other)
    def less(self, other):
        return _ops.compare.less(self, other)
    def less_equal(self, other):
        return _ops.compare.less_equal(self, other)
    def not_equal(self, other):
        return _ops.compare.not_equal(self, other)
    def isnan(self):
        return _ops.compare.isnan(self)
    def isinf(self):
        return _ops.compare.isinf(self)
    def isfinite(self):
        return _ops.compare.isfinite(self)
    def isposinf(self):
        return _ops.compare.isposinf(self)
    def isneginf(self):
        return _ops.compare.isneginf(self)
    def isreal(self):
        return _ops.compare.isreal(self)
    def signbit(self):
        return _ops.compare.signbit(self)
    def logical_and(self, other):
        return _ops.compare.logical_and(self, other)
    def logical_or(self, other):
        return _ops.compare.logical_or(self, other)
    def logical_xor(self, other):
        return _ops.compare.logical_xor(self, other)
    def logical_not(self):
        return _ops.compare.logical_not(self)
    def logical_and_(self, other):
        return _ops.compare.logical_and_(self, other)
    def logical_or_(self, other):
        return _ops.compare.logical_or_(self, other)
    def logical_xor_(self, other):
        return _ops.compare.logical_xor_(self, other)
    def logical_not_(self):
        return _ops.compare.logical_not_(self)
    def bitwise_and(self, other):
        return _ops.compare.bitwise_and(self, other)
    def bitwise_or(self, other):
        return _ops.compare.bitwise_or(self, other)
    def bitwise_xor(self, other):
        return _ops.compare.bitwise_xor(self, other)
    def bitwise_not(self):
        return _ops.compare.bitwise_not(self)
    def bitwise_and_(self, other):
        return _ops.compare.bitwise_and_(self, other)
    def bitwise_or_(self, other):
        return _ops.compare.bitwise_or_(self, other)
    def bitwise_xor_(self, other):
        return _ops.compare.bitwise_xor_(self, other)
    def bitwise_not_(self):
        return _ops.compare.bitwise_not_(self)
    def bitwise_left_shift(self, other):
        return _ops.compare.bitwise_left_shift(self, other)
    def bitwise_right_shift(self, other):
        return _ops.compare.bitwise_right_shift(self, other)
    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _ops.compare.allclose(self, other, rtol, atol, equal_nan)
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return _ops.compare.isclose(self, other, rtol, atol, equal_nan)
    def equal(self, other):
        return _ops.compare.equal(self, other)


    # -- ops/reduction.py -------------------------------------------------------------
    def sum(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.reduction.sum(self, dim, keepdim, dtype=dtype)
    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.reduction.nansum(self, dim, keepdim, dtype=dtype)
    def mean(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.reduction.mean(self, dim, keepdim, dtype=dtype)
    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.reduction.nanmean(self, dim, keepdim, dtype=dtype)
    def prod(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.reduction.prod(self, dim, keepdim, dtype=dtype)
    def max(self, dim=None, keepdim=False):
        return _ops.reduction.max(self, dim, keepdim)
    def min(self, dim=None, keepdim=False):
        return _ops.reduction.min(self, dim, keepdim)
    def amax(self, dim=(), keepdim=False):
        return _ops.reduction.amax(self, dim, keepdim)
    def amin(self, dim=(), keepdim=False):
        return _ops.reduction.amin(self, dim, keepdim)
    def aminmax(self, *, dim=None, keepdim=False):
        return _ops.reduction.aminmax(self, dim=dim, keepdim=keepdim)
    def argmax(self, dim=None, keepdim=False):
        return _ops.reduction.argmax(self, dim, keepdim)
    def argmin(self, dim=None, keepdim=False):
        return _ops.reduction.argmin(self, dim, keepdim)
    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _ops.statistics.var(self, dim, unbiased, keepdim, correction=correction)
    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None):
        return _ops.statistics.std(self, dim, unbiased, keepdim, correction=correction)
    def norm(self, p='fro', dim=None, keepdim=False, dtype=None):
        return _ops.statistics.norm(self, p, dim, keepdim, dtype)
    def logsumexp(self, dim, keepdim=False):
        return _ops.statistics.logsumexp(self, dim, keepdim)
    def cumsum(self, dim, *, dtype=None):
        return _ops.scans.cumsum(self, dim, dtype=dtype)
    def cumsum_(self, dim, *, dtype=None):
        return _ops.scans.cumsum_(self, dim, dtype=dtype)
    def cumprod(self, dim, *, dtype=None):
        return _ops.scans.cumprod(self, dim, dtype=dtype)
    def cummax(self, dim):
        return _ops.scans.cummax(self, dim)
    def cummin(self, dim):
        return _ops.scans.cummin(self, dim)
    def all(self, dim=None, keepdim=False):
        return _ops.reduction.all(self, dim, keepdim)
    def any(self, dim=None, keepdim=False):
        return _ops.reduction.any(self, dim, keepdim)
    def median(self, dim=None, keepdim=False):
        return _ops.statistics.median(self, dim, keepdim)
    def nanmedian(self, dim=None, keepdim=False):
        return _ops.statistics.nanmedian(self, dim, keepdim)
    def mode(self, dim=-1, keepdim=False):
        return _ops.statistics.mode(self, dim, keepdim)
    def kthvalue(self, k, dim=-1, keepdim=False):
        return _ops.statistics.kthvalue(self, k, dim, keepdim)
    def count_nonzero(self, dim=None):
        return _ops.reduction.count_nonzero(self, dim)
    def histc(self, bins=100, min=0, max=0):
        return _ops.statistics.histc(self, bins, min, max)


    # -- ops/sorting.py ---------------------------------------------------------------
    def sort(self, dim=-1, descending=False, stable=None):
        return _ops.sorting.sort(self, dim, descending, stable)
    def argsort(self, dim=-1, descending=False, stable=False):
        return _ops.sorting.argsort(self, dim, descending, stable)
    def msort(self):
        return _ops.sorting.msort(self)
    def topk(self, k, dim=-1, largest=True, sorted=True):
        return _ops.sorting.topk(self, k, dim, largest, sorted)


    # -- ops/views.py -----------------------------------------------------------------
    def view(self, *shape):
        return _ops.views.view(self, *shape)
    def view_as(self, other):
        return _ops.views.view_as(self, other)
    def sum_to_size(self, *size):
        return _ops.views.sum_to_size(self, *size)
    def reshape(self, *shape):
        return _ops.views.reshape(self, *shape)
    def reshape_as(self, other):
        return _ops.views.reshape_as(self, other)
    def permute(self, *dims):
        return _ops.views.permute(self, *dims)
    def transpose(self, dim0, dim1):
        return _ops.views.transpose(self, dim0, dim1)
    def swapaxes(self, axis0, axis1):
        return _ops.views.swapaxes(self, axis0, axis1)
    def swapdims(self, dim0, dim1):
        return _ops.views.swapdims(self, dim0, dim1)
    def t(self):
        return _ops.views.t(self)
    def expand(self, *sizes):
        return _ops.views.expand(self, *sizes)
    def expand_as(self, other):
        return _ops.views.expand_as(self, other)
    def broadcast_to(self, size):
        return _ops.views.broadcast_to(self, size)
    def squeeze(self, dim=None):
        return _ops.views.squeeze(self, dim)
    def unsqueeze(self, dim):
        return _ops.views.unsqueeze(self, dim)
    def narrow(self, dim, start, length):
        return _ops.slicing.narrow(self, dim, start, length)
    def select(self, dim, index):
        return _ops.slicing.select(self, dim, index)
    def unfold(self, dimension, size, step):
        return _ops.slicing.unfold(self, dimension, size, step)
    def as_strided(self, size, stride, storage_offset=None):
        return _ops.strided.as_strided(self, size, stride, storage_offset)
    def diagonal(self, offset=0, dim1=0, dim2=1):
        return _ops.slicing.diagonal(self, offset, dim1, dim2)
    def flatten(self, start_dim=0, end_dim=-1):
        return _ops.views.flatten(self, start_dim, end_dim)
    def unflatten(self, dim, sizes):
        return _ops.views.unflatten(self, dim, sizes)
    def movedim(self, source, destination):
        return _ops.views.movedim(self, source, destination)
    def moveaxis(self, source, destination):
        return _ops.views.moveaxis(self, source, destination)
    def split(self, split_size_or_sections, dim=0):
        return _ops.slicing.split(self, split_size_or_sections, dim)
    def chunk(self, chunks, dim=0):
        return _ops.slicing.chunk(self, chunks, dim)
    def unbind(self, dim=0):
        return _ops.slicing.unbind(self, dim)
    def tensor_split(self, indices_or_sections, dim=0):
        return _ops.slicing.tensor_split(self, indices_or_sections, dim)
    def squeeze_(self, dim=None):
        return _ops.views.squeeze_(self, dim)
    def unsqueeze_(self, dim):
        return _ops.views.unsqueeze_(self, dim)
    def t_(self):
        return _ops.views.t_(self)
    def transpose_(self, dim0, dim1):
        return _ops.views.transpose_(self, dim0, dim1)
    def ravel(self):
        return _ops.views.ravel(self)
    def view_as_real(self):
        return _ops.complex.view_as_real(self)


    # -- ops/shape.py -----------------------------------------------------------------
    def flip(self, *dims, **kw):
        return _ops.shape.flip(self, _args.flip_dims(dims, kw))
    def fliplr(self):
        return _ops.shape.fliplr(self)
    def flipud(self):
        return _ops.shape.flipud(self)
    def roll(self, shifts, dims=None):
        return _ops.shape.roll(self, shifts, dims)
    def repeat(self, *sizes):
        return _ops.shape.repeat(self, *sizes)
    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        return _ops.shape.repeat_interleave(self, repeats, dim, output_size=output_size)
    def tile(self, dims):
        return _ops.shape.tile(self, dims)
    def tril(self, diagonal=0):
        return _ops.shape.tril(self, diagonal)
    def triu(self, diagonal=0):
        return _ops.shape.triu(self, diagonal)
    def tril_(self, diagonal=0):
        return _ops.shape.tril_(self, diagonal)
    def triu_(self, diagonal=0):
        return _ops.shape.triu_(self, diagonal)
    def diag(self, diagonal=0):
        return _ops.shape.diag(self, diagonal)
    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        return _ops.shape.diag_embed(self, offset, dim1, dim2)
    def diagflat(self, offset=0):
        return _ops.shape.diagflat(self, offset)
    def rot90(self, k=1, dims=(0, 1)):
        return _ops.shape.rot90(self, k, dims)
    def diff(self, n=1, dim=-1, prepend=None, append=None):
        return _ops.shape.diff(self, n, dim, prepend, append)
    def trace(self):
        return _ops.shape.trace(self)


    # -- ops/indexing.py --------------------------------------------------------------
    def gather(self, dim, index):
        return _ops.gather_scatter.gather(self, dim, index)
    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        return _ops.gather_scatter.scatter(self, dim, index, src, value=value, reduce=reduce)
    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return _ops.gather_scatter.scatter_(self, dim, index, src, value=value, reduce=reduce)
    def scatter_add(self, dim, index, src):
        return _ops.gather_scatter.scatter_add(self, dim, index, src)
    def scatter_add_(self, dim, index, src):
        return _ops.gather_scatter.scatter_add_(self, dim, index, src)
    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        return _ops.gather_scatter.scatter_reduce(self, dim, index, src, reduce, include_self=include_self)
    def index_select(self, dim, index):
        return _ops.gather_scatter.index_select(self, dim, index)
    def index_add(self, dim, index, source, *, alpha=1):
        return _ops.gather_scatter.index_add(self, dim, index, source, alpha=alpha)
    def index_add_(self, dim, index, source, *, alpha=1):
        return _ops.gather_scatter.index_add_(self, dim, index, source, alpha=alpha)
    def index_copy(self, dim, index, source):
        return _ops.gather_scatter.index_copy(self, dim, index, source)
    def index_copy_(self, dim, index, source):
        return _ops.gather_scatter.index_copy_(self, dim, index, source)
    def index_fill(self, dim, index, value):
        return _ops.gather_scatter.index_fill(self, dim, index, value)
    def index_fill_(self, dim, index, value):
        return _ops.gather_scatter.index_fill_(self, dim, index, value)
    def masked_fill(self, mask, value):
        return _ops.masked.masked_fill(self, mask, value)
    def masked_fill_(self, mask, value):
        return _ops.masked.masked_fill_(self, mask, value)
    def masked_select(self, mask):
        return _ops.masked.masked_select(self, mask)
    def masked_scatter(self, mask, source):
        return _ops.masked.masked_scatter(self, mask, source)
    def masked_scatter_(self, mask, source):
        return _ops.masked.masked_scatter_(self, mask, source)
    def take(self, index):
        return _ops.masked.take(self, index)
    def take_along_dim(self, indices, dim=None):
        return _ops.masked.take_along_dim(self, indices, dim)
    def nonzero(self, *, as_tuple=False):
        return _ops.indexing.nonzero(self, as_tuple=as_tuple)
    def index_put(self, indices, values, accumulate=False):
        return _ops.masked.index_put(self, indices, values, accumulate)
    def index_put_(self, indices, values, accumulate=False):
        return _ops.masked.index_put_(self, indices, values, accumulate)
    def where(self, condition, other):
        return _ops.masked.where(self, condition, other)
    def put_(self, index, source, accumulate=False):
        return _ops.masked.put_(self, index, source, accumulate)


for _family, _names in _IN_PLACE.items():
    for _n in _names.split():
        setattr(TensorMethods, _n.split("=")[0], _delegate(_family, _n))
