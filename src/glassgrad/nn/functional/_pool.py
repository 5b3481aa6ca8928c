"""nn.functional: max / avg / adaptive / lp pooling and max_unpool with PyTorch's checks."""
from ... import _args
from ..._tensor import Tensor
from ...ops import pool as _P
from ..._autocast_state import state as _acs
from ...ops import _autocast as _ac

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d", "adaptive_avg_pool1d",
           "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d",
           "adaptive_max_pool3d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "max_unpool1d", "max_unpool2d", "max_unpool3d", "lp_pool1d",
           "lp_pool2d", "lp_pool3d", "fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]

_DN = {2: ("H", "W"), 3: ("T", "H", "W")}


def _tup(v, nd, fn, what, allow_none=False):
    if v is None and allow_none:
        return None
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, (list, tuple)):
        if allow_none and len(v) == 0:
            return None
        if len(v) == 1:
            return (int(v[0]),) * nd
        if len(v) != nd:
            kinds = {2: "two", 3: "three"}
            if what == "stride":
                raise RuntimeError(f"{fn}: stride must either be omitted, a single int, or a tuple of {kinds[nd]} ints")
            if what == "dilation":
                raise RuntimeError(f"{fn}: dilation must be either a single int, or a tuple of {kinds[nd]} ints")
            raise RuntimeError(f"{fn}: {what} must either be a single int, or a tuple of {kinds[nd]} ints")
        return tuple(int(i) for i in v)
    return (int(v),) * nd


def _input_check(x, nd):
    dims = x.dim()
    shp = list(x.shape)
    if dims not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for input")
    if any(v == 0 for v in shp[dims - nd - 1:]):
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{shp}")


def _geometry_checks(x, K, s, p, d, ceil_mode, nd):
    if any(v == 0 for v in s):
        raise RuntimeError("stride should not be zero")
    if any(v < 0 for v in p):
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(p)}")
    names = _DN[nd]
    if any(v <= 0 for v in K):
        raise RuntimeError("kernel size should be greater than zero, but got " +
                           " ".join(f"k{n}: {v}" for n, v in zip(names, K)))
    if any(v <= 0 for v in s):
        raise RuntimeError("stride should be greater than zero, but got " +
                           " ".join(f"d{n}: {v}" for n, v in zip(names, s)))
    if any(v <= 0 for v in d):
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{n}: {v}" for n, v in zip(names, d)))
    _input_check(x, nd)
    for i in range(nd):
        if p[i] > ((K[i] - 1) * d[i] + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p[i]}, "
                               f"kernel_size={K[i]} and dilation={d[i]}")
    shp = list(x.shape)
    S = shp[-nd:]
    O = [_P.pool_out_size(S[i], K[i], s[i], p[i], d[i], ceil_mode) for i in range(nd)]
    if any(o < 1 for o in O):
        C = shp[-nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, [C] + S))}). Calculated output size: "
                           f"({'x'.join(map(str, [C] + O))}). Output size is too small")


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, nd):
    fn = f"max_pool{nd}d"
    K = _tup(kernel_size, nd, fn, "kernel_size")
    s = K if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _tup(stride, nd, fn, "stride")
    p = _tup(padding, nd, fn, "padding")
    d = _tup(dilation, nd, fn, "dilation")
    _geometry_checks(input, K, s, p, d, ceil_mode, nd)
    return _P.max_pool_with_indices(input, K, s, p, d, bool(ceil_mode))


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    out = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2)
    return out if return_indices else out[0]


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    if _acs.on:
        return _ac.fp32(max_pool3d, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices)
    out = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3)
    return out if return_indices else out[0]


