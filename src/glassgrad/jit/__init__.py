"""torch.jit without TorchScript: glassgrad has no TorchScript compiler or interpreter, so `script`,
`trace` and `trace_module` hand back the code itself, which runs eagerly with the same results (a module is
returned as it is, marked so that ``isinstance(m, torch.jit.ScriptModule)`` holds; a function comes back as a
`ScriptFunction` calling it).  `trace` runs the example inputs once, as torch's does (`is_tracing()` is True
meanwhile).  The decorators (`ignore`, `unused`, `export`, `interface`) and `annotate` / `Final` / `isinstance`
behave as they do in eager torch; `fork` / `wait` run the call at once; `freeze` / `optimize_for_inference`
check what torch checks and return the module.  There is no TorchScript archive to write or read:
`save` / `load` raise RuntimeError saying so (use torch.save / torch.load of a state_dict).
"""
import contextlib
import functools
import os
import typing
import warnings

from ._future import Future

__all__ = ["Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule", "annotate",
           "enable_onednn_fusion", "export", "fork", "freeze", "interface", "ignore", "isinstance", "load",
           "onednn_fusion_enabled", "optimize_for_inference", "save", "script", "script_if_tracing",
           "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait", "is_scripting",
           "is_tracing", "Final", "TracerWarning", "optimized_execution", "fuser", "script_method"]

Final = typing.Final
_builtin_isinstance = isinstance
_state = {"tracing": 0, "onednn": False, "fusion": [("STATIC", 2), ("DYNAMIC", 10)]}
_MARK = "_glassgrad_jit"      # on a module script / trace returned: "script" or "trace"


class Error(Exception):
    """torch.jit.Error: what a TorchScript program raises (glassgrad runs Python, which raises its own)."""


class TracerWarning(Warning):
    pass


class _ScriptModuleMeta(type):
    def __instancecheck__(cls, obj):
        return getattr(obj, "__dict__", {}).get(_MARK) is not None and (
            cls is ScriptModule or obj.__dict__[_MARK] == "trace")


class ScriptModule(metaclass=_ScriptModuleMeta):
    """What `script` / `trace` return for an nn.Module: the module itself (isinstance checks see the mark)."""


class TracedModule(ScriptModule):
    pass


class ScriptFunction:
    """A scripted or traced function: calls it (eagerly)."""

    def __init__(self, fn, name=None):
        functools.update_wrapper(self, fn)
        self.name = name or getattr(fn, "__name__", "fn")
        self._fn = fn

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __repr__(self):
        return f"<glassgrad.jit.ScriptFunction {self.name} (eager)>"


def _nn_module():
    from ..nn import Module
    return Module


def _deprecated(what, instead="Please switch to `torch.compile` or `torch.export`."):
    warnings.warn(f"`torch.jit.{what}` is deprecated. {instead}", DeprecationWarning, stacklevel=3)


