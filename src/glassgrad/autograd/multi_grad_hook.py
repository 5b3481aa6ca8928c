"""torch.autograd.graph.register_multi_grad_hook (re-exported by graph.py), written as torch writes it: one
tensor hook per tensor; the hooks of one backward (keyed by the engine's graph task id) count the gradients
that arrived against the number of the tensors' nodes the engine will run (``engine.will_execute``)."""
import functools
import threading
from collections import defaultdict

from . import engine as _engine
from .graph import RemovableHandle, edge

__all__ = ["register_multi_grad_hook"]


class _MultiHandle(RemovableHandle):
    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = handles
        self._store = None
        self._extra = ()
        self.id = None

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __getstate__(self):
        return self.handles

    def __setstate__(self, state):
        self.handles = state


def _grad_fn_or_grad_acc(t):
    if t.requires_grad and t.grad_fn is None:
        return edge(t)[0]           # the leaf's AccumulateGrad (kept alive by the closure, as torch's)
    return t.grad_fn


def _task_id():
    gid = _engine.current_graph_task_id()
    if gid == -1:
        raise AssertionError("expected this hook to be called inside a backward call")
    return gid


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call `fn` once per backward: ``"all"``: with the gradients of all of `tensors` (None where the backward
    computes none) once the last one is computed; ``"any"``: with the first gradient computed."""
    supported_modes = ("all", "any")
    lock = threading.Lock()
    if mode not in supported_modes:
        raise ValueError(f"Expects mode to be one of {supported_modes} but got {mode}")
    if mode == "all":
        count, buffer, nb_calls = {}, {}, [None]
        grad_fns = list(map(_grad_fn_or_grad_acc, tensors))
        n = len(tensors)

        def get_inner_hook(idx):
            def inner_hook(grad):
                gid = _task_id()
                count[gid] = count.get(gid, 0)
                buffer[gid] = buffer.get(gid, [None] * n)
                with lock:
                    curr, count[gid] = count[gid], count[gid] + 1
                    if curr == 0:
                        nb_calls[0] = sum(map(_engine.will_execute, grad_fns))
                buffer[gid][idx] = grad
                if curr == nb_calls[0] - 1:
                    fn(buffer[gid])
                    del count[gid]
                    del buffer[gid]
            return inner_hook
        handles = tuple(t.register_hook(get_inner_hook(i)) for i, t in enumerate(tensors))
    else:
        ran_hook = defaultdict(bool)

        @functools.wraps(fn)
        def wrapped_fn(grad):
            gid = _task_id()
            with lock:
                prev, ran_hook[gid] = ran_hook[gid], True
            if prev:
                return
            fn(grad)
        handles = tuple(t.register_hook(wrapped_fn) for t in tensors if t.requires_grad)
    return _MultiHandle(handles)
