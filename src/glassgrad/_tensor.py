"""Tensor: a NumPy (or CuPy) array + autograd metadata.  Thin: every op delegates to ops/.

Slots (all set by ``_make``; keep this list short, it is paid for on every op):
  _data      the array (always an ndarray, never a NumPy scalar)
  _rg        requires_grad
  _grad_fn   the Node that made it (None for leaves)
  _out_nr    which output of _grad_fn it is
  _grad      .grad (leaves, and non-leaves that retain_grad())
  _vc        version counter: a one-element list shared by all views of one memory
  _base      for views: the tensor whose memory this views (its root base)
  _view_fn   for views: array-of-base -> this view (replays the view on gradients)
  _acc       weakref to this leaf's AccumulateGrad node, while a graph holds one
  _extra     None or a dict for rare things (hooks, retains_grad, inference flag)
  _vbase_fn  for views: the base's grad_fn when this view's grad_fn was made; if the base is
             later rewritten in place, the view's grad_fn is remade from the base (as PyTorch does)
"""
import copy
import warnings

import numpy as np

from . import _dtype, _shm
from . import _memory_format as _mf
from ._C import _TensorMeta   # torch._C._TensorMeta: Tensor's metaclass
from ._layout import strided as _strided
from ._dtype import _FROM_NP
from ._args import bool_arg, int_arg
from .backend import device_of, to_host
from ._grad_state import state as _grad_state, record_trace
from ._tensor_str import tensor_repr
from ._tensor_methods import TensorMethods
from ._tensor_linalg_methods import TensorLinalgMethods
from ._tensor_more_methods import TensorMoreMethods
from ._tensor_copy_methods import TensorCopyMethods
from ._tensor_sparse_methods import TensorSparseMethods
from ._tensor_complex_methods import TensorComplexMethods
from ._tensor_protocol import TensorProtocol

_ndarray = np.ndarray
_generic = np.generic
_new = object.__new__


class Size(tuple):
    """torch.Size: a tuple that prints as ``torch.Size([2, 3])``."""
    __slots__ = ()

    def __repr__(self):
        return f"torch.Size({list(self)})"

    __str__ = __repr__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        return Size(tuple.__add__(self, tuple(other)))


def _make(data, rg=False, fn=None, nr=0):
    """Wrap an array as a Tensor (the fast constructor every op uses)."""
    if data.__class__ is not _ndarray and isinstance(data, _generic):
        data = np.asarray(data)
    t = _new(Tensor)
    t._data = data
    t._rg = rg
    t._grad_fn = fn
    t._out_nr = nr
    t._grad = None
    t._vc = [0]
    t._base = None
    t._view_fn = None
    t._acc = None
    t._extra = None
    t._vbase_fn = None
    if fn is not None and _grad_state.anomaly:
        record_trace(fn)
    if _grad_state.inference:
        t._extra = {"inference": True}
    if _grad_state.watching is not None:    # explain.watch / nan_watch (explain/_watch.py)
        _grad_state.watching.on_make(t)
    return t


_NONLEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated for "
    "a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
    "mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for "
    "more information. (Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")