def _one(v, name):
    if isinstance(v, (list, tuple)):
        if len(v) != 1:
            raise RuntimeError(f"max_pool1d() {name} must be an int or int list of size 1 but got size {len(v)}")
        return int(v[0])
    return int(v)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                            return_indices=False):
    from ...ops.views import unsqueeze, squeeze
    k = _one(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _one(stride, "stride")
    p = _one(padding, "padding")
    d = _one(dilation, "dilation")
    if input.dim() not in (2, 3) or any(v == 0 for v in list(input.shape)[-2:]):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           f"input, but got:{list(input.shape)}")
    if k <= 0:
        raise RuntimeError(f"max_pool1d() kernel_size must be greater than zero, but got {k}")
    if s <= 0:
        raise RuntimeError(f"max_pool1d() stride must be greater than zero, but got {s}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got padding={p} and "
                           f"kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    L = input.shape[-1]
    o = _P.pool_out_size(L, k, s, p, d, ceil_mode)
    if o < 0 or o == 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
    y, i = _P.max_pool_with_indices(unsqueeze(input, -2), (1, k), (1, s), (0, p), (1, d), bool(ceil_mode))
    return squeeze(y, -2), _sq(i)


def _sq(i):
    from ...ops._core import make
    return make(i._data.squeeze(-2))


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    out = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return out if return_indices else out[0]


# -- avg pool -----------------------------------------------------------------------------------------
def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, nd):
    fn = f"avg_pool{nd}d"
    K = _tup(kernel_size, nd, fn, "kernel_size")
    s = K if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else \
        _tup(stride, nd, fn, "stride")
    p = _tup(padding, nd, fn, "padding")
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    _geometry_checks(input, K, s, p, (1,) * nd, ceil_mode, nd)
    return _P.avg_pool(input, K, s, p, bool(ceil_mode), bool(count_include_pad), divisor_override)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 2)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if _acs.on:
        return _ac.fp32(avg_pool3d, input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override, 3)


def _dims_check(input, fn):
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional tensor for argument #1 "
                           f"'self' (while checking arguments for {fn})")


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    from ...ops.views import unsqueeze, squeeze
    _dims_check(input, "avg_pool1d")
    k = _one(kernel_size, "kernel_size")
    s = k if stride is None or (isinstance(stride, (list, tuple)) and len(stride) == 0) else _one(stride, "stride")
    p = _one(padding, "padding")
    y = _avg_pool(unsqueeze(input, -2), (1, k), (1, s), (0, p), ceil_mode, count_include_pad, None, 2)
    return squeeze(y, -2)


# -- adaptive -----------------------------------------------------------------------------------------
def _osize(output_size, x, nd, fn):
    if isinstance(output_size, (list, tuple)):
        if len(output_size) != nd:
            if "max" in fn:
                raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {nd}")
            raise RuntimeError(f"{fn}: output_size must be {nd}")
        o = list(output_size)
    else:
        o = [output_size] * nd
    S = list(x.shape)[-nd:]
    out = tuple(S[i] if o[i] is None else _args.int_arg(o[i], fn, "output_size", 2) for i in range(nd))
    if any(v < 0 for v in out):
        if "max" in fn:
            raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: "
                               f"{list(x.shape)[:-nd] + list(out)}")
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 but received "
                           f"{{{', '.join(map(str, out))}}}")
    return out


def _adaptive_check(x, nd, fn, colon):
    if x.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{':' if colon else ''} "
                           f"{list(x.shape)}")
    shp = list(x.shape)
    for i in range(1, x.dim()):
        if shp[i] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {shp} with dimension {i} being empty")


def _adaptive_avg(input, output_size, nd):
    fn = f"adaptive_avg_pool{nd}d"
    O = _osize(output_size, input, nd, fn)
    _adaptive_check(input, nd, fn, False)
    if all(o == 1 for o in O):
        from ...ops.reduction import mean
        return mean(input, tuple(range(-1, -nd - 1, -1)), keepdim=True)
    return _P.adaptive_avg_pool(input, O)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(input, output_size, 2)


def adaptive_avg_pool3d(input, output_size):
    if _acs.on:
        return _ac.fp32(adaptive_avg_pool3d, input, output_size)
    return _adaptive_avg(input, output_size, 3)


