"""Bit-exact replica of PyTorch's CPU random number generator, on NumPy arrays.

This package is the public face of the replica: it re-exports the samplers
(``rand``, ``uniform``, ``randn``, ``normal``, ``randint``, ``random_``,
``randperm``, ``bernoulli_scalar``, ``bernoulli_tensor``, ``exponential``,
``geometric``, ``log_normal``, ``cauchy``, ``multinomial``), the ``Generator``
class, ``default_generator``/``manual_seed``, the constants ``DEFAULT_SEED``,
``STATE_SIZE`` and ``CPU_KERNEL``, and the private kernels the tests reach in
for; the code lives in ``common`` (dtypes, kernel detection, shape helpers,
24/53-bit uniforms), ``engine`` (MT19937 and ``Generator``), ``kernels``
(exact FMA, glibc libm, avx_mathfun log/sincos, 16-wide normal fills),
``continuous`` (uniform/normal/log_normal/cauchy/exponential), ``discrete``
(random_/randint/randperm/bernoulli/geometric) and ``categorical``
(multinomial with torch's topk tie order).  To mimic torch's baseline (non-AVX)
build, set ``glassgrad._rng.common.CPU_KERNEL = "default"``.

The replica reproduces, element for element, what ``torch`` (x86-64 Linux CPU
build, glibc) writes into a contiguous tensor when it is filled by ``rand``,
``uniform_``, ``randn``/``normal_``, ``randint``/``random_``, ``randperm``,
``bernoulli``/``bernoulli_`` (incl. dropout masks), ``exponential_``,
``geometric_``, ``log_normal_``, ``cauchy_`` and ``multinomial`` -- and it
consumes the generator state exactly like torch, so any interleaving of calls
stays in lock-step with torch after the same seed, and ``get_state()`` is
byte-identical to ``torch.Generator.get_state()``.

How torch does it (each point verified against torch 2.13 CPU):

* Engine: plain MT19937 whose state comes from the classic ``init_genrand``
  recurrence on the low 32 bits of the 64-bit seed.  ``random()`` is one 32-bit
  output, ``random64()`` is two, ``(first << 32) | second``.  NumPy's
  ``MT19937`` bit generator runs the same recurrence and tempering, so only its
  key/position are set here and ``random_raw`` supplies vectorised draws.
* Uniform floats: ``(bits & (2**digits - 1)) * 2**-digits`` with 24 digits for
  float32 (float16 is computed in float32, then rounded), 53 digits (from
  ``random64``) for float64.  ``x * (to - from) + from`` is compiled into a
  fused multiply-add, and a value that rounds up to ``to`` becomes ``from``.
* ``randn``/``normal_``: ``numel >= 16`` uses the 16-wide Box-Muller fill (the
  last 16 outputs recomputed from 16 fresh uniforms when ``numel % 16``).  The
  float32/float16 kernel uses the AVX2 ``avx_mathfun`` log/sincos polynomials
  with the FMA contractions GCC applied.  The float64 kernel uses glibc
  ``log``/``cos``/``sin`` and an explicit ``fma``.  ``numel < 16`` uses the
  scalar double Box-Muller with the cached second sample, which is shared with
  the generator state.
* Integers: ``(bits % range) + from`` with a 32-bit draw, or a 64-bit draw
  when ``range >= 2**28`` (public builds; Meta-internal ones use 2**32).
* ``bernoulli_(float p)``: one ``random64`` per element, ``u53 < p``.  torch's
  MKL/VSL variant is compiled only into Meta-internal (FBCODE) builds.

Exactness devices: fused multiply-adds are emulated exactly (float32 via
float64 with a double-rounding fix-up, float64 via error-free transformations
and round-to-odd); glibc ``log``/``log1p`` come from :mod:`math` (NumPy's SIMD
versions differ from glibc in a fraction of the inputs).  NumPy's float64
``sin``/``cos`` call libm and are used after a quick probe.
``CPU_KERNEL`` selects torch's AVX2/AVX512 kernels ("avx2") or its baseline
build ("default", used by torch without AVX2/FMA or with
``ATEN_CPU_CAPABILITY=default``); it is detected like torch does.

Only NumPy and the standard library are used.
"""

from __future__ import annotations


from . import categorical, common, continuous, discrete, engine, kernels
from .categorical import multinomial
from .common import CPU_KERNEL
from .continuous import cauchy, exponential, log_normal, normal, rand, randn, uniform
from .discrete import bernoulli_scalar, bernoulli_tensor, geometric, randint, random_, randperm
from .engine import DEFAULT_SEED, STATE_SIZE, Generator, default_generator, manual_seed  # noqa: F401
from .kernels import _TWO_PI_F, _fma32, _fma32_fast, _fma64, _log256, _sincos256  # noqa: F401

__all__ = [
    "DEFAULT_SEED",
    "CPU_KERNEL",
    "Generator",
    "default_generator",
    "manual_seed",
    "rand",
    "uniform",
    "randn",
    "normal",
    "randint",
    "random_",
    "randperm",
    "bernoulli_scalar",
    "bernoulli_tensor",
    "exponential",
    "geometric",
    "log_normal",
    "cauchy",
    "multinomial",
]

_SUBMODULES = (common, engine, kernels, continuous, discrete, categorical)

