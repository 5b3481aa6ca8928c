"""torch.version: glassgrad's version and what it runs against.  `cuda` is the CUDA runtime version of the CuPy
that serves glassgrad's GPU path (None without CuPy: the CPU path needs no CUDA; asked for on first use, so
importing this module never loads CuPy); glassgrad has no HIP or XPU build."""

glassgrad_version = "0.1.0"    # glassgrad's own release (pyproject.toml carries the same)
# torch.__version__: the torch release whose API and semantics glassgrad implements (its test oracle), with
# glassgrad's release as the local label (as torch's "2.13.0+cpu"): libraries that pick code paths by
# `torch.__version__ >= "2.2"` then take torch 2.13's, not a 0.x torch's
__version__ = "2.13.0+glassgrad." + glassgrad_version
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
