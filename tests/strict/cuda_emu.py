"""A CPU emulation of the part of CuPy's kernel API glassgrad's fused kernels use (``RawKernel``,
``ElementwiseKernel``), so that _cuda_kernels.py's CUDA C runs -- and is tested -- on machines without a GPU.

The kernel source is compiled by the host C++ compiler behind a small prelude that defines CUDA's names
(``threadIdx`` / ``blockIdx`` / ``blockDim`` / ``gridDim``, ``__global__`` / ``__device__`` / ``__shared__``,
``__syncthreads``, ``atomicAdd``, the ``__int_as_float`` family, the math overloads CUDA has for float).  A launch
runs the grid's blocks one after another; a block's threads are cooperative contexts (``ucontext``) on one OS
thread, and ``__syncthreads`` switches to the next thread, so every thread of a block reaches a barrier before any
passes it -- CUDA's semantics, run deterministically.  ``__shared__`` variables are ``static`` (one block runs at a
time); threads that have returned no longer hold a barrier up (as on the GPU).  Atomics are plain read-modify-
writes, which is exact under cooperative scheduling.

Every kernel source is also compiled by NVRTC, CuPy's own compiler (``nvrtc_compile``; pip's nvidia-cuda-nvrtc,
no GPU needed), for an H100: what NVRTC rejects fails here although g++ took it.

What it checks: the kernels' logic -- indexing, bounds, the reduction trees, barriers, the arithmetic in each
rounding step -- against the array code, on the strict stand-in device's arrays (arguments are CuPy's: device
arrays by pointer, NumPy scalars by value; a host ndarray is refused with CuPy's TypeError).  What it cannot:
CUDA's own math library (``exp`` / ``log`` within their documented ulps there, glibc's here), warp-level
primitives (none are used), and timing.  ``--fmad=false`` compiles with ``-ffp-contract=off``; without it the
emulation contracts a * b + c into an FMA where the host CPU has one, as nvcc does.
"""
import ctypes
import glob
import hashlib
import os
import re
import shutil
import subprocess
import tempfile

import numpy as np

from glassgrad import _strict

__all__ = ["compiler", "Kit"]

_PRELUDE = r"""
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <ucontext.h>
/* NVRTC has none of the host headers' macros: a kernel that used them would compile here and not there */
#undef INFINITY
#undef NAN
#undef HUGE_VAL
#undef HUGE_VALF
#undef M_PI
#undef M_SQRT2
#undef M_SQRT1_2
#undef M_2_SQRTPI
#undef M_LN2
#undef M_E

struct dim3 { unsigned int x, y, z; };
static dim3 threadIdx, blockIdx, blockDim, gridDim;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__ __restrict

static inline float __int_as_float(int v) { float f; memcpy(&f, &v, 4); return f; }
static inline int __float_as_int(float v) { int i; memcpy(&i, &v, 4); return i; }
static inline unsigned int __float_as_uint(float v) { unsigned int i; memcpy(&i, &v, 4); return i; }
static inline float __uint_as_float(unsigned int v) { float f; memcpy(&f, &v, 4); return f; }
static inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, 8); return d; }
static inline long long __double_as_longlong(double v) { long long i; memcpy(&i, &v, 8); return i; }
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rsqrt(float x) { return 1.0f / sqrtf(x); }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline int min(int a, int b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline float atomicAdd(float* p, float v) { float o = *p; *p = o + v; return o; }
static inline double atomicAdd(double* p, double v) { double o = *p; *p = o + v; return o; }
static inline int atomicAdd(int* p, int v) { int o = *p; *p = o + v; return o; }
static inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    unsigned long long o = *p; *p = o + v; return o; }

/* the block's threads as cooperative contexts */
static ucontext_t emu_main;
static ucontext_t* emu_ctx;
static char* emu_stacks;
static int* emu_done;
static int emu_cur;
static int emu_coop;
#define EMU_STACK (64 * 1024)

static void __syncthreads() {
    if (emu_coop) swapcontext(&emu_ctx[emu_cur], &emu_main);
}
static void __threadfence() {}
static void __threadfence_block() {}
"""

