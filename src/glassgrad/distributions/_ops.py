"""The tensor functions the distributions call, gathered from ops (the torch namespace, without importing the
glassgrad package from a library-layer module).  ``from . import _ops as T`` then ``T.exp(x)``."""
import numpy as np

from .._tensor import Tensor, Size, _make  # noqa: F401
from .._dtype import get_default_dtype, float32, float64, int64, bool  # noqa: F401
from ..autograd.grad_mode import no_grad, enable_grad  # noqa: F401
from ..ops.unary import *  # noqa: F401,F403
from ..ops.arithmetic import *  # noqa: F401,F403
from ..ops.binary import *  # noqa: F401,F403
from ..ops.ternary import *  # noqa: F401,F403
from ..ops.compare import *  # noqa: F401,F403
from ..ops.creation import *  # noqa: F401,F403
from ..ops.creation import from_numpy
from ..ops.random import *  # noqa: F401,F403
from ..ops.reduction import *  # noqa: F401,F403
from ..ops.statistics import *  # noqa: F401,F403
from ..ops.softmax import *  # noqa: F401,F403
from ..ops.shape import *  # noqa: F401,F403
from ..ops.views import *  # noqa: F401,F403
from ..ops.slicing import *  # noqa: F401,F403
from ..ops.scans import *  # noqa: F401,F403
from ..ops.gather_scatter import *  # noqa: F401,F403
from ..ops.linalg import *  # noqa: F401,F403
from ..ops.special import lgamma, digamma, polygamma, mvlgamma  # noqa: F401
from ..ops.einsum import einsum  # noqa: F401
from ..ops.shape_extra import tril_indices  # noqa: F401
from ..ops.special_binary import igamma as gammainc  # noqa: F401  (torch.special.gammainc)
from ..ops.activation import softplus, log_sigmoid  # noqa: F401
from ..ops.loss_bce import binary_cross_entropy_with_logits  # noqa: F401
from ..nn.functional._sparse import one_hot  # noqa: F401
from ..nn.functional._vision import pad  # noqa: F401


def from_array(a):
    """A tensor of an op's result array on its device: ``from_numpy`` (its checks) for a host array, a device
    array (CuPy's, the strict device's) wrapped as it is."""
    return from_numpy(a) if a.__class__ is np.ndarray else _make(a)


class finfo:
    """torch.finfo's fields for a floating dtype (what the distributions read: eps, tiny, max, min)."""

    def __init__(self, dtype=None):
        fi = np.finfo((dtype or get_default_dtype()).np)
        self.eps, self.tiny = float(fi.eps), float(fi.tiny)
        self.max, self.min = float(fi.max), float(fi.min)


def is_all_true(t):
    """torch._is_all_true: every element of a bool tensor is True."""
    return (np.all(t._data) if isinstance(t, Tensor) else np.all(t)).item()
