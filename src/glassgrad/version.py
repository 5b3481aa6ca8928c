"""torch.version: glassgrad's version and what it runs against.  `cuda` is the CUDA runtime version of the CuPy
that serves glassgrad's GPU path (None without CuPy: the CPU path needs no CUDA; asked for on first use, so
importing this module never loads CuPy); glassgrad has no HIP or XPU build."""

__version__ = "0.1.0"          # (pyproject.toml carries the same)
debug = False
git_version = "unknown"
hip = None
rocm = None
xpu = None


def __getattr__(name):
    if name == "cuda":
        try:
            import cupy
        except ImportError:
            return None
        v = cupy.cuda.runtime.runtimeGetVersion()          # e.g. 12080 -> "12.8"
        return f"{v // 1000}.{v % 1000 // 10}"
    raise AttributeError(f"module 'torch.version' has no attribute '{name}'")
