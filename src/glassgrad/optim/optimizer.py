"""torch.optim.Optimizer: parameter groups, per-parameter state, state_dict, hooks.

The update rules of the concrete optimizers follow PyTorch's single-tensor CPU code paths and work directly on
the NumPy arrays behind the parameters (``p._data``) and their state tensors, in place (the parameter objects
are kept; version counters are bumped once per in-place op PyTorch performs).  PyTorch's vectorised CPU kernels
for ``add(alpha=)``, ``addcmul`` and ``lerp`` are fused multiply-adds (one rounding); the helpers below
reproduce that for float32 by computing the fused step in float64 (the product of two float32 values is exact
there) and for float64 through long double where the platform has it, so float32 trajectories usually agree
with PyTorch bit for bit.  (PyTorch's float32 ``sqrt`` is not correctly rounded in ~0.5% of cases; optimizers
that take square roots can therefore differ from it by an ulp now and then.)
"""
import functools
import warnings
from collections import OrderedDict, defaultdict
from copy import deepcopy
from itertools import chain

import numpy as np

from .. import _blas
from ..backend import _ARRAYS, as_strided, contiguous
from .._tensor import Tensor, _make
from ..autograd.graph import RemovableHandle
from ..autograd.grad_mode import enable_grad
from ..autograd.grad_mode import state as _grad_state

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton marking a default that every parameter group must supply."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_pre_hooks = OrderedDict()
_global_post_hooks = OrderedDict()


def register_optimizer_step_pre_hook(hook):
    handle = RemovableHandle(_global_pre_hooks)
    _global_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    handle = RemovableHandle(_global_post_hooks)
    _global_post_hooks[handle.id] = hook
    return handle


def _typename(obj):
    if isinstance(obj, Tensor):
        return f"torch.{obj.dtype._legacy}"
    return type(obj).__name__


def _to_scalar(x):
    if isinstance(x, Tensor):
        return x.item()
    return x


# ---------------------------------------------------------------------------------------------------------
# array kernels (in place on ndarrays; scalars are rounded to the array dtype first, as ATen does)

def _sc(v, dt):
    return dt.type(v)


_WIDE = {np.dtype(np.float32): np.float64, np.dtype(np.float16): np.float64}
if np.finfo(np.longdouble).nmant > 52:  # x86 extended precision: near-exact fma for float64
    _WIDE[np.dtype(np.float64)] = np.longdouble


_BLOCK = 1 << 14


def blockwise(fn, out, *args):
    """``fn(out, *args)``, elementwise kernels on big arrays run block by block: when `out` and every array
    in `args` are C-contiguous with out's shape, fn runs on matching slices of 16K elements, so its
    temporaries stay in cache (and small) instead of streaming whole parameter-sized arrays through memory
    once per NumPy call.  Other arguments (scalars) pass through.  Elementwise results are the same either
    way.  Host arrays only: a device array (CuPy) is one kernel launch, in one piece.  Returns `out`."""
    n = out.size
    if n >= 4 * _BLOCK and out.__class__ is np.ndarray and out.flags.c_contiguous:
        flat = []
        for a in args:
            if isinstance(a, np.ndarray) and a.ndim:
                if a.shape != out.shape or not a.flags.c_contiguous:
                    break
                flat.append(a.reshape(-1))
            else:
                flat.append(None)
        else:
            o = out.reshape(-1)
            for s in range(0, n, _BLOCK):
                e = s + _BLOCK
                fn(o[s:e], *[a if f is None else f[s:e] for a, f in zip(args, flat)])
            return out
    fn(out, *args)
    return out


def _result(dt, *args):
    shapes = [np.shape(a) for a in args]
    like = None
    for a in args:                          # allocated beside the update's arrays (host or device)
        if a.__class__ is np.ndarray:
            break
        if like is None and isinstance(a, _ARRAYS):
            like = a
    return np.empty(np.broadcast_shapes(*shapes), dt, like=like)


def _fma_kernel(o, a, b, c):
    w = _WIDE[o.dtype]
    if w is np.longdouble and o.__class__ is not np.ndarray:
        w = np.float64                      # CuPy has no long double: float64 on the device rounds twice
    r = np.multiply(a, b, dtype=w)          # one wide temporary; a, b and c are widened on the fly
    if isinstance(r, np.ndarray) and r.shape == np.shape(c):
        np.add(r, c, out=r, dtype=w)
    else:
        r = np.add(r, c, dtype=w)
    np.copyto(o, r, casting="unsafe")


