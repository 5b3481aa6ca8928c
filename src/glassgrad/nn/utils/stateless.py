"""torch.nn.utils.stateless.functional_call: call a module with some parameters and buffers swapped in."""
import contextlib
import warnings

from ..._tensor import Tensor

__all__ = ["functional_call"]

_MISSING = object()


def _untie_named_tensors_map(module, parameters_and_buffers):
    all_named = dict(module.named_parameters(remove_duplicate=False))
    all_named.update(module.named_buffers(remove_duplicate=False))
    tied_by_id = {}
    for name, tensor in all_named.items():
        tied_by_id.setdefault(id(tensor), set()).add(name)
    tied_names_map = {}
    for tied_names in tied_by_id.values():
        if len(tied_names) > 1:
            for tied_name in tied_names:
                tied_names_map[tied_name] = tied_names
    given = {name for name in parameters_and_buffers if name in tied_names_map}
    for name in given:
        tied_names = tied_names_map[name]
        if len(tied_names & given) > 1 and len({id(parameters_and_buffers[n]) for n in tied_names & given}) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(tied_names)}, which are tied. "
                             "Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given:
        for tied_name in tied_names_map[name]:
            untied[tied_name] = parameters_and_buffers[name]
    return untied


def _swap(module, name, tensor):
    """Set module's tensor `name` (a dotted path) to `tensor` (or delete it for _MISSING); return the old one."""
    *path, leaf = name.split(".")
    for p in path:
        module = getattr(module, p)
    if leaf in module._parameters:
        orig = module._parameters[leaf]
    elif leaf in module._buffers:
        orig = module._buffers[leaf]
    else:
        orig = getattr(module, leaf, _MISSING)
    if tensor is _MISSING:
        if orig is not _MISSING:
            delattr(module, leaf)
    elif leaf in module._parameters:
        module._parameters[leaf] = tensor
    elif leaf in module._buffers:
        module._buffers[leaf] = tensor
    else:
        if orig is not _MISSING and leaf in module.__dict__:
            module.__dict__.pop(leaf)
        setattr(module, leaf, tensor)
    return orig


@contextlib.contextmanager
def _reparametrize_module(module, parameters_and_buffers, tie_weights=False, strict=False, stack_weights=False):
    untied = _untie_named_tensors_map(module, parameters_and_buffers) if tie_weights else parameters_and_buffers
    if strict:
        valid = {n for n, _ in module.named_parameters(remove_duplicate=False)}
        valid.update(n for n, _ in module.named_buffers(remove_duplicate=False))
        missing_keys, unexpected_keys = sorted(valid - set(untied)), sorted(set(untied) - valid)
        error_msgs = []
        if unexpected_keys:
            error_msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected_keys))}.")
        if missing_keys:
            error_msgs.append(f"Missing key(s): {', '.join(map(repr, missing_keys))}.")
        if error_msgs:
            raise RuntimeError("Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(error_msgs)))
    orig = {}
    try:
        for name, tensor in untied.items():
            if not isinstance(tensor, Tensor):
                raise TypeError(f"Expected tensor to be a torch.Tensor, got {type(tensor).__name__}")
            orig[name] = _swap(module, name, tensor)
        yield
    finally:
        items = list(orig.items())
        for name, tensor in (reversed(items) if stack_weights else items):
            new = _swap(module, name, tensor)
            if name in parameters_and_buffers and new is not _MISSING:
                parameters_and_buffers[name] = new


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 and will be removed in "
                  "a future version of PyTorch. Please use `torch.func.functional_call` instead which is a drop-in "
                  "replacement.", FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs, tie_weights=tie_weights, strict=strict)


def _functional_call(module, parameters_and_buffers, args=None, kwargs=None, *, tie_weights=True, strict=False):
    from ..parallel import DataParallel
    if isinstance(module, DataParallel):
        raise RuntimeError("The stateless API can't be used with nn.DataParallel module")
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, parameters_and_buffers, tie_weights=tie_weights, strict=strict):
        return module(*args, **kwargs)
