"""torch.overrides: the `__torch_function__` protocol's helpers, for code that dispatches to objects which
implement it.

glassgrad's Tensor does not implement `__torch_function__` (its ops do not dispatch through it), so, as
torch's answers for plain tensors: `has_torch_function` is False for glassgrad tensors and plain values,
True only for arguments whose type defines `__torch_function__`; `handle_torch_function` calls those
types' `__torch_function__` in torch's order (subclasses before their bases, otherwise left to right)
until one returns something other than NotImplemented, and raises torch's TypeError when none does.
"""
import contextlib
import warnings

__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "is_tensor_like", "boolean_dispatch", "wrap_torch_function",
           "is_tensor_method_or_property", "enable_reentrant_dispatch"]


def _overrides(t):
    return getattr(t, "__torch_function__", None) is not None


def _get_overloaded_args(relevant_args):
    """The arguments whose types implement __torch_function__, one per type, subclasses first."""
    types, args = set(), []
    for arg in relevant_args:
        t = type(arg)
        if t in types or not _overrides(t):
            continue
        types.add(t)
        index = len(args)
        for i, old in enumerate(args):
            if issubclass(t, type(old)):
                index = i
                break
        args.insert(index, arg)
    return args


def has_torch_function(relevant_args):
    return any(_overrides(type(a)) for a in relevant_args)


def has_torch_function_unary(obj):
    return _overrides(type(obj))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    overloaded = _get_overloaded_args(relevant_args)
    types = tuple(map(type, overloaded))
    for arg in overloaded:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg:
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated and will be an error "
                          "in future, please define it as a classmethod.", DeprecationWarning, stacklevel=2)
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    func_name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{func_name}' on types that implement __torch_function__: "
                    f"{[type(arg) for arg in overloaded]}")


def is_tensor_like(inp):
    """A glassgrad Tensor (or subclass), or an object whose type implements __torch_function__."""
    from ._tensor import Tensor
    return type(inp) is Tensor or isinstance(inp, Tensor) or _overrides(type(inp))


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls if_true or if_false as the boolean argument `arg_name` (position `arg_index`,
    else `default`) says (torch._jit_internal.boolean_dispatch: F.max_pool2d's return_indices)."""
    def fn(*args, **kwargs):
        flag = default
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    if if_true.__doc__ is None and if_false.__doc__ is not None:
        doc = if_true.__doc__ = if_false.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is not None:
        doc = if_false.__doc__ = if_true.__doc__
    elif if_false.__doc__ is None and if_true.__doc__ is None:
        doc = None
    else:
        raise RuntimeError("only one function can have a docstring")
    fn.__doc__ = doc
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = func_name
    return fn


def wrap_torch_function(dispatcher):
    """A decorator giving a function `__torch_function__` dispatch: `dispatcher(*args, **kwargs)` names the
    relevant arguments; when one of their types implements `__torch_function__`, the call goes through
    handle_torch_function instead of the function."""
    import functools

    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


_tensor_methods = []
# the Tensor attributes torch does not treat as overridable methods (its get_ignored_functions, and object's own)
_NOT_METHODS = frozenset("""__class__ __delattr__ __delitem__ __dir__ __getattribute__ __hash__ __init__
    __init_subclass__ __iter__ __new__ __setattr__ __subclasshook__ __torch_dispatch__ __torch_function__
    __getstate__ __reduce__ __sizeof__ __str__ as_subclass eig lstsq new new_empty new_empty_strided new_full
    new_ones new_tensor new_zeros reinforce solve stride symeig to_padded_tensor to_sparse_bsc to_sparse_bsr
    to_sparse_coo to_sparse_csc to_sparse_csr unflatten""".split())


def is_tensor_method_or_property(func):
    """Whether `func`, as handed to `__torch_function__`, is a method of Tensor or (its ``__get__``) a
    property's getter."""
    if not _tensor_methods:
        from ._tensor import Tensor
        found = set()
        for name in dir(Tensor):
            if name in _NOT_METHODS or (name.startswith("_") and not name.endswith("__")):
                continue
            v = getattr(Tensor, name, None)
            if callable(v) and not isinstance(v, type):
                try:
                    found.add(v)
                except TypeError:
                    pass
        _tensor_methods.append(found)
    return func in _tensor_methods[0] or getattr(func, "__name__", None) == "__get__"


@contextlib.contextmanager
def enable_reentrant_dispatch():
    """torch restores its dispatcher's Python TLS here, which exists only inside `__torch_dispatch__`, and raises
    elsewhere; glassgrad has no dispatcher and never runs `__torch_dispatch__`, so it raises torch's error."""
    raise RuntimeError("Accessing torch dispatch state outside of '__torch_dispatch__' is not allowed.")
    yield
