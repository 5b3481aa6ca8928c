"""The methods of Tensor that reach into ops/ or autograd/: its Python operators, conversions, constructors and
autograd entry points, each a short delegation.

``Tensor`` (``_tensor.py``) inherits them.  ``_tensor.py`` sits below autograd and ops in the layers, so this file
imports no op module when it loads: it names ops through the ``glassgrad.ops`` package (whose ``__init__`` is
empty), bound when a method is first called, the way ``torch/_tensor.py`` calls ``torch.*``.  The one-line
methods of the op families are in ``_tensor_methods.py``.
"""
import numpy as np

from . import _dtype, _shm, _tensor
from . import _memory_format as _mf
from . import ops as _ops
from ._args import tensor_arg
from . import backend
from .backend import cuda_available


def _autograd():
    """The autograd package, named at call time: it sits above the Tensor layer and imports _tensor itself."""
    from . import autograd
    return autograd


class TensorProtocol:
    __slots__ = ()

    # -- construction: torch.Tensor(2, 3), t.new_*(...) (ops/creation.py) ------------------------
    def __new__(cls, *args, **kwargs):
        # legacy constructor torch.Tensor(2, 3) / torch.Tensor([1, 2])
        return _ops.creation.legacy_new(cls, _dtype._default[0], args, kwargs.get("device"))

    # -- autograd: requires_grad and grad_fn (a view's grad_fn is remade after its base changed in place), hooks, backward ---
    @property
    def requires_grad(self):
        b = self._base
        if b is not None and self._vbase_fn is not b._grad_fn:
            _autograd().inplace.refresh_view(self, b)
        return self._rg

    @requires_grad.setter
    def requires_grad(self, value):
        if value.__class__ is not bool and not isinstance(value, np.bool_):
            raise RuntimeError("requires_grad must be a bool")
        self._set_requires_grad(value, "only Tensors of floating point and complex dtype can require gradients")

    @property
    def grad_fn(self):
        b = self._base
        if b is not None and self._vbase_fn is not b._grad_fn:
            _autograd().inplace.refresh_view(self, b)
        return self._grad_fn

    def register_hook(self, hook):
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self._grad_fn is not None:
            return self._grad_fn._register_tensor_hook(self._out_nr, hook)
        d = self._extra_dict().setdefault("hooks", {})
        h = _autograd().graph.RemovableHandle(d)
        d[h.id] = hook
        return h

    def register_post_accumulate_grad_hook(self, hook):
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if not self._rg:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        d = self._extra_dict().setdefault("post_acc_hooks", {})
        h = _autograd().graph.RemovableHandle(d)
        d[h.id] = hook
        return h

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        _autograd().backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    # -- shared memory (_shm.py; glassgrad.multiprocessing sends tensors through it) ------------------
    def share_memory_(self):
        _shm.share([self], _tensor.Tensor)
        return self

    def is_shared(self):
        return _shm.is_shared(self._data)

    # -- pinned memory: glassgrad's host arrays are never page-locked ------------------------------
    def is_pinned(self, device=None):
        return False

    def pin_memory(self, device=None):
        """torch on a machine with no accelerator raises; with one, a pinned copy (here: a copy)."""
        if not cuda_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
        if self.device.type != "cpu":
            raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
        return self.clone()

    # -- devices this build has no support for: torch's own errors on a CPU-only build ----------------
    def xpu(self, device=None, non_blocking=False, memory_format=None):
        raise AssertionError("Torch not compiled with XPU enabled")

    def ipu(self, device=None, non_blocking=False, memory_format=None):
        raise RuntimeError("PyTorch is not linked with support for ipu devices")

    def mtia(self, device=None, non_blocking=False, memory_format=None):
        raise AssertionError("Torch not compiled with MTIA enabled. Ensure you have `import "
                             "mtia.host_runtime.torch_mtia.dynamic_library` in your python src file and include "
                             "`//mtia/host_runtime/torch_mtia:torch_mtia` as your target dependency!")

    def is_distributed(self):
        return False

    def dequantize(self):
        """A tensor that is not quantized is its own dequantization (glassgrad has no quantized tensors)."""
        return self

    def const_data_ptr(self):
        return self.data_ptr()

    def is_set_to(self, tensor):
        """Whether both tensors view the same memory with the same offset, size and stride."""
        return (self.data_ptr() == tensor.data_ptr() and self.shape == tensor.shape
                and self.stride() == tensor.stride() and self.dtype == tensor.dtype)

    def module_load(self, other, assign=False):
        """How nn.Module.load_state_dict turns `other` into the value for `self` (torch's default)."""
        return other.detach() if assign else self.copy_(other).detach()

    def reinforce(self, reward):
        raise RuntimeError(_REINFORCE_REMOVED)

    # -- pickling (ops/creation.py) --------------------------------------------------------------
    def __reduce_ex__(self, proto):
        a = self._data
        if a.__class__ is np.ndarray:
            if not a.flags.c_contiguous:          # NumPy pickles C order: the layout goes as a permutation
                return _ops.conversion.reduce_strided(a, self._rg)
            return (_ops.creation._rebuild, (np.array(a), self._rg))
        return (_ops.creation._rebuild, (backend.to_host(a), self._rg, str(self.device)))  # a CUDA tensor: back there

    # -- conversions (ops/conversion.py) and t.new_* ---------------------------------------------
    def to(self, *args, **kwargs):
        return _ops.conversion.to(self, *args, **kwargs)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        out = _ops.conversion.type_(self, dtype)
        fmt = kwargs.get("memory_format")
        return out if fmt is None or dtype is None else _ops.conversion.to(out, memory_format=fmt)

    def float(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.float32) if memory_format is None else \
            _ops.conversion.to(self, _dtype.float32, memory_format=memory_format)

    def double(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.float64) if memory_format is None else \
            _ops.conversion.to(self, _dtype.float64, memory_format=memory_format)

    def half(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.float16) if memory_format is None else \
            _ops.conversion.to(self, _dtype.float16, memory_format=memory_format)

    def bfloat16(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.bfloat16) if memory_format is None else \
            _ops.conversion.to(self, _dtype.bfloat16, memory_format=memory_format)

    def long(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.int64) if memory_format is None else \
            _ops.conversion.to(self, _dtype.int64, memory_format=memory_format)

    def int(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.int32) if memory_format is None else \
            _ops.conversion.to(self, _dtype.int32, memory_format=memory_format)

    def short(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.int16) if memory_format is None else \
            _ops.conversion.to(self, _dtype.int16, memory_format=memory_format)

    def char(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.int8) if memory_format is None else \
            _ops.conversion.to(self, _dtype.int8, memory_format=memory_format)

    def byte(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.uint8) if memory_format is None else \
            _ops.conversion.to(self, _dtype.uint8, memory_format=memory_format)

    def bool(self, *, memory_format=None):
        return _ops.conversion.to_dtype(self, _dtype.bool) if memory_format is None else \
            _ops.conversion.to(self, _dtype.bool, memory_format=memory_format)

    def type_as(self, other):
        return _ops.conversion.to_dtype(self, tensor_arg(other, "type_as", "other", 1).dtype)

    def cpu(self, *, memory_format=None):
        return _ops.conversion.to_device(self, "cpu") if memory_format is None else \
            _ops.conversion.to(self, "cpu", memory_format=memory_format)

    def cuda(self, device=None, non_blocking=False, memory_format=None):
        dev = "cuda" if device is None else device
        return _ops.conversion.to_device(self, dev) if memory_format is None else \
            _ops.conversion.to(self, dev, memory_format=memory_format)

    def clone(self, *, memory_format=None):
        return _ops.conversion.clone(self, memory_format)

    def contiguous(self, *, memory_format=_mf.contiguous_format):
        if memory_format is _mf.contiguous_format and self._data.flags.c_contiguous:
            return self
        return _ops.conversion.contiguous(self, memory_format)

    def new(self, *args, **kwargs):
        return _ops.creation.legacy_new(_tensor.Tensor, self.dtype, args,
                                         kwargs.get("device", self.device))

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        return _ops.creation.tensor(data, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        return _ops.creation.zeros(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        return _ops.creation.ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
        return _ops.creation.empty(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad=False):
        return _ops.creation.full(size, fill_value, dtype=dtype or self.dtype, device=device or self.device,
                    requires_grad=requires_grad)

    # -- arithmetic operators (ops/arithmetic.py) ----------------------------------------------------
    def __add__(self, other):
        return _ops.arithmetic.add(self, other)

    __radd__ = __add__

    def __sub__(self, other):
        return _ops.arithmetic.sub(self, other)

    def __mul__(self, other):
        return _ops.arithmetic.mul(self, other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return _ops.arithmetic.div(self, other)

    def __iadd__(self, other):
        return _ops.arithmetic.add_(self, other)

    def __rsub__(self, other):
        return _ops.arithmetic.rsub(self, other)

    def __isub__(self, other):
        return _ops.arithmetic.sub_(self, other)

    def __imul__(self, other):
        return _ops.arithmetic.mul_(self, other)

    def __rtruediv__(self, other):
        return _ops.arithmetic.rdiv(self, other)

    def __itruediv__(self, other):
        return _ops.arithmetic.div_(self, other)

    def __floordiv__(self, other):
        return _ops.arithmetic.floor_divide(self, other)

    def __rfloordiv__(self, other):
        return _ops.arithmetic.floor_divide(_ops.conversion.scalar_like(other, self), self)

    def __ifloordiv__(self, other):
        return _ops.arithmetic.floor_divide_(self, other)

    def __mod__(self, other):
        return _ops.arithmetic.remainder(self, other)

    def __rmod__(self, other):
        return _ops.arithmetic.remainder(_ops.conversion.scalar_like(other, self), self)

    def __imod__(self, other):
        return _ops.arithmetic.remainder_(self, other)

    def __pow__(self, other):
        return _ops.arithmetic.pow(self, other)

    def __rpow__(self, other):
        return _ops.arithmetic.rpow(self, other)

    def __ipow__(self, other):
        return _ops.arithmetic.pow_(self, other)

    def __neg__(self):
        return _ops.arithmetic.neg(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _ops.unary.abs(self)

    def __matmul__(self, other):
        return _ops.linalg.matmul(self, other)

    def __rmatmul__(self, other):
        return _ops.linalg.matmul(_ops.conversion.as_tensor_arg(other, self), self)

    def __imatmul__(self, other):
        raise RuntimeError("In-place matmul is not supported. Use 'a = a @ b' instead of 'a @= b'.")

    # comparisons and logic (ops/compare.py); another operand than a tensor or a number leaves the answer to
    # Python, as torch's operators do (x == None is False, x < None a TypeError)
    def __eq__(self, other):
        return _ops.compare.eq(self, other) if _ops._core.is_operand(other) else NotImplemented

    def __ne__(self, other):
        return _ops.compare.ne(self, other) if _ops._core.is_operand(other) else NotImplemented

    def __lt__(self, other):
        return _ops.compare.lt(self, other) if _ops._core.is_operand(other) else NotImplemented

    def __le__(self, other):
        return _ops.compare.le(self, other) if _ops._core.is_operand(other) else NotImplemented

    def __gt__(self, other):
        return _ops.compare.gt(self, other) if _ops._core.is_operand(other) else NotImplemented

    def __ge__(self, other):
        return _ops.compare.ge(self, other) if _ops._core.is_operand(other) else NotImplemented

    def __contains__(self, element):
        if not _ops._core.is_operand(element) or isinstance(element, np.ndarray):
            raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a "
                               f"{type(element)}.")
        return bool((self == element).any())

    def __and__(self, other):
        return _ops.compare.bitwise_and(self, other)

    __rand__ = __and__

    def __or__(self, other):
        return _ops.compare.bitwise_or(self, other)

    __ror__ = __or__

    def __xor__(self, other):
        return _ops.compare.bitwise_xor(self, other)

    __rxor__ = __xor__

    def __invert__(self):
        if self._data.dtype.kind in "fV":
            raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
        return _ops.compare.bitwise_not(self)

    def __iand__(self, other):
        return _ops.compare.bitwise_and_(self, other)

    def __ior__(self, other):
        return _ops.compare.bitwise_or_(self, other)

    def __ixor__(self, other):
        return _ops.compare.bitwise_xor_(self, other)

    def __lshift__(self, other):
        return _ops.compare.bitwise_left_shift(self, other)

    def __rshift__(self, other):
        return _ops.compare.bitwise_right_shift(self, other)

    # indexing (ops/indexing.py)
    def __getitem__(self, index):
        return _ops.indexing.getitem(self, index)

    def __setitem__(self, index, value):
        _ops.masked.setitem(self, index, value)

    # -- filling in place (ops/creation.py, ops/random.py), and the transposing properties (ops/views.py) ----
    def fill_(self, value):
        return _ops.creation.fill_(self, value)
    def zero_(self):
        return _ops.creation.zero_(self)
    def uniform_(self, a=0, b=1, *, generator=None):
        return _ops.random.uniform_(self, a, b, generator=generator)
    def normal_(self, mean=0, std=1, *, generator=None):
        return _ops.random.normal_(self, mean, std, generator=generator)
    def random_(self, *args, generator=None):
        return _ops.random.random_(self, *args, generator=generator)
    def bernoulli_(self, p=0.5, *, generator=None):
        return _ops.random.bernoulli_(self, p, generator=generator)
    def bernoulli(self, p=None, *, generator=None):
        return _ops.random.bernoulli(self, p, generator=generator)
    def exponential_(self, lambd=1, *, generator=None):
        return _ops.random.exponential_(self, lambd, generator=generator)
    def geometric_(self, p, *, generator=None):
        return _ops.random.geometric_(self, p, generator=generator)
    def log_normal_(self, mean=1, std=2, *, generator=None):
        return _ops.random.log_normal_(self, mean, std, generator=generator)
    def cauchy_(self, median=0, sigma=1, *, generator=None):
        return _ops.random.cauchy_(self, median, sigma, generator=generator)
    def copy_(self, src, non_blocking=False):
        return _ops.arithmetic.copy_(self, src, non_blocking)
    def multinomial(self, num_samples, replacement=False, *, generator=None):
        return _ops.random.multinomial(self, num_samples, replacement, generator=generator)

    @property
    def T(self):
        return _ops.views.T(self)

    @property
    def mT(self):
        return _ops.views.mT(self)


_REINFORCE_REMOVED = """reinforce() was removed.
Use torch.distributions instead.
See https://pytorch.org/docs/main/distributions.html

Instead of:

probs = policy_network(state)
action = probs.multinomial()
next_state, reward = env.step(action)
action.reinforce(reward)
action.backward()

Use:

probs = policy_network(state)
# NOTE: categorical is equivalent to what used to be called multinomial
m = torch.distributions.Categorical(probs)
action = m.sample()
next_state, reward = env.step(action)
loss = -m.log_prob(action) * reward
loss.backward()
"""
