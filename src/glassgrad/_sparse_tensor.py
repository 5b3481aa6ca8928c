"""SparseTensor: a Tensor whose ``_data`` is COO storage (``_sparse_coo.COO``) instead of an ndarray.

A subclass, so the dense Tensor's classes and code paths are untouched: every dense op keeps its speed, and
the sparse behaviour lives in the methods below (one-line calls of ``ops/sparse.py``).  The metadata that
the Tensor core reads from ``_data`` (``shape``, ``dim``, ``numel``, ``dtype``, ``requires_grad``, ``.grad``)
works unchanged on COO storage.  A dense method that torch has no sparse kernel for raises torch's
``Could not run 'aten::<name>' with arguments from the 'SparseCPU' backend`` (``_unsupported``), and so does
a ``torch.*`` function whose first argument is sparse, unless ``ops/sparse.py`` registered a sparse version
of it in ``TORCH_FUNCTIONS`` (``dispatch``, called by the ``_args.tensor_first`` wrappers).
``SparseCsrTensor`` (at the end) is the same for 2-D CSR storage (``_sparse_coo.CSR``; ops/sparse_csr.py,
``CSR_FUNCTIONS``), with torch's ``'SparseCsrCPU'`` errors.
"""
from . import _layout
from . import ops as _ops
from ._device import cpu
from ._sparse_coo import CSR
from ._grad_state import state as _grad_state, record_trace
from ._dtype import _default, int64, bool as _bool, float32 as _dtype_float32, float64 as _dtype_float64
from ._tensor import Tensor, Size
from ._tensor_str import _tensor_body, _add_suffixes
from ._tensor_methods import TensorMethods
from ._tensor_linalg_methods import TensorLinalgMethods
from ._tensor_protocol import TensorProtocol

_new = object.__new__
TORCH_FUNCTIONS = {}      # torch.* name -> its version for a sparse first argument (filled by ops/sparse.py)


def not_on_sparse(name, backend="SparseCPU"):
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{backend}' backend. This could be because the "
        "operator doesn't exist for this backend, or was omitted during the selective/custom build process (if "
        "using custom build).")


CSR_FUNCTIONS = {}        # the same for a sparse CSR first argument (filled by ops/sparse_csr.py)


def dispatch(name, cls=None):
    """The sparse version of torch.<name> for a first argument of class `cls` (the tensor_first wrappers call it
    for a sparse first argument)."""
    if cls is SparseCsrTensor:
        fn = CSR_FUNCTIONS.get(name)
        if fn is None:
            raise not_on_sparse(name, "SparseCsrCPU")
        return fn
    fn = TORCH_FUNCTIONS.get(name)
    if fn is None:
        raise not_on_sparse(name)
    return fn


def register(_table=TORCH_FUNCTIONS, **fns):
    """Register sparse versions of torch.* functions (they take the dense function's arguments; out= refused)."""
    for name, fn in fns.items():
        _table[name] = _no_out(fn)


def _no_out(fn):
    def call(*args, out=None, **kwargs):
        if out is not None:
            raise RuntimeError("glassgrad: out= is not supported for sparse tensors")
        return fn(*args, **kwargs)
    return call


def make_sparse(coo, rg=False, fn=None, cls=None):
    """Wrap COO storage as a SparseTensor (CSR storage as a SparseCsrTensor): the sparse `_tensor._make`."""
    t = _new(cls or (SparseCsrTensor if coo.__class__ is CSR else SparseTensor))
    t._data = coo
    t._rg = rg
    t._grad_fn = fn
    t._out_nr = 0
    t._grad = None
    t._vc = [0]
    t._base = t._view_fn = t._acc = t._extra = t._vbase_fn = None
    if fn is not None and _grad_state.anomaly:
        record_trace(fn)
    if _grad_state.watching is not None:
        _grad_state.watching.on_make(t)
    return t