_LAUNCHER = r"""
static void** emu_argv;
static void emu_entry() {
    emu_invoke();
    emu_done[emu_cur] = 1;
}

static void emu_set_thread(unsigned t) {
    threadIdx.x = t % blockDim.x;
    threadIdx.y = (t / blockDim.x) % blockDim.y;
    threadIdx.z = t / (blockDim.x * blockDim.y);
}

extern "C" int emu_launch(void** argv, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                          unsigned bz, int coop) {
    emu_argv = argv;
    gridDim.x = gx; gridDim.y = gy; gridDim.z = gz;
    blockDim.x = bx; blockDim.y = by; blockDim.z = bz;
    unsigned n = bx * by * bz;
    emu_coop = coop;
    if (coop) {
        emu_ctx = (ucontext_t*)calloc(n, sizeof(ucontext_t));
        emu_stacks = (char*)malloc((size_t)n * EMU_STACK);
        emu_done = (int*)calloc(n, sizeof(int));
        if (!emu_ctx || !emu_stacks || !emu_done) return 1;
    }
    int rc = 0;
    for (unsigned z = 0; z < gz; ++z) for (unsigned y = 0; y < gy; ++y) for (unsigned x = 0; x < gx; ++x) {
        blockIdx.x = x; blockIdx.y = y; blockIdx.z = z;
        if (!coop) {
            for (unsigned t = 0; t < n; ++t) { emu_set_thread(t); emu_invoke(); }
            continue;
        }
        for (unsigned t = 0; t < n; ++t) {
            getcontext(&emu_ctx[t]);
            emu_ctx[t].uc_stack.ss_sp = emu_stacks + (size_t)t * EMU_STACK;
            emu_ctx[t].uc_stack.ss_size = EMU_STACK;
            emu_ctx[t].uc_link = &emu_main;
            makecontext(&emu_ctx[t], emu_entry, 0);
            emu_done[t] = 0;
        }
        unsigned live = n;
        while (live) {               /* one pass = every live thread runs to its next barrier or its end */
            live = 0;
            for (unsigned t = 0; t < n; ++t) {
                if (emu_done[t]) continue;
                emu_cur = (int)t;
                emu_set_thread(t);
                swapcontext(&emu_main, &emu_ctx[t]);
                if (!emu_done[t]) ++live;
            }
        }
    }
    if (coop) { free(emu_ctx); free(emu_stacks); free(emu_done); }
    return rc;
}
"""

# NumPy dtype -> the C type CuPy passes a scalar of it as
_CTYPES = {np.dtype(np.bool_): "bool", np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char",
           np.dtype(np.int16): "short", np.dtype(np.uint16): "unsigned short", np.dtype(np.int32): "int",
           np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long",
           np.dtype(np.uint64): "unsigned long long", np.dtype(np.float32): "float", np.dtype(np.float64): "double"}

# CuPy's type names in ElementwiseKernel parameter lists
_TYPE_NAMES = {"bool": np.bool_, "int8": np.int8, "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
               "int32": np.int32, "uint32": np.uint32, "int64": np.int64, "uint64": np.uint64,
               "float32": np.float32, "float64": np.float64, "float": np.float32, "double": np.float64,
               "int": np.int32, "long long": np.int64}


def compiler():
    """The host C++ compiler the emulation needs, or None."""
    return shutil.which(os.environ.get("CXX", "g++"))


# NVRTC, the compiler CuPy runs its kernels through (pip's nvidia-cuda-nvrtc, a test dependency on Linux x86-64):
# every kernel source the emulation builds is also compiled by it for an H100 (sm_90, a cubin), with the kernel's
# options -- so code that g++ takes but NVRTC does not (a host header's macro, a missing builtin, a type error
# CUDA's overloads expose) fails here, not on the first GPU.  No GPU is needed to compile.
_nvrtc = []
_NVRTC_ARCH = "--gpu-architecture=sm_90"     # through ptxas to an H100 cubin: resource limits checked too