def _fma(a, b, c, dt, out=None):
    """a * b + c rounded (almost always) once, as ATen's vectorised fused multiply-add: float32 through float64
    (the product is exact there), float64 through long double where the platform has it.  `out` may be
    one of the operands (the update is elementwise)."""
    if np.dtype(dt) not in _WIDE:
        r = a * b + c
        if out is None:
            return r
        np.copyto(out, r, casting="unsafe")
        return out
    if out is None:
        out = _result(dt, a, b, c)
    return blockwise(_fma_kernel, out, a, b, c)


def _axpy(a, y, x, out):
    """out = x + a * y through BLAS axpy (fused, in place) when the arrays allow it, else None -- with
    nothing written, so the caller's NumPy path still sees its inputs (`out` may be one of them)."""
    if not (isinstance(y, np.ndarray) and y.shape == x.shape) or out is y:
        return None
    if not _blas.axpy_ready(y, x if out is None else out):
        return None
    o = x if out is x else x.copy() if out is None else out
    if o is not x:
        np.copyto(o, x)
    return o if _blas.axpy(a, y, o) else None


def add_alpha(x, y, alpha, out=None):
    """x + alpha * y, like Tensor.add(y, alpha=alpha) (into `out` if given: x.add_(y, alpha=alpha))."""
    dt = x.dtype
    if alpha == 1:
        return np.add(x, y, out=out)
    a = _sc(alpha, dt)
    r = _axpy(a, y, x, out)
    return r if r is not None else _fma(y, a, x, dt, out)


def _addcmul_kernel(o, x, t1, t2, value):
    _fma_kernel(o, np.multiply(t1, value), t2, x)


def addcmul(x, t1, t2, value, out=None):
    """x + value * t1 * t2 (ATen: the fused step multiplies value * t1 first)."""
    dt = x.dtype
    v = _sc(value, dt)
    if np.dtype(dt) not in _WIDE:
        return _fma(v * t1, t2, x, dt, out)
    if out is None:
        out = _result(dt, x, t1, t2)
    return blockwise(_addcmul_kernel, out, x, t1, t2, v)


def _addcdiv_kernel(o, x, t1, t2, value):
    t = np.multiply(t1, value)
    t /= t2
    np.add(x, t, out=o)


def addcdiv(x, t1, t2, value, out=None):
    """x + value * t1 / t2."""
    dt = x.dtype
    v = _sc(value, dt)
    if out is None:
        out = _result(np.result_type(x, t1, t2), x, t1, t2)
    return blockwise(_addcdiv_kernel, out, x, t1, t2, v)


def lerp(x, end, w, out=None):
    """x + w * (end - x), ATen's two-sided form (exact at both ends)."""
    dt = x.dtype
    w = _sc(w, dt)
    if isinstance(end, np.ndarray) and end.shape == x.shape and dt in _WIDE:
        diff = end - x                          # BLAS axpy: fused, like ATen's two-sided lerp
        r = _axpy(w, diff, x, out) if w < 0.5 else _axpy(-(dt.type(1) - w), diff, end, out)
        if r is not None:
            return r
    if out is None:
        out = _result(dt, x, end)
    return blockwise(_lerp_kernel, out, x, end, w)


def _lerp_kernel(o, x, end, w):
    dt = o.dtype
    diff = end - x
    if w < 0.5:
        _fma_kernel(o, w, diff, x) if dt in _WIDE else np.copyto(o, w * diff + x)
    else:
        np.negative(diff, out=diff)
        _fma_kernel(o, diff, dt.type(1) - w, end) if dt in _WIDE else np.copyto(o, diff * (dt.type(1) - w) + end)


def setv(t, arr, ops=1):
    """Write `arr` into tensor `t` in place; bump its version counter once per in-place op PyTorch does."""
    d = t._data
    if arr is not d:
        np.copyto(d, arr, casting="unsafe")
    t._vc[0] += ops


def zeros_state(p):
    return _make(np.zeros_like(p._data))


