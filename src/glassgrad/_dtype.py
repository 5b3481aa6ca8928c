"""dtype objects (glassgrad.float32, ...) and PyTorch's type-promotion rules.

A dtype wraps a NumPy dtype.  Printing says ``torch.float32`` so that programs written
with ``import glassgrad as torch`` print what PyTorch prints.
"""
import numpy as np

__all__ = ["dtype", "float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64",
           "uint8", "uint16", "uint32", "uint64", "bool", "complex64", "complex128", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
           "float8_e5m2fnuz", "float8_e8m0fnu", "complex32", "chalf", "float4_e2m1fn_x2", "bit", "bits1x8", "bits2x4",
           "bits4x2", "bits8", "bits16", "qint8", "quint8", "qint32", "quint4x2", "quint2x4",
           *[f"uint{i}" for i in range(1, 8)], *[f"int{i}" for i in range(1, 8)], "get_default_dtype", "set_default_dtype", "promote_types",
           "result_type", "can_cast", "finfo"]

_builtin_bool = bool


class dtype:
    __slots__ = ("name", "np", "is_floating_point", "_signed", "itemsize", "_cat", "_legacy")

    def __init__(self, name, np_dtype, cat, legacy, itemsize=None):
        self.name = name
        if np_dtype is not None:        # None: bfloat16, whose NumPy dtype ml_dtypes gives on first use
            self.np = np.dtype(np_dtype)
        self.is_floating_point = cat == 2
        self._signed = name not in ("uint8", "uint16", "uint32", "uint64", "bool", "float8_e8m0fnu")
        self.itemsize = self.np.itemsize if itemsize is None else itemsize
        self._cat = cat          # 0 bool, 1 integer, 2 floating, 3 complex, 4 no tensors here (_OPAQUE)
        self._legacy = legacy    # legacy tensor type name, e.g. FloatTensor

    @property
    def is_complex(self):
        return self._cat == 3

    @property
    def is_signed(self):
        if self._signed.__class__ is str:      # the bits and quantized types: torch's error
            raise RuntimeError(self._signed)
        return self._signed

    def __getattr__(self, name):
        # reached only while a slot is unset: bfloat16's (a float8's) .np before ml_dtypes is loaded
        if name == "np" and self.name == "bfloat16":
            return _load_bfloat16().np
        if name == "np" and self.name in _FLOAT8:
            return _load_ml(self).np
        if name == "np" and self.name in _OPAQUE:
            raise TypeError(f"glassgrad has no tensors of dtype torch.{self.name} (torch's sub-byte, "
                            "bits, quantized and complex32 tensors are not supported)")
        raise AttributeError(f"'torch.dtype' object has no attribute '{name}'")

    @property
    def name_c(self):
        """The C++ scalar type name PyTorch's messages use (Float, Double, Long, ...)."""
        return _C_NAMES[self.name]

    def __repr__(self):
        return "torch." + self.name

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        return _TO_REAL.get(self.name, self)

    def to_complex(self):
        if self._cat == 3:
            return self
        try:
            return _TO_COMPLEX[self.name]
        except KeyError:
            raise RuntimeError(f"Unknown Complex ScalarType for {self.name_c}") from None


float16 = dtype("float16", np.float16, 2, "HalfTensor")
bfloat16 = dtype("bfloat16", None, 2, "BFloat16Tensor", itemsize=2)
float32 = dtype("float32", np.float32, 2, "FloatTensor")
float64 = dtype("float64", np.float64, 2, "DoubleTensor")
int8 = dtype("int8", np.int8, 1, "CharTensor")
int16 = dtype("int16", np.int16, 1, "ShortTensor")
int32 = dtype("int32", np.int32, 1, "IntTensor")
int64 = dtype("int64", np.int64, 1, "LongTensor")
uint8 = dtype("uint8", np.uint8, 1, "ByteTensor")
# torch's "limited support" unsigned types: creation, conversion, copying and indexing, but no promotion with
# any other integer type (promote_types raises, as torch's)
uint16 = dtype("uint16", np.uint16, 1, "UInt16Tensor")
uint32 = dtype("uint32", np.uint32, 1, "UInt32Tensor")
uint64 = dtype("uint64", np.uint64, 1, "UInt64Tensor")
bool = dtype("bool", np.bool_, 0, "BoolTensor")
# torch's 8-bit floats: ml_dtypes' NumPy dtypes (loaded on first use, as bfloat16's).  torch gives them
# creation, conversion (its own saturating / rounding rules: `cast`), copying, indexing and printing, and no
# promotion with any other dtype.
float8_e4m3fn = dtype("float8_e4m3fn", None, 2, "Float8_e4m3fnTensor", itemsize=1)
float8_e5m2 = dtype("float8_e5m2", None, 2, "Float8_e5m2Tensor", itemsize=1)
float8_e4m3fnuz = dtype("float8_e4m3fnuz", None, 2, "Float8_e4m3fnuzTensor", itemsize=1)
float8_e5m2fnuz = dtype("float8_e5m2fnuz", None, 2, "Float8_e5m2fnuzTensor", itemsize=1)
float8_e8m0fnu = dtype("float8_e8m0fnu", None, 2, "Float8_e8m0fnuTensor", itemsize=1)
_FLOAT8 = {d.name: d for d in (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu)}

