"""torch.fft: discrete Fourier transforms under torch's names (the ops are ops/fft.py's; their nodes are
PyTorch's FftR2CBackward0 / FftC2CBackward0 / FftC2RBackward0)."""
from ._tensor import Tensor  # noqa: F401  (torch.fft.Tensor is torch.Tensor)
# hfft2 ihfft2 hfftn ihfftn: in torch.fft though not in its __all__ (as here)
from .ops.fft import (fft, ifft, fft2, ifft2, fftn, ifftn, rfft, irfft, rfft2, irfft2, rfftn, irfftn,  # noqa: F401
                      hfft, ihfft, fftfreq, rfftfreq, fftshift, ifftshift, hfft2, ihfft2, hfftn, ihfftn)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
           "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift", "Tensor"]


from ._args import honour_out as _honour_out  # noqa: E402
from .ops.out import write_out as _write_out  # noqa: E402
_honour_out(globals(), _write_out, ("glassgrad.ops",))     # torch's out= on every function that takes it