class _Sparse(Tensor):
    """What sparse COO and CSR tensors share: no storage of their own on the CPU, and their `_data` rewrapped by
    make_sparse for .data / detach / deepcopy."""
    __slots__ = ()

    @property
    def device(self):
        return cpu

    def storage_offset(self):
        return 0

    def data_ptr(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def cpu(self, memory_format=None):
        return self

    @property
    def data(self):
        return make_sparse(self._data)

    def detach(self):
        t = make_sparse(self._data)
        t._vc = self._vc
        return t

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = make_sparse(self._data.copy(), self._rg)
        return memo[id(self)]


class SparseTensor(_Sparse):
    __slots__ = ()
    is_sparse = True
    layout = _layout.sparse_coo

    # -- metadata -------------------------------------------------------------------------
    def stride(self, dim=None):
        return (0,) * self._data.ndim if dim is None else 0

    def is_contiguous(self, memory_format=None):
        return False

    def numpy(self, *, force=False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")

    def tolist(self):
        raise not_on_sparse("tolist")

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        return self.to_dense().item()

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.item())

    @property
    def nbytes(self):
        raise RuntimeError("nbytes is not defined for sparse tensors.  If you want the size of the constituent "
                           "tensors, add the nbytes of the indices and values.  If you want the size of the  "
                           "equivalent dense tensor, multiply numel() by element_size()")

    def contiguous(self, memory_format=None):
        raise RuntimeError("unsupported memory format option Contiguous")

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, layout=None, pin_memory=False):
        return _ops.sparse.zeros_sparse(size, self.dtype if dtype is None else dtype, requires_grad)

    __hash__ = Tensor.__hash__

    def __eq__(self, other):
        raise not_on_sparse("eq." + _overload(other))

    def __ne__(self, other):
        raise not_on_sparse("ne." + _overload(other))

    def __lt__(self, other):
        raise not_on_sparse("lt." + _overload(other))

    def __le__(self, other):
        raise not_on_sparse("le." + _overload(other))

    def __gt__(self, other):
        raise not_on_sparse("gt." + _overload(other))

    def __ge__(self, other):
        raise not_on_sparse("ge." + _overload(other))

    def __repr__(self, *, tensor_contents=None):
        return _repr(self)

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (_ops.sparse.rebuild_sparse, (self._data.indices, self._data.values, Size(self._data.shape),
                                             self._data.coalesced, self._rg))

    # -- sparse accessors -----------------------------------------------------------------
    def is_coalesced(self):
        return self._data.coalesced

    def _nnz(self):
        return self._data.nnz

    def sparse_dim(self):
        return self._data.sparse_dim

    def dense_dim(self):
        return self._data.dense_dim

    # (coalesce, to_dense, indices, values, _indices, _values: Tensor's, _tensor_sparse_methods.py)

    def to_sparse(self, *args, **kwargs):
        return _ops.sparse.to_sparse(self, *args, **kwargs)

    def to_sparse_coo(self):
        return _ops.sparse.to_sparse(self)

    def to_sparse_csr(self, dense_dim=None):
        return _ops.sparse_csr.to_sparse_csr(self, dense_dim)

    def sparse_resize_(self, size, sparse_dim, dense_dim):
        return _ops.sparse_ops.sparse_resize_(self, size, sparse_dim, dense_dim)

    def sparse_resize_and_clear_(self, size, sparse_dim, dense_dim):
        return _ops.sparse_ops.sparse_resize_and_clear_(self, size, sparse_dim, dense_dim)

    # -- ops --------------------------------------------------------------------------------
    def t(self):
        return _ops.sparse.t(self)

    def clone(self, *, memory_format=None):
        return _ops.sparse.clone(self)

    def to(self, *args, **kwargs):
        return _ops.sparse.to(self, *args, **kwargs)

    def double(self):
        return _ops.sparse.to_dtype(self, "float64")

    def float(self):
        return _ops.sparse.to_dtype(self, "float32")

    def half(self):
        return _ops.sparse.to_dtype(self, "float16")

    def long(self):
        return _ops.sparse.to_dtype(self, "int64")

    def int(self):
        return _ops.sparse.to_dtype(self, "int32")

    def bool(self):
        return _ops.sparse.to_dtype(self, "bool")

    def type(self, dtype=None, non_blocking=False):
        return _ops.sparse.type_(self, dtype)

    def mm(self, mat2):
        return _ops.sparse_ops.mm(self, mat2)

    def matmul(self, other):
        return _ops.sparse_ops.mm(self, other)

    __matmul__ = matmul

    def __rmatmul__(self, other):
        return _ops.sparse_ops.dense_mm_sparse(other, self)

    def smm(self, mat2):
        return _ops.sparse_ops.smm(self, mat2)

    def hspmm(self, mat2):
        return _ops.sparse_ops.hspmm(self, mat2)

    def sspaddmm(self, mat1, mat2, *, beta=1, alpha=1):
        return _ops.sparse_ops.sspaddmm(self, mat1, mat2, beta=beta, alpha=alpha)

    def mul(self, other):
        return _ops.sparse.mul(self, other)

    __mul__ = __rmul__ = multiply = mul

    def div(self, other, *, rounding_mode=None):
        return _ops.sparse.div(self, other, rounding_mode=rounding_mode)

    __truediv__ = divide = true_divide = div

    def neg(self):
        return _ops.sparse.neg(self)

    __neg__ = negative = neg

    def add(self, other, *, alpha=1):
        return _ops.sparse.add(self, other, alpha=alpha)

    __add__ = add

    def __radd__(self, other):
        return _ops.sparse.dense_add_sparse(other, self)

    def sub(self, other, *, alpha=1):
        return _ops.sparse.add(self, other, alpha=-alpha)

    def __rsub__(self, other):
        return _ops.sparse.dense_add_sparse(other, self, alpha=-1)

    __sub__ = subtract = sub

    def sum(self, dim=None, keepdim=False, *, dtype=None):
        return _ops.sparse_ops.tensor_sum(self, dim, keepdim, dtype=dtype)

    def sparse_mask(self, mask):
        return _ops.sparse_ops.sparse_mask(self, mask)

    def __getitem__(self, index):
        return _ops.sparse.getitem(self, index)

    def transpose(self, dim0, dim1):
        return _ops.sparse_index.transpose(self, dim0, dim1)

    swapaxes = swapdims = transpose

    def unsqueeze(self, dim):
        return _ops.sparse_index.unsqueeze(self, dim)

    def index_select(self, dim, index):
        return _ops.sparse_index.index_select(self, dim, index)

    def select(self, dim, index):
        return _ops.sparse.select(self, dim, index)

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")


