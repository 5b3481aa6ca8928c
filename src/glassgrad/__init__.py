"""glassgrad: PyTorch's API and semantics on NumPy, with a backward graph you can see through.

``import glassgrad as torch`` -- then ordinary PyTorch code runs and prints what PyTorch prints.
"""
import sys as _sys
import warnings as _warnings

# PyTorch computes inf/nan silently; NumPy warns. Silence NumPy's floating-point warnings raised
# from inside glassgrad's own ops only (the user's own NumPy code keeps its warnings).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"glassgrad\.")

from ._dtype import (dtype, float16, bfloat16, finfo, iinfo,  # noqa: E402
                     float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, half, float,
                     double, short, int, long, get_default_dtype, set_default_dtype, promote_types, result_type,
                     can_cast, float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu,
                     complex64, complex128, cfloat, cdouble)
from ._dtype import (complex32, chalf, float4_e2m1fn_x2, bit, bits1x8, bits2x4, bits4x2, bits8, bits16,  # noqa: E402,F401
                     qint8, quint8, qint32, quint4x2, quint2x4, uint1, uint2, uint3, uint4, uint5, uint6, uint7,
                     int1, int2, int3, int4, int5, int6, int7)
from ._device import device, set_default_device, get_default_device
from ._globals import *  # noqa: F401,F403
from .storage import (UntypedStorage, TypedStorage, is_storage, DoubleStorage, FloatStorage, HalfStorage,  # noqa: F401
                      BFloat16Storage, LongStorage, IntStorage, ShortStorage, CharStorage, ByteStorage, BoolStorage)
from ._tensor import Tensor, Size
from ._legacy import (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, LongTensor, IntTensor, ShortTensor, CharTensor,
                      ByteTensor, BoolTensor)
from ._tensor_str import set_printoptions, get_printoptions
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled,
                                 is_inference_mode_enabled)
from . import autograd
from .autograd.anomaly import is_anomaly_enabled, is_anomaly_check_nan_enabled, set_detect_anomaly  # noqa: E402
from .ops import _core as _ops_core  # noqa: F401  (first: the ops families import their shared helpers from it)
from .ops import namespaces as _namespaces  # noqa: F401  (plugs the backward namespaces into autograd)
from .ops.creation import *  # noqa: F401,F403
from .ops.random import *  # noqa: F401,F403
from .ops.conversion import clone
from .ops.arithmetic import *  # noqa: F401,F403
from .ops.unary import *  # noqa: F401,F403
from .ops.special import *  # noqa: F401,F403
from .ops.special_binary import *  # noqa: F401,F403
from .ops.binary import *  # noqa: F401,F403
from .ops.ternary import *  # noqa: F401,F403
from .ops.softmax import *  # noqa: F401,F403
from .ops.compare import *  # noqa: F401,F403
from .ops.reduction import *  # noqa: F401,F403
from .ops.statistics import *  # noqa: F401,F403
from .ops.scans import *  # noqa: F401,F403
from .ops.sorting import *  # noqa: F401,F403
from .ops.views import *  # noqa: F401,F403
from .ops.slicing import *  # noqa: F401,F403
from .ops.strided import *  # noqa: F401,F403
from .ops.shape import *  # noqa: F401,F403
from .ops.indexing import *  # noqa: F401,F403
from .ops.gather_scatter import *  # noqa: F401,F403
from .ops.masked import *  # noqa: F401,F403
from .ops.linalg import *  # noqa: F401,F403
from .ops.addmm import *  # noqa: F401,F403
from .ops.linalg_legacy import *  # noqa: F401,F403
from .ops.linalg_cholesky import *  # noqa: F401,F403
from .ops.linalg_deprecated import *  # noqa: F401,F403
from .ops.einsum import *  # noqa: F401,F403
from .ops.norm import *  # noqa: F401,F403  (torch.batch_norm, layer_norm, ...: torch's signatures)
from .ops.embedding import *  # noqa: F401,F403
from .ops.dropout import *  # noqa: F401,F403
from .ops.stats_extra import *  # noqa: F401,F403
from .ops.distance import *  # noqa: F401,F403
from .ops.shape_extra import *  # noqa: F401,F403
from .ops.search import *  # noqa: F401,F403
from .ops.intmath import *  # noqa: F401,F403
from .ops.index_reduce import *  # noqa: F401,F403
from .ops.linalg_extra import *  # noqa: F401,F403
from .ops.windows import *  # noqa: F401,F403
from .ops.tensor_misc import *  # noqa: F401,F403
from .ops.segment_reduce import *  # noqa: F401,F403  (torch.segment_reduce)
from .ops.view_copies import *  # noqa: F401,F403
from .ops.native import *  # noqa: F401,F403
from ._sampling import poisson, binomial  # noqa: F401  (torch's samplers, distributions loaded on first call)
from ._memory_format import (memory_format, contiguous_format, channels_last, channels_last_3d,  # noqa: F401
                             preserve_format, legacy_contiguous_format)
