"""torch.nn.grad: the gradients of a convolution with respect to its input and its weight, given the
gradient of its output.  The convolution is linear in each, so each is the vector-Jacobian product of the
convolution at a zero input (weight) -- computed by autograd through glassgrad's own convolution, and
differentiable in turn when grad_output or the other operand requires grad."""
from .. import autograd
from ..ops.creation import zeros
from . import functional as F

__all__ = ["conv1d_input", "conv1d_weight", "conv2d_input", "conv2d_weight", "conv3d_input", "conv3d_weight"]


def _vjp(conv, which, size, other, grad_output, stride, padding, dilation, groups):
    leaf = zeros(tuple(size), dtype=grad_output.dtype, requires_grad=True)
    args = (leaf, other) if which == "input" else (other, leaf)
    out = conv(*args, None, stride, padding, dilation, groups)
    create = grad_output.requires_grad or other.requires_grad
    return autograd.grad(out, leaf, grad_output, create_graph=create)[0]


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv1d, "input", input_size, weight, grad_output, stride, padding, dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv1d, "weight", weight_size, input, grad_output, stride, padding, dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv2d, "input", input_size, weight, grad_output, stride, padding, dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv2d, "weight", weight_size, input, grad_output, stride, padding, dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv3d, "input", input_size, weight, grad_output, stride, padding, dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1, groups=1):
    return _vjp(F.conv3d, "weight", weight_size, input, grad_output, stride, padding, dilation, groups)
