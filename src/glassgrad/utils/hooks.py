"""torch.utils.hooks: RemovableHandle (the handle every register_*hook returns), unserializable_hook,
warn_if_has_hooks and BackwardHook (torch's helper for Module full backward hooks, for code that wires them by
hand: its tensors pass through nn/modules/_hooks.py's identity BackwardHookFunction, whose nodes call the
hooks; glassgrad's Module.__call__ wires its own hooks in nn/modules/_hooks.py)."""
import warnings

from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks", "BackwardHook"]


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


_NO_INPUT_GRAD = ("Full backward hook is firing when gradients are computed with respect to module outputs since no "
                  "inputs require gradients. See https://docs.pytorch.org/docs/main/generated/torch.nn.Module.html"
                  "#torch.nn.Module.register_full_backward_hook for more details.")


class BackwardHook:
    """Full backward hooks for `module`: ``setup_input_hook(args)`` and ``setup_output_hook(result)`` pass the
    tensors through identity nodes; in backward the output node calls each of `user_pre_hooks` as
    hook(module, grad_output) (a result replaces grad_output) and the input node each of `user_hooks` as
    hook(module, grad_input, grad_output) (a result replaces grad_input).  Non-tensor positions read None."""

    def __init__(self, module, user_hooks, user_pre_hooks):
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.module = module
        self.grad_outputs = None
        self.n_outputs = -1
        self.output_tensors_index = None
        self.n_inputs = -1
        self.input_tensors_index = None

    @staticmethod
    def _pack_with_none(indices, values, size):
        out = [None] * size
        for i, v in zip(indices, values, strict=True):
            out[i] = v
        return tuple(out)

    @staticmethod
    def _unpack_none(indices, values):
        return tuple(values[i] for i in indices)

    def _apply_on_tensors(self, fn, args):
        """`args` with its tensors passed through one identity node (`fn(node)` wires it) when one requires grad
        and grad mode is on; (new args, tensor positions) or (args, None)."""
        from .._tensor import Tensor
        from ..autograd.grad_mode import is_grad_enabled
        from ..nn.modules._hooks import BackwardHookFunction
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (any(args[i].requires_grad for i in index) and is_grad_enabled()):
            return args, None
        new = BackwardHookFunction.apply(*[args[i] for i in index])
        new = new if isinstance(new, tuple) else (new,)
        if len(new) == 0:
            raise RuntimeError("Cannot set Module backward hook for a Module with no input Tensors.")
        nodes = [t.grad_fn for t in new if t.grad_fn is not None and t.grad_fn.name() == "BackwardHookFunctionBackward"]
        if not nodes:
            raise RuntimeError("Error while setting up backward hooks. Please open an issue with a code sample to "
                               "reproduce this.")
        fn(nodes[0])
        items = list(args)
        for i, v in zip(index, new, strict=True):
            items[i] = v
        return (tuple(items) if type(args) is tuple else type(args)(*items)), index

    def _input_hook(self, grad_input, _):
        if self.grad_outputs is None:
            return None
        res = self._pack_with_none(self.input_tensors_index, grad_input, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(out)}, but "
                                   f"expected {len(res)}")
            res = out
        self.grad_outputs = None
        return self._unpack_none(self.input_tensors_index, res)

    def setup_input_hook(self, args):
        res, index = self._apply_on_tensors(lambda node: node.register_hook(self._input_hook), args)
        self.n_inputs = len(args)
        self.input_tensors_index = index
        return res

    def _output_hook(self, _, grad_output):
        self.grad_outputs = self._pack_with_none(self.output_tensors_index, grad_output, self.n_outputs)
        for pre in self.user_pre_hooks:
            out = pre(self.module, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(self.grad_outputs):
                raise RuntimeError(f"Backward pre hook returned an invalid number of grad_output, got {len(out)}, "
                                   f"but expected {len(self.grad_outputs)}")
            self.grad_outputs = out
        local = self.grad_outputs
        if self.input_tensors_index is None:
            warnings.warn(_NO_INPUT_GRAD, stacklevel=5)
            grad_inputs = self._pack_with_none([], [], self.n_inputs)
            for hook in self.user_hooks:
                r = hook(self.module, grad_inputs, self.grad_outputs)
                if r is not None and not (isinstance(r, tuple) and all(v is None for v in r)):
                    raise RuntimeError("Backward hook for Modules where no input requires gradient should always "
                                       "return None or None for all gradients.")
            self.grad_outputs = None
        if local is not None:
            return tuple(local[i] for i in self.output_tensors_index)
        return None

    def setup_output_hook(self, args):
        single = not isinstance(args, tuple)
        args = (args,) if single else args
        res, index = self._apply_on_tensors(lambda node: node.register_hook(self._output_hook), args)
        self.n_outputs = len(args)
        self.output_tensors_index = index
        return res[0] if single else res