from ._layout import layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn  # noqa: F401
from .ops.sparse import *  # noqa: F401,F403  (sparse COO tensors: sparse_coo_tensor)
from .ops.sparse_ops import *  # noqa: F401,F403  (spmm smm hspmm sspaddmm saddmm dsmm hsmm)
from .ops import sparse_unary as _sparse_unary  # noqa: F401,E402  (registers abs, sin, ... of sparse tensors)
from .ops.sparse_csr import *  # noqa: F401,F403  (sparse CSR tensors: sparse_csr_tensor)
from .ops import sparse_index as _sparse_index  # noqa: F401,E402  (registers index_select of sparse tensors)
from .ops.complex import *  # noqa: F401,F403
from .ops.stft import *  # noqa: F401,F403
from .ops.layout_copies import *  # noqa: F401,F403  (view_as_real_copy, values_copy, crow_indices_copy, ...)
from . import _op_registry as _op_registry  # noqa: E402  (glassgrad.ops doubles as torch.ops)
_op_registry.install(lambda name: getattr(_sys.modules[__name__], name, None))
from .autograd import functional as _autograd_functional  # noqa: F401  (binds torch.autograd.functional)
from .autograd import forward_ad as _autograd_forward_ad  # noqa: F401  (binds torch.autograd.forward_ad)
from . import backend
from ._blas import set_num_threads, get_num_threads, set_num_interop_threads, get_num_interop_threads  # noqa: E402
from ._malloc import keep_freed_arrays as _keep_freed_arrays  # noqa: E402
_keep_freed_arrays()

from .torch_version import __version__  # noqa: E402  (a TorchVersion: compares as a version, as torch's)

import math as _math  # noqa: E402
e, pi, inf, nan, newaxis = _math.e, _math.pi, _math.inf, _math.nan, None


def is_inference(input):
    return input.is_inference()


def get_device(input):
    return input.get_device()


def is_distributed(input):
    return input.is_distributed()


def resize_as_(input, the_template, *, memory_format=None):  # noqa: F811  (the argument shadows torch.memory_format)
    return input.resize_as_(the_template, memory_format=memory_format)


def is_nonzero(input):
    return input.is_nonzero()


def is_same_size(input, other):
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' (position 2) must be Tensor, not {type(other).__name__}")
    return input.is_same_size(other)


def is_signed(input):
    return input.is_signed()


def is_vulkan_available():
    return False


def cudnn_is_acceptable(input):
    """Whether cuDNN would take this tensor: never here (no cuDNN; torch says False for CPU tensors too)."""
    return False


def set_default_tensor_type(t):
    """Deprecated in torch: the default floating dtype from a tensor type (FloatTensor, 'torch.DoubleTensor')."""
    from . import _legacy
    from ._globals import warn_once
    warn_once("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
              "torch.set_default_dtype() and torch.set_default_device() as alternatives.")
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        t = getattr(_legacy, t[len("torch."):], None) if t.startswith("torch.") else None
        if t is None:
            raise TypeError("invalid type object: only floating-point types are supported as the default type")
    dt = getattr(t, "dtype", None)
    if dt.__class__ is not dtype:
        raise TypeError("invalid type object: only floating-point types are supported as the default type")
    set_default_dtype(dt)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def numel(input):
    return input.numel()


def typename(obj):
    if isinstance(obj, Tensor):
        return f"torch.{obj.dtype._legacy}"
    return type(obj).__name__


# torch.cuda / torch.cpu (device modules), torch.autocast and torch's autocast state functions (torch.amp)
from . import cuda, cpu  # noqa: E402
from .cuda import OutOfMemoryError  # noqa: E402
from .amp.autocast_mode import autocast  # noqa: E402
from .amp.grad_scaler import GradScaler  # noqa: E402
from .accelerator.streams import Stream, Event  # noqa: E402
from .amp._state import *  # noqa: F401,F403,E402


