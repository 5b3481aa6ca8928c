"""nn.functional: normalisation layers.

batch_norm layer_norm group_norm (native nodes in ops/norm.py); instance_norm (batch norm over a
(1, N*C, ...) view, as PyTorch); rms_norm and local_response_norm (composites, as PyTorch).
"""
from ...ops import norm as _N
from ...ops.creation import zeros
from ...ops.shape import cat
from ...ops._core import full_precision

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm", "local_response_norm"]


def _size_str(t):
    return f"torch.Size({list(t._data.shape)})"


def _verify_batch_size(shape, shown):
    prod = shape[0]
    for s in shape[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {shown}")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    if training:
        _verify_batch_size(input._data.shape, _size_str(input))
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    return _N.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps)


def _verify_spatial_size(t):
    prod = 1
    for s in t._data.shape[2:]:
        prod *= s
    if prod == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {_size_str(t)}")


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    if use_input_stats:
        _verify_spatial_size(input)
    return _N.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    ns = _N._shape_arg(normalized_shape, "layer_norm")
    return _N.layer_norm(input, ns, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    shape = input._data.shape
    if len(shape) < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {len(shape)}")
    sizes = [shape[0] * shape[1] // num_groups, num_groups] + list(shape[2:])
    _verify_batch_size(sizes, sizes)
    return _N.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return _N.rms_norm(input, normalized_shape, weight, eps)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input (got {dim} dimensions)")
    if input.numel() == 0:
        return input
    if dim > 3:                 # torch sums the window with avg_pool3d there, which has no float16 / bfloat16
        full_precision("avg_pool3d_out_frame", input._data.dtype)
    sq = input.mul(input)
    shape = tuple(input.shape)
    c = shape[1]
    before, after = size // 2, (size - 1) // 2
    zs = lambda n: zeros((shape[0], n) + shape[2:], dtype=input.dtype, device=input.device)   # noqa: E731
    parts = ([zs(before)] if before else []) + [sq] + ([zs(after)] if after else [])
    padded = cat(parts, 1) if len(parts) > 1 else sq
    div = padded.narrow(1, 0, c)
    for i in range(1, size):
        div = div + padded.narrow(1, i, c)
    div = div.div(size)
    div = div.mul(alpha).add(k).pow(beta)
    return input / div
