"""Op table rows: convolutions, fold / unfold (nn.functional; ops/conv.py)."""
import numpy as np

from .core import functional, OpInfo, Sample, ErrorSample, arr, noncontig


_F = functional


def _conv1d(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(2, 3, 7), A(4, 3, 3), name="basic"),
            Sample(A(2, 3, 7), A(4, 3, 3), A(4), name="bias"),
            Sample(A(3, 7), A(4, 3, 3), A(4), name="unbatched"),
            Sample(A(2, 4, 9), A(6, 2, 3), A(6), stride=2, padding=1, dilation=2, groups=2, name="all"),
            Sample(A(2, 3, 6), A(2, 3, 2), padding="same", name="same_even"),
            Sample(A(2, 3, 6), A(2, 3, 3), padding="same", dilation=2, name="same_dil"),
            Sample(A(2, 3, 6), A(2, 3, 3), padding="valid", name="valid"),
            Sample(A(0, 3, 6), A(2, 3, 3), name="empty_batch"),
            Sample(noncontig(A(2, 3, 7)), A(4, 3, 3), name="noncontig"),
            Sample(A(2, 3, 7), A(4, 3, 3), stride=(3,), padding=(2,), name="tuple")]


def _conv2d(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(2, 3, 6, 5), A(4, 3, 3, 2), A(4), name="bias"),
            Sample(A(3, 6, 5), A(4, 3, 3, 3), name="unbatched"),
            Sample(A(2, 4, 7, 8), A(6, 2, 3, 2), A(6), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2,
                   name="all"),
            Sample(A(1, 6, 5, 5), A(6, 1, 3, 3), groups=6, padding=1, name="depthwise"),
            Sample(A(2, 3, 5, 6), A(2, 3, 2, 3), padding="same", name="same_even"),
            Sample(A(2, 3, 5, 6), A(2, 3, 1, 1), stride=2, name="1x1_stride"),
            Sample(noncontig(A(2, 3, 6, 5)), A(4, 3, 3, 3), name="noncontig"),
            Sample(A(0, 3, 5, 5), A(2, 3, 3, 3), name="empty_batch")]


def _conv3d(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(1, 2, 4, 5, 4), A(3, 2, 2, 3, 2), A(3), stride=(1, 2, 1), padding=(1, 0, 1), name="basic"),
            Sample(A(4, 4, 4, 4), A(2, 2, 3, 1, 2), groups=2, dilation=(1, 2, 1), name="unbatched_groups")]


def _convt1d(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(2, 3, 5), A(3, 4, 3), A(4), name="bias"),
            Sample(A(3, 5), A(3, 2, 3), name="unbatched"),
            Sample(A(2, 4, 5), A(4, 3, 3), A(6), stride=2, padding=1, output_padding=1, groups=2, dilation=2,
                   name="all"),
            Sample(A(2, 3, 4), A(3, 2, 2), stride=3, dilation=1, output_padding=2, name="outpad"),
            Sample(A(2, 3, 5), A(3, 2, 3), stride=1, dilation=2, output_padding=1, name="outpad_dilation")]


def _convt2d(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(2, 3, 4, 5), A(3, 4, 3, 2), A(4), name="bias"),
            Sample(A(3, 4, 4), A(3, 2, 3, 3), name="unbatched"),
            Sample(A(2, 4, 4, 3), A(4, 3, 3, 2), A(6), stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2,
                   dilation=(2, 1), name="all"),
            Sample(noncontig(A(2, 3, 4, 5)), A(3, 2, 2, 2), stride=2, name="noncontig")]


def _convt3d(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(1, 2, 3, 2, 3), A(2, 2, 2, 2, 2), A(2), stride=2, padding=(0, 1, 0), name="basic"),
            Sample(A(2, 2, 2, 3), A(2, 1, 2, 1, 2), stride=(1, 2, 1), dilation=(2, 1, 1), output_padding=(1, 1, 0),
                   name="unbatched_outpad")]


