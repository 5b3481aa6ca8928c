"""nn.functional: pad, interpolate / upsample, pixel_shuffle, fold / unfold."""
import numbers
import warnings

from ... import _args
from ...ops import pad as _P
from ...ops import upsample as _U
from ...ops import conv as _C
from ..._autocast_state import state as _acs
from ...ops import _autocast as _ac

__all__ = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
           "pixel_unshuffle", "unfold", "fold", "grid_sample", "affine_grid", "channel_shuffle",
           "native_channel_shuffle"]


# -- pad ------------------------------------------------------------------------------------------------
def pad(input, pad, mode="constant", value=None):
    _args.tensor_arg(input, "pad", "input", 1)
    pad = list(_args.int_list(pad, "pad", "pad", 2))
    if value is not None:
        value = _args.number_arg(value, "pad", "value", 4)
    if mode == "constant":
        return _P.constant_pad_nd(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    k = len(pad) // 2
    nd = input.dim()
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if _acs.on and (mode == "replicate" or mode == "reflect" and k < 3):   # torch's reflection_pad1d/2d and
        return _ac.fp32(_pad_modes, input, pad, mode)                          # replication_pad1d/2d/3d: float32
    return _pad_modes(input, pad, mode)


def _pad_modes(input, pad, mode):
    """The non-constant modes of pad, its arguments checked."""
    if mode == "reflect":
        return _P.reflection_pad(input, pad)
    if mode == "replicate":
        return _P.replication_pad(input, pad)
    return _P.circular_pad(input, pad)


# -- interpolate ----------------------------------------------------------------------------------------
def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _check_int_sizes(size):
    if not all(_is_int(x) for x in size):
        raise TypeError("expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                        f"Tuple[int, int, int], but got size with types {[type(x) for x in size]}")


def _per_spatial_dim(value, input, convert, check, words):
    """interpolate's size / scale_factor as one converted value per spatial dim of input: a scalar repeated,
    or a list / tuple with one entry per dim (then `check(value)`).  `words` fill PyTorch's length-mismatch
    message: (what input is compared with, how value is introduced, the argument, its letter)."""
    dim = input.dim() - 2
    if not isinstance(value, (list, tuple)):
        return [convert(value)] * dim
    if len(value) != dim:
        other, shown_as, arg, letter = words
        raise ValueError(
            f"Input and {other} must have the same number of spatial dimensions, but got input with spatial "
            f"dimensions of {list(input.shape[2:])} and {shown_as} {value}. Please provide input tensor in "
            f"(N, C, d1, d2, ...,dK) format and {arg} in ({letter}1, {letter}2, ...,{letter}K) format.")
    if check is not None:
        check(value)
    return [convert(v) for v in value]


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scale_factors = None
        output_size = _per_spatial_dim(size, input, int, _check_int_sizes,
                                       ("output", "output size of", "output size", "o"))
    elif scale_factor is not None:
        output_size = None
        scale_factors = _per_spatial_dim(scale_factor, input, float, None,
                                         ("scale_factor", "scale_factor of shape", "scale_factor", "s"))
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and output_size is None:
        recompute_scale_factor = True
    if recompute_scale_factor:
        output_size = [int(input.shape[i + 2] * scale_factors[i]) for i in range(dim)]
        scale_factors = None
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if antialias:
        raise NotImplementedError("glassgrad: antialias=True is not supported")
    ok = {"nearest": (1, 2, 3), "nearest-exact": (1, 2, 3), "area": (1, 2, 3), "linear": (1,), "bilinear": (2,),
          "trilinear": (3,), "bicubic": (2,)}
    if mode in ok and dim in ok[mode]:
        if mode == "area":
            from ._pool import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
            return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1](input, output_size)
        return _upsample(input, output_size, scale_factors, mode, align_corners)
    need = {"linear": 3, "bilinear": 4, "trilinear": 5}
    if mode in need and input.dim() in (3, 4, 5):
        raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs {need[mode]}D input")
    raise NotImplementedError(
        "Input Error: Only 3D, 4D and 5D input Tensors supported"
        f" (got {input.dim()}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | area | "
        f"nearest-exact (got {mode})")


def _upsample(input, output_size, scale_factors, mode, align_corners):
    dim = input.dim() - 2
    in_sz = list(input.shape[2:])
    if output_size is None:
        output_size = [int(in_sz[i] * scale_factors[i]) for i in range(dim)]
    if any(s <= 0 for s in in_sz) or any(o <= 0 for o in output_size):
        raise RuntimeError(_size_msg(dim, in_sz, output_size))
    return _U.upsample(input, output_size, scale_factors, mode, align_corners)


def _size_msg(dim, i, o):
    names = ("D", "H", "W")[3 - dim:]
    ins = ", ".join(f"{n}: {v}" for n, v in zip(names, i))
    outs = ", ".join(f"{n}: {v}" for n, v in zip(names, o))
    sep = " and " if dim == 1 else " "
    return f"Input and output sizes should be greater than 0, but got input ({ins}){sep}output ({outs})"


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def pixel_shuffle(input, upscale_factor):
    return _U.pixel_shuffle(input, int(upscale_factor))


def pixel_unshuffle(input, downscale_factor):
    return _U.pixel_unshuffle(input, int(downscale_factor))


def channel_shuffle(input, groups):
    from ...ops.channel_shuffle import channel_shuffle as _cs
    return _cs(input, int(groups))


native_channel_shuffle = channel_shuffle     # (torch's has no derivative; glassgrad's is differentiable)


# -- fold / unfold --------------------------------------------------------------------------------------
def _pair(v):
    if isinstance(v, (list, tuple)):
        return tuple(int(i) for i in v) if len(v) == 2 else (int(v[0]),) * 2
    return (int(v), int(v))


def _fold_args(kernel_size, dilation, padding, stride):
    """fold / unfold's kernel_size, dilation, padding, stride as checked pairs."""
    k, d, p, s = _pair(kernel_size), _pair(dilation), _pair(padding), _pair(stride)
    if k[0] <= 0 or k[1] <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kernel_height: {k[0]} "
                           f"kernel_width: {k[1]}")
    if d[0] <= 0 or d[1] <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilation_height: {d[0]} "
                           f"dilation_width: {d[1]}")
    if p[0] < 0 or p[1] < 0:
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {p[0]} pad_width: {p[1]}")
    if s[0] <= 0 or s[1] <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got stride_height: {s[0]} "
                           f"stride_width: {s[1]}")
    return k, d, p, s