def _overload(other):
    return "Tensor" if isinstance(other, Tensor) else "Scalar"


def _unary(name):
    def method(self, *args, **kwargs):
        return _ops.sparse_unary.unary(name, self, *args, **kwargs)
    method.__name__ = method.__qualname__ = name
    return method


# the zero-preserving unary ops torch runs on sparse tensors (ops/sparse_unary.py: NAMES)
for _name in ("abs", "log1p", "relu", "frac", "deg2rad", "rad2deg", "sign", "floor", "ceil", "round", "trunc", "sin",
              "sinh", "tanh", "tan", "asin", "asinh", "atan", "expm1", "atanh", "sqrt", "erf", "erfinv", "sgn",
              "nan_to_num", "isnan", "isinf", "signbit", "isposinf", "isneginf", "square"):
    setattr(SparseTensor, _name, _unary(_name))
SparseTensor.arcsin, SparseTensor.arcsinh = SparseTensor.asin, SparseTensor.asinh
SparseTensor.arctan, SparseTensor.arctanh = SparseTensor.atan, SparseTensor.atanh
SparseTensor.absolute, SparseTensor.fix, SparseTensor.__abs__ = SparseTensor.abs, SparseTensor.trunc, SparseTensor.abs


def _pow(self, exponent):
    return _ops.sparse_unary.pow(self, exponent)


SparseTensor.pow = SparseTensor.__pow__ = _pow


def _unsupported(name):
    def method(self, *args, **kwargs):
        raise not_on_sparse(name)
    method.__name__ = method.__qualname__ = name
    return method


_OWN = set(vars(SparseTensor)) | set(vars(Tensor))
_PROTOCOL = ("__rpow__", "__floordiv__", "__rfloordiv__", "__mod__", "__setitem__", "__and__", "__or__",
             "__xor__", "__invert__", "__abs__", "__iadd__", "__imul__", "__isub__", "__itruediv__",
             "__rtruediv__", "__rdiv__", "view", "view_as", "expand", "expand_as", "fill_", "copy_",
             "uniform_", "normal_", "new_ones", "new_full", "new_empty", "new_tensor")
for _name in [n for c in (TensorMethods, TensorLinalgMethods) for n, f in vars(c).items()
              if callable(f) and not n.startswith("__")] + [n for n in _PROTOCOL if hasattr(TensorProtocol, n)]:
    if _name not in _OWN:
        setattr(SparseTensor, _name, _unsupported(_name[2:-2] if _name.startswith("__") else _name))
del _name


def _csr_layout_error(msg):
    def method(self, *args, **kwargs):
        raise RuntimeError(msg)
    return method


def _part(prefix, arr, indent):
    body = _tensor_body(arr, indent + len(prefix))
    if arr.size == 0:
        body += ", size=" + str(tuple(arr.shape))
    return prefix + body + ")"


def _repr(t):
    """torch's repr of a sparse COO tensor (torch/_tensor_str.py, the sparse branch)."""
    c, indent = t._data, 7
    dt = t.dtype
    text = ("tensor(" + _part("indices=tensor(", c.indices, indent) + ",\n" + " " * indent +
            _part("values=tensor(", c.values, indent))
    suffixes = ["size=" + str(tuple(c.shape)), "nnz=" + str(c.nnz)]
    if dt is not _default[0] and dt is not int64 and dt is not _bool:
        suffixes.append("dtype=" + repr(dt))
    suffixes.append("layout=torch.sparse_coo")
    if t._grad_fn is not None:
        suffixes.append("grad_fn=<" + t._grad_fn.name().rsplit("::", 1)[-1] + ">")
    elif t._rg:
        suffixes.append("requires_grad=True")
    return _add_suffixes_sparse(text, suffixes, indent)