def _conv_errors():
    z = np.zeros
    f = np.float32
    return [ErrorSample(Sample(z((2, 5, 8, 8), f), z((4, 3, 3, 3), f)), RuntimeError, "expected input[2, 5, 8, 8] to have 3 channels"),
            ErrorSample(Sample(z((8, 8), f), z((4, 3, 3, 3), f)), RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to conv2d"),
            ErrorSample(Sample(z((1, 3, 2, 2), f), z((4, 3, 3, 3), f)), RuntimeError, "Kernel size can't be greater than actual input size"),
            ErrorSample(Sample(z((1, 6, 8, 8), f), z((3, 3, 3, 3), f), groups=2), RuntimeError, "expected weight to be divisible by 2"),
            ErrorSample(Sample(z((1, 3, 8, 8), f), z((4, 3, 3, 3), f), z((3,), f)), RuntimeError, "expected bias to be 1-dimensional with 4 elements"),
            ErrorSample(Sample(z((1, 3, 8, 8), f), z((4, 3, 3, 3), f), stride=0), RuntimeError, "non-positive stride is not supported"),
            ErrorSample(Sample(z((1, 3, 8, 8), f), z((4, 3, 3, 3), f), padding=-1), RuntimeError, "negative padding is not supported"),
            ErrorSample(Sample(z((1, 3, 8, 8), f), z((4, 3, 3, 3), f), padding="same", stride=2), RuntimeError, "padding='same' is not supported for strided convolutions"),
            ErrorSample(Sample(z((1, 3, 8, 8), f), z((4, 3, 3, 3), f), padding="foo"), RuntimeError, "Invalid padding string: 'foo'"),
            ErrorSample(Sample(z((1, 3, 8, 8), f), z((4, 3, 3, 3), f), stride=(1, 1, 1)), RuntimeError, "expected stride to be a single integer value or a list of 2 values"),
            ErrorSample(Sample(z((1, 3, 8, 8)), z((4, 3, 3, 3), f)), RuntimeError, "expected scalar type Double but found Float"),
            ErrorSample(Sample(z((1, 3, 8, 8), f), z((4, 3, 3, 3), f), z((4,))), RuntimeError, "Input type (float) and bias type (double) should be the same"),
            ErrorSample(Sample(z((1, 3, 8, 8), f), z((4, 3, 3, 3), f), groups=0), RuntimeError, "non-positive groups is not supported"),
            ErrorSample(Sample(z((1, 6, 8, 8), f), z((2, 2, 3, 3), f), groups=3), RuntimeError, "expected weight to be at least 3 at dimension 0")]


def _convt_errors():
    z = np.zeros
    f = np.float32
    return [ErrorSample(Sample(z((2, 5, 8, 8), f), z((4, 3, 3, 3), f)), RuntimeError, "Given transposed=1, weight of size [4, 3, 3, 3], expected input[2, 5, 8, 8] to have 4 channels"),
            ErrorSample(Sample(z((2, 3, 8, 8), f), z((3, 4, 3, 3), f), stride=2, output_padding=2), RuntimeError, "output padding must be smaller than either stride or dilation, but got output_padding_height: 2 output_padding_width: 2 stride_height: 2"),
            ErrorSample(Sample(z((2, 3, 8, 8), f), z((3, 4, 3, 3), f), z((3,), f)), RuntimeError, "expected bias to be 1-dimensional with 4 elements"),
            ErrorSample(Sample(z((2, 3, 8, 8), f), z((3, 4, 3, 3), f), output_padding=-1), RuntimeError, "negative output_padding is not supported"),
            ErrorSample(Sample(z((8, 8), f), z((3, 4, 3, 3), f)), RuntimeError, "Expected 3D (unbatched) or 4D (batched) input to conv_transpose2d")]


def _convt1d_errors():
    z = np.zeros
    f = np.float32
    return [ErrorSample(Sample(z((1, 3, 5), f), z((3, 2, 3), f), stride=2, output_padding=2), RuntimeError,
                        "but got output_padding_height: 0 output_padding_width: 2 stride_height: 1 stride_width: 2")]


def _unfold(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(2, 3, 5, 6), 2, name="basic"),
            Sample(A(2, 3, 5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1), name="all"),
            Sample(A(3, 5, 5), 3, name="unbatched"),
            Sample(noncontig(A(2, 2, 4, 5)), 2, stride=2, name="noncontig")]


def _fold(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(2, 12, 20), (5, 6), 2, name="basic"),
            Sample(A(2, 18, 12), (5, 6), (2, 3), dilation=(1, 2), padding=1, stride=(2, 1), name="all"),
            Sample(A(27, 9), 5, 3, name="unbatched"),
            Sample(A(1, 4, 9), (4, 4), 2, stride=1, name="overlap")]


def _fold_errors():
    z = np.zeros
    f = np.float32
    return [ErrorSample(Sample(z((2, 13, 20), f), (5, 6), 2), RuntimeError, "divisible by the product of kernel_size"),
            ErrorSample(Sample(z((2, 12, 21), f), (5, 6), 2), RuntimeError, "match the calculated number of sliding blocks"),
            ErrorSample(Sample(z((12,), f), (5, 6), 2), RuntimeError, "Expected 2D or 3D (batch mode) tensor")]


def _unfold_errors():
    z = np.zeros
    f = np.float32
    return [ErrorSample(Sample(z((2, 3, 2, 2), f), 3), RuntimeError, "calculated shape of the array of sliding blocks as (0, 0)"),
            ErrorSample(Sample(z((2, 3, 5, 5), f), 0), RuntimeError, "kernel size should be greater than zero"),
            ErrorSample(Sample(z((2, 3, 5, 5), f), 2, stride=0), RuntimeError, "stride should be greater than zero"),
            ErrorSample(Sample(z((2, 3, 5, 5), f), 2, padding=-1), RuntimeError, "padding should be non-negative"),
            ErrorSample(Sample(z((2, 0, 5, 5), f), 2), RuntimeError, "Expected 3D or 4D (batch mode) tensor")]


_tol = dict(atol=2e-5, rtol=1e-5)
OPS = [
    OpInfo("nn.functional.conv1d", _F("conv1d"), _conv1d, errors=lambda: [ErrorSample(
        Sample(np.zeros((2, 3, 4, 5), np.float32), np.zeros((4, 3, 3), np.float32)), RuntimeError,
        "Expected 2D (unbatched) or 3D (batched) input to conv1d")], **_tol),
    OpInfo("nn.functional.conv2d", _F("conv2d"), _conv2d, errors=_conv_errors, **_tol),
    OpInfo("nn.functional.conv3d", _F("conv3d"), _conv3d, **_tol),
    OpInfo("nn.functional.conv_transpose1d", _F("conv_transpose1d"), _convt1d, errors=_convt1d_errors, **_tol),
    OpInfo("nn.functional.conv_transpose2d", _F("conv_transpose2d"), _convt2d, errors=_convt_errors, **_tol),
    OpInfo("nn.functional.conv_transpose3d", _F("conv_transpose3d"), _convt3d, **_tol),
    OpInfo("nn.functional.unfold", _F("unfold"), _unfold, errors=_unfold_errors),
    OpInfo("nn.functional.fold", _F("fold"), _fold, errors=_fold_errors),
]
