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


def _swap_tensor(module, name, tensor):
    """torch's swap_tensor (allow_missing=True): set module's tensor `name`, returning the one it replaces."""
    if tensor is not _MISSING and not isinstance(tensor, Tensor) and tensor is not None:
        raise TypeError(f"{tensor} is not an instance of torch.Tensor")
    if name == "":
        raise KeyError('tensor name can\'t be empty string ""')
    for table in (module._parameters, module._buffers):
        if name in table:
            orig = table[name]
            if tensor is not _MISSING:
                table[name] = tensor
            else:
                del table[name]
            return orig
    orig = getattr(module, name) if hasattr(module, name) else _MISSING
    if orig is not _MISSING and not isinstance(orig, Tensor) and orig is not None:
        raise TypeError(f"attribute `{name}`: {orig} is not an instance of torch.Tensor")
    if tensor is not _MISSING:
        setattr(module, name, tensor)
    elif hasattr(module, name):
        delattr(module, name)
    return orig


def _submodule(module, path, memo):
    if not path:
        return module
    if path not in memo:
        prefix, dot, attr = path.rpartition(".")
        parent = _submodule(module, prefix, memo) if dot else module
        try:
            sub = getattr(parent, attr)
        except AttributeError as ex:
            raise AttributeError(f"{parent._get_name()} has no attribute `{attr}`") from ex
        from ..modules.module import Module
        if not isinstance(sub, Module):
            raise TypeError(f"submodule `{path}`: {sub} is not an instance of torch.nn.Module")
        memo[path] = sub
    return memo[path]


def _swap_tensors_dict(module, named_tensors):
    memo, orig = {}, {}
    try:
        for name, tensor in named_tensors.items():
            prefix, _, attr = name.rpartition(".")
            orig[name] = _swap_tensor(_submodule(module, prefix, memo), attr, tensor)
    except Exception:
        for name, tensor in orig.items():
            prefix, _, attr = name.rpartition(".")
            _swap_tensor(_submodule(module, prefix, memo), attr, tensor)
        raise
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
        orig = _swap_tensors_dict(module, untied)
        yield
    finally:
        if stack_weights:
            orig = dict(reversed(orig.items()))
        new = _swap_tensors_dict(module, orig)
        parameters_and_buffers.update({k: new[k] for k in parameters_and_buffers if k in new})


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
