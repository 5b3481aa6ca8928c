"""torch's CUDA generator as glassgrad computes it (_rng/philox.py, _rng/cuda.py), checked on NumPy arrays against
an independent reference written here from the published algorithm and ATen's kernel layout:

* Philox4x32-10 against Random123's known-answer vectors (the engine curand uses);
* a scalar Python Philox (plain ints) and the element -> (thread, call, word) map of ATen's grid-stride
  distribution kernel (256 threads a block, min(ceil(n / 256), SMs * threads-per-SM / 256) blocks, unroll 4 for
  float outputs, 2 for double) against the array code: rand / uniform_ / randint / bernoulli_ bit for bit,
  randn to a few ulp (Box-Muller: CUDA's logf / sincos are not NumPy's);
* the generator state (16 bytes: seed, offset; offsets advance by 4 per curand4 call per thread).
Runs on any machine (no GPU): the samplers are array code and take NumPy arrays as readily as CuPy's."""
import math
from fractions import Fraction

import numpy as np
import pytest

from glassgrad._rng import cuda as C, philox as P

M32 = 0xFFFFFFFF


def ref_philox(ctr, key):
    """Philox4x32-10 on Python ints (Salmon, Moraes, Dror, Shaw 2011)."""
    c = list(ctr)
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [((p1 >> 32) ^ c[1] ^ k0) & M32, p1 & M32, ((p0 >> 32) ^ c[3] ^ k1) & M32, p0 & M32]
        k0, k1 = (k0 + 0x9E3779B9) & M32, (k1 + 0xBB67AE85) & M32
    return c


def ref_words(seed, offset, thread, call):
    """curand_init(seed, thread, offset) then `call` + 1 curand4 calls: the last call's words."""
    ctr = offset // 4 + call
    return ref_philox([ctr & M32, (ctr >> 32) & M32, thread & M32, thread >> 32], [seed & M32, seed >> 32])


