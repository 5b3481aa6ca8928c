"""torch's NumPy-style keyword spellings: the functions torch binds in C (``torch.sum``, ``torch.all``, ...) and
the Tensor methods it binds in C (``x.sum``, ``x.max``, ...) take ``axis`` for ``dim`` and ``keepdims`` for
``keepdim`` (and ``x`` / ``a`` / ``x1`` for ``input``, ``x2`` for ``other``: not done here, see _HOT):

    torch.all(mask, axis=-1, keepdims=True)      # transformers' beam search
    scores.sum(axis=-1, keepdims=True)

A spelling stands for its parameter only where the function has that parameter and the call does not name it
already (``sum(x, dim=1, axis=1)`` is torch's "unexpected keyword argument 'axis'").  The functions and methods
torch writes in Python do not take them (``torch.split``, ``torch.norm``, ``Tensor.unique``, nn.functional,
torch.functional's names): those are left alone here, so they raise the same TypeError as torch's.

``install(namespace, Tensor)`` wraps, once, each function of the torch namespace dict and each
Tensor method whose parameters include one of those names."""
import functools
import inspect
import re

__all__ = ["install"]

_SPELLINGS = {"axis": "dim", "keepdims": "keepdim"}
# Left out, to keep the wrapper off the hottest calls: ``x`` / ``a`` / ``x1`` for ``input`` and ``x2`` for
# ``other`` (torch.add(x1=a, x2=b)), and the cheap queries Tensor.size / Tensor.stride (x.size(axis=1)).
_HOT = frozenset({"size", "stride"})
_CANONICAL = frozenset(_SPELLINGS.values())
_KEYS = frozenset(_SPELLINGS)
# torch.* functions and Tensor methods torch writes in Python (no NumPy spellings there)
_PYTHON_FUNCTIONS = frozenset({"lstsq", "matrix_rank", "norm", "solve", "split", "stft", "symeig", "istft",
                               # torch.functional's
                               "atleast_1d", "atleast_2d", "atleast_3d", "align_tensors", "broadcast_shapes",
                               "broadcast_tensors", "cartesian_prod", "block_diag", "cdist", "chain_matmul",
                               "einsum", "lu", "meshgrid", "pca_lowrank", "svd_lowrank", "tensordot", "unique",
                               "unique_consecutive", "unravel_index"})
_PYTHON_METHODS = frozenset({"lstsq", "norm", "solve", "split", "unflatten", "unique", "unique_consecutive",
                             "module_load", "stft", "istft"})


def _rename(nargs, kwargs, params):
    """kwargs with each spelling renamed to its parameter, where `params` (name -> position, inf for a
    keyword-only one) has it and neither the first `nargs` positional arguments nor kwargs give it already."""
    out = dict(kwargs)
    for key in _KEYS & kwargs.keys():
        name = _SPELLINGS[key]
        if name in params and name not in out and key not in params and not params[name] < nargs:
            out[name] = out.pop(key)
    return out


def _wrap(fn, params):
    @functools.wraps(fn)
    def numpy_kwargs(*args, **kwargs):
        if kwargs and not _KEYS.isdisjoint(kwargs):
            kwargs = _rename(len(args), kwargs, params)
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            if e.__traceback__.tb_next is not None:     # raised inside the function, not by binding its arguments
                raise
            raise TypeError(_torch_binding_message(str(e))) from None
    numpy_kwargs._numpy_kwargs = True
    numpy_kwargs.__wrapped__ = getattr(fn, "__wrapped__", fn)    # the op itself (torch.fx finds it by this)
    return numpy_kwargs


def _torch_binding_message(msg):
    """Python's argument-binding TypeError as torch's parser words it: ``cumsum() missing 1 required positional
    arguments: "dim"`` (no class qualifier, torch's plural and quotes)."""
    msg = re.sub(r"^[\w.]*\.(\w+\()", r"\1", msg)
    return re.sub(r"missing (\d+) required positional arguments?: '(\w+)'$", r'missing \1 required positional arguments: "\2"',
                  msg)


def _params(fn):
    if not inspect.isfunction(fn) or getattr(fn, "_numpy_kwargs", False):
        return None
    try:
        sig = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = {p.name: (k if p.kind in positional else float("inf")) for k, p in enumerate(sig)}
    return params if _CANONICAL & params.keys() else None


def install(namespace, tensor_cls):
    """Wrap the public functions of `namespace` (a dict) and `tensor_cls`'s methods, except torch's
    Python-written ones."""
    skip = _PYTHON_FUNCTIONS
    for name, fn in list(namespace.items()):
        if not name.startswith("_") and name not in skip:
            params = _params(fn)
            if params is not None:
                namespace[name] = _wrap(fn, params)
    for klass in tensor_cls.__mro__[:-1]:
        for name, fn in list(vars(klass).items()):
            if name.startswith("_") or name in _PYTHON_METHODS or name in _HOT or name in vars(tensor_cls) and klass is not tensor_cls:
                continue
            params = _params(fn)
            if params is not None:
                setattr(tensor_cls, name, _wrap(fn, params))