def adaptive_avg_pool1d(input, output_size):
    from ...ops.views import unsqueeze, squeeze
    _dims_check(input, "adaptive_avg_pool1d")
    o = output_size[0] if isinstance(output_size, (list, tuple)) else output_size
    if isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError("adaptive_avg_pool1d: output_size must be 1")
    return squeeze(_adaptive_avg(unsqueeze(input, -2), (1, o), 2), -2)


def _adaptive_max(input, output_size, nd):
    fn = f"adaptive_max_pool{nd}d"
    O = _osize(output_size, input, nd, fn)
    _adaptive_check(input, nd, fn, True)
    return _P.adaptive_max_pool(input, O)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, 2)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return _adaptive_max(input, output_size, 3)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    out = _adaptive_max(input, output_size, 2)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input, output_size, return_indices=False):
    if _acs.on:
        return _ac.fp32(adaptive_max_pool3d, input, output_size, return_indices)
    out = _adaptive_max(input, output_size, 3)
    return out if return_indices else out[0]


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    from ...ops.views import unsqueeze, squeeze
    _dims_check(input, "adaptive_max_pool1d")
    if isinstance(output_size, (list, tuple)) and len(output_size) != 1:
        raise RuntimeError("adaptive_max_pool1d: output_size must be 1")
    o = output_size[0] if isinstance(output_size, (list, tuple)) else output_size
    y, i = _adaptive_max(unsqueeze(input, -2), (1, o), 2)
    return squeeze(y, -2), _sq(i)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


# -- max_unpool ----------------------------------------------------------------------------------------
def _unpool_default(input, kernel_size, stride, padding, output_size, nd):
    K = _tup(kernel_size, nd, "max_unpool", "kernel_size")
    s = K if stride is None else _tup(stride, nd, "max_unpool", "stride")
    p = _tup(padding, nd, "max_unpool", "padding")
    S = list(input.shape)[-nd:]
    default = [(S[i] - 1) * s[i] + K[i] - 2 * p[i] for i in range(nd)]
    if output_size is None:
        return tuple(default)
    out = list(output_size)
    if len(out) == input.dim():
        out = out[-nd:]
    if len(out) != nd:
        raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} elements, but it has a "
                         f"length of '{len(out)}'")
    for i in range(nd):
        lo, hi = default[i] - s[i], default[i] + s[i]
        if not lo < out[i] < hi:
            raise ValueError(f'invalid output_size "{out}" (dim {i} must be between {lo} and {hi})')
    return tuple(int(v) for v in out)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    from ...ops.views import unsqueeze, squeeze
    o = _unpool_default(input, kernel_size, stride, padding, output_size, 1)
    from ...ops._core import make
    idx = make(indices._data[..., None, :])
    return squeeze(_P.max_unpool(unsqueeze(input, -2), idx, (1,) + o), -2)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    if _acs.on:
        return _ac.fp32(max_unpool2d, input, indices, kernel_size, stride, padding, output_size)
    return _P.max_unpool(input, indices, _unpool_default(input, kernel_size, stride, padding, output_size, 2))


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    if _acs.on:
        return _ac.fp32(max_unpool3d, input, indices, kernel_size, stride, padding, output_size)
    return _P.max_unpool(input, indices, _unpool_default(input, kernel_size, stride, padding, output_size, 3))


# -- lp pool (composite, like PyTorch) -------------------------------------------------------------------
def _lp(input, norm_type, kernel_size, stride, ceil_mode, nd):
    from ...ops import unary as U
    from ._activation import relu
    if isinstance(norm_type, (int, float)) and norm_type in (float("inf"), -float("inf")):
        mp = {1: max_pool1d, 2: max_pool2d, 3: max_pool3d}[nd]
        if norm_type > 0:
            return mp(U.abs(input), kernel_size, stride, 0, 1, ceil_mode)
        return -mp(-U.abs(input), kernel_size, stride, 0, 1, ceil_mode)
    pool = {1: avg_pool1d, 2: avg_pool2d, 3: avg_pool3d}[nd]
    if stride is not None:
        out = pool(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    if nd == 1:
        n = kernel_size
    else:
        n = 1
        for k in (kernel_size if isinstance(kernel_size, (list, tuple)) else (kernel_size,) * nd):
            n *= k
    return (U.sign(out) * relu(U.abs(out))).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 3)



