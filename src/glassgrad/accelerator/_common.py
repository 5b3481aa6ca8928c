"""What torch.accelerator's functions share: glassgrad's one accelerator kind is CUDA through CuPy."""
from .. import backend

_NONE = "Cannot access accelerator device when none is available."


def require():
    """torch.cuda (the accelerator's device module), or torch's RuntimeError when there is none."""
    if not backend.cuda_available():
        raise RuntimeError(_NONE)
    import glassgrad.cuda
    return glassgrad.cuda
