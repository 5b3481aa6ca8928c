"""torch.nn: modules, parameters, functional, init, utils."""
from .parameter import Parameter, Buffer, UninitializedParameter, UninitializedBuffer  # noqa: F401
from .modules import *  # noqa: F401,F403
from . import functional, init, utils  # noqa: F401
from .parallel import DataParallel  # noqa: F401
from . import attention, common_types, grad  # noqa: F401,E402


def factory_kwargs(kwargs):
    """The factory keyword arguments (device, dtype, memory_format) of `kwargs` as one dict; an explicit
    `factory_kwargs` entry merges in; anything else is a TypeError (torch.nn.factory_kwargs)."""
    if kwargs is None:
        return {}
    simple_keys = {"device", "dtype", "memory_format"}
    expected_keys = simple_keys | {"factory_kwargs"}
    if not kwargs.keys() <= expected_keys:
        raise TypeError(f"unexpected kwargs {kwargs.keys() - expected_keys}")
    r = dict(kwargs.get("factory_kwargs", {}))
    for k in simple_keys:
        if k in kwargs:
            if k in r:
                raise TypeError(f"{k} specified twice, in **kwargs and in factory_kwargs")
            r[k] = kwargs[k]
    return r
