"""torch.library.custom_op and infer_schema (the public face is library.py).

A CustomOpDef is an operator in ``_op_registry`` whose ``Autograd`` kernel is ``_dispatch``: the kernel for the
inputs' device (``register_kernel``) or the decorated function, run without recording a graph; when an input
requires grad, through an autograd.Function named as torch's node (``GeneratedBackwardFor_ns_name_default``,
whose node prints ``...Backward``) that calls the registered ``setup_context`` and ``backward`` -- or, with none
registered, refuses to backward with torch's error. An output that is (or views) an input raises torch's
aliasing error.
"""
import inspect
import sys
import threading
import typing
from collections.abc import Sequence

from . import _op_registry as _reg
from ._device import device as _device
from ._dtype import dtype as _dtype
from ._tensor import Tensor
from .types import Number

__all__ = ["CustomOpDef", "custom_op", "infer_schema"]

_CUSTOM = {}     # "ns::name" -> CustomOpDef


def _derived(base, cpp, list_base, optional_base_list, optional_list_base):
    out = [(base, cpp), (typing.Optional[base], f"{cpp}?")]

    def seqs(t):
        return (typing.Sequence[t], typing.List[t], Sequence[t], list[t])  # noqa: UP006
    if list_base:
        out += [(s, f"{cpp}[]") for s in seqs(base)]
    if optional_base_list:
        out += [(s, f"{cpp}?[]") for s in seqs(typing.Optional[base])]
    if optional_list_base:
        out += [(typing.Optional[s], f"{cpp}[]?") for s in seqs(base)]
    return out


_PARAM_TYPES = dict(p for row in ((Tensor, "Tensor", True, True, False), (int, "SymInt", True, False, True),
                                  (float, "float", True, False, True), (bool, "bool", True, False, True),
                                  (str, "str", False, False, False), (Number, "Scalar", True, False, False),
                                  (_dtype, "ScalarType", False, False, False), (_device, "Device", False, False, False))
                    for p in _derived(*row))
_RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",  # noqa: UP006
                 int: "SymInt", float: "float", bool: "bool", Number: "Scalar"}


def _default_repr(v, fail, name):
    if v is None or isinstance(v, (int, float, bool)):
        return str(v)
    if isinstance(v, (str, _device)):
        return f'"{v}"'
    if isinstance(v, _dtype):
        return str(v)[len("torch."):]
    fail(f"Parameter {name} has an unsupported default value type {type(v)}. Please file an issue on GitHub so we "
         "can prioritize this.")


def _return_schema(ann, fail):
    if ann is None:
        return "()"
    if ann is inspect.Parameter.empty:
        fail("No return type annotation was provided. Please add one.")
    if typing.get_origin(ann) is not tuple:
        if ann not in _RETURN_TYPES:
            fail(f"Return has unsupported type {ann}. The valid types are: {_RETURN_TYPES}.")
        return _RETURN_TYPES[ann]
    args = typing.get_args(ann)
    for a in args:
        if a not in _RETURN_TYPES:
            fail(f"Return has unsupported type {ann}. The valid types are: {_RETURN_TYPES}.")
    inner = ", ".join(_RETURN_TYPES[a] for a in args)
    return f"(({inner}))" if len(args) == 1 else f"({inner})"


