"""torch.nn.utils.memory_format: convert_conv2d_weight_memory_format / convert_conv3d_weight_memory_format."""
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        w = module.weight.detach().clone(memory_format=memory_format)
        module.weight.data = w.resize_(w.size(), memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """The weight of every Conv2d / ConvTranspose2d in `module` (itself included) copied into `memory_format`
    (a new layout, the same values); the module is returned."""
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """convert_conv2d_weight_memory_format for Conv3d / ConvTranspose3d weights."""
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
