"""torch.nn.utils.skip_init: a module whose parameters and buffers are left uninitialised.

torch builds it on the meta device (no random draws) and calls to_empty; glassgrad has no meta device, so it
builds it on the CPU and puts the default generator back where it was: the RNG advances as little as torch's."""
import inspect

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    from ...ops.random import get_rng_state, set_rng_state
    from ..modules.module import Module
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    final_device = kwargs.pop("device", "cpu")
    state = get_rng_state()
    try:
        module = module_cls(*args, **kwargs)
    finally:
        set_rng_state(state)
    return module.to_empty(device=final_device)
