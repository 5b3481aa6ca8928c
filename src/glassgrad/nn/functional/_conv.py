"""nn.functional: convolutions (conv1d/2d/3d, conv_transpose1d/2d/3d); the checks and the primitive are
ops/conv.py's conv_nd."""
from ...ops.conv import conv_nd

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv_transpose1d", True, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv_transpose2d", True, output_padding)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return conv_nd(input, weight, bias, stride, padding, dilation, groups, 3, "conv_transpose3d", True, output_padding)