complex64 = dtype("complex64", np.complex64, 3, "ComplexFloatTensor")
complex128 = dtype("complex128", np.complex128, 3, "ComplexDoubleTensor")
_TO_REAL = {"complex64": float32, "complex128": float64, "complex32": float16}
_TO_COMPLEX = {"float32": complex64, "float64": complex128, "bfloat16": complex64}

_C_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float", "float64": "Double", "int8": "Char", "int16": "Short",
            "int32": "Int", "int64": "Long", "uint8": "Byte", "uint16": "UInt16", "uint32": "UInt32",
            "uint64": "UInt64", "bool": "Bool", "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
            "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
            "float8_e8m0fnu": "Float8_e8m0fnu", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}



# the C++ types some of PyTorch's messages print instead (CPU kernels' template arguments)
_CPP_NAMES = {"float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double", "int8": "signed char",
              "int16": "short int", "int32": "int", "int64": "long int", "uint8": "unsigned char",
              "uint16": "short unsigned int", "uint32": "unsigned int", "uint64": "long unsigned int", "bool": "bool",
              "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def c_name(np_dtype):
    """PyTorch's C++ scalar type name (Float, Double, Long, ...) of a NumPy dtype, as its messages print
    it; the NumPy name for a dtype PyTorch has no name for.  The one table of these names."""
    n = _np_name(np_dtype)
    return _C_NAMES.get(n, n)


def cpp_name(np_dtype):
    """The C++ type of a NumPy dtype as PyTorch's kernel messages print it ('long int', 'c10::Half')."""
    n = _np_name(np_dtype)
    return _CPP_NAMES.get(n, n)


def _np_name(d):
    return d.name if d.__class__ is dtype else np.dtype(d).name      # a glassgrad dtype, or a NumPy one


# torch's dtypes that glassgrad has no tensors of (no NumPy dtype): the dtype objects with torch's names,
# sizes, flags, promotion and errors.  uint1..7 / int1..7: sub-byte integers; bits*: opaque bit containers;
# float4_e2m1fn_x2: two packed fp4 values; complex32 (chalf): complex float16; q*: quantized integers.
_Q_SIGNED, _BITS_SIGNED = "isSignedType not supported for quantized types", "Bits types are undefined"
_OPAQUE = {}


def _opaque(name, c_name, signed, itemsize=1, cat=4):
    d = _OPAQUE[name] = dtype(name, None, cat, None, itemsize=itemsize)
    d._signed, _C_NAMES[name] = signed, c_name
    return d


uint1, uint2, uint3, uint4, uint5, uint6, uint7 = (_opaque(f"uint{i}", f"UInt{i}", False) for i in range(1, 8))
bit = uint1
int1, int2, int3, int4, int5, int6, int7 = (_opaque(f"int{i}", f"Int{i}", True) for i in range(1, 8))
bits1x8, bits2x4, bits4x2, bits8 = (_opaque(n, n.capitalize(), _BITS_SIGNED) for n in
                                    ("bits1x8", "bits2x4", "bits4x2", "bits8"))
bits16 = _opaque("bits16", "Bits16", _BITS_SIGNED, 2)
float4_e2m1fn_x2 = _opaque("float4_e2m1fn_x2", "Float4_e2m1fn_x2", True, 1, 2)
complex32 = _opaque("complex32", "ComplexHalf", True, 4, 3)
qint8, quint8 = _opaque("qint8", "QInt8", _Q_SIGNED), _opaque("quint8", "QUInt8", _Q_SIGNED)
qint32 = _opaque("qint32", "QInt32", _Q_SIGNED, 4)
quint4x2, quint2x4 = _opaque("quint4x2", "QUInt4x2", _Q_SIGNED), _opaque("quint2x4", "QUInt2x4", _Q_SIGNED)
chalf = complex32
_TO_COMPLEX["float16"] = complex32
_QUANTIZED = {n for n in _OPAQUE if n.startswith(("qint", "quint"))}
_BITS = {n for n in _OPAQUE if n.startswith("bits")}
_BAREBONES_UNSIGNED = {f"uint{i}" for i in range(1, 8)} | {"uint16", "uint32", "uint64"}
_NO_PROMOTION_INDEX = {f"int{i}" for i in range(1, 8)} | {"float4_e2m1fn_x2"}


half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128

ALL = (float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bool, complex64, complex128)
_LIMITED = (uint16, uint32, uint64)
_BY_NAME = {d.name: d for d in ALL}
_BY_NAME["bfloat16"] = bfloat16
_BY_NAME.update(_FLOAT8)
_FROM_NP = {d.np: d for d in ALL}
_BY_NAME.update(_OPAQUE)
_FROM_NP_TYPE = {d.np.type: d for d in ALL}


BF16_MISSING = ("glassgrad.bfloat16 tensors need the optional package ml_dtypes, which is not installed: "
                "pip install glassgrad[bf16]  (or: pip install 'ml_dtypes>=0.4')")


def _load_bfloat16():
    """Give bfloat16 its NumPy dtype (ml_dtypes.bfloat16: round-to-nearest-even conversions, ufuncs computed
    in float32 and rounded once) on first use; ml_dtypes is optional, so `import glassgrad` never loads it."""
    try:
        import ml_dtypes
    except ImportError:
        raise ModuleNotFoundError(BF16_MISSING, name="ml_dtypes") from None
    npdt = np.dtype(ml_dtypes.bfloat16)
    bfloat16.np = npdt
    _FROM_NP[npdt] = bfloat16
    _FROM_NP_TYPE[npdt.type] = bfloat16
    return bfloat16


def _load_ml(d):
    """Give a float8 dtype its NumPy dtype (ml_dtypes') on first use."""
    try:
        import ml_dtypes
    except ImportError:
        raise ModuleNotFoundError(BF16_MISSING.replace("glassgrad.bfloat16", f"glassgrad.{d.name}"),
                                  name="ml_dtypes") from None
    npdt = np.dtype(getattr(ml_dtypes, d.name))
    d.np = npdt
    _FROM_NP[npdt] = d
    _FROM_NP_TYPE[npdt.type] = d
    return d


def cast(arr, npdt):
    """arr.astype(npdt) with torch's conversions into the float8 types: float8_e4m3fn saturates at +-448
    (infinities too), float8_e8m0fnu keeps the exponent (rounding up from a mantissa of one half, 0 and
    negatives as their magnitude's), float8_e5m2's NaN is 0x7f."""
    if npdt.itemsize != 1 or npdt.kind not in "fV" or arr.dtype == npdt:    # the hot path: not a float8
        return arr.astype(npdt)
    name = npdt.name                    # (ml_dtypes calls float8_e5m2's kind 'f', the others 'V')
    src = arr if arr.dtype.kind == "f" and arr.dtype.itemsize >= 4 else arr.astype(np.float32)
    if name == "float8_e4m3fn":
        return np.where(np.isnan(src), src, np.clip(src, -448, 448)).astype(npdt)
    if name == "float8_e8m0fnu":
        bits = np.ascontiguousarray(src, dtype=np.float32).view(np.uint32)
        exp, man = (bits >> 23) & 0xFF, bits & 0x7FFFFF
        up = ((man & 0x400000) != 0) & (((man & 0x3FFFFF) != 0) | (exp != 0)) & (exp != 0xFF)
        out = np.empty(np.shape(src), npdt)          # (an array of its own dtype: checkpoints find its owner)
        out.view(np.uint8)[...] = np.minimum(exp + up, 0xFF)
        return out
    out = src.astype(npdt)
    if name == "float8_e5m2":
        b = out.view(np.uint8)
        b[np.isnan(src)] = 0x7F
    return out


def is_bfloat16(npdt):
    """Whether a NumPy dtype is ml_dtypes' bfloat16 (False, without loading it, while ml_dtypes is not loaded)."""
    return npdt.name == "bfloat16" and npdt.kind == "V"


def np_finfo(npdt):
    """np.finfo, also for bfloat16 (ml_dtypes' finfo: NumPy's refuses a dtype of kind 'V')."""
    if npdt.kind == "V":
        import ml_dtypes
        return ml_dtypes.finfo(npdt)
    return np.finfo(npdt)


def _by_name(name):
    return _BY_NAME[name]


def from_numpy_dtype(npdt, user=False):
    """glassgrad dtype for a NumPy dtype; TypeError for dtypes torch has no equivalent of.  `user`: the dtype
    of an array the user hands to from_numpy / tensor, where torch refuses ml_dtypes' bfloat16 too."""
    try:
        if user and (_FROM_NP[npdt] is bfloat16 or _FROM_NP[npdt].name in _FLOAT8):
            raise TypeError(f"can't convert np.ndarray of type ml_dtypes.{_FROM_NP[npdt].name}. The only supported "
                            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, "
                            "uint64, uint32, uint16, uint8, and bool.")
        return _FROM_NP[npdt]
    except KeyError:
        pass
    try:
        return _FROM_NP[np.dtype(npdt)]
    except (KeyError, TypeError):
        if is_bfloat16(np.dtype(npdt)):      # an ml_dtypes array before glassgrad.bfloat16 was first used
            _load_bfloat16()
            return from_numpy_dtype(npdt, user)
        if np.dtype(npdt).kind == "V" and np.dtype(npdt).name in _FLOAT8:
            _load_ml(_FLOAT8[np.dtype(npdt).name])
            return from_numpy_dtype(npdt, user)
            _load_bfloat16()
            return _FROM_NP[np.dtype(npdt)]
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(npdt).type.__name__}. The only supported types "
            "are: float64, float32, float16, complex64, complex128, int64, int32, int16, int8, uint64, uint32, uint16, "
            "uint8, and bool."
        ) from None