def nvrtc():
    """The NVRTC library (ctypes), or None where it is not installed."""
    if not _nvrtc:
        lib = None
        try:
            import nvidia
            for d in list(nvidia.__path__):
                for path in sorted(glob.glob(os.path.join(d, "*", "lib", "libnvrtc.so*"))):
                    if "builtins" not in path:
                        lib = ctypes.CDLL(path)
                        break
        except (ImportError, OSError):
            lib = None
        _nvrtc.append(lib)
    return _nvrtc[0]


_nvrtc_ok = set()


def nvrtc_compile(source, options=()):
    """Compile `source` with NVRTC as CuPy would (raises RuntimeError with NVRTC's log when it does not compile;
    does nothing where NVRTC is not installed)."""
    lib = nvrtc()
    opts = tuple(o for o in options if o.startswith("-")) + (_NVRTC_ARCH,)
    key = hashlib.sha256(("\0".join(opts) + source).encode()).hexdigest()
    if lib is None or key in _nvrtc_ok:
        return
    prog = ctypes.c_void_p()
    if lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), b"kernel.cu", 0, None, None):
        raise RuntimeError("cuda_emu: nvrtcCreateProgram failed")
    enc = [o.encode() for o in opts]
    rc = lib.nvrtcCompileProgram(prog, len(enc), (ctypes.c_char_p * len(enc))(*enc))
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(max(size.value, 1))
    lib.nvrtcGetProgramLog(prog, log)
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    if rc:
        raise RuntimeError("cuda_emu: NVRTC (CuPy's compiler) rejects the kernel:\n"
                           + log.value.decode(errors="replace")[-4000:])
    _nvrtc_ok.add(key)


def _has_fma():
    try:
        with open("/proc/cpuinfo") as f:
            return " fma" in f.read()
    except OSError:
        return False


_libs = {}


def _build(source, options):
    flags = ["-O1", "-std=c++17", "-shared", "-fPIC", "-w"]
    if "--fmad=false" in options:
        flags.append("-ffp-contract=off")
    elif _has_fma():
        flags += ["-mfma", "-ffp-contract=fast"]
    cxx = compiler()
    if cxx is None:
        raise RuntimeError("cuda_emu: no C++ compiler (g++) to build the kernel emulation")
    key = hashlib.sha256((cxx + " ".join(flags) + source).encode()).hexdigest()[:24]
    lib = _libs.get(key)
    if lib is not None:
        return lib
    d = os.path.join(tempfile.gettempdir(), "glassgrad-cuda-emu")
    os.makedirs(d, exist_ok=True)
    so = os.path.join(d, key + ".so")
    if not os.path.exists(so):
        fd, src = tempfile.mkstemp(suffix=".cpp", dir=d)
        with os.fdopen(fd, "w") as f:
            f.write(source)
        tmp = src[:-4] + ".so"
        r = subprocess.run([cxx, *flags, src, "-o", tmp], capture_output=True, text=True)
        os.unlink(src)
        if r.returncode:
            raise RuntimeError("cuda_emu: the kernel does not compile:\n" + r.stderr[-4000:])
        os.replace(tmp, so)
    lib = _libs[key] = ctypes.CDLL(so)
    return lib


def _dims(d):
    d = (d,) if isinstance(d, int) else tuple(int(v) for v in d)
    return d + (1,) * (3 - len(d))


def _arg(a):
    """(C type, ctypes object holding the value) for one kernel argument, as CuPy passes it."""
    if isinstance(a, _strict.StrictArray):
        return "void*", ctypes.c_void_p(a._a.ctypes.data)
    if isinstance(a, np.ndarray):
        raise TypeError(f"Unsupported type {type(a)}")            # CuPy's kernels take no host arrays
    if isinstance(a, bool):
        a = np.bool_(a)
    elif isinstance(a, int):
        a = np.int64(a)
    elif isinstance(a, float):
        a = np.float64(a)
    if not isinstance(a, np.generic) or a.dtype not in _CTYPES:
        raise TypeError(f"Unsupported type {type(a)}")
    buf = np.array(a)                                                  # host memory for the value
    return _CTYPES[a.dtype], buf


