"""torch.utils.deterministic: `fill_uninitialized_memory` (default True), whether uninitialized memory
(torch.empty and its kin, resize_'s new elements) is filled with NaN / the integer maximum while
use_deterministic_algorithms(True) is on."""
import sys
import types

from .. import _globals


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        """Whether to fill uninitialized memory with a known value when torch.use_deterministic_algorithms() is
        set to True."""
        return _globals._state["fill_uninitialized_memory"]

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode):
        if mode.__class__ is not bool:
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _globals._state["fill_uninitialized_memory"] = mode


sys.modules[__name__].__class__ = _Deterministic