def to_dtype(d, fn=None, arg="dtype"):
    """A dtype argument as torch's argument parser takes it: a glassgrad dtype, or the Python types float
    (float64), int (int64) and bool; anything else (a string, a NumPy dtype) is torch's TypeError.
    `fn` names the function in the message."""
    if d.__class__ is dtype:
        return d
    if d is _pyfloat:
        return float64
    if d is _pyint:
        return int64
    if d is _builtin_bool:
        return bool
    where = f"{fn}(): argument '{arg}'" if fn else f"argument '{arg}'"
    raise TypeError(f"{where} must be torch.dtype, not {type(d).__name__}")


_pyfloat = __builtins__["float"] if isinstance(__builtins__, dict) else __builtins__.float
_pyint = __builtins__["int"] if isinstance(__builtins__, dict) else __builtins__.int

_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if d.__class__ is not dtype or not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if d.name in _OPAQUE:
        raise TypeError(f"couldn't find storage object {d.name_c}Storage")
    _default[0] = d


def _dtype_arg(d, fn, arg, pos):
    if d.__class__ is not dtype:
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be torch.dtype, not {type(d).__name__}")
    return d


def promote_types(a, b):
    """torch.promote_types: the category order is bool < integer < floating."""
    if a.__class__ is not dtype or b.__class__ is not dtype:
        _dtype_arg(a, "promote_types", "type1", 1), _dtype_arg(b, "promote_types", "type2", 2)
    if a is b:
        return a
    if a._cat == 4 or b._cat == 4 or a.name in _OPAQUE or b.name in _OPAQUE:
        _promote_opaque(a, b)
    if a.name in _FLOAT8 or b.name in _FLOAT8:
        raise RuntimeError(f"Promotion for Float8 Types is not supported, attempted to promote {a.name_c} and "
                           f"{b.name_c}")
    if (a.name in _BAREBONES_UNSIGNED or b.name in _BAREBONES_UNSIGNED) and a._cat != 2 and b._cat != 2:
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{a.name_c} and {b.name_c}")
    if a._cat == 3 or b._cat == 3:      # complex: the complex type of the promoted real parts
        return promote_types(a.to_real(), b.to_real()).to_complex()
    if a.name in _BAREBONES_UNSIGNED or b.name in _BAREBONES_UNSIGNED:
        return a if a._cat == 2 else b          # (a sub-byte unsigned type with a floating type)
    if a._cat == 2 or b._cat == 2:
        if a._cat == 2 and b._cat == 2:
            if a.itemsize == b.itemsize:        # float16 with bfloat16: neither holds the other
                return float32
            return a if a.itemsize >= b.itemsize else b
        return a if a._cat == 2 else b
    return _FROM_NP[np.promote_types(a.np, b.np)]


