"""nn.functional: linear (the op is in ops/addmm.py) and bilinear, as the same composites PyTorch uses (so
grad_fn names match: AddmmBackward0 for a 2-D input with bias, ViewBackward0 / UnsafeViewBackward0 for other
ranks)."""
from ... import ops  # noqa: F401
from ...ops.linalg import matmul
from ...ops.addmm import linear  # noqa: F401  (linear is an op: ops/addmm.py)

__all__ = ["linear", "bilinear"]


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T W_k x2 + b_k over the last dims; leading dims are batch dims."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for d, (s1, s2) in enumerate(zip(input1.shape[:-1], input2.shape[:-1])):
        if s1 != s2:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {d}: got {s1} and {s2}")
    w = weight.shape
    for which, got, want in (("input1", input1.shape[-1], w[1] if len(w) > 1 else None),
                             ("input2", input2.shape[-1], w[2] if len(w) > 2 else w[-1])):
        if got != want:
            raise RuntimeError(f"bilinear(): {which} size does not match weight size: got {got} but expected {want}")
    if bias is not None and bias.shape[-1] != w[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1]} but expected "
                           f"{w[0]}")
    lead = input1.shape[:-1]
    a = input1.reshape(-1, input1.shape[-1])
    b = input2.reshape(-1, input2.shape[-1])
    # (n, i) x (k, i, j) -> (n, k, j), then contract j with b
    t = matmul(a.unsqueeze(1).unsqueeze(1), weight.unsqueeze(0)).squeeze(2)
    y = (t * b.unsqueeze(1)).sum(-1).view(*lead, weight.shape[0])
    return y if bias is None else y + bias
