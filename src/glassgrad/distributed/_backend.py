"""torch.distributed's backend names and settings: Backend BackendConfig is_backend_available
get_default_backend_for_device is_ucc_available is_xccl_available DebugLevel get_debug_level set_debug_level
set_debug_level_from_env is_torchelastic_launched get_node_local_rank supports_complex reduce_op GroupName.

glassgrad runs the "gloo" and "mpi" backends (both on MPI, distributed_c10d.py); "nccl", "ucc" and "xccl"
are the backends of a torch build without them (not available).
"""
import os
import typing
import warnings

from .distributed_c10d import ReduceOp, is_gloo_available, is_mpi_available, is_nccl_available


class Backend(str):
    """torch.distributed.Backend: the backend names as attributes (``Backend.GLOO == "gloo"``);
    ``Backend(name)`` returns the lower-case name (a plain str, as torch's does)."""

    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"

    _plugins = {}
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI, FAKE]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}
    backend_capability = {GLOO: ["cpu", "cuda"], NCCL: ["cuda"], XCCL: ["xpu"], UCC: ["cpu", "cuda"],
                          MPI: ["cpu", "cuda"], FAKE: ["cpu", "cuda", "hpu", "xpu"]}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        return name.lower() if value == Backend.UNDEFINED else value

    @classmethod
    def register_backend(cls, name, func, extended_api=False, devices=None):
        """Record a third-party backend's name, devices and creator function (torch's bookkeeping; the
        process groups glassgrad makes stay on MPI)."""
        if not hasattr(Backend, name.upper()):
            setattr(Backend, name.upper(), name.lower())
        if name.lower() not in Backend.backend_list:
            Backend.backend_list.append(name.lower())
        if devices is not None:
            for device in devices:
                current = Backend.default_device_backend_map.get(device)
                if current is None or (current == "fake" and name.lower() != "fake"):
                    Backend.default_device_backend_map[device] = name.lower()
        if devices is None:
            warnings.warn(f"Device capability of {name} unspecified, assuming `cpu` and `cuda` or `xpu`. Please "
                          "specify it via the `devices` argument of `register_backend`.", stacklevel=2)
            Backend.backend_capability[name.lower()] = ["cpu", "cuda"]
        else:
            Backend.backend_capability[name.lower()] = [devices] if isinstance(devices, str) else devices
        Backend._plugins[name.upper()] = (func, extended_api)


class BackendConfig:
    """Which backend serves which device type: ``str()`` is torch's "cpu:gloo,cuda:gloo"."""

    def __init__(self, backend):
        self.device_backend_map = {}
        backend = str(backend)
        if backend == Backend.UNDEFINED:
            self.device_backend_map["cpu"] = Backend(Backend.default_device_backend_map["cpu"])
        elif backend.lower() in Backend.backend_list:
            self.device_backend_map = dict.fromkeys(Backend.backend_capability[backend.lower()], Backend(backend))
        elif ":" in backend.lower():
            msg = (f"The custom backend string argument is invalid: {backend}.\n                Custom backend "
                   "string is an experimental feature where the backend string must be in the format:\n"
                   "                \"<device_type1>:<backend1>,<device_type2>:<backend2>...\". e.g. "
                   "'cpu:gloo,cuda:nccl'")
            for pair in backend.lower().split(","):
                parts = pair.split(":")
                if len(parts) != 2:
                    raise ValueError(f"Invalid device:backend pairing:                                      {pair}. "
                                     f"{msg}")
                device, name = parts
                if device in self.device_backend_map:
                    raise ValueError(f"Duplicate device type {device}                                      in "
                                     f"backend string: {name}. {msg}")
                self.device_backend_map[device] = Backend(name)
        else:
            warnings.warn(f"Device capability of {backend} unknown, assuming `cpu` and `cuda`. You can specify it "
                          "in `device:backend` format in `init_process_group` call.", stacklevel=2)
            self.device_backend_map = dict.fromkeys(("cpu", "cuda", "xpu"), Backend(backend))

    def __repr__(self):
        return ",".join(f"{device}:{backend}" for device, backend in self.device_backend_map.items())

    def get_device_backend_map(self):
        return self.device_backend_map


def is_ucc_available():
    return False


def is_xccl_available():
    return False


def is_fake_available():
    return False


_AVAILABLE = {"gloo": is_gloo_available, "mpi": is_mpi_available, "nccl": is_nccl_available,
              "ucc": is_ucc_available, "xccl": is_xccl_available, "fake": is_fake_available}


def _one_available(name):
    check = _AVAILABLE.get(str(name).lower())
    return check() if check is not None else str(name).lower() in Backend.backend_list


