"""torch.device: the one place device arguments are parsed (strings, indices, device objects), with
torch's errors."""
import builtins
import re

# the device types torch's parser knows; glassgrad runs tensors on cpu and (through CuPy) cuda only, the
# others can be named (as in torch) but not allocated on
TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
         "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")
_DEVICE_STRING = re.compile(r"([a-zA-Z_]+)(?::(0|[1-9][0-9]*))?")     # torch: no sign, no leading zeros
_NO_INDEX = object()


def _index(index, where="argument 'index' (position 2)"):
    """An explicit device index: an int (not bool), non-negative."""
    if isinstance(index, bool) or not hasattr(index, "__index__"):
        raise TypeError(f"device(): {where} must be int, not {type(index).__name__}")
    index = index.__index__()
    if not -2 ** 63 <= index < 2 ** 63:
        raise ValueError("Overflow when unpacking long long")
    if index < 0:
        raise RuntimeError("Device index must not be negative")
    return index


def _parse(s):
    """'cuda:1' -> ('cuda', 1): torch's device-string grammar and messages."""
    if not s:
        raise RuntimeError("Device string must not be empty")
    m = _DEVICE_STRING.fullmatch(s)
    if m is None or not m.group(2) and ":" in s:
        raise RuntimeError(f"Invalid device string: '{s}'")
    kind, idx = m.group(1), m.group(2)
    if kind not in TYPES:
        raise RuntimeError(f"Expected one of {', '.join(TYPES)} device type at start of device string: {kind}")
    if idx is None:
        return kind, None
    if int(idx) >= 2 ** 31:
        raise RuntimeError(f"Could not parse device index '{idx}' in device string '{s}'")
    return kind, int(idx)


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index=_NO_INDEX):
        if type.__class__ is device:
            if index is not _NO_INDEX:
                raise TypeError("device(): argument 'type' (position 1) must be str, not torch.device")
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, bytes):
            type = type.decode()
        if isinstance(type, str):
            kind, idx = _parse(type)
            if index is not _NO_INDEX:
                if idx is not None:
                    raise RuntimeError("type (string) must not include an index because index was passed "
                                       "explicitly: " + type)
                idx = None if index is None else _index(index)
        elif index is _NO_INDEX and not isinstance(type, bool) and hasattr(type, "__index__"):
            kind, idx = "cuda", _index(type, "argument 'device' (position 1)")
            from . import backend
            if not backend.cuda_available():
                raise RuntimeError("Cannot access accelerator device when none is available.")
        else:
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({builtins.type(type).__name__}), but expected one of:\n * (torch.device device)\n"
                            " * (str type, int index = -1)\n * (int index)")
        self.type = kind
        self.index = idx

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if other.__class__ is not device:
            return NotImplemented if not isinstance(other, str) else False    # torch: never equal to a str
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __enter__(self):
        """``with torch.device(d):`` tensor factories default to d inside the block (set_default_device's
        device), the previous default comes back after it."""
        _entered.append(_default[0])
        set_default_device(self)
        return self

    def __exit__(self, *exc):
        _default[0] = _entered.pop()
        return False


cpu = device("cpu")
_entered = []       # the defaults that `with device(...)` blocks replaced, innermost last


def as_device(d):
    if d is None:
        return cpu
    if d.__class__ is device:
        return d
    return device(d)


# -- torch.set_default_device / get_default_device: the device factories use when given none ----------------
_default = [None]


def set_default_device(device):
    """The device tensor factories (zeros, tensor, arange, ...) use when called without one; None: cpu."""
    _default[0] = None if device is None else as_device(device)


def get_default_device():
    return device("cpu") if _default[0] is None else _default[0]


def default_device():
    """The device set by set_default_device, or None (cpu)."""
    return _default[0]
