"""The MT19937 engine of the torch CPU RNG replica: the seed constants, the byte
layout of torch's ``CPUGeneratorImplState``, ``init_genrand``/tempering, the
``Generator`` class (seeding, raw 32/64-bit draws, irregular states set via
``set_state``, torch-identical ``get_state``/``set_state``, cached normal
samples, ``clone``), the module-level ``default_generator`` with
``manual_seed``, and ``_gen`` (``None`` -> the default generator)."""

from __future__ import annotations

import operator
import os
import struct

import numpy as np

DEFAULT_SEED = 67280421310721  # torch's default seed for torch.Generator()

_MT_N = 624
_U32 = 0xFFFFFFFF
_U64 = 0xFFFFFFFFFFFFFFFF

# Byte layout of torch's CPUGeneratorImplState (x86-64, 5056 bytes):
#   u64 the_initial_seed, i32 left, i32 seeded, u64 next, u64 state[624],
#   f64 normal_x, f64 normal_y, f64 normal_rho, i32 normal_is_valid, 4 pad,
#   f32 next_float_normal_sample, u8 is_next_float_normal_sample_valid, 3 pad.
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4xf?3x")
_STATE_OFF = _HEAD.size
_TAIL_OFF = _STATE_OFF + 8 * _MT_N
STATE_SIZE = _TAIL_OFF + _TAIL.size  # 5056


# ----------------------------------------------------------------------------
# MT19937 engine
# ----------------------------------------------------------------------------

def _init_genrand(seed32):
    mt = [0] * _MT_N
    x = seed32 & _U32
    mt[0] = x
    for i in range(1, _MT_N):
        x = (1812433253 * (x ^ (x >> 30)) + i) & _U32
        mt[i] = x
    return np.array(mt, dtype=np.uint32)


def _temper(y):
    y = y.astype(np.uint64)
    y ^= y >> np.uint64(11)
    y ^= (y << np.uint64(7)) & np.uint64(0x9D2C5680)
    y ^= (y << np.uint64(15)) & np.uint64(0xEFC60000)
    y ^= y >> np.uint64(18)
    return y & np.uint64(_U32)


def _check_seed(seed):
    seed = operator.index(seed)
    if not (-(1 << 63) <= seed <= _U64):
        raise RuntimeError("Overflow when unpacking long long")
    return seed & _U64


