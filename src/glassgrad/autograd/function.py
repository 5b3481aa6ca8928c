"""Custom autograd functions: ``class MyFn(autograd.Function)`` with forward/backward.

The ctx a user's forward receives *is* the backward node (as in PyTorch), an instance of a
class named ``<MyFn>Backward`` made once per Function subclass.
"""
import functools
import warnings

import numpy as np

from .graph import Node, freed_error, edge, check_saved, save_in, save_out
from .saved_hooks import unpack_tensor
from .inplace import check_inplace
from .grad_mode import state, no_grad
from ..backend import _ARRAYS
from .._dtype import from_numpy_dtype
from .._tensor import Tensor, _make

__all__ = ["Function", "FunctionCtx", "once_differentiable", "BackwardCFunction"]


class FunctionCtx:
    """The ctx API (save_for_backward, saved_tensors, needs_input_grad, mark_dirty, ...)."""

    def save_for_backward(self, *tensors):
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} is of type "
                                f"{type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors):
        self._to_save_fwd = tensors

    def mark_dirty(self, *args):
        self._dirty = args

    def mark_non_differentiable(self, *args):
        self._non_diff = args

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is None:
            raise freed_error()
        if saved == ():
            return ()
        out = []
        for s in saved:
            if s is None:
                out.append(None)
                continue
            if len(s) == 3:             # through a saved-tensor unpack hook
                out.append(unpack_tensor(self, s))
                continue
            check_saved(self, s)
            if len(s) == 2:
                out.append(s[0])
            else:                       # a saved output: a Tensor whose grad_fn is this node again
                t = _make(s[0], True, self, s[3])
                t._vc = s[1]
                out.append(t)
        return tuple(out)

    saved_variables = saved_tensors


class BackwardCFunction(Node, FunctionCtx):
    """Node of a custom Function; also its ctx (attributes set by forward live in __dict__)."""
    _forward_cls = None

    def __init__(self, edges):
        Node.__init__(self, edges)
        self._materialize = True
        self._to_save = None
        self._dirty = ()
        self._non_diff = ()
        self.needs_input_grad = ()
        self._n_out = 1
        self._arg_pos = ()     # positions of the tensor args that have edges
        self._n_args = 0
        self._out_meta = ()    # (shape, dtype) of each output, for materialising None grads
        self._in_meta = ()     # (shape, dtype) of each tensor input with an edge

    @property
    def n_outputs(self):
        return self._n_out

    def backward(self, ns, grads):
        cls = self._forward_cls
        if self._saved is None:
            raise freed_error()
        if self._n_out == 1:
            grads = [grads]
        gts = []
        like = None
        for g, (shape, dt) in zip(grads, self._out_meta):
            if g is None and self._materialize:
                if like is None:        # the zeros beside the gradients that came (on their device)
                    like = next((d for d in (ns.data(x) for x in grads if x is not None)
                                 if d.__class__ is not np.ndarray and isinstance(d, _ARRAYS)), False)
                g = np.zeros(shape, dt, like=None if like is False else like)
            gts.append(None if g is None else ns.to_tensor(g) if ns.is_tensor_mode else _make(g))
        res = cls.backward(self, *gts)
        if not isinstance(res, tuple):
            res = (res,)
        name = type(self).__name__
        if len(res) != self._n_args:
            if len(res) > self._n_args and all(r is None for r in res[self._n_args:]):
                res = res[:self._n_args]
            else:
                raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected "
                                   f"{self._n_args}, got {len(res)})")
        if len(self._arg_pos) != self._n_args:
            tpos = set(self._arg_pos)
            for i, r in enumerate(res):
                if r is not None and i not in tpos:
                    raise RuntimeError(f"function {name} returned a gradient different than None at position {i + 1}, "
                                       "but the corresponding forward input was not a Variable")
        out = []
        for k, pos in enumerate(self._arg_pos):
            r = res[pos]
            if r is None or self.next_functions[k][0] is None:
                out.append(None)
                continue
            shape, dt = self._in_meta[k]
            if not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            if tuple(r._data.shape) != tuple(shape):
                try:
                    np.broadcast_shapes(tuple(shape), r._data.shape)
                    ok = np.broadcast_shapes(tuple(shape), r._data.shape) == r._data.shape
                except ValueError:
                    ok = False
                if not ok:
                    raise RuntimeError(f"Function {name} returned an invalid gradient at index {pos} - got "
                                       f"{list(r._data.shape)} but expected shape compatible with {list(shape)}")
                r = r.sum_to_size(tuple(shape)) if ns.is_tensor_mode else _make(ns.sum_to(r._data, tuple(shape)))
            if r._data.dtype != dt:
                r = r.to(_dtype_of(dt))
            out.append(r if ns.is_tensor_mode else r._data)
        return tuple(out)