def element_strides(a):
    """torch's strides (in elements) of the tensor whose data is array `a`.  NumPy gives a fresh empty array zero
    strides, where torch reports its contiguous ones (sizes 0 counted as 1)."""
    if a.size == 0 and not any(a.strides):
        st, n = [], 1
        for size in reversed(a.shape):
            st.append(n)
            n *= max(size, 1)
        return tuple(reversed(st))
    isz = a.itemsize
    return tuple(s // isz for s in a.strides)


class Tensor(TensorComplexMethods, TensorMethods, TensorLinalgMethods, TensorMoreMethods, TensorCopyMethods,
             TensorSparseMethods, TensorProtocol, metaclass=_TensorMeta):
    __slots__ = ("_data", "_rg", "_grad_fn", "_out_nr", "_grad", "_vc", "_base", "_view_fn", "_acc",
                 "_extra", "_vbase_fn", "__weakref__", "__dict__")
    __array_priority__ = 1000

    def __init__(self, *args, **kwargs):
        pass

    # -- metadata ---------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    def dim(self):
        return self._data.ndim

    @property
    def ndim(self):
        return self._data.ndim

    def ndimension(self):
        return self._data.ndim

    def numel(self):
        return self._data.size

    nelement = numel

    @property
    def dtype(self):
        return _FROM_NP[self._data.dtype]

    @property
    def device(self):
        return device_of(self._data)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    is_sparse = is_sparse_csr = False
    is_quantized = False
    is_meta = is_xpu = is_mps = is_ipu = is_xla = is_maia = is_mtia = is_vulkan = False
    is_mkldnn = False
    is_nested = False
    layout = _strided         # a SparseTensor (_sparse_tensor.py) has torch.sparse_coo

    def get_device(self):
        d = self.device
        return -1 if d.type == "cpu" else d.index

    def is_floating_point(self):
        return self._data.dtype.kind in "fV"

    def is_signed(self):
        return self.dtype.is_signed

    def element_size(self):
        return self._data.itemsize

    @property
    def itemsize(self):
        return self._data.itemsize

    @property
    def nbytes(self):
        return self._data.nbytes

    def stride(self, dim=None):
        st = element_strides(self._data)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim)]

    def storage_offset(self):
        if self._base is None:
            return _shm.offset_in_buffer(self._data)     # 0 unless it was rebuilt on shared memory
        return (_addr(self._data) - _addr(self._base._data)) // self._data.itemsize

    def data_ptr(self):
        return _addr(self._data)

    def is_contiguous(self, *, memory_format=_mf.contiguous_format):
        if memory_format is _mf.contiguous_format:
            return self._data.flags.c_contiguous
        _mf.check_arg(memory_format, "is_contiguous", none_ok=False)
        if memory_format is _mf.preserve_format:
            return self._data.flags.c_contiguous
        return _mf.is_contiguous_as(self._data.shape, self.stride(), memory_format)

    def is_inference(self):
        return self._extra is not None and self._extra.get("inference", False)

    def _is_view(self):
        return self._base is not None

    @property
    def _version(self):
        return self._vc[0]

    @property
    def output_nr(self):
        return self._out_nr

    # -- autograd attributes ------------------------------------------------------------
    def requires_grad_(self, requires_grad=True):
        # PyTorch words the integer-dtype error differently for each entry point
        return self._set_requires_grad(bool_arg(requires_grad, "requires_grad_", "requires_grad", 1),
                                       "only Tensors of floating point dtype can require gradients")

    def _set_requires_grad(self, requires_grad, int_msg):
        requires_grad = bool(requires_grad)
        if self._grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed "
                "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
        if requires_grad and self._data.dtype.kind not in "fVc":
            raise RuntimeError(int_msg)
        if requires_grad and self._extra is not None and self._extra.get("inference") \
                and not _grad_state.inference:
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        self._rg = requires_grad
        return self

    @property
    def is_leaf(self):
        return self._grad_fn is None

    @property
    def grad(self):
        if self._grad_fn is not None and not self.retains_grad:
            warnings.warn(_NONLEAF_GRAD_WARNING, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                                f"{type(value).__name__}")
            if value._data.dtype != self._data.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value._data.shape != self._data.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    @property
    def retains_grad(self):
        fn = self._grad_fn
        if fn is None or fn._hooks is None:
            return False
        return fn._hooks.retain.get(self._out_nr) is self

    def retain_grad(self):
        if self._grad_fn is None:
            if not self._rg:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        self._grad_fn._get_hooks().retain[self._out_nr] = self

    def _extra_dict(self):
        if self._extra is None:
            self._extra = {}
        return self._extra

    @property
    def data(self):
        t = _make(self._data)
        if _grad_state.watching is not None:    # explain.watch: log the cut
            _grad_state.watching.on_cut(".data", self, t)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data

    def detach(self):
        t = _make(self._data)
        t._vc = self._vc            # shares the version counter (unlike .data)
        if _grad_state.watching is not None:    # explain.watch: log the cut
            _grad_state.watching.on_cut(".detach()", self, t)
        return t

    def detach_(self):
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead. If you are using "
                               "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view "
                               "is set as True, gradients are views of DDP buckets, and hence detach_() "
                               "cannot be called on these gradients. To fix this error, please refer to the "
                               "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._rg = False
        return self

    # -- Python protocol -------------------------------------------------------------------
    __hash__ = object.__hash__

    def __repr__(self, *, tensor_contents=None):
        dt = self.dtype
        dev = self.device
        fn = self._grad_fn
        return tensor_repr(
            to_host(self._data), dtype_name=repr(dt),
            dtype_is_default=dt is _dtype._default[0] or dt is _DEFAULT_COMPLEX.get(_dtype._default[0].name) or dt is _dtype.int64 or dt is _dtype.bool,
            device=None if dev.type == "cpu" else str(dev),
            grad_fn_name=None if fn is None else fn.name().rsplit("::", 1)[-1],
            requires_grad=self._rg,
            is_parameter=getattr(self, "_is_param", False))

    __str__ = __repr__

    def __format__(self, spec):
        if self._data.ndim == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()))

    def __float__(self):
        if _grad_state.watching is not None:    # explain.watch: log the cut
            _grad_state.watching.on_cut("float()", self)
        v = self._scalar()
        if isinstance(v, complex):
            if v.imag != 0:
                raise RuntimeError("value cannot be converted to type double without overflow")
            v = v.real
        return float(v)

    def __int__(self):
        if _grad_state.watching is not None:    # explain.watch: log the cut
            _grad_state.watching.on_cut("int()", self)
        return int(self._scalar())

    def _scalar(self):
        if self._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.item()

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data.reshape(()))

    def __complex__(self):
        return complex(self.item())

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()                     # torch's errors: requires grad, not on the CPU
        if dtype is not None:
            a = a.astype(dtype, copy=bool(copy))
        elif copy:
            a = a.copy()
        return a

    def __array_wrap__(self, array, context=None, return_scalar=False):
        """NumPy ufuncs on tensors give tensors (as in torch: boolean results come back as uint8)."""
        if array.dtype == np.bool_:
            array = array.astype(np.uint8)
        return _make(array)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """The array's own DLPack export (PyTorch refuses tensors that require grad)."""
        if self._rg:
            raise BufferError("Can't export tensors that require gradient, use tensor.detach()")
        a = self._data
        if a.__class__ is not _ndarray:
            return a.__dlpack__(stream=None if stream == -1 else stream)
        if stream not in (None, -1):
            raise BufferError("stream must be None (or -1) for a CPU tensor")
        kw = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device), ("copy", copy))
              if v is not None}
        return a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __deepcopy__(self, memo):
        if not self.is_leaf:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                               "protocol at the moment.  If you were attempting to deepcopy a module, this may be "
                               "because of a torch.nn.utils.weight_norm usage, see "
                               "https://github.com/pytorch/pytorch/pull/103001")
        if id(self) in memo:
            return memo[id(self)]
        a = self._data
        new = _make(a.copy() if a.flags.c_contiguous else a.copy(order="K"), self._rg)    # (torch: its layout)
        new.__class__ = self.__class__
        if self.__dict__:
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    # -- conversions --------------------------------------------------------------------
    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        if _grad_state.watching is not None:    # explain.watch: log the cut
            _grad_state.watching.on_cut(".item()", self)
        return self._data.reshape(()).item()

    def tolist(self):
        if _grad_state.watching is not None:    # explain.watch: log the cut
            _grad_state.watching.on_cut(".tolist()", self)
        return to_host(self._data).tolist()

    def numpy(self, *, force=False):
        if self._rg and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        if _grad_state.watching is not None:    # explain.watch: log the cut
            _grad_state.watching.on_cut(".numpy()", self)
        if self._data.__class__ is not _ndarray:
            if not force:
                raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use Tensor.cpu() "
                                "to copy the tensor to host memory first.")
            return to_host(self._data)
        if self._extra is not None and self._extra.get("conj"):
            raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use tensor.resolve_conj()."
                               "numpy() instead.")
        if self._data.dtype.kind == "V" or self._data.dtype.itemsize == 1 and self._data.dtype.kind == "f":
            # bfloat16, the float8s (ml_dtypes calls float8_e5m2's kind 'f'): torch has no NumPy dtype for them
            raise TypeError(f"Got unsupported ScalarType {self.dtype.name_c}")
        return self._data

    # -- everything else is a method of one op family: see _tensor_methods.py----------------


def _wrap_dim(dim, ndim):
    """Normalise a possibly negative dim, with PyTorch's IndexError (and its TypeError for a dim that is not
    an int)."""
    if dim.__class__ is not int:
        dim = int_arg(dim, None, "dim")
    n = ndim if ndim else 1
    if dim < -n or dim >= n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim + n if dim < 0 else dim


def _addr(a):
    return a.__array_interface__["data"][0] if a.__class__ is _ndarray else a.data.ptr




_DEFAULT_COMPLEX = {"float32": _dtype.complex64, "float64": _dtype.complex128}   # the default complex dtype


