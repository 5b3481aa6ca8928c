"""torch.utils.hooks: RemovableHandle (the handle every register_*hook returns), unserializable_hook and
warn_if_has_hooks.  (torch's BackwardHook, the machinery behind Module full backward hooks, lives in
nn/modules/_hooks.py here and is not offered under torch's internal name.)"""
import warnings

from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Mark `f` as a hook that is not serialized, which silences warn_if_has_hooks for it."""
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor):
    """The backward hooks registered on `tensor` (register_hook), leaf or not."""
    fn = tensor._grad_fn
    if fn is None:
        return list(((tensor._extra or {}).get("hooks") or {}).values())
    hooks = fn._hooks
    return list((hooks.tensor_pre.get(tensor._out_nr) or {}).values()) if hooks is not None else []


def warn_if_has_hooks(tensor):
    """Warn, as torch does when it pickles a tensor, for each backward hook on `tensor` that will not be
    serialized (unless marked with unserializable_hook)."""
    for hook in _tensor_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this is expected, you can "
                          "decorate the function with @torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