def is_backend_available(backend):
    """Can a process group of this backend be made here ("gloo" and "mpi"; "cpu:gloo" style strings when
    every backend named is)?  "fake" is not: glassgrad has no fake process group."""
    if ":" in backend.lower():
        return all(_one_available(b) for b in BackendConfig(Backend(backend)).get_device_backend_map().values())
    return _one_available(backend)


def get_default_backend_for_device(device):
    from .._device import device as _device
    kind = device.type if isinstance(device, _device) else _device(device).type
    backend = Backend.default_device_backend_map.get(kind)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


class DebugLevel:
    """TORCH_DISTRIBUTED_DEBUG's levels OFF INFO DETAIL (enum members like torch's: name, value, int())."""

    __slots__ = ("name", "value")

    def __init__(self, value):
        if isinstance(value, DebugLevel):
            value = value.value
        if isinstance(value, str) or not hasattr(value, "__index__"):
            raise TypeError("__init__(): incompatible constructor arguments. The following argument types are "
                            "supported:\n    1. torch._C._distributed_c10d.DebugLevel(value: typing.SupportsInt "
                            f"| typing.SupportsIndex)\n\nInvoked with: {value!r}")
        self.value = int(value)
        self.name = {0: "OFF", 1: "INFO", 2: "DETAIL"}.get(self.value, "???")

    def __int__(self):
        return self.value

    __index__ = __int__

    def __eq__(self, other):
        return isinstance(other, DebugLevel) and self.value == other.value

    def __hash__(self):
        return hash(self.value)

    def __str__(self):
        return f"DebugLevel.{self.name}"

    def __repr__(self):
        return f"<DebugLevel.{self.name}: {self.value}>"


DebugLevel.OFF, DebugLevel.INFO, DebugLevel.DETAIL = DebugLevel(0), DebugLevel(1), DebugLevel(2)
DebugLevel.__members__ = {"OFF": DebugLevel.OFF, "INFO": DebugLevel.INFO, "DETAIL": DebugLevel.DETAIL}


def _level_from_env():
    value = os.environ.get("TORCH_DISTRIBUTED_DEBUG")
    if value is None:
        return DebugLevel.OFF
    level = DebugLevel.__members__.get(value.upper())
    if level is None:
        raise ValueError("The value of TORCH_DISTRIBUTED_DEBUG must be OFF, INFO, or DETAIL.")
    return level


_DEBUG = {"level": DebugLevel.OFF}
try:
    _DEBUG["level"] = _level_from_env()
except ValueError:
    pass


def get_debug_level():
    return _DEBUG["level"]


def set_debug_level(level):
    if not isinstance(level, DebugLevel):
        raise TypeError("set_debug_level(): incompatible function arguments. The following argument types are "
                        "supported:\n    1. (arg0: torch._C._distributed_c10d.DebugLevel) -> None\n\n"
                        f"Invoked with: {level!r}")
    _DEBUG["level"] = level


def set_debug_level_from_env():
    _DEBUG["level"] = _level_from_env()


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def get_node_local_rank(fallback_rank=None):
    """LOCAL_RANK (set by torchrun and ``glassgrad run``), else fallback_rank."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank to allow "
                       "`get_node_local_rank` to work, assuming you are not running in a multi-device context and "
                       "want the code to run locally instead.")


def supports_complex(reduceOp):
    """Whether a reduction is defined on complex tensors (SUM, AVG; not the orderings or bit operations)."""
    return reduceOp not in (ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT, ReduceOp.BAND, ReduceOp.BOR,
                            ReduceOp.BXOR)


class _reduce_op:
    """torch.distributed.reduce_op: the deprecated spelling of ReduceOp (each attribute read warns)."""

    def __init__(self):
        for k, v in ReduceOp.RedOpType.__members__.items():
            setattr(self, k, v)
        self.__members__ = ReduceOp.RedOpType.__members__

    def __getattribute__(self, key):
        warnings.warn("`torch.distributed.reduce_op` is deprecated, please use `torch.distributed.ReduceOp` "
                      "instead", FutureWarning, stacklevel=2)
        return object.__getattribute__(self, key)


reduce_op = _reduce_op()

GroupName = typing.NewType("GroupName", str)

__all__ = ["Backend", "BackendConfig", "is_backend_available", "get_default_backend_for_device", "is_ucc_available",
           "is_xccl_available", "DebugLevel", "get_debug_level", "set_debug_level", "set_debug_level_from_env",
           "is_torchelastic_launched", "get_node_local_rank", "supports_complex", "reduce_op", "GroupName"]
