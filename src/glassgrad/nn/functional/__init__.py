"""torch.nn.functional: the stateless form of every layer, activation and loss.

One file per family; each defines __all__.
"""
from ._linear import *  # noqa: F401,F403
from ._activation import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
from ._pool import *  # noqa: F401,F403
from ._vision import *  # noqa: F401,F403
from ._norm import *  # noqa: F401,F403
from ._dropout import *  # noqa: F401,F403
from ._sparse import *  # noqa: F401,F403
from ._loss import *  # noqa: F401,F403
from ._loss_linear import *  # noqa: F401,F403
from ._attention import *  # noqa: F401,F403
from ..._tensor import Tensor  # noqa: F401  (torch.nn.functional.Tensor)
from ...ops.native import conv_tbc  # noqa: F401
from ...overrides import (has_torch_function, has_torch_function_unary, has_torch_function_variadic,  # noqa: F401
                          handle_torch_function, boolean_dispatch)
from ._attention import (_canonical_mask, _none_or_dtype, _mha_shape_check, _in_projection_packed,  # noqa: F401
                         _in_projection)
from ...ops.distance import pdist  # noqa: F401  (torch.nn.functional.pdist is torch.pdist)


# The functions torch implements in C++ take their tensors through its argument parser: anything else is a
# TypeError ("relu(): argument 'input' (position 1) must be Tensor, not list"), checked once here.  The
# others are torch Python code that fails on the first tensor method it calls (AttributeError) -- as
# glassgrad's do -- and are left alone.
_PYTHON_LEVEL = {"adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool2d",
                 "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
                 "affine_grid", "binary_cross_entropy",
                 "binary_cross_entropy_with_logits", "dropout1d", "dropout2d", "dropout3d", "embedding_bag",
                 "gaussian_nll_loss", "glu", "group_norm", "huber_loss", "instance_norm", "interpolate", "l1_loss",
                 "local_response_norm", "log_softmax", "lp_pool1d", "lp_pool2d", "lp_pool3d", "margin_ranking_loss",
                 "max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "mse_loss", "normalize",
                 "sigmoid", "smooth_l1_loss", "softmax", "softmin", "softsign", "tanh", "tanhshrink",
                 "triplet_margin_with_distance_loss", "upsample", "upsample_bilinear", "upsample_nearest",
                 "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "multi_head_attention_forward",
                 "fractional_max_pool3d", "fractional_max_pool3d_with_indices", "gumbel_softmax",
                 "linear_cross_entropy", "assert_int_or_pair"}
_MORE_TENSORS = {"linear": ("weight", "bias?"), "bilinear": ("input2", "weight", "bias?"),
                 "cross_entropy": ("target",), "nll_loss": ("target",), "embedding": ("weight",),
                 "conv1d": ("weight", "bias?"), "conv2d": ("weight", "bias?"), "conv3d": ("weight", "bias?"),
                 "layer_norm": ("weight?", "bias?"), "prelu": ("weight",)}



def assert_int_or_pair(arg, arg_name, message):
    if not (isinstance(arg, int) or len(arg) == 2):      # torch's AssertionError, raised (not an assert: python -O)
        raise AssertionError(message.format(arg_name))


_FROM_OPS = {"linear", "pdist", "conv_tbc"}      # nn.functional functions that are ops (defined in ops/addmm.py)


def _wrap():
    from ..._args import wrap_namespace
    g = globals()
    names = [n for n, f in g.items() if not n.startswith("_") and callable(f) and (getattr(f, "__module__", "")
             .startswith(__name__) or n in _FROM_OPS) and n not in _PYTHON_LEVEL]
    wrap_namespace(g, names, also=_MORE_TENSORS)


_wrap()