def _dtype_of(npdt):
    return from_numpy_dtype(npdt)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable functions; call them with ``MyFn.apply(...)``."""

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd functions are all "
                      "static, so you should invoke them on the class itself. Instantiating an autograd function "
                      "will raise an error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please use new-style "
                           "autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        tensor_pos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
        any_rg = state.enabled and any(args[i]._rg for i in tensor_pos)
        ctx = cls._backward_cls(tuple(edge(args[i]) if any_rg else (None, 0) for i in tensor_pos))
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a._rg and state.enabled for a in args)
        ctx._arg_pos = tensor_pos
        ctx._n_args = len(args)
        ctx._in_meta = tuple((args[i]._data.shape, args[i]._data.dtype) for i in tensor_pos)
        custom_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if custom_setup:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        dirty = {id(t) for t in ctx._dirty}
        non_diff = {id(t) for t in ctx._non_diff}
        inputs_by_id = {id(args[i]): args[i] for i in tensor_pos}
        result = []
        out_meta = []
        for i, o in enumerate(outs):
            if not isinstance(o, Tensor):
                result.append(o)
                out_meta.append(((), None))
                continue
            out_meta.append((o._data.shape, o._data.dtype))
            if id(o) in inputs_by_id and id(o) not in dirty:
                alias = _make(o._data)
                alias._vc = o._vc
                o = alias
            if id(o) in dirty:
                if any_rg:
                    if o._rg and o._grad_fn is None:
                        raise RuntimeError("a leaf Variable that requires grad has been used in an in-place "
                                           "operation.")
                    check_inplace(o)
                o._vc[0] += 1
            if any_rg and id(o) not in non_diff and o._data.dtype.kind in "fVc":
                o._grad_fn = ctx
                o._out_nr = i
                o._rg = True
            elif id(o) not in dirty:
                o._rg = False
                o._grad_fn = None
            result.append(o)
        ctx._n_out = len(outs)
        ctx._out_meta = tuple((s, d if d is not None else __import__("numpy").float32) for s, d in out_meta)
        if ctx._to_save is not None:
            # an output is saved without the Tensor itself (output -> ctx -> output would be a cycle)
            outs_nr = {id(o): i for i, o in enumerate(result) if isinstance(o, Tensor) and o._grad_fn is ctx}
            ctx._saved = tuple(None if t is None else save_out(t) if id(t) in outs_nr else save_in(t)
                               for t in ctx._to_save)
        else:
            ctx._saved = ()
        ctx._to_save = None          # drop the references to outputs (no cycle through ctx)
        ctx._dirty = ctx._non_diff = ()
        if not any_rg:
            ctx.next_functions = tuple((None, 0) for _ in tensor_pos)
        return result[0] if single else tuple(result)


def once_differentiable(fn):
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            outputs = fn(ctx, *args)
        if not state.enabled:
            return outputs
        # a gradient computed under create_graph: mark it so that differentiating it fails
        outs = outputs if isinstance(outputs, tuple) else (outputs,)
        if any(isinstance(a, Tensor) and a._rg for a in args):
            marked = []
            for o in outs:
                if isinstance(o, Tensor):
                    # as PyTorch: an alias that requires grad feeds the error node
                    o = _DelayedError.apply(o.detach().requires_grad_(o._data.dtype.kind in "fVc"))
                marked.append(o)
            return tuple(marked) if isinstance(outputs, tuple) else marked[0]
        return outputs
    wrapper._once_differentiable = True
    return wrapper


class _DelayedError(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable")


_DelayedError._backward_cls.__name__ = "DelayedError"