def _argv(objs):
    keep = []
    argv = (ctypes.c_void_p * max(len(objs), 1))()
    for i, o in enumerate(objs):
        if isinstance(o, ctypes.c_void_p):
            keep.append(o)
            argv[i] = ctypes.addressof(o)
        else:
            keep.append(o)
            argv[i] = o.ctypes.data
    return argv, keep


def _launched(name):
    """One kernel launch, for _strict.counting (bench/launches.py --fused): the emulation runs on host memory, so
    no device call would count it otherwise."""
    if _strict._counts is not None:
        _strict._count(name)


class RawKernel:
    def __init__(self, code, name, options=(), **kwargs):
        self.code, self.name, self.options = code, name, tuple(options)

    def __call__(self, grid, block, args, shared_mem=0):
        typed = [_arg(a) for a in args]
        sig = ", ".join(t for t, _ in typed)
        call = ", ".join(f"*({t}*)emu_argv[{i}]" for i, (t, _) in enumerate(typed))
        nvrtc_compile(self.code, self.options)
        source = (_PRELUDE + "\n#line 1 \"kernel\"\n" + self.code + "\n"
                  + "static void** emu_argv;\n"
                  + f"typedef void (*emu_fn_t)({sig});\n"
                  + f"static void emu_invoke() {{ ((emu_fn_t)&{self.name})({call}); }}\n"
                  + _LAUNCHER.replace("static void** emu_argv;\n", "", 1))
        lib = _build(source, self.options)
        _launched(self.name)
        argv, keep = _argv([o for _, o in typed])
        g, b = _dims(grid), _dims(block)
        if b[0] * b[1] * b[2] > 1024:
            raise ValueError("cuda_emu: more than 1024 threads in a block")
        rc = lib.emu_launch(argv, *(ctypes.c_uint(v) for v in g + b), ctypes.c_int("__syncthreads" in self.code))
        del keep
        if rc:
            raise MemoryError("cuda_emu: could not allocate the block's contexts")


_PARAM = re.compile(r"^\s*(raw\s+)?(.+?)\s+(\w+)\s*$")


def _params(spec):
    out = []
    for p in spec.split(","):
        if not p.strip():
            continue
        m = _PARAM.match(p)
        if m is None:
            raise ValueError(f"cuda_emu: cannot parse parameter {p!r}")
        out.append((bool(m.group(1)), m.group(2).strip(), m.group(3)))
    return out


