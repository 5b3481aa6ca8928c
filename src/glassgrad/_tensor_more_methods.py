"""Tensor methods of the later op families (ops/stats_extra.py, ...), each a one-line delegation to its op
module; ``Tensor`` inherits them with those of ``_tensor_methods.py``.
"""
from . import ops as _ops


class TensorMoreMethods:
    __slots__ = ()

    # -- ops/stats_extra.py -----------------------------------------------------------------
    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _ops.stats_extra.quantile(self, q, dim, keepdim, interpolation=interpolation)
    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return _ops.stats_extra.nanquantile(self, q, dim, keepdim, interpolation=interpolation)
    def cov(self, *, correction=1, fweights=None, aweights=None):
        return _ops.stats_extra.cov(self, correction=correction, fweights=fweights, aweights=aweights)
    def corrcoef(self):
        return _ops.stats_extra.corrcoef(self)
    def logcumsumexp(self, dim):
        return _ops.stats_extra.logcumsumexp(self, dim)

    # -- ops/distance.py -----------------------------------------------------------------------
    def dist(self, other, p=2):
        return _ops.distance.dist(self, other, p)
    def renorm(self, p, dim, maxnorm):
        return _ops.distance.renorm(self, p, dim, maxnorm)
    def renorm_(self, p, dim, maxnorm):
        return _ops.distance.renorm_(self, p, dim, maxnorm)

    # -- ops/shape_extra.py --------------------------------------------------------------------
    def hsplit(self, indices_or_sections):
        return _ops.shape_extra.hsplit(self, indices_or_sections)
    def vsplit(self, indices_or_sections):
        return _ops.shape_extra.vsplit(self, indices_or_sections)
    def dsplit(self, indices_or_sections):
        return _ops.shape_extra.dsplit(self, indices_or_sections)
    def split_with_sizes(self, split_sizes, dim=0):
        return _ops.shape_extra.split_with_sizes(self, split_sizes, dim)
    def unsafe_chunk(self, chunks, dim=0):
        return _ops.shape_extra.unsafe_chunk(self, chunks, dim)
    def unsafe_split(self, split_size, dim=0):
        return _ops.shape_extra.unsafe_split(self, split_size, dim)
    def unsafe_split_with_sizes(self, split_sizes, dim=0):
        return _ops.shape_extra.unsafe_split_with_sizes(self, split_sizes, dim)

    # -- ops/search.py -------------------------------------------------------------------------
    def argwhere(self):
        return _ops.search.argwhere(self)

    # -- ops/intmath.py ------------------------------------------------------------------------
    def gcd(self, other):
        return _ops.intmath.gcd(self, other)
    def gcd_(self, other):
        return _ops.intmath.gcd_(self, other)
    def lcm(self, other):
        return _ops.intmath.lcm(self, other)
    def lcm_(self, other):
        return _ops.intmath.lcm_(self, other)
    def ldexp(self, other):
        return _ops.intmath.ldexp(self, other)
    def ldexp_(self, other):
        return _ops.intmath.ldexp_(self, other)
    def frexp(self):
        return _ops.intmath.frexp(self)
    def nextafter(self, other):
        return _ops.intmath.nextafter(self, other)
    def nextafter_(self, other):
        return _ops.intmath.nextafter_(self, other)
    def positive(self):
        return _ops.intmath.positive(self)

    # -- ops/index_reduce.py -------------------------------------------------------------------
    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        return _ops.index_reduce.index_reduce(self, dim, index, source, reduce, include_self=include_self)
    def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
        return _ops.index_reduce.index_reduce_(self, dim, index, source, reduce, include_self=include_self)
    def fill_diagonal_(self, fill_value, wrap=False):
        return _ops.index_reduce.fill_diagonal_(self, fill_value, wrap)

    # -- ops/tensor_misc.py --------------------------------------------------------------------
    def is_nonzero(self):
        return _ops.tensor_misc.is_nonzero(self)
    def is_same_size(self, other):
        return _ops.tensor_misc.is_same_size(self, other)
    def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                          pin_memory=False):
        return _ops.tensor_misc.new_empty_strided(self, size, stride, dtype=dtype, requires_grad=requires_grad)
    def dim_order(self, *, ambiguity_check=False):
        return _ops.tensor_misc.dim_order(self, ambiguity_check=ambiguity_check)
    def as_strided_(self, size, stride, storage_offset=None):
        return _ops.tensor_misc.as_strided_(self, size, stride, storage_offset)
    def prelu(self, weight):
        return _ops.tensor_misc.prelu(self, weight)
    def resize(self, *sizes):
        return _ops.tensor_misc.resize(self, *sizes)
    def resize_as(self, tensor):
        return _ops.tensor_misc.resize_as(self, tensor)
    def nonzero_static(self, *, size, fill_value=-1):
        return _ops.search.nonzero_static(self, size=size, fill_value=fill_value)
    def geqrf(self):
        return _ops.linalg_extra.geqrf(self)
    def ormqr(self, input2, input3, left=True, transpose=False):
        return _ops.linalg_extra.ormqr(self, input2, input3, left, transpose)
    def as_subclass(self, cls):
        return _ops.tensor_misc.as_subclass(self, cls)
    def set_(self, source=None, storage_offset=0, size=None, stride=None):
        return _ops.tensor_misc.set_(self, source, storage_offset, size, stride)

    @property
    def grad_dtype(self):
        return _ops.tensor_misc.get_grad_dtype(self)

    @grad_dtype.setter
    def grad_dtype(self, value):
        _ops.tensor_misc.set_grad_dtype(self, value)

    @property
    def volatile(self):
        return _ops.tensor_misc.get_volatile(self)

    @volatile.setter
    def volatile(self, value):
        _ops.tensor_misc.set_volatile(self, value)

    def hash_tensor(self, dim=None, *, keepdim=False, mode=0):
        return _ops.reduction.hash_tensor(self, dim, keepdim=keepdim, mode=mode)

    def record_stream(self, s):
        return _ops.tensor_misc.record_stream(self, s)

    def smm(self, mat2):          # (a dense self: torch's "only on sparse tensors" error)
        return _ops.sparse_ops.smm(self, mat2)

    def sspaddmm(self, mat1, mat2, *, beta=1, alpha=1):
        return _ops.sparse_ops.sspaddmm(self, mat1, mat2, beta=beta, alpha=alpha)
