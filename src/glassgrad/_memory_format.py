"""torch.memory_format and the stride rules of dense layouts.

A glassgrad tensor's strides are its NumPy array's, so channels_last is a real layout here: an NHWC-ordered
buffer seen as NCHW.  This module holds the four formats and, on (shape, element strides) tuples, torch's
rules: the strides each format gives a new tensor, is_contiguous(memory_format=), suggest_memory_format (the
format that strides resemble), non-overlapping-and-dense, and the dense strides that keep a layout's order
(clone's and *_like's preserve_format).  `restrided` lays a C-ordered array's memory out under other strides.
"""

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
           "legacy_contiguous_format"]


class memory_format:
    """One of torch's memory formats; the four instances below are the only ones (as in torch)."""
    __slots__ = ("_name", "_rank")

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.memory_format' instances")

    def __repr__(self):
        return "torch." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self._name,))     # pickled by name (as the module-level constant of that name)


memory_format.__module__ = "torch"        # (as torch's type; pickling goes through _by_name, not this)


def _by_name(name):
    return globals()[name]


def _format(name, rank):
    f = object.__new__(memory_format)
    f._name, f._rank = name, rank
    return f


contiguous_format = _format("contiguous_format", None)
channels_last = _format("channels_last", 4)
channels_last_3d = _format("channels_last_3d", 5)
preserve_format = _format("preserve_format", None)
legacy_contiguous_format = contiguous_format          # torch: the same object

# the dimensions of a channels-last layout from the innermost (stride 1) outwards
_ORDER = {4: (1, 3, 2, 0), 5: (1, 4, 3, 2, 0)}


def check_arg(fmt, fn, none_ok=True):
    """`fmt` as a memory_format argument of `fn`: torch's TypeError for anything else (None where the
    argument is optional)."""
    if fmt.__class__ is memory_format or (fmt is None and none_ok):
        return fmt
    name = "NoneType" if fmt is None else type(fmt).__name__
    raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not {name}")


def check_rank(fmt, ndim):
    if fmt._rank is not None and ndim != fmt._rank:
        raise RuntimeError(f"required rank {fmt._rank} tensor to use {fmt._name} format")


def format_strides(shape, fmt):
    """The strides torch gives a new tensor of `shape` in format `fmt` (contiguous or channels-last)."""
    check_rank(fmt, len(shape))
    if fmt._rank is None:
        st, n = [0] * len(shape), 1
        for d in range(len(shape) - 1, -1, -1):
            st[d] = n
            n *= max(shape[d], 1)
        return tuple(st)
    st, n = [0] * len(shape), 1
    for d in _ORDER[fmt._rank]:            # channels-last: sizes 0 are not counted as 1 (torch's formula)
        st[d] = n
        n *= shape[d]
    return tuple(st)


def is_contiguous_as(shape, strides, fmt):
    """Tensor.is_contiguous(memory_format=fmt): dimensions of size 1 do not count."""
    if fmt._rank is None:
        if 0 in shape:
            return True
        order = range(len(shape) - 1, -1, -1)
    elif len(shape) != fmt._rank:
        return False
    else:
        order = _ORDER[fmt._rank]
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _strides_like_channels_last(shape, strides):
    """torch's is_channels_last_strides_2d/3d: whether strides resemble channels-last (ambiguous cases,
    such as a trivial C stride or N111 shapes, count as contiguous)."""
    order = _ORDER.get(len(shape))
    if order is None or strides[1] == 0:
        return False
    low = 0
    for d in order:
        if shape[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False
        low = strides[d] * shape[d] if shape[d] > 1 else strides[d]
    return True


def suggest(shape, strides):
    """suggest_memory_format: channels_last / channels_last_3d when the strides resemble it, else contiguous."""
    if _strides_like_channels_last(shape, strides):
        return channels_last if len(shape) == 4 else channels_last_3d
    return contiguous_format


def non_overlapping_and_dense(shape, strides):
    """Whether the elements fill one block of memory without gaps or overlaps (in any dimension order)."""
    dims = sorted((d for d in range(len(shape)) if shape[d] >= 2), key=lambda d: strides[d])
    need = 1
    for d in dims:
        if strides[d] != need:
            return False
        need *= shape[d]
    return True


def dim_order(shape, strides):
    """The dimensions innermost first, as torch's TensorIterator orders one tensor's (and infer_dense_strides):
    sorted by stride, equal strides by size, a stride of 0 keeping its contiguous place."""
    nd = len(shape)
    perm = list(range(nd - 1, -1, -1))         # innermost first

    def should_swap(d0, d1):
        s0, s1 = strides[d0], strides[d1]
        if s0 == 0 or s1 == 0:
            return 0
        if s0 != s1:
            return 1 if s0 > s1 else -1
        return 1 if shape[d0] > shape[d1] else 0

    for i in range(1, nd):
        j = i
        for k in range(i - 1, -1, -1):
            c = should_swap(perm[k], perm[j])
            if c > 0:
                perm[k], perm[j] = perm[j], perm[k]
                j = k
            elif c < 0:
                break
    return perm


def dense_strides(shape, strides):
    """Dense strides with the dimension order of `strides` (torch's infer_dense_strides)."""
    out, n = [0] * len(shape), 1
    for d in dim_order(shape, strides):
        out[d] = n
        if shape[d] > 1:
            n *= shape[d]
    return tuple(out)


def preserve_strides(shape, strides):
    """The strides of clone / empty_like under preserve_format: the input's own when it is dense and
    non-overlapping, else dense strides in its dimension order."""
    if non_overlapping_and_dense(shape, strides):
        return tuple(strides)
    return dense_strides(shape, strides)


def target_strides(shape, strides, fmt):
    """The strides a copy in format `fmt` (None: preserve) of a tensor with these strides gets."""
    if fmt is None or fmt is preserve_format:
        return preserve_strides(shape, strides)
    return format_strides(shape, fmt)


def restrided(arr, strides, as_strided):
    """`arr` (C-contiguous, values in memory order) seen under element `strides` of a dense layout: the
    memory-order sequence stays, the indices move.  `as_strided` is backend.as_strided."""
    if arr.ndim == 0:
        return arr
    flat = arr.reshape(-1)
    isz = arr.itemsize
    return as_strided(flat, arr.shape, tuple(s * isz for s in strides))


def is_c_strides(shape, strides):
    """Whether element `strides` are exactly those NumPy gives a fresh C-ordered array of `shape` (all 0 when
    it is empty)."""
    n = 1
    if 0 in shape:
        n = 0
    for d in range(len(shape) - 1, -1, -1):
        if strides[d] != n:
            return False
        n *= shape[d]
    return True
