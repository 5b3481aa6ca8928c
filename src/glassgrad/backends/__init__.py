"""torch.backends: the switches and availability queries of the libraries torch can run on, answered truthfully
for glassgrad.  glassgrad computes on NumPy (CPU) and, where CuPy finds a GPU, on CuPy; it has no cuDNN, MPS,
oneDNN (mkldnn) or OpenMP of its own, so those report unavailable, and their flags are kept (typed as torch's,
with torch's errors) for the programs that set them (``torch.backends.cudnn.benchmark = True``).

    cudnn   enabled benchmark deterministic allow_tf32 benchmark_limit, is_available() version() flags()
    cuda    is_built(), matmul.allow_tf32 / allow_fp16_reduced_precision_reduction / ..., the SDPA switches
    mps     is_available() is_built()       cpu  get_cpu_capability()     mkldnn / openmp / mkl  is_available()
    opt_einsum  is_available() enabled strategy
    nnpack / miopen / mha / quantized / cusparselt / kleidiai  their switches; none of these libraries is used
"""
import contextlib
import importlib.machinery
import sys
import types

from .. import backend as _backend

__all__ = ["cudnn", "cuda", "mps", "cpu", "mkldnn", "openmp", "mkl", "opt_einsum", "nnpack", "miopen", "mha",
           "quantized", "cusparselt", "kleidiai"]


def _flag(setter_name, key, kind=bool):
    """A module property holding one typed switch, refusing another type with torch's message."""
    def get(self):
        return self._state[key]

    def set_(self, value):
        if kind is bool and not isinstance(value, bool):
            raise RuntimeError(f"{setter_name} expects a bool, but got {type(value).__name__}")
        if kind is int and not (value is None or isinstance(value, int) and not isinstance(value, bool)):
            raise TypeError(f"{setter_name} expects an int, but got {type(value).__name__}")
        self._state[key] = value
    return property(get, set_)


class _Backend(types.ModuleType):
    """A torch.backends.<name> module whose switches are typed properties."""

    def __init__(self, name, state):
        super().__init__(f"{__name__}.{name}")
        object.__setattr__(self, "_state", dict(state))
        # a spec, so that `import torch.backends.cudnn` finds it through glassgrad's torch alias too
        object.__setattr__(self, "__spec__", importlib.machinery.ModuleSpec(self.__name__, None))