def ref_threads(n, sm):
    return 256 * min((n + 255) // 256, sm[0] * (sm[1] // 256))


def ref_place(li, n, unroll, sm):
    """Element li of a grid-stride kernel unrolled `unroll` times: (thread, call, value index)."""
    t = ref_threads(n, sm)
    call, r = divmod(li, t * unroll)
    ii, thread = divmod(r, t)
    return thread, call, ii


def launcher(seed, sm):
    st = P.PhiloxState(seed)
    return C.Launcher(st, sm, lambda k: np.arange(k, dtype=np.uint64)), st


KAT = [  # Random123 kat_vectors: philox4x32 10 rounds: counter, key, output
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((M32,) * 4, (M32, M32), (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("ctr,key,out", KAT)
def test_philox_known_answers(ctr, key, out):
    assert ref_philox(ctr, key) == list(out)
    words = P.philox4x32(*[np.array([c], np.uint64) for c in ctr], key[0] | (key[1] << 32))
    assert [int(w[0]) for w in words] == list(out)


SMS = [(1, 512), (2, 1024), (132, 2048)]


@pytest.mark.parametrize("sm", SMS, ids=str)
@pytest.mark.parametrize("n", [1, 5, 300, 2049, 9000])
def test_rand_float_layout_bit_exact(sm, n):
    seed = 0x1234_5678_9ABC
    L, st = launcher(seed, sm)
    st.offset = 8                         # a generator already used: the counter starts at offset / 4
    got = C.uniform(L, (n,), 0.0, 1.0, np.float32)
    for li in sorted({0, n - 1, n // 2, n // 3, min(n - 1, 257)}):
        thread, call, ii = ref_place(li, n, 4, sm)
        w = ref_words(seed, 8, thread, call)[ii]
        want = np.float32(w) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33)
        want = np.float32(0) if want == 1 else want          # (0, 1] reversed to [0, 1): 1 -> from
        assert got[li] == want, (li, thread, call, ii)
    calls = (n - 1) // (ref_threads(n, sm) * 4) + 1
    assert st.offset == 8 + 4 * calls


@pytest.mark.parametrize("sm", SMS[:2], ids=str)
@pytest.mark.parametrize("n", [3, 1000, 5000])
def test_rand_double_layout_bit_exact(sm, n):
    seed = 7
    L, st = launcher(seed, sm)
    got = C.uniform(L, (n,), -2.0, 3.0, np.float64)
    for li in sorted({0, n - 1, n // 2, n // 7}):
        thread, call, ii = ref_place(li, n, 2, sm)
        w = ref_words(seed, 0, thread, call)
        z = w[2 * ii] ^ (w[2 * ii + 1] << 21)
        u = z * 2.0 ** -53 + 2.0 ** -54
        assert got[li] == float(Fraction(u) * 5 - 2), li        # fma(u, range, from), one rounding
    assert st.offset == 4 * ((n - 1) // (ref_threads(n, sm) * 2) + 1)


def test_randint_32_and_64_bit_draws():
    sm = (2, 1024)
    L, _ = launcher(99, sm)
    n = 700
    small = C.random_(L, (n,), np.int64, 5, 17)          # range < 2**32: one word, unroll 4
    for li in (0, 1, 255, 256, 699):
        thread, call, ii = ref_place(li, n, 4, sm)
        assert small[li] == ref_words(99, 0, thread, call)[ii] % 12 + 5
    L, _ = launcher(99, sm)
    big = C.random_(L, (n,), np.int64, 0, 1 << 40)       # range >= 2**32: two words, unroll 2
    for li in (0, 1, 255, 256, 699):
        thread, call, ii = ref_place(li, n, 2, sm)
        w = ref_words(99, 0, thread, call)
        assert big[li] == ((w[2 * ii] << 32) | w[2 * ii + 1]) % (1 << 40)


def test_bernoulli_scalar_compares_float_uniforms():
    sm = (1, 512)
    L, _ = launcher(3, sm)
    n = 1000
    got = C.bernoulli_scalar(L, (n,), 0.3, np.float32)
    for li in range(0, n, 37):
        thread, call, ii = ref_place(li, n, 4, sm)
        u = np.float32(ref_words(3, 0, thread, call)[ii]) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33)
        assert got[li] == np.float32(u < np.float32(0.3))


def test_randn_box_muller_close_to_float64_reference():
    sm = (2, 1024)
    L, _ = launcher(11, sm)
    n = 3000
    got = C.normal(L, (n,), 0.5, 2.0, np.float32)
    for li in range(0, n, 53):
        thread, call, ii = ref_place(li, n, 4, sm)
        w = ref_words(11, 0, thread, call)
        a, b = w[2 * (ii // 2)], w[2 * (ii // 2) + 1]
        u = float(np.float32(a) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33))
        v = float(np.float32(b) * np.float32(2.0 ** -32 * np.float32(2 * math.pi)))
        z = math.sqrt(-2 * math.log(u)) * (math.sin(v) if ii % 2 == 0 else math.cos(v))
        assert abs(got[li] - (z * 2.0 + 0.5)) <= 1e-5 * max(1.0, abs(z)), li


def test_randn_double_uses_sincospi():
    L, _ = launcher(5, (1, 512))
    got = C.normal(L, (4,), 0.0, 1.0, np.float64)
    for li in range(4):                 # 256 threads: element li is thread li's first value (sin)
        w = ref_words(5, 0, li, 0)
        u = (w[0] ^ (w[1] << 21)) * 2.0 ** -53 + 2.0 ** -54
        v = (w[2] ^ (w[3] << 21)) * 2.0 ** -52 + 2.0 ** -53
        s = math.sqrt(-2 * math.log(u))
        assert abs(got[li] - s * math.sin(math.pi * v)) < 1e-14 * max(1, s)


def test_state_bytes_offsets_and_seeding():
    st = P.PhiloxState()
    assert st.initial_seed() == 67280421310721 and st.offset == 0
    st.manual_seed(0x0102030405060708)
    assert st.take(5) == 0 and st.offset == 8            # increments round up to a multiple of 4
    b = st.get_state()
    assert b.dtype == np.uint8 and list(b) == [8, 7, 6, 5, 4, 3, 2, 1, 8, 0, 0, 0, 0, 0, 0, 0]
    st2 = P.PhiloxState()
    st2.set_state(b)
    assert st2.seed_ == st.seed_ and st2.offset == 8
    with pytest.raises(RuntimeError, match="wrong size"):
        st2.set_state(np.zeros(5, np.uint8))
    st.manual_seed(-1)                                   # a negative seed as C++'s uint64 cast
    assert st.initial_seed() == 2 ** 64 - 1 and st.offset == 0


def test_dropout_vec4_layout():
    sm = (2, 1024)
    L, st = launcher(21, sm)
    n = 4096 + 8                                          # divisible by 4: four consecutive elements a thread
    keep = C.dropout_mask(L, n, 0.75, 4)
    t = ref_threads(n, sm)
    for e in (0, 1, 2, 3, 4, 4095, 4100, n - 1):
        k, r = divmod(e, t * 4)
        thread, c = divmod(r, 4)
        u = np.float32(ref_words(21, 0, thread, k)[c]) * np.float32(2.0 ** -32) + np.float32(2.0 ** -33)
        assert keep[e] == (u < np.float32(0.75)), e
    assert st.offset == 4 * ((n - 1) // (t * 4) + 1)
