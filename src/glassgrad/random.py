"""torch.random: the global generator's seed and state functions and fork_rng (every device's generator saved and
restored around a block).  The generators themselves are in ops/random.py."""
import contextlib
import warnings

from . import backend
from .ops.random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed,  # noqa: F401
                         set_rng_state)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state", "thread_safe_generator"]

_fork_rng_warned_already = False


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type=None):
    """Saves the CPU generator's state and that of each device in `devices` (default: every CUDA device), and
    restores them when the block ends."""
    global _fork_rng_warned_already
    if device_type == "meta" or not enabled:
        yield
        return
    device_type = device_type or "cuda"
    if device_type not in ("cuda", "cpu"):
        raise RuntimeError(f"torch has no module of `{device_type}`, you should register a module by "
                           "`torch._register_device_module`.")
    from . import cuda
    mod = cuda if device_type == "cuda" else None
    count = backend.device_count() if mod is not None else 0
    if devices is None:
        if count > 1 and not _fork_rng_warned_already:
            warnings.warn(f"{device_type.upper()} reports that you have {count} available devices, and you have used "
                          f"{_caller} without explicitly specifying which devices are being used. For safety, we "
                          f"initialize *every* {device_type.upper()} device by default, which can be quite slow if "
                          f"you have a lot of {device_type.upper()}s. Set the '{_devices_kw}' keyword argument of "
                          f"{_caller} to the devices you use.", stacklevel=3)
            _fork_rng_warned_already = True
        devices = list(range(count))
    else:
        devices = list(devices)
    cpu_state = get_rng_state()
    dev_states = [mod.get_rng_state(d) for d in devices] if mod is not None else []
    try:
        yield
    finally:
        set_rng_state(cpu_state)
        for d, st in zip(devices, dev_states):
            mod.set_rng_state(st, d)


def thread_safe_generator():
    """The generator of the DataLoader thread worker this runs in (its WorkerInfo.rng.torch_generator); None in
    the main process and in process workers (functions then use the global generator) -- torch's rule.
    glassgrad's DataLoader workers are processes, so this is None there."""
    from .utils.data import get_worker_info
    info = get_worker_info()
    if info is not None and info.worker_method == "thread" and info.rng is not None:
        return info.rng.torch_generator
    return None

