"""Argument checks shared by every op: what torch's argument parser checks before an op runs.

torch parses each call against a typed signature (``Tensor input, int dim, Scalar alpha, int[] size``)
and answers a wrong type with a TypeError naming the function and the argument.  glassgrad's ops are plain
Python functions; the checks here give them the same errors:

  * ``type_name(obj)``             how torch names a type in its messages
  * ``int_arg`` / ``int_list``     an ``int`` / ``int[]`` argument (bools are ints, floats and strings are not)
  * ``number_arg``                 a ``Scalar`` argument (a Python or NumPy number, or a 0-d tensor)
  * ``tensor_arg``                 a ``Tensor`` argument
  * ``tensor_first(fn, name)``     `fn` wrapped so that its first argument must be a Tensor (or a number,
                                   for the few ops torch lets take one): applied once, to the functions of
                                   the ``torch`` namespace and of ``nn.functional`` whose torch counterpart
                                   takes a Tensor (see ``wrap_namespace``)
"""
import functools
import inspect
import numbers

import numpy as np

_I64 = 2 ** 63


def type_name(obj):
    """A type as torch's messages name it: 'str', 'NoneType', 'Tensor', 'numpy.ndarray'."""
    t = obj if isinstance(obj, type) else type(obj)
    if t.__module__ == "builtins":
        return t.__name__
    if t.__module__.startswith("glassgrad"):
        return "Tensor" if _is_tensor(obj) else f"torch.{t.__name__}"
    return f"{t.__module__.split('.')[0]}.{t.__name__}"


_TENSOR = []        # the Tensor class, looked up once (_tensor imports this module)


def _is_tensor(obj):
    if not _TENSOR:
        from ._tensor import Tensor
        _TENSOR.append(Tensor)
    return isinstance(obj, _TENSOR[0])


def _where(fn, arg, pos):
    p = f" (position {pos})" if pos else ""
    return f"{fn}(): argument '{arg}'{p}" if fn else f"argument '{arg}'{p}"


def as_int(v):
    """v as a Python int if it is one to torch (int, bool, NumPy integer, one-element integer tensor), else
    None."""
    if v.__class__ is int:
        return v
    if isinstance(v, (int, np.integer)):
        return int(v)
    if _is_tensor(v) and v._data.size == 1 and v._data.dtype.kind in "iu":
        return int(v._data.reshape(()))
    return None


def _check_range(v):
    if not -_I64 <= v < _I64:
        raise ValueError("Overflow when unpacking long long")
    return v


def int_arg(v, fn=None, arg="dim", pos=None):
    """An ``int`` argument: torch's TypeError for a float, a string, None... and its overflow error."""
    i = as_int(v)
    if i is None or isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{_where(fn, arg, pos)} must be int, not {type_name(v)}")
    return _check_range(i)


def int_list(v, fn=None, arg="size", pos=None):
    """An ``int[]`` argument (a tuple/list of ints, or one int) as a tuple of Python ints."""
    i = as_int(v)
    if i is not None and not isinstance(v, (bool, np.bool_)):
        return (_check_range(i),)
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"{_where(fn, arg, pos)} must be tuple of ints, not {type_name(v)}")
    return int_items(v, fn, arg)


def int_items(items, fn=None, arg="size"):
    out = []
    for k, s in enumerate(items):
        i = as_int(s)
        if i is None:
            raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {k + 1} with error "
                            f"\"type must be tuple of ints,but got {type_name(s)}\"")
        if not -_I64 <= i < _I64:
            raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {k + 1} with error "
                            "\"Overflow when unpacking long long\"")
        out.append(i)
    return tuple(out)


