"""glassgrad: PyTorch's API and semantics on NumPy, with a backward graph you can see through.

``import glassgrad as torch`` -- then ordinary PyTorch code runs and prints what PyTorch prints.
"""
import warnings as _warnings

# PyTorch computes inf/nan silently; NumPy warns. Silence NumPy's floating-point warnings raised
# from inside glassgrad's own ops only (the user's own NumPy code keeps its warnings).
_warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"glassgrad\.")

from ._dtype import (dtype, float16, bfloat16, finfo, iinfo,  # noqa: E402
                     float32, float64, int8, int16, int32, int64, uint8, bool, half, float,
                     double, short, int, long, get_default_dtype, set_default_dtype, promote_types, result_type,
                     can_cast, complex64, complex128, cfloat, cdouble)
from ._device import device
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
from .ops.einsum import *  # noqa: F401,F403
from .ops.norm import *  # noqa: F401,F403  (torch.batch_norm, layer_norm, ...: torch's signatures)
from .ops.embedding import *  # noqa: F401,F403
from .ops.dropout import *  # noqa: F401,F403
from .ops.complex import *  # noqa: F401,F403
from .ops.stft import *  # noqa: F401,F403
from .autograd import functional as _autograd_functional  # noqa: F401  (binds torch.autograd.functional)
from . import backend
from ._blas import set_num_threads, get_num_threads, set_num_interop_threads, get_num_interop_threads  # noqa: E402
from ._malloc import keep_freed_arrays as _keep_freed_arrays  # noqa: E402
_keep_freed_arrays()

strided = "torch.strided"
__version__ = "0.1.0"


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


class cuda:
    """torch.cuda: whether a CuPy GPU is present."""

    @staticmethod
    def is_available():
        return backend.cuda_available()

    @staticmethod
    def device_count():
        return backend.device_count()

    @staticmethod
    def synchronize(device=None):  # noqa: F811  (the argument torch names device)
        backend.synchronize(device)

    @staticmethod
    def manual_seed(seed):
        pass

    @staticmethod
    def manual_seed_all(seed):
        pass


_SUBMODULES = ("nn", "optim", "utils", "distributed", "multiprocessing", "linalg", "special", "distributions",
               "fft")


# torch.* names that are nn.functional's functions
_FROM_FUNCTIONAL = ("selu", "selu_", "celu", "celu_", "rrelu", "rrelu_", "prelu", "hardshrink", "threshold",
                    "threshold_", "cosine_similarity", "pairwise_distance", "conv1d", "conv2d", "conv3d",
                    "conv_transpose1d", "conv_transpose2d", "max_pool1d", "max_pool2d", "avg_pool1d",
                    "adaptive_avg_pool1d", "bilinear", "pixel_shuffle",
                    "pixel_unshuffle")   # only those whose torch.* signature is the functional one


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
                     "index_put_zeros", "polygamma"}
# ...and those whose first argument may also be a number (torch.add(2, x))
_NUMBER_FIRST = {"add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
                 "remainder", "pow", "float_power", "xlogy"}


def _tensor_first_names():
    from .ops import (creation, random, arithmetic, unary, special, special_binary, binary, ternary, softmax, compare, reduction, statistics,
                      scans, sorting, views, slicing, strided, shape, indexing, gather_scatter, masked, linalg, addmm,
                      linalg_legacy, linalg_cholesky, einsum, norm as _norm, embedding, dropout, complex as _cx, stft as _stft)
    names = {"clone", "is_floating_point", "numel"}
    for m in (creation, random, arithmetic, unary, special, special_binary, binary, ternary, softmax, compare, reduction, statistics, scans,
              sorting, views, slicing, strided, shape, indexing, gather_scatter, masked, linalg, addmm, linalg_legacy, linalg_cholesky, einsum, _norm,
              embedding, dropout, _cx, _stft):
        names.update(m.__all__)
    return sorted(names - _NOT_TENSOR_FIRST)


from ._args import wrap_namespace as _wrap_namespace  # noqa: E402
_wrap_namespace(globals(), _tensor_first_names(), _NUMBER_FIRST)


def __getattr__(name):
    """nn, optim and utils load on first use (keeps `import glassgrad` fast)."""
    import importlib
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "from_dlpack":
        return importlib.import_module(f"{__name__}.utils.dlpack").from_dlpack
    if name in ("save", "load"):
        return getattr(importlib.import_module(f"{__name__}.serialization"), name)
    if name in _FROM_FUNCTIONAL:
        fn = getattr(importlib.import_module(f"{__name__}.nn.functional"), name, None)
        if fn is not None:
            return fn
    raise AttributeError(f"module 'glassgrad' has no attribute '{name}'")