def _promote_opaque(a, b):
    """torch's checks, in its order, when either is one of the _OPAQUE dtypes (returns: the usual rules go on)."""
    if a.name in _QUANTIZED or b.name in _QUANTIZED:
        raise RuntimeError("promoteTypes with quantized numbers is not handled yet; figure out what the correct "
                           f"rules should be, offending types: {a.name_c} {b.name_c}")
    if a.name in _BITS or b.name in _BITS:
        raise RuntimeError(f"Promotion from {a.name_c} and {b.name_c} is unsupported.")
    if a.name in _FLOAT8 or b.name in _FLOAT8:
        return
    if a.name in _BAREBONES_UNSIGNED or b.name in _BAREBONES_UNSIGNED:
        if a.is_floating_point or b.is_floating_point:
            return
        raise RuntimeError(f"Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{a.name_c} and {b.name_c}")
    if a.name in _NO_PROMOTION_INDEX or b.name in _NO_PROMOTION_INDEX:
        ix = "ix_a" if a.name in _NO_PROMOTION_INDEX else "ix_b"
        raise RuntimeError(f"{ix} != -1 INTERNAL ASSERT FAILED at \"/__w/pytorch/pytorch/c10/core/ScalarType.cpp\":"
                           f"{103 if ix == 'ix_a' else 104}, please report a bug to PyTorch. ")


