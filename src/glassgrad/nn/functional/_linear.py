"""nn.functional: linear and bilinear, as the same composites PyTorch uses (so grad_fn names match:
AddmmBackward0 for a 2-D input with bias, ViewBackward0 / UnsafeViewBackward0 for other ranks)."""
from ... import ops  # noqa: F401
from ...ops.linalg import matmul
from ...ops.linalg_more import addmm
from ...ops.views import t as _t

__all__ = ["linear", "bilinear"]


def _check(input, weight):
    if input.dim() == 0 or weight.dim() not in (1, 2):
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.dim()}D and "
                           f"{weight.dim()}D")
    if input.shape[-1] != weight.shape[-1]:
        rows = 1
        for s in input.shape[:-1]:
            rows *= s
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{weight.shape[-1]}x{weight.shape[0] if weight.dim() == 2 else 1})")
    if input.dtype != weight.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {input.dtype.name_c} and "
                           f"{weight.dtype.name_c}")


def linear(input, weight, bias=None):
    """y = x W^T + b."""
    _check(input, weight)
    wt = _t(weight) if weight.dim() == 2 else weight
    if bias is None:
        return matmul(input, wt)
    if input.dim() == 2 and weight.dim() == 2:
        return addmm(bias, input, wt)
    if weight.dim() == 2:
        flat = input.reshape(-1, input.shape[-1])
        return addmm(bias, flat, wt).view(*input.shape[:-1], weight.shape[0])
    return matmul(input, wt) + bias


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T W_k x2 + b_k over the last dims; leading dims are batch dims."""
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError("bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if weight.dim() != 3 or input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input size does not match weight size: got {input1.shape[-1]} and "
                           f"{input2.shape[-1]} but expected {weight.shape[1]} and {weight.shape[2]}")
    lead = input1.shape[:-1]
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    # (n, i) x (k, i, j) -> (n, k, j), then contract j with b
    t = matmul(a.unsqueeze(1).unsqueeze(1), weight.unsqueeze(0)).squeeze(2)
    y = (t * b.unsqueeze(1)).sum(-1)
    if bias is not None:
        y = y + bias
    return y.view(*lead, weight.shape[0])