def get_device_module(device=None):  # noqa: F811  (the argument torch names device)
    """The module of a device type (torch.cuda, torch.cpu); None: the accelerator's, or cpu's without one."""
    if isinstance(device, globals()["device"]):
        name = device.type
    elif isinstance(device, str):
        name = globals()["device"](device).type
    elif device is None:
        name = "cuda" if backend.cuda_available() else "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or None")
    mod = globals().get(name) if name in ("cpu", "cuda") else None
    if mod is None:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as 'torch.{name}'.")
    return mod


_SUBMODULES = ("nn", "optim", "utils", "distributed", "multiprocessing", "linalg", "special", "distributions",
               "overrides", "sparse", "fft", "backends", "version",
               "testing", "onnx", "func", "amp", "accelerator", "random")
# torch.profiler / hub / jit / compiler / _dynamo (first use) and torch.compile (eager: glassgrad compiles nothing)
_SUBMODULES += ("profiler", "hub", "jit", "compiler", "_dynamo")
_SUBMODULES += ("signal", "masked")    # torch.signal (windows), torch.masked (reductions by mask): first use
# torch.types / functional / torch_version / futures / library (first use)
_SUBMODULES += ("types", "functional", "torch_version", "futures", "library")
_SUBMODULES += ("fx",)     # torch.fx: symbolic tracing (first use)
_SUBMODULES += ("mps",)    # torch.mps: no MPS device here (torch's answers on Linux)
_SUBMODULES += ("_C",)     # torch._C: the few C-extension functions libraries call directly
from ._C import ScriptModule, _nn as _C_nn  # noqa: E402,F401  (torch.ScriptModule is torch._C.ScriptModule)


def _assert(condition, message):
    """torch._assert: ``assert condition, message``, a call symbolic tracing records."""
    assert condition, message
from .compiler import compile  # noqa: E402,A001  (loads nn only when it compiles a module)
from .jit import fork, wait, Future  # noqa: E402  (torch.fork / wait / Future: eager futures)
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: E402  (randomized low-rank SVD / PCA, composed of ops)
from ._lobpcg import lobpcg  # noqa: E402  (LOBPCG eigensolver, composed of ops)
from ._symbolic import *  # noqa: F401,F403,E402  (sym_int, sym_max, ..., SymInt: eager, on Python numbers)
from ._toplevel_misc import (compiled_with_cxx11_abi, get_file_path, prepare_multiprocessing_environment,  # noqa: E402,F401
                             classproperty)
from .random import thread_safe_generator  # noqa: E402,F401


# torch.* names that are nn.functional's functions
_FROM_FUNCTIONAL = ("selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "prelu", "hardshrink", "threshold",
                    "threshold_", "cosine_similarity", "pairwise_distance", "conv1d", "conv2d", "conv3d",
                    "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d",
                    "adaptive_avg_pool1d", "bilinear", "pixel_shuffle",
                    "pixel_unshuffle", "conv_transpose3d")   # only those whose torch.* signature is the functional one


_LAZY_OPS = {"constant_pad_nd": "pad", "convolution": "conv", "affine_grid_generator": "grid_sample"}
_TORCH_NN = ("binary_cross_entropy_with_logits", "cosine_embedding_loss", "ctc_loss", "hinge_embedding_loss", "kl_div",
             "margin_ranking_loss", "poisson_nll_loss", "triplet_margin_loss", "max_pool3d", "max_pool1d_with_indices",
             "adaptive_max_pool1d", "channel_shuffle", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
             "rnn_tanh_cell", "rnn_relu_cell", "lstm_cell",
             "gru_cell", "lstm", "gru", "rnn_tanh", "rnn_relu", "embedding_bag")


# torch.* functions whose first argument is a Tensor get torch's TypeError for anything else ("exp():
# argument 'input' (position 1) must be Tensor, not list"), checked once here for the whole namespace.
# Not checked: the functions whose first argument is something else -- sizes, data, numbers, sequences of
# tensors, an equation -- and those torch itself writes in Python (norm, split, tensordot).
_NOT_TENSOR_FIRST = {"tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full", "arange",
                     "range", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm", "normal",
                     "manual_seed", "seed", "initial_seed", "get_rng_state", "set_rng_state", "scalar_tensor",
                     "empty_strided", "cat", "concat", "concatenate", "stack", "hstack", "vstack", "dstack",
                     "column_stack", "row_stack", "broadcast_tensors", "broadcast_shapes", "meshgrid", "einsum",
                     "atleast_1d", "atleast_2d", "atleast_3d", "norm", "split", "tensordot", "return_types",
                     "index_put_zeros", "polygamma", "frombuffer", "from_file",
                     "empty_permuted"}
