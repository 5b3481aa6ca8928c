"""nn.functional: convolutions (conv1d/2d/3d, conv_transpose1d/2d/3d) with PyTorch's checks."""
import numbers

from ... import _dtype
from ..._tensor import Tensor
from ...ops.conv import _convolution

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]



def _int_list(v, name, fn, nd):
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        if not all(isinstance(i, numbers.Integral) and not isinstance(i, bool) for i in v):
            raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not {type(v).__name__}")
        return [int(i) for i in v]
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return [int(v)] * nd
    raise TypeError(f"{fn}(): argument '{name}' must be tuple of ints, not {type(v).__name__}")


def _expand(v, name, k):
    if len(v) == 1:
        return tuple(v) * k
    if len(v) != k:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values to match the "
                           f"convolution dimensions, but got {name}={list(v)}")
    return tuple(v)


def _batchify(input, nd, fn):
    dim = input.dim()
    if dim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {fn}, but got input of "
                           f"size: {list(input.shape)}")
    return dim == nd + 2


def _conv(input, weight, bias, stride, padding, dilation, groups, nd, fn, transposed=False, output_padding=0):
    from ...ops.views import unsqueeze, squeeze
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not isinstance(weight, Tensor):
        raise TypeError(f"{fn}(): argument 'weight' (position 2) must be Tensor, not {type(weight).__name__}")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral):
        raise TypeError(f"{fn}(): argument 'groups' must be int, not {type(groups).__name__}")
    batched = _batchify(input, nd, fn)
    x = input if batched else unsqueeze(input, 0)
    k = weight.dim() - 2
    same = False
    if isinstance(padding, str):
        if transposed:
            raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
        if padding == "valid":
            padding = 0
        elif padding == "same":
            same = True
            padding = 0
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    s = _expand(_int_list(stride, "stride", fn, 1), "stride", k)
    p = _expand(_int_list(padding, "padding", fn, 1), "padding", k)
    d = _expand(_int_list(dilation, "dilation", fn, 1), "dilation", k)
    op = _expand(_int_list(output_padding, "output_padding", fn, 1), "output_padding", k) if transposed \
        else (0,) * k
    if any(v < 0 for v in p):
        raise RuntimeError("negative padding is not supported")
    if any(v < 0 for v in op):
        raise RuntimeError("negative output_padding is not supported")
    if any(v <= 0 for v in s):
        raise RuntimeError("non-positive stride is not supported")
    if any(v <= 0 for v in d):
        raise RuntimeError("non-positive dilation is not supported")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    xs, ws = list(x.shape), list(weight.shape)
    if weight.dim() != x.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight {ws}, "
                           f"but got {x.dim()}-dimensional input of size {xs} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at dimension 0, but got "
                           f"weight of size {ws} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at dimension 0, but "
                           f"got weight of size [{ws}] instead")
    if not transposed:
        if xs[1] != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {ws}, expected input{xs} to have "
                               f"{ws[1] * groups} channels, but got {xs[1]} channels instead")
        nout = ws[0]
        pre = f"Given weight of size {ws}"
    else:
        if xs[1] != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected input{xs} to have {ws[0]} "
                               f"channels, but got {xs[1]} channels instead")
        nout = ws[1] * groups
        pre = f"Given transposed=1, weight of size {ws}"
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != nout):
        raise RuntimeError(f"{pre}, expected bias to be 1-dimensional with {nout} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if same:
        if any(v != 1 for v in s):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        lo, extra = [], []
        for i in range(k):
            tot = d[i] * (ws[2 + i] - 1)
            lo.append(tot // 2)
            extra.append(tot - 2 * (tot // 2))
        p = tuple(lo)
        if any(extra):
            from ...ops.pad import constant_pad_nd
            flat = []
            for i in reversed(range(k)):
                flat += [0, extra[i]]
            x = constant_pad_nd(x, flat, 0)
            xs = list(x.shape)
    if not transposed:
        padded = [xs[2 + i] + 2 * p[i] for i in range(k)]
        ks = [d[i] * (ws[2 + i] - 1) + 1 for i in range(k)]
        if any(padded[i] < ks[i] for i in range(k)):
            raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                               f"Kernel size: ({' x '.join(map(str, ks))}). Kernel size can't be greater than "
                               f"actual input size")
    else:
        if any(op[i] >= s[i] and op[i] >= d[i] for i in range(k)):
            names = ["depth", "height", "width"][3 - max(k, 2):]
            o2, s2, d2 = ((0,) + op, (1,) + s, (1,) + d) if k == 1 else (op, s, d)
            parts = [f"output_padding_{n}: {v}" for n, v in zip(names, o2)] + \
                    [f"stride_{n}: {v}" for n, v in zip(names, s2)] + [f"dilation_{n}: {v}" for n, v in zip(names, d2)]
            raise RuntimeError("output padding must be smaller than either stride or dilation, but got " + " ".join(parts))
    xd, wd = x._data.dtype, weight._data.dtype
    if xd != wd:
        raise RuntimeError(f"expected scalar type {_dtype.c_name(xd)} but found {_dtype.c_name(wd)}")
    if bias is not None and bias._data.dtype != xd:
        raise RuntimeError(f"Input type ({_dtype.cpp_name(xd)}) and bias type "
                           f"({_dtype.cpp_name(bias._data.dtype)}) should be the same")
    y = _convolution(x, weight, bias, s, p, d, transposed, op, int(groups))
    return y if batched else squeeze(y, 0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 1, "conv_transpose1d", True, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 2, "conv_transpose2d", True, output_padding)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv(input, weight, bias, stride, padding, dilation, groups, 3, "conv_transpose3d", True, output_padding)