class _Cudnn(_Backend):
    enabled = _flag("set_enabled_cudnn", "enabled")
    benchmark = _flag("set_benchmark_cudnn", "benchmark")
    deterministic = _flag("set_deterministic_cudnn", "deterministic")
    allow_tf32 = _flag("set_allow_tf32_cudnn", "allow_tf32")
    benchmark_limit = _flag("set_cudnn_benchmark_limit", "benchmark_limit", int)

    @staticmethod
    def is_available():
        """cuDNN is usable only on a GPU with CuPy's cuDNN bindings (glassgrad's CPU path has none)."""
        if not _backend.cuda_available():
            return False
        try:
            import cupy.cuda.cudnn  # noqa: F401
        except ImportError:
            return False
        return True

    def version(self):
        if not self.is_available():
            return None
        import cupy.cuda.cudnn as c
        return c.getVersion()

    @staticmethod
    def is_acceptable(tensor):
        return _Cudnn.is_available() and tensor.device.type == "cuda"

    @contextlib.contextmanager
    def flags(self, enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
        """Set the switches for the block, then restore them (torch.backends.cudnn.flags)."""
        old = dict(self._state)
        self.enabled, self.benchmark, self.deterministic, self.allow_tf32 = enabled, benchmark, deterministic, allow_tf32
        if benchmark_limit is not None:
            self.benchmark_limit = benchmark_limit
        try:
            yield
        finally:
            self._state.update(old)


class _Matmul:
    """torch.backends.cuda.matmul: the reduced-precision switches of GPU matmuls."""
    _KEYS = {"allow_tf32": False, "allow_fp16_reduced_precision_reduction": True,
             "allow_bf16_reduced_precision_reduction": True, "allow_fp16_accumulation": False}

    def __init__(self):
        object.__setattr__(self, "_state", dict(self._KEYS))

    def __getattr__(self, name):
        if name in self._KEYS:
            return self._state[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name not in self._KEYS:
            raise AttributeError(f"Unknown attribute {name}")
        if not isinstance(value, bool):
            raise RuntimeError(f"set_{name} expects a bool, but got {type(value).__name__}")
        self._state[name] = value


class _Cuda(_Backend):
    @staticmethod
    def is_built():
        """Whether glassgrad can run on CUDA here: CuPy is installed (torch: built with CUDA)."""
        try:
            import cupy  # noqa: F401
        except ImportError:
            return False
        return True

    def preferred_linalg_library(self, backend=None):
        return self._state["linalg"] if backend is None else self._state.__setitem__("linalg", backend)


def _sdp_switch(key):
    def enabled(self):
        return self._state[key]

    def enable(self, enabled):
        self._state[key] = bool(enabled)
    return enabled, enable


for _k in ("flash", "mem_efficient", "math", "cudnn"):
    _e, _en = _sdp_switch(_k + "_sdp")
    setattr(_Cuda, f"{_k}_sdp_enabled", _e)
    setattr(_Cuda, f"enable_{_k}_sdp", _en)


class _Mps(_Backend):
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def is_built():
        return False


class _Cpu(_Backend):
    @staticmethod
    def get_cpu_capability():
        """The widest vector unit NumPy dispatches to here, in torch's words (AVX512, AVX2, DEFAULT)."""
        try:
            from numpy._core._multiarray_umath import __cpu_features__ as f
        except ImportError:
            return "DEFAULT"
        if f.get("AVX512F") and f.get("AVX512BW") and f.get("AVX512VL") and f.get("AVX512DQ"):
            return "AVX512"
        return "AVX2" if f.get("AVX2") and f.get("FMA3") else "DEFAULT"


class _Unavailable(_Backend):
    """A library glassgrad does not use (oneDNN, OpenMP): not available; its `enabled` switch is kept."""
    enabled = _flag("set_enabled_mkldnn", "enabled")

    @staticmethod
    def is_available():
        return False


class _Mkl(_Backend):
    VERBOSE_OFF, VERBOSE_ON = 0, 1

    @staticmethod
    def is_available():
        """Intel MKL's GEMM is used when the optional `mkl` wheel is installed (glassgrad[mkl], _blas.py)."""
        from .. import _blas
        return _blas._load_mkl() is not None


class _OptEinsum(_Backend):
    enabled = _flag("set_enabled_opt_einsum", "enabled")
    strategy = _flag("set_opt_einsum_strategy", "strategy", str)

    @staticmethod
    def is_available():
        return False        # glassgrad's einsum contracts with NumPy's own path search


def _flags_of(module, names):
    """torch's set_flags(*values) -> previous values, and flags(...) restoring them, over `module`'s switches."""
    def set_flags(*values):
        orig = tuple(getattr(module, n) for n in names)
        for n, v in zip(names, values):
            if v is not None:
                setattr(module, n, v)
        return orig

    @contextlib.contextmanager
    def flags(*values):
        orig = set_flags(*values)
        try:
            yield
        finally:
            set_flags(*orig)
    return set_flags, flags


class _Nnpack(_Unavailable):
    """NNPACK (torch's mobile conv kernels): glassgrad does not use it."""
    enabled = _flag("set_nnpack_enabled", "enabled")


class _Miopen(_Backend):
    """MIOpen (AMD's cuDNN): glassgrad does not use it; the `immediate` switch is kept."""
    immediate = _flag("set_miopen_immediate", "immediate")


class _Mha(_Backend):
    """The fast path of TransformerEncoder / MultiheadAttention: glassgrad computes one path only, whose results
    the switch does not change; it is kept for the programs that set it."""

    def get_fastpath_enabled(self):
        return self._state["fastpath"]

    def set_fastpath_enabled(self, value):
        self._state["fastpath"] = value


_QENGINES = ("none", "fbgemm", "qnnpack", "onednn", "x86")


class _Quantized(_Backend):
    """Quantized engines: glassgrad has no quantized tensors, so none is supported but "none"."""

    @property
    def engine(self):
        return self._state["engine"]

    @engine.setter
    def engine(self, value):
        if value not in _QENGINES and value is not None:
            raise RuntimeError(f"{value} is not a valid value for quantized engine")
        if value not in (None, "", "none"):
            raise RuntimeError(f"quantized engine {value} is not supported (glassgrad has no quantized tensors)")
        self._state["engine"] = "none"

    @property
    def supported_engines(self):
        return ["none"]

    @supported_engines.setter
    def supported_engines(self, value):
        raise RuntimeError("Assignment not supported")


class _Cusparselt(_Backend):
    """cuSPARSELt (2:4 sparse GEMM on NVIDIA GPUs): not used by glassgrad."""

    @staticmethod
    def is_available():
        return False

    @staticmethod
    def version():
        return None

    @staticmethod
    def get_max_alg_id():
        return None


cudnn = _Cudnn("cudnn", {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True,
                         "benchmark_limit": None})     # (None: no cuDNN to benchmark, as torch's CPU build)
cuda = _Cuda("cuda", {"linalg": "default", "flash_sdp": True, "mem_efficient_sdp": True, "math_sdp": True,
                      "cudnn_sdp": True})
cuda.matmul = _Matmul()
mps = _Mps("mps", {})
cpu = _Cpu("cpu", {})
mkldnn = _Unavailable("mkldnn", {"enabled": True})
openmp = _Unavailable("openmp", {"enabled": True})
mkl = _Mkl("mkl", {})
opt_einsum = _OptEinsum("opt_einsum", {"enabled": False, "strategy": None})
nnpack = _Nnpack("nnpack", {"enabled": True})
nnpack.set_flags, nnpack.flags = _flags_of(nnpack, ("enabled",))
miopen = _Miopen("miopen", {"immediate": False})
miopen.set_flags, miopen.flags = _flags_of(miopen, ("immediate",))
mha = _Mha("mha", {"fastpath": True})
quantized = _Quantized("quantized", {"engine": "none"})
cusparselt = _Cusparselt("cusparselt", {})
kleidiai = _Unavailable("kleidiai", {})
for _m in (cudnn, cuda, mps, cpu, mkldnn, openmp, mkl, opt_einsum, nnpack, miopen, mha, quantized, cusparselt, kleidiai):
    sys.modules[_m.__name__] = _m