class Generator:
    """State of one torch CPU generator (MT19937 + cached normal samples)."""

    __slots__ = ("_seed", "_bg", "_next_override", "_irregular",
                 "_next_double_normal", "_next_float_normal")

    def __init__(self, seed=DEFAULT_SEED):
        self._bg = np.random.MT19937(0)
        self.manual_seed(seed)

    # -- seeding -------------------------------------------------------------
    def manual_seed(self, seed):
        seed = _check_seed(seed)
        self._seed = seed
        self._bg.state = {"bit_generator": "MT19937",
                          "state": {"key": _init_genrand(seed), "pos": _MT_N}}
        # torch reports next=0 (left=1) for a freshly seeded engine
        self._next_override = 0
        self._irregular = None
        self._next_double_normal = None
        self._next_float_normal = None
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        s = int.from_bytes(os.urandom(8), "little")
        self.manual_seed(s)
        return s

    # -- raw draws -----------------------------------------------------------
    def _raw32(self, n):
        """``n`` successive ``random()`` outputs as a uint64 array."""
        n = int(n)
        if n <= 0:
            return np.empty(0, dtype=np.uint64)
        if self._irregular is not None:
            return self._raw32_irregular(n)
        self._next_override = None
        return self._bg.random_raw(n)

    def _raw32_irregular(self, n):
        # A state set via set_state whose (left, next) is not the usual
        # left + next == 625: torch returns state[next], ... for left-1 calls
        # and only then regenerates.
        nxt, left = self._irregular
        key = self._bg.state["state"]["key"]
        k = min(n, left - 1)
        head = _temper(key[nxt:nxt + k])
        nxt += k
        left -= k
        if left == 1:
            self._irregular = None
            self._next_override = nxt
            rest = self._raw32(n - k)
            return np.concatenate([head, rest])
        self._irregular = (nxt, left)
        return head

    def _raw64(self, n):
        """``n`` successive ``random64()`` outputs as a uint64 array."""
        r = self._raw32(2 * n)
        return (r[0::2] << np.uint64(32)) | r[1::2]

    # -- state ---------------------------------------------------------------
    def _left_next(self):
        if self._irregular is not None:
            nxt, left = self._irregular
            return left, nxt
        pos = self._bg.state["state"]["pos"]
        if pos >= _MT_N:
            nxt = _MT_N if self._next_override is None else self._next_override
            return 1, nxt
        return _MT_N + 1 - pos, pos

    def get_state(self):
        """torch-compatible byte state (identical to ``Generator.get_state()``)."""
        key = np.asarray(self._bg.state["state"]["key"], dtype=np.uint32)
        left, nxt = self._left_next()
        dn = self._next_double_normal
        fn = self._next_float_normal
        buf = bytearray(STATE_SIZE)
        _HEAD.pack_into(buf, 0, self._seed, left, 1, nxt)
        buf[_STATE_OFF:_TAIL_OFF] = key.astype("<u8").tobytes()
        _TAIL.pack_into(buf, _TAIL_OFF, 0.0, 0.0 if dn is None else dn, 0.0,
                        0 if dn is None else 1, 0.0 if fn is None else fn,
                        fn is not None)
        return np.frombuffer(bytes(buf), dtype=np.uint8).copy()

    def set_state(self, state):
        if hasattr(state, "numpy") and not isinstance(state, np.ndarray):
            state = state.numpy()  # e.g. a torch ByteTensor
        b = np.ascontiguousarray(np.asarray(state, dtype=np.uint8)).tobytes()
        if len(b) != STATE_SIZE:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {STATE_SIZE} but found "
                f"the input RNG state size to be {len(b)}")
        seed, left, seeded, nxt = _HEAD.unpack_from(b, 0)
        if not (seeded != 0 and 0 < left <= _MT_N and 0 <= nxt <= _MT_N):
            raise RuntimeError("Invalid mt19937 state")
        if left > 1 and nxt + left - 1 > _MT_N:
            raise RuntimeError("Invalid mt19937 state (would read past the state array)")
        key = (np.frombuffer(b, dtype="<u8", count=_MT_N, offset=_STATE_OFF)
               & np.uint64(_U32)).astype(np.uint32)
        _nx, ny, _rho, nvalid, fval, fvalid = _TAIL.unpack_from(b, _TAIL_OFF)
        pos = _MT_N
        self._irregular = None
        self._next_override = None
        if left == 1:
            self._next_override = nxt
        elif nxt + left == _MT_N + 1:
            pos = nxt
        else:
            self._irregular = (nxt, left)
        self._bg.state = {"bit_generator": "MT19937",
                          "state": {"key": key, "pos": pos}}
        self._seed = seed
        self._next_double_normal = float(ny) if nvalid else None
        self._next_float_normal = float(np.float32(fval)) if fvalid else None
        return self

    def clone(self):
        cls = type(self)
        g = cls.__new__(cls)
        d = getattr(self, "__dict__", None)
        if d:
            g.__dict__.update(d)
        g._bg = np.random.MT19937(0)
        g._bg.state = self._bg.state
        g._seed = self._seed
        g._next_override = self._next_override
        g._irregular = self._irregular
        g._next_double_normal = self._next_double_normal
        g._next_float_normal = self._next_float_normal
        return g

    def __repr__(self):
        return f"<glassgrad._rng.Generator initial_seed={self._seed}>"


default_generator = Generator()
default_generator.seed()  # torch seeds its default CPU generator non-deterministically


def manual_seed(seed):
    """Seed the module-level default generator (like ``torch.manual_seed``)."""
    return default_generator.manual_seed(seed)


def _gen(gen):
    return default_generator if gen is None else gen
