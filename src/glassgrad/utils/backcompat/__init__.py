"""torch.utils.backcompat: the switches of two legacy warnings (broadcast_warning, keepdim_warning).  torch
2.x keeps the switches but no operation warns through them any more, and glassgrad's operations do the same;
the switches take only bools, as torch's."""

_flags = {"broadcast": False, "keepdim": False}


class Warning:
    """A legacy warning's switch: `enabled` (a bool), read and set through `setter` / `getter`."""

    def __init__(self, setter, getter):
        self.setter = setter
        self.getter = getter

    def set_enabled(self, value):
        self.setter(value)

    def get_enabled(self):
        return self.getter()

    enabled = property(get_enabled, set_enabled)


def _setter(name):
    def set_(value):
        if value.__class__ is not bool:
            raise RuntimeError(f"set_backcompat_{name}_warn expects a bool, but got {type(value).__name__}")
        _flags[name] = value
    return set_


broadcast_warning = Warning(_setter("broadcast"), lambda: _flags["broadcast"])
keepdim_warning = Warning(_setter("keepdim"), lambda: _flags["keepdim"])
