"""torch's NumPy-compatible keyword names: torch's argument parser takes ``axis`` for ``dim`` and ``keepdims`` for
``keepdim`` in every native function and Tensor method (``torch.sum(t, axis=0)``, ``t.mean(axis=1, keepdims=True)``,
``t.softmax(axis=0)``); what torch writes in Python (``torch.norm``, ``Tensor.split``, nn.functional) does not.
Passing both names is torch's TypeError naming the alias.  ``with_numpy_names(fn)`` is ``fn`` taking them too
(``fn`` itself when it has neither parameter); ``add_numpy_names`` applies it to a class's methods or a namespace.
"""
import functools
import inspect

__all__ = ["with_numpy_names", "add_numpy_names_to_class", "add_numpy_names_to_namespace"]

_PAIRS = (("dim", "axis"), ("keepdim", "keepdims"))
_UNSET = object()
# Tensor methods torch writes in Python (torch/_tensor.py): its parser never sees their keywords
PYTHON_METHODS = frozenset({"split", "unique", "unique_consecutive", "norm", "stft", "istft", "unflatten", "lu",
                            "align_to", "refine_names", "rename", "rename_", "module_load", "dim_order"})


def _aliasable(params, names):
    """The (torch name, NumPy name) pairs `fn` can take: the torch name a parameter that may be given by keyword,
    the NumPy name not one; a required torch name only when every later positional parameter has a default."""
    pairs = []
    for c, a in _PAIRS:
        if c not in names or a in names:
            continue
        k = names.index(c)
        p = params[k]
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            continue
        if p.default is p.empty and any(q.default is q.empty for q in params[k + 1:]
                                        if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)):
            continue
        pairs.append((c, a))
    return pairs


def _source(name, params, pairs):
    """The wrapper's source: fn's own signature, the NumPy names keyword-only after it, then the mapping."""
    optional = {c for c, _ in pairs if params[[q.name for q in params].index(c)].default is params[0].empty}
    defs, call, star = [], [], False
    for k, p in enumerate(params):
        if k and params[k - 1].kind is p.POSITIONAL_ONLY and p.kind is not p.POSITIONAL_ONLY:
            defs.append("/")
        if p.kind is p.VAR_POSITIONAL:
            defs.append(f"*{p.name}")
            call.append(f"*{p.name}")
            star = True
            continue
        if p.kind is p.KEYWORD_ONLY and not star:
            defs.append("*")
            star = True
        default = f"=_D[{p.name!r}]" if p.default is not p.empty else ("=_U" if p.name in optional else "")
        defs.append(p.name + default)
        call.append(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else p.name)
    if params[-1].kind is params[-1].POSITIONAL_ONLY:
        defs.append("/")
    if not star:
        defs.append("*")
    defs += [f"{a}=_U" for _, a in pairs]
    body = []
    for c, a in pairs:
        given = f"{c} is not _U" if c in optional else f"{c} is not _D[{c!r}]"
        body.append(f"    if {a} is not _U:\n        if {given}:\n"
                    f"            _fail(\"{name}() got an unexpected keyword argument '{a}'\")\n"
                    f"        {c} = {a}\n")
        if c in optional:
            body.append(f"    elif {c} is _U:\n"
                        f"        _fail('{name}() missing 1 required positional arguments: \"{c}\"')\n")
    return f"def {name}({', '.join(defs)}):\n" + "".join(body) + f"    return _f({', '.join(call)})\n"


def _fail(message):
    """torch's TypeError (raised here, in a real function, so tracebacks end on a raise of glassgrad's own)."""
    raise TypeError(message)


def with_numpy_names(fn, name=None):
    """`fn` also taking ``axis`` for ``dim`` and ``keepdims`` for ``keepdim`` (``fn`` if it takes neither)."""
    try:
        params = list(inspect.signature(fn).parameters.values())   # a wrapper: the signature it forwards to
    except (TypeError, ValueError):
        return fn
    names = [p.name for p in params]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return fn
    pairs = _aliasable(params, names)
    if not pairs:
        return fn
    name = name or fn.__name__
    ns = {"_f": fn, "_U": _UNSET, "_fail": _fail, "_D": {p.name: p.default for p in params if p.default is not p.empty}}
    exec(compile(_source(name, params, pairs), __file__, "exec"), ns)   # noqa: S102  (from fn's parameter names)
    return functools.update_wrapper(ns[name], fn)


def add_numpy_names_to_class(cls, skip=PYTHON_METHODS):
    """Every public method of `cls` (as its MRO resolves it) with ``dim`` / ``keepdim``, replaced on `cls`."""
    seen = set()
    for klass in cls.__mro__[:-1]:
        for n, f in list(vars(klass).items()):
            if n in seen or n.startswith("__"):
                continue
            seen.add(n)
            if inspect.isfunction(f) and n not in skip:
                w = with_numpy_names(f)
                if w is not f:
                    setattr(cls, n, w)


def add_numpy_names_to_namespace(ns, modules, skip=()):
    """Every public function of namespace dict `ns` defined under `modules` (prefixes), but those in `skip`."""
    for n, f in list(ns.items()):
        if (inspect.isfunction(f) and not n.startswith("_") and n not in skip
                and (f.__module__ or "").startswith(modules)):
            ns[n] = with_numpy_names(f)
