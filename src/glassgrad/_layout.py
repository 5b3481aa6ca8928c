"""torch.layout: the memory layouts a tensor may have (torch.strided, torch.sparse_coo, ...).

Like torch's, the objects are singletons that cannot be made by calling the type, print as
``torch.<name>`` and pickle by name."""

__all__ = ["layout", "strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc", "_mkldnn"]


class layout:
    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.layout' instances")

    def __repr__(self):
        return "torch." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return (_by_name, (self._name,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


layout.__module__ = "torch"


def _layout(name):
    obj = object.__new__(layout)
    obj._name = name
    return obj


def _by_name(name):
    return _LAYOUTS[name]


strided = _layout("strided")
sparse_coo = _layout("sparse_coo")
sparse_csr = _layout("sparse_csr")
sparse_csc = _layout("sparse_csc")
sparse_bsr = _layout("sparse_bsr")
sparse_bsc = _layout("sparse_bsc")
_mkldnn = _layout("_mkldnn")
_LAYOUTS = {o._name: o for o in (strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, _mkldnn)}


class memory_format:
    """torch.memory_format: the order of a strided tensor's dimensions in memory (torch.contiguous_format,
    torch.preserve_format, torch.channels_last, torch.channels_last_3d); singletons like torch.layout's."""
    __slots__ = ("_name",)

    def __new__(cls, *args, **kwargs):
        raise TypeError("cannot create 'torch.memory_format' instances")

    def __repr__(self):
        return "torch." + self._name

    __str__ = __repr__

    def __reduce__(self):
        return (_format_by_name, (self._name,))

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


memory_format.__module__ = "torch"


def _format(name):
    obj = object.__new__(memory_format)
    obj._name = name
    return obj


def _format_by_name(name):
    return _FORMATS[name]


contiguous_format = _format("contiguous_format")
preserve_format = _format("preserve_format")
channels_last = _format("channels_last")
channels_last_3d = _format("channels_last_3d")
_FORMATS = {o._name: o for o in (contiguous_format, preserve_format, channels_last, channels_last_3d)}
__all__ += ["memory_format", "contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]
