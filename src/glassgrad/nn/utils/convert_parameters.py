"""parameters_to_vector / vector_to_parameters."""
from ..._tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(p, old):
    dev = p.device
    if old is not None and dev != old:
        raise TypeError("Found two parameters on different devices, this is currently not supported.")
    return dev


def parameters_to_vector(parameters):
    from ...ops.shape import cat
    dev = None
    flat = []
    for p in parameters:
        dev = _check_device(p, dev)
        flat.append(p.view(-1))
    return cat(flat)


def vector_to_parameters(vec, parameters):
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    dev = None
    pointer = 0
    for p in parameters:
        dev = _check_device(p, dev)
        n = p.numel()
        p.data = vec[pointer:pointer + n].view_as(p).data
        pointer += n
