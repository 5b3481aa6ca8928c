"""Op table rows: nn.functional.linear and bilinear (nn/functional/_linear.py)."""
from .core import OpInfo, Sample, ErrorSample, arr, noncontig, functional


def _linear(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(3, 4), A(5, 4), A(5), name="2d_bias"),
            Sample(A(3, 4), A(5, 4), name="2d"),
            Sample(A(4), A(5, 4), A(5), name="1d_bias"),
            Sample(A(4), A(5, 4), name="1d"),
            Sample(A(2, 3, 4), A(5, 4), A(5), name="3d_bias"),
            Sample(A(2, 3, 4), A(5, 4), name="3d"),
            Sample(A(0, 4), A(5, 4), A(5), name="empty"),
            Sample(noncontig(A(4, 3)), noncontig(A(5, 3)), A(5), name="noncontig"),
            Sample(A(3, 4), A(4), name="vector_weight"),
            Sample(A(3, 4), A(5, 4), A(), name="0d_bias")]


def _linear_errors():
    import numpy as np
    f = np.float32
    return [ErrorSample(Sample(np.ones((3, 4), f), np.ones((5, 3), f)), RuntimeError, "cannot be multiplied"),
            ErrorSample(Sample(np.ones((3, 4), f), np.ones((5, 4), np.float64)), RuntimeError, "same dtype")]


def _bilinear(rng, dt):
    A = lambda *s: arr(rng, s, dt, -1, 1)  # noqa: E731
    return [Sample(A(3, 2), A(3, 4), A(5, 2, 4), A(5), name="bias"),
            Sample(A(3, 2), A(3, 4), A(5, 2, 4), name="no_bias"),
            Sample(A(2, 3, 2), A(2, 3, 4), A(5, 2, 4), A(5), name="3d"),
            Sample(A(0, 2), A(0, 4), A(5, 2, 4), A(5), name="empty")]


def _bilinear_errors():
    import numpy as np
    f = np.float32
    return [ErrorSample(Sample(np.ones((3, 2), f), np.ones((2, 4), f), np.ones((5, 2, 4), f)), RuntimeError,
                        "batch dimensions do not match"),
            ErrorSample(Sample(np.ones((3, 3), f), np.ones((3, 4), f), np.ones((5, 2, 4), f)), RuntimeError,
                        "input1 size does not match weight size: got 3 but expected 2"),
            ErrorSample(Sample(np.ones((3, 2), f), np.ones((3, 5), f), np.ones((5, 2, 4), f)), RuntimeError,
                        "input2 size does not match weight size: got 5 but expected 4"),
            ErrorSample(Sample(np.ones((3, 2), f), np.ones((3, 4), f), np.ones((5, 2, 4), f), np.ones(4, f)),
                        RuntimeError, "bias size does not match weight size: got 4 but expected 5")]


OPS = [
    OpInfo("nn.functional.linear", functional("linear"), _linear, errors=_linear_errors, atol=2e-5),
    OpInfo("nn.functional.bilinear", functional("bilinear"), _bilinear, errors=_bilinear_errors, atol=2e-5),
]
