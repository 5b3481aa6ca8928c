"""Small torch.* names torch defines in Python: compiled_with_cxx11_abi, get_file_path,
prepare_multiprocessing_environment (torch._utils_internal's) and classproperty (torch._utils')."""
import os

__all__ = ["compiled_with_cxx11_abi", "get_file_path", "prepare_multiprocessing_environment", "classproperty"]

# the directory that holds the glassgrad package (torch's: the one that holds torch)
_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def compiled_with_cxx11_abi():
    """Whether torch was built with _GLIBCXX_USE_CXX11_ABI=1: torch 2.13 always answers True."""
    return True


def get_file_path(*path_components):
    """A path under the directory that holds the package (``os.path.join`` of it and the components)."""
    return os.path.join(_PARENT, *path_components)


def prepare_multiprocessing_environment(path):
    """A hook torch's open-source build leaves empty: does nothing."""
    return None


class _ClassProperty:
    """The descriptor classproperty makes: the getter bound to the class, called on every read."""

    def __init__(self, getter):
        self._getter = getter

    def __get__(self, obj, cls=None):
        return self._getter.__get__(obj, type(obj) if cls is None else cls)()


def classproperty(func):
    """A read-only property of the class (read from the class or an instance): ``@classproperty def x(cls)``."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassProperty(func)