def sizes(args, fn, arg="size"):
    """The sizes of ``f(*size)`` (``zeros(2, 3)``, ``zeros((2, 3))``, ``x.view(2, 3)``): one sequence or
    several ints."""
    if len(args) == 1 and args[0].__class__ is tuple:
        args = args[0]                      # zeros((2, 3)): checked as the items below
    elif len(args) == 1 and (as_int(args[0]) is None or isinstance(args[0], (bool, np.bool_))):
        return int_list(args[0], fn, arg, 1)
    for s in args:                          # the common call: plain ints in int64's range
        if s.__class__ is not int or not -_I64 <= s < _I64:
            return int_items(args, fn, arg)
    return tuple(args)


def number_arg(v, fn=None, arg="other", pos=None, complex_ok=False):
    """A ``Scalar`` argument: a Python/NumPy number (bool included) or a 0-d tensor (its item); complex
    numbers only where `complex_ok` (the arguments that take them)."""
    if isinstance(v, numbers.Number) and (complex_ok or not isinstance(v, complex)):
        return v
    if _is_tensor(v) and v._data.ndim == 0:
        return v._data.item()
    raise TypeError(f"{_where(fn, arg, pos)} must be Number, not {type_name(v)}")


def tensor_arg(v, fn=None, arg="input", pos=None):
    if not _is_tensor(v):
        raise TypeError(f"{_where(fn, arg, pos)} must be Tensor, not {type_name(v)}")
    return v


def tensor_list(v, fn, arg="tensors", pos=1):
    """A ``Tensor[]`` argument: a tuple or list of tensors."""
    if not isinstance(v, (tuple, list)):
        raise TypeError(f"{_where(fn, arg, pos)} must be tuple of Tensors, not {type_name(v)}")
    for i, t in enumerate(v):
        if not _is_tensor(t):
            raise TypeError(f"expected Tensor as element {i} in argument {pos - 1}, but got {type_name(t)}")
    return list(v)


def bool_arg(v, fn=None, arg="requires_grad", pos=None):
    if v.__class__ is not bool and not isinstance(v, np.bool_):
        raise TypeError(f"{_where(fn, arg, pos)} must be bool, not {type_name(v)}")
    return bool(v)


# -- the first argument of torch.* / nn.functional.* functions ---------------------------------------
def tensor_first(fn, name=None, numbers_too=False, also=(), out_writer=None):
    """`fn` with torch's check that its first argument is a Tensor (``numbers_too``: or a number, which the
    op itself handles), and so are the parameters named in `also` (a trailing '?': or None).  The wrapper
    has fn's own signature (generated, so that the check costs one class test, not a generic
    ``*args, **kwargs`` call)."""
    from ._tensor import Tensor
    from ._sparse_tensor import SparseTensor, SparseCsrTensor, dispatch
    name = name or fn.__name__
    params = list(inspect.signature(fn).parameters.values())
    first = params[0].name
    names = [p.name for p in params]
    defs, call, defaults, star = [], [], {}, False
    for k, p in enumerate(params):
        if k and params[k - 1].kind is p.POSITIONAL_ONLY and p.kind is not p.POSITIONAL_ONLY:
            defs.append("/")
        if p.kind is p.VAR_POSITIONAL:
            defs.append(f"*{p.name}")
            call.append(f"*{p.name}")
            star = True
        elif p.kind is p.VAR_KEYWORD:
            defs.append(f"**{p.name}")
            call.append(f"**{p.name}")
        else:
            if p.kind is p.KEYWORD_ONLY and not star:
                defs.append("*")
                star = True
            if p.default is not p.empty:
                defaults[p.name] = p.default
            defs.append(p.name + (f"=_D[{p.name!r}]" if p.default is not p.empty else ""))
            call.append(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else p.name)
    if params[-1].kind is params[-1].POSITIONAL_ONLY:
        defs.append("/")
    ok = "isinstance(_x, _T)" + (" or isinstance(_x, _N) and not isinstance(_x, complex)" if numbers_too else "")
    # a sparse first argument goes to the sparse version of the function (or torch's error), off the dense path
    checks = [f"    _x = {first}\n    if _x.__class__ is not _T:\n        if _x.__class__ is _S or _x.__class__ is _C:\n"
              f"            return _sparse({name!r}, _x.__class__)({', '.join(call)})\n"
              f"        if not ({ok}):\n            _bad(_x, 0)\n"]
    for a in also:
        p = a.rstrip("?")
        none_ok = f"{p} is not None and " if a.endswith("?") else ""
        checks.append(f"    if {none_ok}{p}.__class__ is not _T and not isinstance({p}, _T):\n"
                      f"        _bad({p}, {names.index(p)})\n")
    if out_writer is not None and "out=out" in call:      # torch's out=: computed as usual, written into out
        plain = ", ".join("out=None" if c == "out=out" else c for c in call)
        checks.append(f"    if out is not None:\n        return _out({name!r}, _f({plain}), out)\n")
    src = (f"def {name}({', '.join(defs)}):\n" + "".join(checks) + f"    return _f({', '.join(call)})\n")

    def bad(x, k):
        arg = params[k].name if params[k].name != "x" else "input"
        pos = "" if params[k].kind is params[k].KEYWORD_ONLY else f" (position {k + 1})"
        raise TypeError(f"{name}(): argument '{arg}'{pos} must be Tensor, not {type_name(x)}")

    ns = {"_T": Tensor, "_N": numbers.Number, "_f": fn, "_D": defaults, "_bad": bad, "_S": SparseTensor,
          "_C": SparseCsrTensor, "_sparse": dispatch, "_out": out_writer}
    # compiled as this file: frames of the wrapper count as glassgrad's own (explain skips them to find the user)
    exec(compile(src, __file__, "exec"), ns)       # noqa: S102  (source built from fn's own parameter names)
    w = ns[name]
    w.__doc__, w.__module__, w.__qualname__, w.__wrapped__ = fn.__doc__, fn.__module__, name, fn
    w._tensor_first = True
    return w