# ...and those whose first argument may also be a number (torch.add(2, x))
_NUMBER_FIRST = {"add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
                 "remainder", "pow", "float_power", "xlogy"}


def _tensor_first_names():
    from .ops import (creation, random, arithmetic, unary, special, special_binary, binary, ternary, softmax, compare, reduction, statistics,
                      scans, sorting, views, slicing, strided as _strided, shape, indexing, gather_scatter, masked, linalg, addmm,
                      linalg_legacy, linalg_cholesky, linalg_deprecated, einsum, norm as _norm, embedding, dropout, view_copies,
                      native, sparse_ops, complex as _cx, stft as _stft)
    names = {"clone", "is_floating_point", "numel"}
    for m in (creation, random, arithmetic, unary, special, special_binary, binary, ternary, softmax, compare, reduction, statistics, scans,
              sorting, views, slicing, _strided, shape, indexing, gather_scatter, masked, linalg, addmm, linalg_legacy, linalg_cholesky, linalg_deprecated, einsum, _norm,
              embedding, dropout, view_copies, native, sparse_ops, _cx, _stft):
        names.update(m.__all__)
    for m in _more_families():
        names.update(m.__all__)
    return sorted(names - _NOT_TENSOR_FIRST - _MORE_NOT_TENSOR_FIRST)


# ...the same among the later families' names (tensor lists, sizes, a number or a tensor first)
_MORE_NOT_TENSOR_FIRST = {"block_diag", "cartesian_prod", "tril_indices", "triu_indices", "unravel_index", "isin",
                          "bucketize", "chain_matmul", "bartlett_window", "blackman_window", "hamming_window",
                          "hann_window", "kaiser_window"}


def _more_families():
    """The later op families (statistics, distances, shapes, searching, integer math, windows)."""
    from .ops import (stats_extra, distance, shape_extra, search, intmath, index_reduce, linalg_extra, windows,
                      tensor_misc, layout_copies)
    return (stats_extra, distance, shape_extra, search, intmath, index_reduce, linalg_extra, windows, tensor_misc,
            layout_copies)


from ._args import wrap_namespace as _wrap_namespace, honour_out as _honour_out  # noqa: E402
from .ops.out import write_out as _write_out  # noqa: E402
_wrap_namespace(globals(), _tensor_first_names(), _NUMBER_FIRST, out_writer=_write_out)


_honour_out(globals(), _write_out, ("glassgrad.ops",))     # cat, stack, zeros, arange, ...: out= too
from ._numpy_kwargs import install as _numpy_kwargs  # noqa: E402
_numpy_kwargs(globals(), Tensor)     # torch.sum(x, axis=1, keepdims=True), x.all(axis=-1): NumPy's spellings


def __getattr__(name):
    """nn, optim and utils load on first use (keeps `import glassgrad` fast)."""
    import importlib
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "vmap":         # torch.vmap is torch.func.vmap
        return importlib.import_module(f"{__name__}.func").vmap
    if name in ("from_dlpack", "to_dlpack"):
        return getattr(importlib.import_module(f"{__name__}.utils.dlpack"), name)
    if name in ("cond", "while_loop"):     # torch.cond / torch.while_loop (eager)
        return getattr(importlib.import_module(f"{__name__}._higher_order"), name)
    if name in ("save", "load"):
        return getattr(importlib.import_module(f"{__name__}.serialization"), name)
    if name == "PyTorchFileReader":     # torch._C's reader of torch.save archives (record access)
        return importlib.import_module(f"{__name__}._pt_file_reader").PyTorchFileReader
    if name.startswith("_foreach_"):     # torch._foreach_add / _foreach_lerp_ / ...: per-tensor ops over lists
        _fe = importlib.import_module(f"{__name__}._foreach")
        if name in _fe.__all__:
            return getattr(_fe, name)
    if name in _LAZY_OPS:      # ops of the families that load with nn.functional (architecture.md §1)
        return getattr(importlib.import_module(f"{__name__}.ops.{_LAZY_OPS[name]}"), name)
    if name in _TORCH_NN:      # ATen-signature forms of nn.functional's functions (_torch_nn.py)
        return getattr(importlib.import_module(f"{__name__}._torch_nn"), name)
    if name in _FROM_FUNCTIONAL:
        fn = getattr(importlib.import_module(f"{__name__}.nn.functional"), name, None)
        if fn is not None:
            return fn
    raise AttributeError(f"module 'glassgrad' has no attribute '{name}'")