def _add_suffixes_sparse(text, suffixes, indent):
    """torch's _add_suffixes with force_newline: the first suffix always starts a new line."""
    from ._tensor_str import _opts
    parts, last, force = [text], 0, True
    for suffix in suffixes:
        if force or last + len(suffix) + 2 > _opts["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last, force = indent + len(suffix), False
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


class SparseCsrTensor(_Sparse):
    """A 2-D sparse CSR tensor (``_data``: ``_sparse_coo.CSR``); its ops are in ops/sparse_csr.py."""
    __slots__ = ()
    is_sparse = False
    is_sparse_csr = True
    layout = _layout.sparse_csr

    def stride(self, dim=None):
        raise RuntimeError("Sparse CSR tensors do not have strides")

    def is_contiguous(self, memory_format=None):
        raise RuntimeError("Sparse CSR tensors do not have is_contiguous")

    def numpy(self, *, force=False):
        raise TypeError("can't convert SparseCsr layout tensor to numpy. Use Tensor.to_dense() first.")

    def __repr__(self, *, tensor_contents=None):
        c, indent = self._data, 7
        text = ("tensor(" + _part("crow_indices=tensor(", c.crow, indent) + ",\n" + " " * indent +
                _part("col_indices=tensor(", c.col, indent) + ",\n" + " " * indent +
                _part("values=tensor(", c.values, indent))
        dt = self.dtype
        suffixes = ["size=" + str(tuple(c.shape)), "nnz=" + str(c.nnz)]
        if dt is not _default[0] and dt is not int64 and dt is not _bool:
            suffixes.append("dtype=" + repr(dt))
        suffixes.append("layout=torch.sparse_csr")
        if self._grad_fn is not None:
            suffixes.append("grad_fn=<" + self._grad_fn.name().rsplit("::", 1)[-1] + ">")
        elif self._rg:
            suffixes.append("requires_grad=True")
        return _add_suffixes(text, suffixes, indent)

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        c = self._data
        return (_ops.sparse_csr.rebuild_csr, (c.crow, c.col, c.values, Size(c.shape), self._rg))

    def crow_indices(self):
        return _ops.sparse_csr.crow_indices(self)

    def col_indices(self):
        return _ops.sparse_csr.col_indices(self)

    def values(self):
        return _ops.sparse_csr.values(self)

    def _nnz(self):
        return self._data.nnz

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def to_dense(self, dtype=None, *, masked_grad=None):
        return _ops.sparse_csr.to_dense(self, dtype)

    def to_sparse(self, *args, **kwargs):
        return _ops.sparse_csr.to_sparse(self, *args, **kwargs)

    def to_sparse_coo(self):
        return _ops.sparse_csr.to_sparse(self)

    def to_sparse_csr(self, dense_dim=None):
        return _ops.sparse_csr.to_sparse_csr(self, dense_dim)

    def clone(self, *, memory_format=None):
        return _ops.sparse_csr.clone(self)

    def to(self, *args, **kwargs):
        return _ops.sparse_csr.to(self, *args, **kwargs)

    def double(self):
        return _ops.sparse_csr.to(self, _dtype_float64)

    def float(self):
        return _ops.sparse_csr.to(self, _dtype_float32)

    def mm(self, mat2):
        return _ops.sparse_csr.mm(self, mat2)

    def matmul(self, other):
        return _ops.sparse_csr.mm(self, other)

    __matmul__ = matmul

    def mul(self, other):
        return _ops.sparse_csr.mul(self, other)

    __mul__ = __rmul__ = mul

    def add(self, other, *, alpha=1):
        return _ops.sparse_csr.add(self, other, alpha=alpha)

    __add__ = add


def _csr_unsupported(name):
    def method(self, *args, **kwargs):
        raise not_on_sparse(name, "SparseCsrCPU")
    method.__name__ = method.__qualname__ = name
    return method


_OWN_CSR = set(vars(SparseCsrTensor)) | set(vars(Tensor))
for _name in [n for c in (TensorMethods, TensorLinalgMethods) for n, f in vars(c).items()
              if callable(f) and not n.startswith("__")] + [n for n in _PROTOCOL if hasattr(TensorProtocol, n)] + [
              "indices", "_indices", "_values", "coalesce", "is_coalesced", "sparse_mask", "__radd__", "__sub__",
              "__rsub__", "__truediv__", "__neg__", "__getitem__", "__rmatmul__", "__pow__"]:
    if _name not in _OWN_CSR:
        setattr(SparseCsrTensor, _name, _csr_unsupported(_name[2:-2] if _name.startswith("__") else _name))
del _name
for _name, _what in (("indices", "indices expected sparse coordinate tensor layout but got SparseCsr"),
                     ("is_coalesced", "is_coalesced expected sparse coordinate tensor layout but got SparseCsr"),
                     ("coalesce", "coalesce expected sparse coordinate tensor layout but got SparseCsr")):
    setattr(SparseCsrTensor, _name, _csr_layout_error(_what))
del _name, _what