def wrap_namespace(ns, names, numbers_too=(), also=None, out_writer=None):
    """Replace each function `names` in dict `ns` by its tensor_first wrapper (`also`: {name: more tensor
    parameters}; `out_writer`: what writes the result of a call with out= into out, ops/out.py's)."""
    for n in names:
        f = ns.get(n)
        if inspect.isfunction(f) and not getattr(f, "_tensor_first", False) and inspect.signature(f).parameters:
            ns[n] = tensor_first(f, n, n in numbers_too, (also or {}).get(n, ()), out_writer)


def honour_out(ns, out_writer, modules=("glassgrad.",)):
    """Wrap every public function of namespace dict `ns` that takes out= (and is not a tensor_first wrapper,
    which handles it) with `with_out`; `modules`: only functions defined under these module prefixes."""
    for n, f in list(ns.items()):
        if (inspect.isfunction(f) and not n.startswith("_") and not getattr(f, "_tensor_first", False)
                and not getattr(f, "_with_out", False) and (f.__module__ or "").startswith(modules)
                and "out" in inspect.signature(f).parameters):
            ns[n] = with_out(f, n, out_writer)


def with_out(fn, name, out_writer):
    """`fn` (a torch.* function whose first argument is not a tensor: cat, stack, zeros, arange, ...) honouring
    torch's out= through `out_writer`."""
    @functools.wraps(fn)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return out_writer(name, fn(*args, **kwargs), out)
    wrapper._with_out = True
    return wrapper


def flip_dims(dims, kw):
    """The dims of Tensor.flip(*dims) / Tensor.flip(dims=...): varargs ints, one sequence, or the keyword."""
    if kw:
        if set(kw) != {"dims"} or dims:
            raise TypeError("flip() got multiple values for argument 'dims'" if dims and set(kw) == {"dims"} else
                            "flip() missing 1 required positional arguments: \"dims\"")
        return kw["dims"]
    if not dims:
        raise TypeError("flip() missing 1 required positional arguments: \"dims\"")
    return dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
