"""nn.functional: dropout family (the mask is drawn in ops/dropout.py exactly as PyTorch's CPU kernel draws
it, so the same seed drops the same elements)."""
import warnings

from ...ops import dropout as _D

__all__ = ["dropout", "alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"]

_impl = _D._dropout_impl


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    return _impl(input, p, training, False, False, inplace)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _impl(input, p, training, False, True, inplace)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    _check_p(p)
    return _impl(input, p, training, True, True, inplace)


def _feature(input, p, training, inplace, unbatched):
    if unbatched:
        input = input.unsqueeze_(0) if inplace else input.unsqueeze(0)
    result = _impl(input, p, training, True, False, inplace)
    if unbatched:
        result = result.squeeze_(0) if inplace else result.squeeze(0)
    return result


def dropout1d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.dim()
    if d not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {d}D input. "
            "Note that dropout1d exists to provide channel-wise dropout on inputs with 1 "
            "spatial dimension, a channel dimension, and an optional batch dimension "
            "(i.e. 2D or 3D inputs).")
    return _feature(input, p, training, inplace, d == 2)


def _warn_unusual_dim(name, spatial, d):
    """dropout2d / dropout3d's deprecation warning for an input that is not (C, *spatial) or (N, C, *spatial)."""
    if d not in (spatial + 1, spatial + 2):
        warnings.warn(
            f"{name}: Received a {d}-D input to {name}, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            f"and silence this warning, please use dropout instead. Note that {name} "
            f"exists to provide channel-wise dropout on inputs with {spatial} spatial dimensions, "
            f"a channel dimension, and an optional batch dimension (i.e. {spatial + 1}D or {spatial + 2}D inputs).",
            stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.dim()
    _warn_unusual_dim("dropout2d", 2, d)
    if d == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _impl(input, p, training, True, False, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    _check_p(p)
    d = input.dim()
    _warn_unusual_dim("dropout3d", 3, d)
    return _feature(input, p, training, inplace, d != 5)
