"""nn.Module: the base class of every layer, with PyTorch's contract.

Attributes are routed on assignment: a Parameter goes to ``_parameters``, a Module to
``_modules``, a registered buffer stays in ``_buffers``; ``__getattr__`` finds them again.
Traversal, train/eval, dtype/device moves and hooks follow PyTorch; state_dict and load_state_dict
are inherited from StateDictMethods (_module_state_dict.py).
"""
import functools
import warnings
from collections import OrderedDict

from ... import _shm
from ..._tensor import Tensor
from ...autograd.graph import RemovableHandle
from ...autograd.grad_mode import no_grad
from ...autograd.grad_mode import state as _grad_state
from ..parameter import Parameter, Buffer, is_lazy
from ._module_state_dict import StateDictMethods, _IncompatibleKeys  # noqa: F401  (torch names it here)
from . import _hooks
from ._hooks import (register_module_forward_pre_hook, register_module_forward_hook,  # noqa: F401
                     register_module_full_backward_pre_hook, register_module_backward_hook,
                     register_module_full_backward_hook, register_module_buffer_registration_hook,
                     register_module_module_registration_hook, register_module_parameter_registration_hook)

# the global hook dicts (never rebound), for _call_impl's one check
_GFP, _GF, _GB, _GBP = (_hooks._global_forward_pre_hooks, _hooks._global_forward_hooks, _hooks._global_backward_hooks,
                        _hooks._global_backward_pre_hooks)

__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_backward_hook", "register_module_full_backward_hook",
           "register_module_buffer_registration_hook", "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "Module"]


def _tname(v):
    """How PyTorch names a value's type in assignment errors (torch.FloatTensor for tensors)."""
    if isinstance(v, Tensor):
        return f"torch.{v.dtype._legacy}"
    mod = type(v).__module__
    return type(v).__name__ if mod == "builtins" else f"{mod}.{type(v).__name__}"


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


def _handle(store, hook, prepend, extra=None):
    """Register `hook` in the ordered dict `store`, first or last; return its handle (which also removes the
    hook's flags in the dicts `extra`)."""
    h = RemovableHandle(store, extra_dict=extra)
    store[h.id] = hook
    if prepend:
        store.move_to_end(h.id, last=False)
    return h


