"""Calling a Module that has hooks: forward pre/post hooks and full backward (pre-)hooks.

Full backward hooks work as in PyTorch: the module's tensor inputs and outputs pass through an
identity autograd Function (its node is ``BackwardHookFunctionBackward``).  The node on the
outputs sees grad_output first (backward pre-hooks may replace it); the node on the inputs then
sees grad_input and calls ``hook(module, grad_input, grad_output)``.
"""
from collections import OrderedDict

from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import state as grad_state
from ...autograd.graph import RemovableHandle

# -- global hooks: torch.nn.modules.module.register_module_*, run for every module before its own ------------
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = {}
_global_forward_hooks_always_called = {}
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()
_global_is_full_backward_hook = [None]         # None until one kind is registered (torch's tri-state)
_global_module_registration_hooks = OrderedDict()
_global_parameter_registration_hooks = OrderedDict()
_global_buffer_registration_hooks = OrderedDict()


def _register(store, hook):
    h = RemovableHandle(store)
    store[h.id] = hook
    return h


def register_module_forward_pre_hook(hook):
    """A forward pre-hook run before every module's own: hook(module, args) -> None or new args."""
    return _register(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook run before every module's own: hook(module, args, output) -> None or new output."""
    h = RemovableHandle(_global_forward_hooks, extra_dict=[_global_forward_hooks_with_kwargs,
                                                           _global_forward_hooks_always_called])
    _global_forward_hooks[h.id] = hook
    if with_kwargs:
        _global_forward_hooks_with_kwargs[h.id] = True
    if always_call:
        _global_forward_hooks_always_called[h.id] = True
    return h


def register_module_full_backward_pre_hook(hook):
    """A backward pre-hook for every module: hook(module, grad_output) -> None or new grad_output."""
    return _register(_global_backward_pre_hooks, hook)


def _backward(hook, full):
    if _global_is_full_backward_hook[0] is (not full):
        raise RuntimeError("Cannot use both regular backward hooks and full backward hooks as a global Module hook. "
                           "Please use only one of them.")
    _global_is_full_backward_hook[0] = full
    return _register(_global_backward_hooks, hook)


def register_module_full_backward_hook(hook):
    """A backward hook for every module: hook(module, grad_input, grad_output) -> None or new grad_input."""
    return _backward(hook, True)


def register_module_backward_hook(hook):
    """The deprecated non-full global backward hook (glassgrad runs it as a full one, as Module's own)."""
    return _backward(hook, False)


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) -> None or a replacement, whenever a submodule is registered."""
    return _register(_global_module_registration_hooks, hook)


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) -> None or a replacement, whenever a parameter is registered."""
    return _register(_global_parameter_registration_hooks, hook)


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) -> None or a replacement, whenever a buffer is registered."""
    return _register(_global_buffer_registration_hooks, hook)


def registered(store, module, name, value):
    """`value` after the global registration hooks in `store` (each may replace it)."""
    for hook in list(store.values()):
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class BackwardHookFunction(Function):
    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if isinstance(a, Tensor) and not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _tensor_positions(values):
    return [i for i, v in enumerate(values) if isinstance(v, Tensor)]


def _wrap(values, pos):
    """Pass the tensors at `pos` of tuple `values` through the identity node; return (new values, node)."""
    outs = BackwardHookFunction.apply(*[values[i] for i in pos])
    if not isinstance(outs, tuple):
        outs = (outs,)
    new = list(values)
    for i, o in zip(pos, outs):
        new[i] = o
    node = next((o.grad_fn for o in outs if o.grad_fn is not None), None)
    return tuple(new), node


class _BackwardHookState:
    def __init__(self, module, n_inputs):
        self.module = module
        self.n_inputs = n_inputs
        self.grad_output = None
        self.input_pos = []

    def _call_full_hooks(self, grad_input):
        m = self.module
        for hook in (*_global_backward_hooks.values(), *m._backward_hooks.values()):
            r = hook(m, grad_input, self.grad_output)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(grad_input):
                    raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(r)}, "
                                       f"but expected {len(grad_input)}")
                grad_input = r
        return grad_input

    def on_output(self, grad_outputs):
        m = self.module
        g = tuple(grad_outputs)
        for hook in (*_global_backward_pre_hooks.values(), *m._backward_pre_hooks.values()):
            r = hook(m, g)
            if r is not None:
                r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                if len(r) != len(g):
                    raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got "
                                       f"{len(r)}, but expected {len(g)}")
                g = r
        self.grad_output = g
        if not self.input_pos:              # no input needs grad: hooks see grad_input of Nones
            self._call_full_hooks((None,) * self.n_inputs)
        return g

    def on_input(self, grad_inputs, grad_outputs):
        full = [None] * self.n_inputs
        for i, gi in zip(self.input_pos, grad_inputs):
            full[i] = gi
        res = self._call_full_hooks(tuple(full))
        return tuple(res[i] for i in self.input_pos)


def call_with_hooks(module, args, kwargs):
    for hid, hook in (*_global_forward_pre_hooks.items(), *module._forward_pre_hooks.items()):
        if hid in module._forward_pre_hooks_with_kwargs:
            r = hook(module, args, kwargs)
            if r is not None:
                if not (isinstance(r, tuple) and len(r) == 2):
                    raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                       f"but got {r}.")
                args, kwargs = r
        else:
            r = hook(module, args)
            if r is not None:
                args = r if isinstance(r, tuple) else (r,)

    state = None
    if (module._backward_hooks or module._backward_pre_hooks or _global_backward_hooks
            or _global_backward_pre_hooks) and grad_state.enabled:
        state = _BackwardHookState(module, len(args))
        pos = [i for i in _tensor_positions(args) if args[i].requires_grad]
        if pos:
            args, node = _wrap(args, pos)
            state.input_pos = pos
            if node is not None:
                node.register_hook(state.on_input)

    try:
        result = module.forward(*args, **kwargs)
    except Exception:
        for hid, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
            if hid in module._forward_hooks_always_called or hid in _global_forward_hooks_always_called:
                try:
                    if hid in module._forward_hooks_with_kwargs or hid in _global_forward_hooks_with_kwargs:
                        hook(module, args, kwargs, None)
                    else:
                        hook(module, args, None)
                except Exception:  # noqa: BLE001  (PyTorch warns and re-raises the forward's error)
                    pass
        raise

    for hid, hook in (*_global_forward_hooks.items(), *module._forward_hooks.items()):
        if hid in module._forward_hooks_with_kwargs or hid in _global_forward_hooks_with_kwargs:
            r = hook(module, args, kwargs, result)
        else:
            r = hook(module, args, result)
        if r is not None:
            result = r

    if state is not None:
        single = isinstance(result, Tensor)
        outs = (result,) if single else result
        if isinstance(outs, tuple):
            pos = [i for i in _tensor_positions(outs) if outs[i].requires_grad]
            if pos:
                outs, node = _wrap(outs, pos)
                if node is not None:
                    node.register_prehook(state.on_output)
                result = outs[0] if single else outs
    return result