def _combine(higher, lower):
    # PyTorch's combine_categories: a lower-priority operand may only raise the category.
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._cat == 3:
        return higher
    if lower._cat == 3:      # a complex operand of lower priority: the complex type of a floating `higher`
        return higher.to_complex() if higher._cat == 2 else lower
    if higher._cat == 2:
        return higher
    if higher is bool or lower._cat == 2:
        return promote_types(higher, lower)
    return higher


def scalar_dtype(x):
    """dtype a Python number takes when it stands alone (wrapped number)."""
    t = x.__class__
    if t is _builtin_bool:
        return bool
    if t is _pyint:
        return int64
    if t is _pyfloat:
        return _default[0]
    if isinstance(x, (np.bool_,)):
        return bool
    if isinstance(x, np.integer):
        return int64
    if isinstance(x, np.floating):
        return _default[0]
    if t is complex or isinstance(x, np.complexfloating):
        return _default[0].to_complex()
    raise TypeError(f"unsupported scalar type {t.__name__}")


def result_type(*operands):
    """torch.result_type over tensors and Python scalars.

    Dimensioned tensors take priority over 0-d tensors, which take priority over Python
    numbers; a lower-priority operand only matters if it is of a higher category.
    """
    dim_r = zero_r = wrap_r = None
    for x in operands:
        dt = getattr(x, "dtype", None)
        if dt.__class__ is dtype:
            if x.ndim:
                dim_r = dt if dim_r is None else promote_types(dim_r, dt)
            else:
                zero_r = dt if zero_r is None else promote_types(zero_r, dt)
        else:
            d = scalar_dtype(x)
            wrap_r = d if wrap_r is None else promote_types(wrap_r, d)
    return _combine(dim_r, _combine(zero_r, wrap_r))


def can_cast(from_, to):
    """torch.can_cast: casting to a lower category is not allowed."""
    a, b = _dtype_arg(from_, "can_cast", "from_", 1), _dtype_arg(to, "can_cast", "to", 2)
    if a._cat == 3 and b._cat != 3:
        return False
    if a.is_floating_point and b._cat == 1:     # (not to the sub-byte integers, which torch's rule omits)
        return False
    return not (a is not bool and b is bool)