def _scalar_dtype():
    """torch's _get_scalar_dtype(): float64 when the default dtype is float64, else float32."""
    from .._dtype import _default, float64
    return np.float64 if _default[0] is float64 else np.float32


def step_tensor(v=0.0):
    return _make(np.array(v, dtype=_scalar_dtype()))


def _real_array(a):
    """view_as_real of a complex array: (..., 2) real numbers sharing its memory."""
    r = a.real
    return as_strided(r, a.shape + (2,), r.strides + (r.itemsize,))


def _as_real(t):
    """A tensor over view_as_real of complex tensor t's memory, sharing its version counter (PyTorch's optimizers
    update complex parameters and state through view_as_real)."""
    r = _make(_real_array(t._data))
    r._vc = t._vc
    return r


def _as_complex(t):
    a = contiguous(t._data)
    return _make(a.view(np.complex64 if a.dtype == np.float32 else np.complex128)[..., 0])


def _real_state(st):
    if st is None:
        return None
    return {k: _as_real(v) if isinstance(v, Tensor) and v._data.dtype.kind == "c" else v for k, v in st.items()}


def grad_array(p, maximize):
    g = p.grad._data
    return -g if maximize else g


def _step_with_hooks(func):
    @functools.wraps(func)
    def wrapper(self, *args, **kwargs):
        for pre in chain(_global_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            res = pre(self, args, kwargs)
            if res is not None:
                if isinstance(res, tuple) and len(res) == 2:
                    args, kwargs = res
                else:
                    raise RuntimeError(f"{func} must return None or a tuple of (new_args, new_kwargs), but got "
                                       f"{res}.")
        out = func(self, *args, **kwargs)
        for post in chain(self._optimizer_step_post_hooks.values(), _global_post_hooks.values()):
            post(self, args, kwargs)
        return out
    wrapper.hooked = True
    return wrapper


class Optimizer:
    """Base class of all optimizers (torch.optim.Optimizer)."""

    # What __setstate__ / load_state_dict repair in an older state, for the concrete optimizers: the group
    # defaults filled in (in PyTorch's per-optimizer order, which is the group's key order), and the state
    # entries turned from plain numbers into scalar tensors.  None: nothing is repaired.
    _setstate_defaults = None
    _scalar_state = ("step",)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got " + _typename(params))
        self.state = defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def _patch_step_function(self):
        """Wrap the class's step (once) so that step pre/post hooks run around it, as torch does."""
        cls = self.__class__
        if not getattr(cls.step, "hooked", False):
            cls.step = _step_with_hooks(cls.step)

    # -- pickling / repr ------------------------------------------------------------------
    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._patch_step_function()
        for k in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks", "_optimizer_state_dict_pre_hooks",
                  "_optimizer_state_dict_post_hooks", "_optimizer_load_state_dict_pre_hooks",
                  "_optimizer_load_state_dict_post_hooks"):
            if k not in self.__dict__:
                setattr(self, k, OrderedDict())
        self.defaults.setdefault("differentiable", False)
        if self._setstate_defaults is not None:
            self._fix_state()

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += f"\nParameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    s += f"    {key}: {group[key]}\n"
        return s + ")"

    # -- hooks ------------------------------------------------------------------------------
    def _add_hook(self, store, hook, prepend=False):
        handle = RemovableHandle(store)
        store[handle.id] = hook
        if prepend:
            store.move_to_end(handle.id, last=False)
        return handle

    def register_step_pre_hook(self, hook):
        return self._add_hook(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        return self._add_hook(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return self._add_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return self._add_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return self._add_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return self._add_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- state_dict ---------------------------------------------------------------------------
    def state_dict(self):
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        index = {}
        groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for p in g["params"]:
                if id(p) not in index:
                    index[id(p)] = len(index)
            packed["params"] = [index[id(p)] for p in g["params"]]
            groups.append(packed)
        state = {(index[id(k)] if isinstance(k, Tensor) else k): v for k, v in self.state.items()}
        sd = {"state": state, "param_groups": groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            r = hook(self, sd)
            if r is not None:
                sd = r
        return sd

    @staticmethod
    def _cast_value(param, value, saved_groups, pid, key=None):
        if isinstance(value, Tensor):
            if key == "step":
                fused = capt = False
                for g in saved_groups:
                    if pid in g["params"]:
                        fused, capt = g.get("fused", False), g.get("capturable", False)
                        break
                if fused or capt:
                    return value.to(dtype=_f32(), device=param.device)
                return value
            if param.is_floating_point():           # (torch: the state follows its parameter's device)
                return value.to(dtype=param.dtype, device=param.device)
            return value.to(device=param.device)
        if isinstance(value, dict):
            return {k: Optimizer._cast_value(param, v, saved_groups, pid, k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(Optimizer._cast_value(param, v, saved_groups, pid) for v in value)
        return value

    def load_state_dict(self, state_dict):
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            r = hook(self, state_dict)
            if r is not None:
                state_dict = r
        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                state[p] = self._cast_value(p, v, state_dict["param_groups"], k)
            else:
                state[k] = v
        new_groups = []
        for g, ng in zip(groups, saved_groups):
            ng["params"] = g["params"]
            if "param_names" in g and "param_names" not in ng:
                ng["param_names"] = g["param_names"]
            new_groups.append(ng)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # -- grads / groups ---------------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        if _grad_state.watching is not None:    # explain.watch: log the reset (explain/_watch.py)
            _grad_state.watching.on_zero_grad(self)
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g.requires_grad_(False)
                    g.zero_()

    def step(self, closure=None):
        raise NotImplementedError

    def add_param_group(self, param_group):
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering "
                            "of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is " + _typename(p))
            if not self.defaults.get("differentiable", None) and not (p.is_leaf or p.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter "
                                 f"{name}")
            param_group.setdefault(name, default)
        ids = [id(p) for p in tensors]
        if len(ids) != len(set(ids)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in future, this will "
                          "cause an error; see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for g in self.param_groups:
            seen.update(id(p) for p in g["params"])
            if ("param_names" in param_group) != ("param_names" in g):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not seen.isdisjoint(ids):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- helpers for subclasses -----------------------------------------------------------------------
    _complex_as_real = True     # step complex parameters (and their state) as view_as_real, as PyTorch

    def _eval_closure(self, closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    def _with_grads(self, init=None, groups=None):
        """Yield (param, grad array, state, group) for every parameter that has a gradient, group by group
        (all groups unless `groups` is given).  The gradient array is negated where the group maximizes.  With
        `init`, the parameter's state is fetched and `init(state, param, group)` fills it while it is empty;
        without it the state is not touched (None is yielded, and no empty entry is created)."""
        for group in self.param_groups if groups is None else groups:
            maximize = group.get("maximize", False)
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = None
                if init is not None:
                    st = self.state[p]
                    if not st:
                        init(st, p, group)
                        if group.get("capturable") or group.get("fused"):   # torch: then the scalar state
                            for k in self._scalar_state:                     # is on the parameter's device
                                if k in st:
                                    st[k] = st[k].to(p.device)
                if p._data.dtype.kind == "c" and init is not None:     # (SGD, stateless here, is linear in p)
                    yield from self._complex_step(p, grad_array(p, maximize), st, group)
                    continue
                yield p, grad_array(p, maximize), st, group

    def _complex_step(self, p, g, st, group):
        """Yield a complex parameter as PyTorch's optimizers step it: its view_as_real, with its gradient and state
        viewed the same way; state entries the step adds (SGD's momentum buffer) are stored back as complex."""
        if not self._complex_as_real:
            raise RuntimeError(f"{type(self).__name__} does not support complex parameters")
        rs = _real_state(st)
        seen = dict(rs) if rs is not None else {}
        yield _as_real(p), _real_array(g), rs, group
        if rs is not None:
            for k, v in rs.items():
                if seen.get(k) is not v:
                    st[k] = _as_complex(v) if isinstance(v, Tensor) and v._data.shape == p._data.shape + (2,) else v

    def _fix_state(self):
        """__setstate__ helper: fill the class's group defaults and turn plain-number scalar state (the step count
        and the other `_scalar_state` keys) into scalar tensors."""
        for group in self.param_groups:
            for k, v in self._setstate_defaults.items():
                group.setdefault(k, v)
            for p in group["params"]:
                st = self.state.get(p, None)
                for k in self._scalar_state:
                    if st and k in st and not isinstance(st[k], Tensor):
                        st[k] = step_tensor(float(st[k]))


def _f32():
    from .._dtype import float32
    return float32
