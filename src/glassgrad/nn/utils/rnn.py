"""nn.utils.rnn: PackedSequence and the padding / packing helpers.

A PackedSequence stores the time steps of a batch of sequences (sorted by decreasing length)
one after another: step t holds the first batch_sizes[t] sequences' elements.  The packing
and padding functions are composites of differentiable slicing / cat / stack, so gradients
flow back to the padded or packed input.
"""
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from ... import _dtype
from ..._tensor import Tensor, _make
from ...backend import to_host
from ...ops.creation import arange, from_numpy, full, tensor
from ...ops.rnn import _pack_padded as _pack

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor = None
    unsorted_indices: Tensor = None


class PackedSequence(PackedSequence_):
    """(data, batch_sizes, sorted_indices, unsorted_indices); build it with pack_padded_sequence or
    pack_sequence."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data[0], data[1]
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        # torch: the permutations follow the data's device (batch_sizes stays on the CPU)
        sorted_i, unsorted_i = (None if t is None else t.to(data.device)
                                for t in (self.sorted_indices, self.unsorted_indices))
        return type(self)(data, self.batch_sizes, sorted_i, unsorted_i)

    def cuda(self, *args, **kwargs):
        return self.to(self.data.cuda(*args, **kwargs).device)

    def cpu(self, *args, **kwargs):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=_dtype.double)

    def float(self):
        return self.to(dtype=_dtype.float)

    def half(self):
        return self.to(dtype=_dtype.half)

    def bfloat16(self):
        return self.to(dtype=_dtype.bfloat16)

    def long(self):
        return self.to(dtype=_dtype.long)

    def int(self):
        return self.to(dtype=_dtype.int)

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def invert_permutation(permutation):
    if permutation is None:
        return None
    p = permutation._data
    inv = np.empty_like(p)
    inv[p] = np.arange(p.size, dtype=p.dtype, like=p)
    return from_numpy(inv) if inv.__class__ is np.ndarray else _make(inv)


def _batch_sizes_list(batch_sizes):
    return [int(b) for b in batch_sizes._data.tolist()]


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded (T, B, *) (or (B, T, *) with batch_first) tensor of sequences of `lengths`."""
    if isinstance(lengths, Tensor):
        lens = np.asarray(to_host(lengths._data), dtype=np.int64).reshape(-1)   # torch: lengths.cpu()
    else:
        lens = np.asarray(list(lengths), dtype=np.int64).reshape(-1)
    sorted_indices = None
    if not enforce_sorted:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = from_numpy(order.astype(np.int64)).to(input.device)     # torch: beside the input
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    tdim, bdim = (1, 0) if batch_first else (0, 1)
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if np.any(lens[1:] > lens[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                           "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                           "to sidestep this requirement if you do not need ONNX exportability.")
    if lens.size != input.shape[bdim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {lens.size} "
                           f"(batch_size={input.shape[bdim]})")
    T = int(lens[0]) if lens.size else 0
    if T > input.shape[tdim]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to the maximum length "
                           f"in `lengths`, but got {input.shape[tdim]} and {T}")
    bs = [int((lens > t).sum()) for t in range(T)]
    data = _pack(input, bs, batch_first)
    return PackedSequence(data, tensor(bs, dtype=_dtype.int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: (padded tensor, lengths)."""
    bs = _batch_sizes_list(sequence.batch_sizes)
    T = len(bs)
    if total_length is not None:
        if total_length < T:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {T}")
        T_out = total_length
    else:
        T_out = T
    data = sequence.data
    B = bs[0] if bs else 0
    padded = full((T_out, B) + tuple(data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    off = 0
    for t, b in enumerate(bs):
        padded[t, :b] = data[off:off + b]
        off += b
    lens = np.array([sum(1 for b in bs if b > i) for i in range(B)], dtype=np.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    lengths = from_numpy(lens)
    if sequence.unsorted_indices is not None:
        u = sequence.unsorted_indices
        return padded.index_select(0 if batch_first else 1, u), from_numpy(lens[to_host(u._data)])  # lengths: CPU
    return padded, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack variable-length sequences (each (L_i, *)) into (T, B, *) or (B, T, *), padding the ends."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    T = max(s.shape[0] for s in sequences)
    tail = tuple(sequences[0].shape[1:])
    out = full(((len(sequences), T) if batch_first else (T, len(sequences))) + tail, padding_value,
                 dtype=sequences[0].dtype, device=sequences[0].device)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        rows = slice(0, n) if padding_side == "right" else slice(T - n, T)
        if batch_first:
            out[i, rows] = s
        else:
            out[rows, i] = s
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of its sequences.  Like PyTorch, a time-major input is
    transposed in place (the caller's tensor becomes batch-major)."""
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    idx = arange(padded_sequences.shape[1], device=padded_sequences.device)
    if not isinstance(lengths, Tensor):
        lengths = tensor(list(lengths))
    if len(lengths) != padded_sequences.shape[0]:
        raise ValueError(f"zip() argument 2 is {'shorter' if len(lengths) < padded_sequences.shape[0] else 'longer'}"
                         " than argument 1")
    return [seq[idx < n] for seq, n in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of variable-length sequences (each (L_i, *))."""
    lengths = tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