class Module(StateDictMethods):
    """Base class for all neural network modules."""
    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if not self.call_super_init and (args or kwargs):
            extra = next(iter(kwargs)) if kwargs else None
            if extra is not None:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument '{extra}'")
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        for name in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks",
                     "_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                     "_load_state_dict_post_hooks"):
            d[name] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = {}
        d["_forward_hooks_always_called"] = {}
        d["_forward_pre_hooks_with_kwargs"] = {}

    forward = None   # subclasses define forward

    # -- registration ----------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_tname(tensor)}' object to buffer "
                            f"'{name}' (torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = tensor.detach() if not tensor._rg else tensor
        if _hooks._global_buffer_registration_hooks:
            tensor = _hooks.registered(_hooks._global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_tname(param)}' object to parameter "
                            f"'{name}' (torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                             f"created explicitly. To express '{name}' as a function of another Tensor, compute "
                             "the value in the forward() method.")
        if _hooks._global_parameter_registration_hooks:
            param = _hooks.registered(_hooks._global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def add_module(self, name, module):
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{type(module).__module__}.{type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if _hooks._global_module_registration_hooks:
            module = _hooks.registered(_hooks._global_module_registration_hooks, self, name, module)
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def set_submodule(self, target, module, strict=False):
        *path, last = target.split(".")
        parent = self.get_submodule(".".join(path))
        if strict and not hasattr(parent, last):
            raise AttributeError(parent._get_name() + " has no attribute `" + last + "`")
        setattr(parent, last, module)

    def _get_owned(self, target, store, kind):
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in getattr(mod, store):
            raise AttributeError("`" + name + "` is not " + kind)
        return getattr(mod, name)

    def get_parameter(self, target):
        return self._get_owned(target, "_parameters", "an nn.Parameter")

    def get_buffer(self, target):
        return self._get_owned(target, "_buffers", "a buffer")

    # -- attribute routing -------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            s = d.get(store)
            if s is not None and name in s:
                return s[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def drop(*stores):
            for s in stores:
                if s in d:
                    d[s].pop(name, None) if isinstance(d[s], dict) else d[s].discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            d.pop(name, None)
            drop("_buffers", "_modules", "_non_persistent_buffers_set")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_tname(value)}' as parameter "
                                f"'{name}' (torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            d.pop(name, None)
            drop("_parameters", "_buffers", "_non_persistent_buffers_set")
            modules[name] = _hooks.registered(_hooks._global_module_registration_hooks, self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_tname(value)}' as child module "
                                f"'{name}' (torch.nn.Module or None expected)")
            modules[name] = _hooks.registered(_hooks._global_module_registration_hooks, self, name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_tname(value)}' as buffer "
                                f"'{name}' (torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
            else:
                persistent = name not in self._non_persistent_buffers_set
            d.pop(name, None)
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if name in d[store]:
                del d[store][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = set(dir(type(self))) | set(self.__dict__)
        keys |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)

    # -- traversal ----------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mod_prefix, mod in mods:
            for k, v in get_members(mod):
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (mod_prefix + ("." if mod_prefix else "") + k, v)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._parameters.items(), prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members(lambda m: m._buffers.items(), prefix, recurse, remove_duplicate)

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    # -- modes --------------------------------------------------------------------------
    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def compile(self, *args, **kwargs):
        """torch's Module.compile: torch.compile's argument checks; the module keeps running eagerly in place."""
        from ...compiler import compile as _compile
        _compile(self, *args, **kwargs)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        if _grad_state.watching is not None:    # explain.watch: log the reset (explain/_watch.py)
            _grad_state.watching.on_zero_grad(self)
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # -- moving between dtypes and devices ------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for m in self.children():
                m._apply(fn)
        for key, p in self._parameters.items():
            if p is None:
                continue
            with no_grad():
                new = fn(p)
            if new is not p:
                p._data = new._data        # keep the Parameter object (optimizers hold it)
            if p.grad is not None:
                with no_grad():
                    g = fn(p.grad)
                if g is not p.grad:
                    p.grad._data = g._data
        for key, b in self._buffers.items():
            if b is not None:
                new = fn(b)
                if new is not b and is_lazy(b):      # an UninitializedBuffer
                    b._data = new._data         # stays uninitialized (torch's keeps its class through .to/.cuda)
                else:
                    self._buffers[key] = new
        return self

    def to(self, *args, **kwargs):
        from ...ops.conversion import _parse_to
        dtype, device, _ = _parse_to(args, kwargs)
        from ... import _dtype
        dtype = None if dtype is None else _dtype.to_dtype(dtype)
        if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError("nn.Module.to only accepts floating point or complex dtypes, but got desired "
                            f"dtype={dtype}")

        fmt = kwargs.get("memory_format")

        def convert(t):
            if fmt is not None and t.dim() in (4, 5):    # torch: 4-d and 5-d tensors only take the format
                return t.to(device, dtype if t.is_floating_point() else None, memory_format=fmt)
            if dtype is not None and t.is_floating_point():
                return t.to(device, dtype) if device is not None else t.to(dtype)
            return t.to(device) if device is not None else t
        return self._apply(convert)

    def to_empty(self, *, device, recurse=True):
        from ...ops.creation import empty_like
        return self._apply(lambda t: empty_like(t, device=device), recurse=recurse)

    def cpu(self):
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        return self._apply(lambda t: t.type(dst_type))

    def float(self):
        return self._apply(lambda t: t.float() if t.is_floating_point() else t)

    def double(self):
        return self._apply(lambda t: t.double() if t.is_floating_point() else t)

    def half(self):
        return self._apply(lambda t: t.half() if t.is_floating_point() else t)

    def bfloat16(self):
        return self._apply(lambda t: t.bfloat16() if t.is_floating_point() else t)

    def share_memory(self):
        """Move the parameters, their gradients and the buffers into shared memory, in place (one pass of
        _shm.share for the whole module: torch's ``_apply(lambda t: t.share_memory_())``)."""
        tensors = []
        for m in self.modules():
            for p in m._parameters.values():
                if p is not None:
                    tensors.append(p)
                    if p._grad is not None:
                        tensors.append(p._grad)
            tensors.extend(b for b in m._buffers.values() if b is not None)
        _shm.share(tensors, Tensor)
        return self

    # -- state-dict hooks (state_dict / load_state_dict themselves: _module_state_dict.py) ----------------
    def register_state_dict_pre_hook(self, hook):
        return _handle(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook):
        return _handle(self._state_dict_hooks, hook, False)

    def register_load_state_dict_pre_hook(self, hook):
        return _handle(self._load_state_dict_pre_hooks, functools.partial(hook, self), False)

    def _register_state_dict_hook(self, hook):
        return _handle(self._state_dict_hooks, hook, False)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        return _handle(self._load_state_dict_pre_hooks, functools.partial(hook, self) if with_module else hook, False)

    def register_load_state_dict_post_hook(self, hook):
        return _handle(self._load_state_dict_post_hooks, hook, False)

    # -- hooks and calling ---------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        h = _handle(self._forward_pre_hooks, hook, prepend, [self._forward_pre_hooks_with_kwargs])
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs[h.id] = True
        return h

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        h = _handle(self._forward_hooks, hook, prepend,
                    [self._forward_hooks_with_kwargs, self._forward_hooks_always_called])
        if with_kwargs:
            self._forward_hooks_with_kwargs[h.id] = True
        if always_call:
            self._forward_hooks_always_called[h.id] = True
        return h

    def register_full_backward_pre_hook(self, hook, prepend=False):
        return _handle(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        return _handle(self._backward_hooks, hook, prepend)

    def register_backward_hook(self, hook):
        warnings.warn("Using a non-full backward hook when the forward contains multiple autograd Nodes is "
                      "deprecated and will be removed in future versions. This hook will be missing some "
                      "grad_input. Please use register_full_backward_hook to get the documented behavior.",
                      FutureWarning, stacklevel=2)
        return _handle(self._backward_hooks, hook, False)

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or _GFP or _GF or _GB or _GBP):
            return self.forward(*args, **kwargs)
        return _hooks.call_with_hooks(self, args, kwargs)

    __call__ = _call_impl

    # -- printing ----------------------------------------------------------------------------------
    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = ["(" + k + "): " + _addindent(repr(m), 2) for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"

    def __getstate__(self):
        return self.__dict__.copy()
