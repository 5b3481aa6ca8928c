"""torch.nn.modules.pixelshuffle: PixelShuffle and PixelUnshuffle (defined in upsampling.py)."""
from .upsampling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