class ElementwiseKernel:
    def __init__(self, in_params, out_params, operation, name="kernel", preamble="", options=(), **kwargs):
        self.ins, self.outs = _params(in_params), _params(out_params)
        self.operation, self.name, self.preamble, self.options = operation, name, preamble, tuple(options)

    def __call__(self, *args, size=None):
        params = self.ins + self.outs
        if len(args) not in (len(self.ins), len(params)):
            raise TypeError(f"Wrong number of arguments for {self.name!r}")
        for a in args:
            if isinstance(a, np.ndarray):
                raise TypeError(f"Unsupported type {type(a)}")
        # type placeholders: bound by the arrays, else by the scalars (CuPy's order)
        bound = {}
        for (raw, t, name), a in zip(params, args):
            if t not in _TYPE_NAMES and isinstance(a, _strict.StrictArray):
                if bound.setdefault(t, a.dtype) != a.dtype:
                    raise TypeError(f"Type is mismatched. {name} {a.dtype} {bound[t]}")
        for (raw, t, name), a in zip(params, args):
            if t not in _TYPE_NAMES and t not in bound:
                bound[t] = np.asarray(a).dtype if isinstance(a, np.generic) else np.dtype(
                    np.float64 if isinstance(a, float) else np.int64)

        def dtype_of(t):
            return np.dtype(_TYPE_NAMES[t]) if t in _TYPE_NAMES else bound[t]

        arrays = [a._a for (raw, _, _), a in zip(params, args) if isinstance(a, _strict.StrictArray) and not raw]
        shape = np.broadcast_shapes(*(x.shape for x in arrays)) if arrays else ()
        if len(args) == len(self.ins):
            args = args + tuple(_strict.wrap(np.empty(shape, dtype_of(t))) for _, t, _ in self.outs)
        bufs, writeback = [], []
        for k, ((raw, t, name), a) in enumerate(zip(params, args)):
            dt = dtype_of(t)
            if isinstance(a, _strict.StrictArray):
                x = a._a
                if raw:
                    buf = np.ascontiguousarray(x)
                elif k >= len(self.ins):
                    if x.shape != shape:
                        raise ValueError(f"Out shape is mismatched: {x.shape} {shape}")
                    buf = np.ascontiguousarray(x, dtype=dt)
                    if buf is not x:
                        writeback.append((x, buf))
                else:
                    buf = np.ascontiguousarray(np.broadcast_to(x, shape).astype(dt, copy=False))
            else:
                buf = np.array(a, dtype=dt).reshape(1)
            bufs.append(buf)
        n = int(np.prod(shape)) if size is None else int(size)
        lines = [f"typedef {_CTYPES[v]} {k};" for k, v in bound.items()]
        body = []
        for k, ((raw, t, name), a) in enumerate(zip(params, args)):
            ct = t if t in bound else _CTYPES[dtype_of(t)]
            scalar = not isinstance(a, _strict.StrictArray)
            if raw:
                body.append(f"{ct}* {name} = ({ct}*)_p[{k}];")
            elif k < len(self.ins):
                body.append(f"const {ct} {name} = (({ct}*)_p[{k}])[{'0' if scalar else 'i'}];")
            else:
                body.append(f"{ct} &{name} = (({ct}*)_p[{k}])[i];")
        nvrtc_compile("\n".join(lines) + "\n" + self.preamble + "\n"           # the same body as a CUDA kernel
                      + f"extern \"C\" __global__ void {self.name}(long long _n, void** _p) {{\n"
                      + "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _n;"
                      + " i += (long long)blockDim.x * gridDim.x) {\n    " + "\n    ".join(body)
                      + "\n    {\n" + self.operation + "\n    }\n  }\n}\n", self.options)
        source = (_PRELUDE + "\n".join(lines) + "\n" + self.preamble + "\n"
                  + "extern \"C\" void emu_elementwise(long long _n, void** _p) {\n"
                  + "  for (long long i = 0; i < _n; ++i) {\n    " + "\n    ".join(body)
                  + "\n#line 1 \"operation\"\n    {\n" + self.operation + "\n    }\n  }\n}\n")
        lib = _build(source, self.options)
        _launched(self.name)
        argv, keep = _argv(bufs)
        lib.emu_elementwise(ctypes.c_longlong(n), argv)
        del keep
        for x, buf in writeback:
            x[...] = buf
        outs = args[len(self.ins):]
        return outs[0] if len(outs) == 1 else outs


class Kit:
    """What _cuda_kernels needs of CuPy: the two kernel classes, and array creation on the strict device."""
    RawKernel = RawKernel
    ElementwiseKernel = ElementwiseKernel

    def __getattr__(self, name):
        return getattr(_strict.xp, name)


class Counting:
    """Real CuPy (on a GPU) with each fused kernel's launch counted in _strict.counting, as the emulation counts
    them -- so the tests that check which kernels ran hold on a GPU too."""

    def __init__(self, cp):
        self._cp = cp

    def RawKernel(self, code, name, *args, **kwargs):
        return _Counted(self._cp.RawKernel(code, name, *args, **kwargs), name)

    def ElementwiseKernel(self, in_params, out_params, operation, name="kernel", *args, **kwargs):
        return _Counted(self._cp.ElementwiseKernel(in_params, out_params, operation, name, *args, **kwargs), name)

    def __getattr__(self, name):
        return getattr(self._cp, name)


class _Counted:
    def __init__(self, kernel, name):
        self._kernel, self._name = kernel, name

    def __call__(self, *args, **kwargs):
        _launched(self._name)
        return self._kernel(*args, **kwargs)