def _fold_input_shape(input, ranks, message):
    """input's shape (a list) after checking its rank is one of `ranks` (unbatched, batched) and that its
    non-batch sizes are non-zero; RuntimeError(message) otherwise."""
    nd = input.dim()
    shp = list(input.shape)
    if nd not in ranks or any(v == 0 for v in shp[nd - ranks[0]:]):
        raise RuntimeError(f"{message}, but got: {shp}")
    return shp


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    shp = _fold_input_shape(input, (3, 4), "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                                           "and other non-zero dimensions for input")
    H, W = shp[-2:]
    O = _C.out_size((H, W), k, s, p, d)
    if O[0] < 1 or O[1] < 1:
        raise RuntimeError(f"Given input with spatial size ({H}, {W}), kernel_size=({k[0]}, {k[1]}), dilation=("
                           f"{d[0]}, {d[1]}), padding=({p[0]}, {p[1]}), calculated shape of the array of sliding "
                           f"blocks as ({O[0]}, {O[1]}), but its components must be at least one.")
    return _C.im2col(input, k, d, p, s)


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    o = _pair(output_size)
    k, d, p, s = _fold_args(kernel_size, dilation, padding, stride)
    shp = _fold_input_shape(input, (2, 3), "Expected 2D or 3D (batch mode) tensor for input with possibly 0 "
                                           "batch size and non-zero dimensions for input")
    if shp[-2] % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product of kernel_size, but "
                           f"got input.size(1)={shp[-2]} and kernel_size=({k[0]}, {k[1]}).")
    O = _C.out_size(o, k, s, p, d)
    if O[0] * O[1] != shp[-1] or O[0] < 1 or O[1] < 1:
        raise RuntimeError(f"Given output_size=({o[0]}, {o[1]}), kernel_size=({k[0]}, {k[1]}), dilation=({d[0]}, "
                           f"{d[1]}), padding=({p[0]}, {p[1]}), stride=({s[0]}, {s[1]}), expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks {O[0]} * {O[1]} = "
                           f"{O[0] * O[1]}, but got input.size(2)={shp[-1]}.")
    return _C.col2im(input, o, k, d, p, s)



# -- affine_grid / grid_sample ----------------------------------------------------------------------------
_ALIGN_MSG = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since 1.3.0. Please "
              "specify align_corners=True if the old behavior is desired. See the documentation of grid_sample for "
              "details.")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    if _acs.on:
        return _ac.fp32(grid_sample, input, grid, mode, padding_mode, align_corners)
    from ...ops.grid_sample import grid_sampler_2d
    if mode != "bilinear" and mode != "nearest" and mode != "bicubic":
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_MSG, stacklevel=2)
        align_corners = False
    if input.dim() != grid.dim():
        raise RuntimeError(f"grid_sampler(): expected grid to have same number of dimensions as input, but got "
                           f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    nd = input.dim() - 2
    if nd not in (2, 3):
        raise NotImplementedError("glassgrad: grid_sample supports 4-D and 5-D input only")
    if mode == "bicubic":
        if nd == 3:
            raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
        raise NotImplementedError("glassgrad: grid_sample mode 'bicubic' is not supported")
    if grid.shape[0] != input.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got input with "
                           f"sizes {list(input.shape)} and grid with sizes {list(grid.shape)}")
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, but got grid with "
                           f"sizes {list(grid.shape)}")
    if input._data.dtype != grid._data.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if nd == 3:
        from ...ops.grid_sample import grid_sampler_3d
        return grid_sampler_3d(input, grid, mode, padding_mode, bool(align_corners))
    return grid_sampler_2d(input, grid, mode, padding_mode, bool(align_corners))


def affine_grid(theta, size, align_corners=None):
    from ...ops.grid_sample import affine_grid_generator
    if align_corners is None:
        warnings.warn(_ALIGN_MSG, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size {size}. "
                             f"Got {theta.shape}.")
        spatial_size = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size {size}. "
                             f"Got {theta.shape}.")
        spatial_size = size[-3:]
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if align_corners and min(spatial_size) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return affine_grid_generator(theta, size, bool(align_corners))
