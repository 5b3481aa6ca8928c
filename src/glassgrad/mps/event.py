"""torch.mps.Event: an MPS event; without MPS, creating one raises torch's error."""


def _no_mps(what):
    return RuntimeError(f"Cannot execute {what}() without MPS backend.")


class Event:
    """An MPS synchronization marker (needs the MPS device: creating one raises without it)."""

    def __init__(self, enable_timing=False):
        raise _no_mps("acquireEvent")