# -- fractional max pool -------------------------------------------------------------------------------
def _fractional_int_pair(value, name):
    """fractional_max_pool2d's kernel_size / output_size: an int or a 1- or 2-sequence, as 2 ints."""
    if not isinstance(value, (list, tuple)):
        return (int(value),) * 2
    if len(value) not in (1, 2):
        raise RuntimeError(f"fractional_max_pool2d: {name} must either be a single Int or tuple of Ints")
    return (int(value[0]),) * 2 if len(value) == 1 else tuple(int(v) for v in value)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    from ...ops.random import rand
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool2d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single Int or tuple of "
                             "Ints.")
        r = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * 2
        r = r * 2 if len(r) == 1 else r
        output_size = [int(input.size(-2) * r[0]), int(input.size(-1) * r[1])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 3 else input.size(0)
        _random_samples = rand(n_batch, input.size(-3), 2, dtype=input.dtype, device=input.device)
    K = _fractional_int_pair(kernel_size, "kernel_size")
    O = _fractional_int_pair(output_size, "output_size")
    if input.dim() not in (3, 4):
        raise RuntimeError(f"fractional_max_pool2d(): Expected 3D or 4D tensor, but got: {list(input.shape)}")
    H, W = list(input.shape)[-2:]
    if O[0] + K[0] - 1 > H:
        raise RuntimeError(f"fractional_max_pool2d(): pool height {K[0]} too large relative to input height {H}")
    if O[1] + K[1] - 1 > W:
        raise RuntimeError(f"fractional_max_pool2d(): pool width {K[1]} too large relative to input width {W}")
    return _P.fractional_max_pool2d(input, K, O, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    if _acs.on:
        return _ac.fp32(fractional_max_pool2d, input, kernel_size, output_size, output_ratio, return_indices,
                        _random_samples)
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]


def _fractional_int_triple(value, name):
    if not isinstance(value, (list, tuple)):
        return (int(value),) * 3
    if len(value) not in (1, 3):
        raise RuntimeError(f"fractional_max_pool3d: {name} must either be a single Int or tuple of three Ints")
    return (int(value[0]),) * 3 if len(value) == 1 else tuple(int(v) for v in value)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    from ...ops.random import rand
    from ...ops.pool_fractional import fractional_max_pool3d as _fmp3
    if output_size is None and output_ratio is None:
        raise ValueError("fractional_max_pool3d requires specifying either an output_size or an output_ratio")
    if output_size is None:
        r = tuple(output_ratio) if isinstance(output_ratio, (list, tuple)) else (output_ratio,) * 3
        output_size = [int(input.size(-3) * r[0]), int(input.size(-2) * r[1]), int(input.size(-1) * r[2])]
    if _random_samples is None:
        n_batch = 1 if input.dim() == 4 else input.size(0)
        _random_samples = rand(n_batch, input.size(-4), 3, dtype=input.dtype, device=input.device)
    K = _fractional_int_triple(kernel_size, "kernel_size")
    O = _fractional_int_triple(output_size, "output_size")
    if input.dim() not in (4, 5):
        raise RuntimeError(f"fractional_max_pool3d_out(): Expected 4D or 5D tensor, but got: {list(input.shape)}")
    for o, k, s, what in zip(O, K, list(input.shape)[-3:], ("time", "height", "width")):
        if not o + k - 1 < s:
            raise RuntimeError(f"fractional_max_pool3d_out(): pool {what} {k} too large relative to input {what} {s}")
    if _random_samples.size(1) != input.size(-4):
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if _random_samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    return _fmp3(input, K, O, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    if _acs.on:
        return _ac.fp32(fractional_max_pool3d, input, kernel_size, output_size, output_ratio, return_indices,
                        _random_samples)
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio, return_indices,
                                             _random_samples)
    return out if return_indices else out[0]
