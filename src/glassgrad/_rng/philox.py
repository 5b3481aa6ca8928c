"""torch's CUDA generator: curand's Philox4x32-10 engine and the launch layout of ATen's CUDA random kernels, on
any array module (CuPy on a GPU, the strict stand-in device, NumPy in the tests).

How torch does it (ATen's CUDAGeneratorImpl, DistributionTemplates.h, Dropout.cu; curand_kernel.h):

* State: a 64-bit seed and a 64-bit ``philox_offset_per_thread``; ``manual_seed`` sets the seed and zeroes the
  offset; ``get_state()`` is 16 bytes, seed then offset (little-endian).  The default seed is 67280421310721.
* Each launch takes ``philox_cuda_state(increment)``: the current offset, which then advances by ``increment``
  rounded up to a multiple of 4.
* Thread ``i`` of a launch runs ``curand_init(seed, i, offset)``: a Philox counter whose high 64 bits are the
  subsequence ``i`` and whose low 64 bits are ``offset / 4``, the key being the seed; its k-th ``curand4`` call
  returns the four 32-bit words of Philox4x32-10 at counter low + k.
* The grid: 256 threads per block, ``min(ceil(n / 256), SMs * (threads per SM / 256))`` blocks (132 SMs x 2048
  threads on an H100); a kernel unrolled ``u`` times (4 for float-like outputs, 2 for double) gives element
  ``li = j * T * u + ii * T + i`` (T threads) the ii-th value of thread i's j-th call, and advances the offset by
  ``4 * ceil(n / (T * u))``.

``words`` below computes those words with array arithmetic (64-bit products give the 32-bit mulhi/mullo), so a
device tensor's random numbers are made on its device.
"""
import os

import numpy as np

__all__ = ["DEFAULT_SEED", "PhiloxState", "philox4x32", "layout", "unrolled", "arrange", "vec_words"]

DEFAULT_SEED = 67280421310721        # ATen's default_rng_seed_val
_U64 = (1 << 64) - 1
_MASK = np.uint64(0xFFFFFFFF)
_SH32 = np.uint64(32)
_M0, _M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
_W0, _W1 = 0x9E3779B9, 0xBB67AE85
BLOCK = 256


class PhiloxState:
    """A CUDA generator's state: seed and Philox offset (the engine is stateless: a counter per draw)."""

    def __init__(self, seed=DEFAULT_SEED):
        self.seed_ = seed & _U64
        self.offset = 0

    def manual_seed(self, seed):
        self.seed_ = int(seed) & _U64
        self.offset = 0

    def seed(self):
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self.seed_

    def take(self, increment):
        """philox_cuda_state(increment): the offset for this launch; the state moves past it."""
        off = self.offset
        self.offset = (off + ((increment + 3) // 4) * 4) & _U64
        return off

    def get_state(self):
        return np.frombuffer(self.seed_.to_bytes(8, "little") + self.offset.to_bytes(8, "little"), np.uint8).copy()

    def set_state(self, state):
        b = bytes(np.asarray(state, np.uint8).reshape(-1))
        if len(b) != 16:
            raise RuntimeError("RNG state is wrong size")
        self.seed_ = int.from_bytes(b[:8], "little")
        self.offset = int.from_bytes(b[8:], "little")

    def clone(self):
        c = PhiloxState(self.seed_)
        c.offset = self.offset
        return c


def philox4x32(c0, c1, c2, c3, key):
    """Philox4x32-10 (Salmon et al. 2011; curand's and Random123's) of counters (c0, c1, c2, c3), 32-bit values
    held in uint64 arrays (broadcastable), under the 64-bit `key`: the four output words, uint64 arrays."""
    k0, k1 = key & 0xFFFFFFFF, (key >> 32) & 0xFFFFFFFF
    for _ in range(10):
        p0 = c0 * _M0
        p1 = c2 * _M1
        c0, c1, c2, c3 = (p1 >> _SH32) ^ c1 ^ np.uint64(k0), p1 & _MASK, (p0 >> _SH32) ^ c3 ^ np.uint64(k1), p0 & _MASK
        k0, k1 = (k0 + _W0) & 0xFFFFFFFF, (k1 + _W1) & 0xFFFFFFFF
    return c0, c1, c2, c3


def layout(n, sm):
    """Threads of a launch over `n` elements on a device of `sm` = (multiprocessors, threads per multiprocessor)."""
    count, per_sm = sm
    return BLOCK * min((n + BLOCK - 1) // BLOCK, count * (per_sm // BLOCK))


def _calls(seed, offset, threads, calls, arange, kernel=None):
    """The words of `calls` successive curand4 calls of each of `threads` threads: four (calls, threads) arrays
    (`kernel`: _cuda_kernels.philox_words on a GPU, the same words in one launch)."""
    if kernel is not None:
        return kernel(seed, offset // 4, threads, calls)
    ctr = np.uint64(offset // 4) + arange(calls)              # the counter's low 64 bits (wraps as curand's)
    sub = arange(threads)[None, :]                            # the subsequence: the counter's high 64 bits
    w = philox4x32((ctr & _MASK)[:, None], (ctr >> _SH32)[:, None], sub, np.uint64(0), seed)
    return [np.broadcast_to(x, (calls, threads)) for x in w]


def unrolled(state, n, unroll, sm, arange, kernel=None):
    """The curand4 words of ATen's grid-stride distribution kernel unrolled `unroll` times over `n` elements: four
    (calls, threads) arrays, thread i's j-th call at [j, i].  Advances `state` as torch does.  The kernel turns
    one call's words into `unroll` values (4 floats, or 2 doubles / 64-bit integers); ``arrange`` puts them in
    element order."""
    t = layout(n, sm)
    calls = (n - 1) // (t * unroll) + 1
    return _calls(state.seed_, state.take(calls * 4), t, calls, arange, kernel)


def arrange(values, n):
    """The `unroll` per-call values (each (calls, threads)) in element order: li = j T u + ii T + i."""
    return np.stack(values, axis=1).reshape(-1)[:n]


def vec_words(state, n, vec, sm, arange, kernel=None):
    """Dropout's vectorised kernel (fused_dropout_kernel_vec, `vec` = 4 or 2 elements per thread and iteration):
    one word per element, in element order.  Advances `state` as torch does (4 words per thread per 4-unrolled
    pass of the grid)."""
    t = layout(n, sm)
    calls = (n - 1) // (t * 4) + 1          # a call feeds one iteration of 4 elements or two of 2
    w = _calls(state.seed_, state.take(calls * 4), t, calls, arange, kernel)
    if vec == 4:        # iteration k: elements (k T + i) * 4 + c take word c of call k
        out = np.stack(w, axis=2)                                        # (calls, T, 4)
    else:               # iteration k: elements (k T + i) * 2 + c take word 2 (k % 2) + c of call k // 2
        out = np.stack([np.stack(w[:2], axis=2), np.stack(w[2:], axis=2)], axis=1)   # (calls, 2, T, 2)
    return out.reshape(-1)[:n]