def _mark(mod, kind):
    mod.__dict__[_MARK] = kind
    return mod


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """The object itself, runnable eagerly: a module (marked a ScriptModule), a class, or a ScriptFunction."""
    _deprecated("script")
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with torch.jit.optimized_execution()` "
                      "instead", FutureWarning, stacklevel=2)
    if _builtin_isinstance(obj, (ScriptModule, ScriptFunction)) or _builtin_isinstance(obj, type):
        return obj
    if _builtin_isinstance(obj, _nn_module()):
        return _mark(obj, "script")
    if callable(obj):
        return ScriptFunction(obj)
    return obj          # a dict / list (torch's ScriptDict / ScriptList behave as the container)


@contextlib.contextmanager
def _tracing():
    _state["tracing"] += 1
    try:
        yield
    finally:
        _state["tracing"] -= 1


def _run_example(fn, example_inputs, kwarg_inputs=None):
    with _tracing():
        if kwarg_inputs is not None:
            return fn(**kwarg_inputs)
        if _builtin_isinstance(example_inputs, tuple):
            return fn(*example_inputs)
        return fn(example_inputs)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """Runs `func` once on the example inputs (as torch's tracer does) and returns it, runnable eagerly."""
    _deprecated("trace")
    if example_inputs is None and example_kwarg_inputs is None:
        raise TypeError("'NoneType' object is not iterable")          # torch's, for no example inputs
    if example_kwarg_inputs is not None and not _builtin_isinstance(example_kwarg_inputs, dict):
        raise TypeError("example_kwarg_inputs should be a dict")
    if _builtin_isinstance(func, _nn_module()):
        _run_example(func, example_inputs, example_kwarg_inputs)
        return _mark(func, "trace")
    _run_example(func, example_inputs, example_kwarg_inputs)
    return func if _builtin_isinstance(func, ScriptFunction) else ScriptFunction(func)


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """Runs each named method of `mod` on its example inputs ({method name: inputs}); returns `mod`."""
    _deprecated("trace_method")
    if not _builtin_isinstance(mod, _nn_module()):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not _builtin_isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    for name, example in inputs.items():
        method = getattr(mod, name) if name != "forward" else mod
        _run_example(method, example, example if example_inputs_is_kwarg else None)
    return _mark(mod, "trace")


def is_scripting():
    """False: glassgrad never compiles TorchScript (code under ``if not is_scripting()`` always runs)."""
    return False


def is_tracing():
    """True while `trace` / `trace_module` run their example inputs."""
    return _state["tracing"] > 0


def annotate(the_type, the_value):
    return the_value


def ignore(drop=False, **kwargs):
    """@ignore / @ignore(drop=True): leaves the function as it is (it is Python either way here)."""
    if callable(drop):
        return drop
    return lambda fn: fn


def unused(fn):
    return fn


def export(fn):
    fn._torchscript_modifier = "export"
    return fn


def interface(obj):
    return obj


def script_method(fn):
    return fn


def script_if_tracing(fn):
    return fn


def _overload(fn):
    return fn


def _overload_method(fn):
    return fn


def Attribute(value, type=None):  # noqa: A002  (torch's parameter name)
    """Outside TorchScript, torch.jit.Attribute(value, type) is the value."""
    return value


def fork(func, *args, **kwargs):
    """Runs func(*args, **kwargs) now; a completed Future holding its result (or its exception)."""
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as e:        # torch's fork hands the error to wait()
        fut.set_exception(e)
    return fut


def wait(future):
    return future.wait()


def isinstance(obj, target_type):  # noqa: A001  (torch.jit.isinstance)
    """torch.jit.isinstance: isinstance that also checks the element types of List / Dict / Tuple / Optional."""
    origin = typing.get_origin(target_type)
    args = typing.get_args(target_type)
    if origin is None:
        return _builtin_isinstance(obj, target_type)
    if origin is typing.Union:
        return any(isinstance(obj, a) for a in args)
    if not _builtin_isinstance(obj, origin):
        return False
    if origin is list:
        return all(isinstance(v, args[0]) for v in obj) if args else True
    if origin is dict:
        return all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items()) if args else True
    if origin is tuple:
        return len(obj) == len(args) and all(isinstance(v, a) for v, a in zip(obj, args)) if args else True
    return True


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """torch's checks (a ScriptModule, in eval mode), then the module: eager code has nothing to fold."""
    _deprecated("freeze", "Please use `torch.compile` instead.")
    if not _builtin_isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or "
                           "torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return mod


def optimize_for_inference(mod, other_methods=None):
    """torch's check (a ScriptModule); puts the module in eval mode (as torch's freezes it) and returns it."""
    if not _builtin_isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please use torch.jit.script "
                           "or torch.jit.trace to script your 'nn.Module'.")
    return freeze(mod.eval(), preserved_attrs=other_methods)


def save(m, f, _extra_files=None):
    raise RuntimeError("torch.jit.save: glassgrad has no TorchScript, so there is no compiled program to write "
                       "into a TorchScript archive; save the weights with torch.save(model.state_dict(), f) "
                       "instead")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False, **kwargs):
    if _builtin_isinstance(f, (str, os.PathLike)):
        if not os.path.exists(f):
            raise ValueError(f"The provided filename {f} does not exist")
        if os.path.isdir(f):
            raise ValueError(f"The provided filename {f} is a directory")
    raise RuntimeError("torch.jit.load: glassgrad has no TorchScript interpreter, so it cannot run the compiled "
                       "program a TorchScript archive holds; load a state_dict saved with torch.save into the "
                       "model's Python class instead")


class CompilationUnit:
    """torch.jit.CompilationUnit: TorchScript source can't be compiled here (no TorchScript)."""

    def __init__(self, lang=None, _frames_up=0):
        if lang is not None:
            raise RuntimeError("torch.jit.CompilationUnit: glassgrad has no TorchScript compiler for the source "
                               "given")


def enable_onednn_fusion(enabled):
    _state["onednn"] = bool(enabled)


def onednn_fusion_enabled():
    return _state["onednn"]


def set_fusion_strategy(strategy):
    """Stores the strategy (a list of ("STATIC" | "DYNAMIC", depth)) and returns the previous one."""
    old, _state["fusion"] = _state["fusion"], list(strategy)
    return old


@contextlib.contextmanager
def optimized_execution(should_optimize):
    yield


@contextlib.contextmanager
def fuser(name):
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002  (torch raises Exception)
    yield


class strict_fusion:
    """A no-op block: nothing is fused in eager code."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
