"""An import hook that serves ``torch`` and every ``torch.<sub>`` import from glassgrad.

    >>> from glassgrad._torch_alias import torch_alias
    >>> with torch_alias():
    ...     import torch                      # -> glassgrad
    ...     import torch.nn.functional as F   # -> glassgrad.nn.functional

It is exactly what ``import glassgrad as torch`` does, for code that says ``import torch``:
a meta-path finder placed first on ``sys.meta_path`` answers every ``torch`` / ``torch.X.Y``
name with the glassgrad module of the same path (``glassgrad.X.Y``).  A name glassgrad does not
have raises the usual ``ModuleNotFoundError`` naming the torch module.

``install()`` also takes any real ``torch`` modules already imported out of ``sys.modules`` (so a
process that imported PyTorch still gets glassgrad); ``uninstall()`` puts them back.  While installed, the
children that ``multiprocessing`` starts with "spawn" or "forkserver" install it too, before they re-import
the script (``torch.multiprocessing.spawn`` of a function defined in it): their preparation data carries an
object whose unpickling calls ``install()``.
"""
import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["TorchAlias", "install", "uninstall", "torch_alias", "is_installed"]

_PREFIX = "torch"


def _is_torch_name(name):
    return name == _PREFIX or name.startswith(_PREFIX + ".")


class TorchAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves ``torch`` and every ``torch.<sub>`` import with glassgrad's module of the same path."""

    def find_spec(self, name, path=None, target=None):
        if not _is_torch_name(name):
            return None
        target_name = "glassgrad" + name[len(_PREFIX):]
        try:
            found = importlib.util.find_spec(target_name)
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise ModuleNotFoundError(f"No module named '{name}' (glassgrad stands in for torch here and has "
                                      f"no '{target_name}')", name=name)
        return importlib.util.spec_from_loader(name, self, is_package=found.submodule_search_locations is not None)

    def create_module(self, spec):
        return importlib.import_module("glassgrad" + spec.name[len(_PREFIX):])

    def exec_module(self, module):
        pass

    def __repr__(self):
        return "<glassgrad TorchAlias: torch -> glassgrad>"


_state = {"finder": None, "saved": None, "prep": None}


class _InstallInChild:
    """Unpickled by a spawned child with its preparation data, before it re-imports ``__main__``: installs the
    alias there."""

    def __reduce__(self):
        return (install, ())


def _patch_spawn():
    """Have multiprocessing's preparation data for new children carry an ``_InstallInChild``."""
    import multiprocessing.spawn as mp_spawn
    original = mp_spawn.get_preparation_data

    def get_preparation_data(name):
        data = original(name)
        data["glassgrad_torch_alias"] = _InstallInChild()      # a key multiprocessing's prepare() ignores
        return data

    mp_spawn.get_preparation_data = get_preparation_data
    _state["prep"] = (mp_spawn, original)


def _unpatch_spawn():
    if _state["prep"] is not None:
        mp_spawn, original = _state["prep"]
        mp_spawn.get_preparation_data = original
        _state["prep"] = None


def is_installed():
    return _state["finder"] is not None


def install():
    """Put the alias first on ``sys.meta_path`` (idempotent); returns the finder."""
    if _state["finder"] is not None:
        return _state["finder"]
    saved = {k: v for k, v in sys.modules.items() if _is_torch_name(k)}
    for k in saved:
        del sys.modules[k]
    finder = TorchAlias()
    sys.meta_path.insert(0, finder)
    _state["finder"], _state["saved"] = finder, saved
    _patch_spawn()
    return finder


def uninstall():
    """Remove the alias and the ``torch`` entries it made; restore real torch modules it displaced."""
    finder = _state["finder"]
    if finder is None:
        return
    if finder in sys.meta_path:
        sys.meta_path.remove(finder)
    for k in [k for k in sys.modules if _is_torch_name(k)]:
        del sys.modules[k]
    sys.modules.update(_state["saved"] or {})
    _state["finder"], _state["saved"] = None, None
    _unpatch_spawn()


class torch_alias:
    """Context manager: ``import torch`` gives glassgrad inside the block."""

    def __enter__(self):
        self._owner = not is_installed()
        install()
        return self

    def __exit__(self, *exc):
        if self._owner:
            uninstall()
        return False
