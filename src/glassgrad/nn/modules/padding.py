"""Padding layers (constant / zero / reflection / replication / circular, 1-3 dims) like PyTorch."""
from .module import Module
from .. import functional as F

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


def _ntuple(n):
    def parse(x):
        return tuple(x) if isinstance(x, (list, tuple)) else (x,) * n
    return parse


_N = {1: _ntuple(2), 2: _ntuple(4), 3: _ntuple(6)}


class _CircularPadNd(Module):
    __constants__ = ["padding"]
    _nd = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _N[self._nd](padding)

    def _check_input_dim(self, input):
        n = self._nd
        if input.dim() != n + 1 and input.dim() != n + 2:
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")

    def extra_repr(self):
        return f"{self.padding}"


class CircularPad1d(_CircularPadNd):
    _nd = 1


class CircularPad2d(_CircularPadNd):
    _nd = 2


class CircularPad3d(_CircularPadNd):
    _nd = 3


class _ConstantPadNd(Module):
    __constants__ = ["padding", "value"]
    _nd = 1

    def __init__(self, padding, value):
        super().__init__()
        self.value = value
        self.padding = _N[self._nd](padding)

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    _nd = 3


class _ModePad(Module):
    __constants__ = ["padding"]
    _nd = 1
    _mode = "reflect"

    def __init__(self, padding):
        super().__init__()
        self.padding = _N[self._nd](padding)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_ModePad):
    _nd = 1


class ReflectionPad2d(_ModePad):
    _nd = 2


class ReflectionPad3d(_ModePad):
    _nd = 3


class ReplicationPad1d(_ModePad):
    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_ModePad):
    _nd, _mode = 2, "replicate"


class ReplicationPad3d(_ModePad):
    _nd, _mode = 3, "replicate"


class ZeroPad1d(ConstantPad1d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad3d(ConstantPad3d):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"