def infer_schema(prototype_function, /, *, mutates_args, op_name=None):
    """The operator schema of a type-annotated function, e.g. ``(Tensor x, SymInt n=2) -> Tensor``."""
    sig = inspect.signature(prototype_function)

    def fail(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    hints = typing.get_type_hints(prototype_function) if any(
        isinstance(p.annotation, str) for p in sig.parameters.values()) else {}
    params, seen, kw = [], set(), False
    for idx, (name, p) in enumerate(sig.parameters.items()):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            fail("We do not support positional-only args, varargs, or varkwargs.")
        if p.kind == p.KEYWORD_ONLY and not kw:
            params.append("*")
            kw = True
        if p.annotation is p.empty:
            fail(f"Parameter {name} must have a type annotation.")
        ann = hints.get(name, p.annotation)
        if ann not in _PARAM_TYPES:
            if typing.get_origin(ann) is tuple:
                fail(f"Parameter {name} has unsupported type {p.annotation}. We do not support Tuple inputs in "
                     "schema. As a workaround, please try to use List instead. \n\nThe valid types are: "
                     f"{_PARAM_TYPES.keys()}.")
            fail(f"Parameter {name} has unsupported type {p.annotation}. The valid types are: "
                 f"{_PARAM_TYPES.keys()}.")
        ty = _PARAM_TYPES[ann]
        if type(mutates_args) is str:
            if mutates_args != "unknown":
                raise ValueError("mutates_args must either be a sequence of the names of the arguments that are "
                                 "mutated or the string 'unknown'. ")
            if ty.startswith("Tensor"):
                ty = f"Tensor(a{idx}!){ty[len('Tensor'):]}"
        elif name in mutates_args:
            if not ty.startswith("Tensor"):
                fail(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be mutated")
            ty = f"Tensor(a{idx}!){ty[len('Tensor'):]}"
        seen.add(name)
        params.append(f"{ty} {name}" if p.default is p.empty else f"{ty} {name}={_default_repr(p.default, fail, name)}")
    if mutates_args != "unknown":
        unseen = set(mutates_args) - seen
        if unseen:
            fail(f"{unseen} in mutates_args were not found in the custom op's signature. mutates_args should contain "
                 "the names of all args that the custom op mutates, or just the string 'unknown' if you don't know.")
    ret = _return_schema(typing.get_type_hints(prototype_function).get("return", sig.return_annotation)
                         if isinstance(sig.return_annotation, str) else sig.return_annotation, fail)
    return f"{op_name or ''}({', '.join(params)}) -> {ret}"


def _tensors(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, Tensor))


def _shares(a, b):
    import numpy as np
    return a is b or np.may_share_memory(a._data, b._data)


class CustomOpDef:
    """The operator ``custom_op`` makes: call it like the function; ``torch.ops.<ns>.<name>`` is the same op."""

    def __init__(self, namespace, name, schema, fn, device_types):
        self._namespace, self._name, self._init_fn = namespace, name, fn
        self._qualname = f"{namespace}::{name}"
        self._backward_fn = self._setup_context_fn = None
        self._fake_fn = None
        self._kernels = {}
        self._local = threading.local()
        parsed = _reg.FunctionSchema(f"{name}{schema}")
        if any(a.kwarg_only and a.type.startswith("Tensor") for a in parsed.arguments):
            raise NotImplementedError(f"custom_op with kwarg-only Tensor args. Please make your tensors not "
                                      f"kwarg-only. Got: {name}{schema}")
        old = _CUSTOM.pop(self._qualname, None)
        if old is not None:                              # torch lets a custom op be redefined
            _reg._OPS.pop(self._qualname, None)
            _reg.namespace(namespace)._packets.pop(name, None)
        self._opoverload = _reg.define(self._qualname, f"{self._qualname}{schema}")
        self._schema = self._opoverload._schema
        self._opoverload._kernels["Autograd"] = self._dispatch
        self.register_kernel(device_types)(fn)          # device_types None: the kernel for every device
        self._autograd_cls = self._make_function()
        _CUSTOM[self._qualname] = self

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    # -- registration --
    def register_kernel(self, device_types, fn=None, /):
        """Run ``fn`` instead of the function for inputs on these device types."""
        types = [device_types] if isinstance(device_types, str) or device_types is None else list(device_types)
        types = [None if t is None else _device(t).type for t in types]

        def register(f):
            for t in types:
                self._kernels[t] = f
            return f
        args = self._schema.arguments
        if device_types is not None and not any(a.type.startswith("Tensor") for a in args):
            if not any(a.type.rstrip("?") == "Device" for a in args):
                raise ValueError("Functions without tensor inputs are required to have a `device: torch.device` "
                                 "argument")
        return register if fn is None else register(fn)

    def register_fake(self, fn, /):
        """The op's fake (shape) implementation: kept; glassgrad runs eagerly and never traces."""
        self._fake_fn = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """``setup_context(ctx, inputs, output)`` saves what ``backward(ctx, *grads)`` needs; backward returns a
        gradient per positional input (None for non-Tensors)."""
        self._backward_fn, self._setup_context_fn = backward, setup_context

    def register_autocast(self, device_type, cast_inputs):
        """Inside autocast for ``device_type``, floating inputs (float64 excepted) cast to ``cast_inputs``."""
        from .amp.autocast_mode import is_autocast_available
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if not is_autocast_available(device_type):
            raise ValueError(f"Device type '{device_type}' does not support autocast.")
        self._opoverload._autocast[device_type] = cast_inputs

        def kernel(*args, **kwargs):
            return self._opoverload(*args, **kwargs)
        return kernel

    # -- calling --
    def _kernel(self, args, kwargs):
        values = (*args, *(kwargs.get(a.name) for a in self._schema.arguments[len(args):]))
        dev = next((t.device.type for t in _tensors(values)), None)
        if dev is None:                       # no tensor inputs: the `device` argument decides
            dev = next((_device(v).type for a, v in zip(self._schema.arguments, values)
                        if a.type.rstrip("?") == "Device" and v is not None), "cpu")
        fn = self._kernels.get(dev, self._kernels.get(None))
        if fn is None:
            raise NotImplementedError(
                f"Could not run '{self._qualname}' with arguments from the '{dev.upper()}' backend. This could be "
                "because the operator doesn't exist for this backend, or was omitted during the selective/custom "
                "build process (if using custom build).")
        return fn

    def _run(self, args, kwargs):
        from .autograd.grad_mode import no_grad
        with no_grad():
            out = self._kernel(args, kwargs)(*args, **kwargs)
        for a, v in zip(self._schema.arguments, (*args, *(kwargs.get(a.name) for a in self._schema.arguments[len(args):]))):
            if a.mutable:                           # torch bumps a declared mutated input's version once more
                for t in _tensors((v,)):
                    t._vc[0] += 1
        outs = out if isinstance(out, (tuple, list)) else (out,)
        ins = list(_tensors((*args, *kwargs.values())))
        seen = []
        for o in _tensors(outs):
            if any(_shares(o, t) for t in ins + seen):
                raise RuntimeError(
                    f"{self._name} (with implementation in {sys.modules[__name__]}): The output of this "
                    "custom operator (1) must not also be an input to this custom operator and (2) may not alias any "
                    "inputs to this custom operator or other returns. The most common way to trigger this error is "
                    "if we have y = custom_op(x) and y and x are the same Tensor. Please instead return a clone of "
                    "the offending output tensor(s) (e.g. return x.clone()) or refactor the custom operator to not "
                    "return y.")
            seen.append(o)
        return out

    def _dispatch(self, *args, **kwargs):
        from .autograd.grad_mode import is_grad_enabled
        if not (is_grad_enabled() and any(t.requires_grad for t in _tensors((*args, *kwargs.values())))):
            return self._run(args, kwargs)
        # a list of tensors is spread into the Function's inputs (each gets its gradient) and regrouped inside
        layout = [type(a) if isinstance(a, (list, tuple)) and any(isinstance(t, Tensor) for t in a) else None
                  for a in args]
        flat = []
        for a, kind in zip(args, layout):
            if kind is None:
                flat.append(a)
            else:
                flat.append(len(a))
                flat.extend(a)
        self._local.kwargs, self._local.layout = kwargs, layout
        out = self._autograd_cls.apply(*flat, **kwargs)
        return list(out) if isinstance(out, tuple) and self._schema.returns.startswith("Tensor[]") else out

    def _make_function(self):
        from .autograd.function import Function
        op = self
        label = f"{self._namespace}.{self._name}.default"

        def regroup(flat, layout):
            args, i = [], 0
            for kind in layout:
                if kind is None:
                    args.append(flat[i])
                    i += 1
                else:
                    n = flat[i]
                    args.append(kind(flat[i + 1:i + 1 + n]))
                    i += 1 + n
            return tuple(args)

        def forward(*flat, **kwargs):
            return op._run(regroup(flat, op._local.layout), kwargs)

        def setup_context(ctx, inputs, output):
            ctx._gg_layout = layout = op._local.layout
            ctx._gg_sizes = [len(a) if k is not None else 0 for a, k in zip(regroup(inputs, layout), layout)]
            fn = op._setup_context_fn
            if fn is None:
                return
            inputs = regroup(inputs, layout)
            if len(inspect.signature(fn).parameters) == 4:
                fn(ctx, inputs, dict(op._local.kwargs), output)
            else:
                fn(ctx, inputs, output)

        def backward(ctx, *grads):
            if op._backward_fn is None:
                raise RuntimeError(f"Trying to backward through {label} but no autograd formula was registered. "
                                   "Please use register_autograd to add one.")
            res = op._backward_fn(ctx, *grads)
            res = res if isinstance(res, tuple) else (res,)
            layout = ctx._gg_layout
            if any(kind is not None for kind in layout):       # nested inputs: torch compares the structures
                from .utils._pytree import tree_structure
                want = tree_structure((*(None if k is None else k([0] * n) for k, n in zip(layout, ctx._gg_sizes)),
                                       None))
                got = tree_structure((*res, None))
                if got != want:
                    raise RuntimeError("Expected the return from backward to be of the same structure as the inputs. "
                                       f"Got: {got} (return from backward), {want} (inputs)")
            if len(res) != len(layout):
                raise RuntimeError(f"function {type(ctx).__name__} returned an incorrect number of gradients "
                                   f"(expected {len(layout) + 1}, got {len(res) + 1})")  # torch counts an extra input
            flat = []
            for r, kind in zip(res, layout):
                if kind is None:
                    flat.append(r)
                else:
                    flat.append(None)                  # the list's length
                    flat.extend(r)
            return tuple(flat)

        name = f"GeneratedBackwardFor_{self._namespace}_{self._name}_default"
        return type(name, (Function,), {"forward": staticmethod(forward), "backward": staticmethod(backward),
                                        "setup_context": staticmethod(setup_context)})


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Make ``fn`` (type-annotated) the operator ``name`` ("ns::opname"); as a decorator when fn is omitted."""
    def inner(f):
        ns, _, opname = name.partition("::")
        if not opname:
            raise ValueError(f'Expected `qualname` to be of the form "namespace::name", but got {name}. The qualname '
                             "passed to the torch.library APIs must consist of a namespace and a name, e.g. aten::sin")
        sch = infer_schema(f, mutates_args=mutates_args) if schema is None else schema
        return CustomOpDef(ns, opname, sch, f, device_types)
    return inner if fn is None else inner(fn)
