"""vmap's (and jacfwd's) ``randomness=`` flag on the per-sample path.

'error': a random draw from the default generator inside the function is torch's RuntimeError.  glassgrad
sees the draw after the function returns (the generator's state changed), puts the state back as it was
(torch raises before drawing) and raises.  'same': every sample starts from the same generator state, so
each draws what torch's single unbatched draw gives.  'different': samples draw one after the other.
Only the default CPU generator is watched; an explicit ``generator=`` is not.
"""
import contextlib

from ..ops import random as _random

__all__ = ["check_randomness", "watch_randomness", "RANDOM_ERROR"]

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either use the 'same' or "
                "'different' randomness flags on vmap or perform the randomness operation out of vmap")


def check_randomness(randomness):
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")


def _state():
    return _random.default_generator.get_state()._data


@contextlib.contextmanager
def watch_randomness(randomness):
    """Raise torch's error when the block drew from the default generator under randomness='error'."""
    if randomness != "error":
        yield
        return
    before = _state().copy()
    yield
    if not (_state() == before).all():
        _random.default_generator.set_state(_random.default_generator.get_state().new_tensor(before))
        raise RuntimeError(RANDOM_ERROR)