_F8_INFO = {"float8_e4m3fn": (0.125, 448.0, 2.0 ** -6), "float8_e5m2": (0.25, 57344.0, 2.0 ** -14),
            "float8_e4m3fnuz": (0.125, 240.0, 2.0 ** -7), "float8_e5m2fnuz": (0.125, 57344.0, 2.0 ** -15),
            "float8_e8m0fnu": (1.0, 2.0 ** 127, 2.0 ** -127)}


class finfo:
    """torch.finfo: the machine limits of a floating dtype (bfloat16's are fixed here, so they need no ml_dtypes)."""
    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype", "_op")
    # float4_e2m1fn_x2's: torch gives its bits and raises for every other limit (left unset: __getattr__)
    _UNSET = {"eps": "epsilon", "max": "max", "min": "lowest", "tiny": "min", "smallest_normal": "min",
              "resolution": "digits10", "dtype": "dtype"}

    def __init__(self, type=None):
        d = _default[0] if type is None else type
        if d.__class__ is dtype and d._cat == 3:
            d = d.to_real()         # torch: a complex dtype's limits are those of its real parts
        self._op = None
        if d.__class__ is dtype and d.name in _OPAQUE and d.is_floating_point:
            self.bits, self._op = 8, d
            return
        if d.__class__ is not dtype or not d.is_floating_point:
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle 'torch.finfo'")
        if d.name == "bfloat16":         # 8 exponent bits as float32, 8 significand bits (7 stored)
            bits, eps, mx, tiny, res = 16, 2.0 ** -7, _pyfloat.fromhex("0x1.fep127"), 2.0 ** -126, 0.01
        elif d.name in _F8_INFO:         # torch's values (e8m0fnu: no sign, so its min is its smallest value)
            (eps, mx, tiny), bits, res = _F8_INFO[d.name], 8, 1.0
        else:
            fi = np.finfo(d.np)
            bits, eps, mx, tiny, res = fi.bits, _pyfloat(fi.eps), _pyfloat(fi.max), _pyfloat(fi.tiny), \
                10.0 ** -fi.precision
        lo = tiny if d.name == "float8_e8m0fnu" else -mx
        self.bits, self.eps, self.max, self.min, self.tiny = bits, eps, mx, lo, tiny
        self.smallest_normal, self.resolution, self.dtype = tiny, res, d.name

    def __getattr__(self, name):
        if name in finfo._UNSET and self._op is not None:
            raise NotImplementedError(f'"{finfo._UNSET[name]}" not implemented for \'{self._op.name_c}\'')
        raise AttributeError(f"'torch.finfo' object has no attribute '{name}'")

    def __eq__(self, other):
        if self._op is not None or getattr(other, "_op", None) is not None:
            return other.__class__ is finfo and self._op is other._op
        return other.__class__ is finfo and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        if self._op is not None:
            raise TypeError("bad argument type for built-in operation")
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")

    __str__ = __repr__


class iinfo:
    """torch.iinfo: the machine limits of an integer dtype (bits, min, max and the dtype's name)."""
    __slots__ = ("bits", "max", "min", "dtype", "_op")

    def __init__(self, type):
        if type.__class__ is not dtype:
            raise TypeError(f"iinfo(): argument 'type' (position 1) must be torch.dtype, not {type.__class__.__name__}")
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        self._op = None
        if type.name in _QUANTIZED:         # its integer's limits; its dtype raises (left unset: __getattr__)
            self._op, type = type, {"qint8": int8, "qint32": int32}.get(type.name, uint8)
            ii = np.iinfo(type.np)
            self.bits, self.min, self.max = ii.bits, _pyint(ii.min), _pyint(ii.max)
            return
        if type.is_floating_point or type.is_complex or type._cat == 4:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
        ii = np.iinfo(type.np)
        self.bits, self.min, self.max, self.dtype = ii.bits, _pyint(ii.min), _pyint(ii.max), type.name

    def __getattr__(self, name):
        if name == "dtype" and self._op is not None:
            raise NotImplementedError(f'"dtype" not implemented for \'{self._op.name_c}\'')
        raise AttributeError(f"'torch.iinfo' object has no attribute '{name}'")

    def __eq__(self, other):
        return other.__class__ is iinfo and self.dtype == other.dtype

    __hash__ = None

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"

    __str__ = __repr__
