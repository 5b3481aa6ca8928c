"""``multinomial`` for the torch CPU RNG replica, with the exact emulation of
libstdc++'s ``partial_sort``/``nth_element``/``sort`` that torch's CPU ``topk``
uses, so that tied keys of sampling without replacement come out in torch's
order."""

from __future__ import annotations

import operator

import numpy as np

from .. import _dtype
from .common import _FLOATS, _f64, _u53
from .continuous import exponential
from .engine import _gen


# --- torch.topk tie order -----------------------------------------------------
# torch.multinomial without replacement takes topk(p / q) and CPU topk uses
# std::partial_sort (k * 64 <= n) or std::nth_element + std::sort on (value,
# index) pairs, so exactly tied keys come out in libstdc++'s order.  The exact
# algorithms are emulated below (on Python lists) and used only for rows whose
# top-k has ties; otherwise the order is unique and a NumPy argsort is used.


def _push_heap(a, first, hole, top, value, comp):
    parent = (hole - 1) // 2
    while hole > top and comp(a[first + parent], value):
        a[first + hole] = a[first + parent]
        hole = parent
        parent = (hole - 1) // 2
    a[first + hole] = value


def _adjust_heap(a, first, hole, length, value, comp):
    top = hole
    second = hole
    while second < (length - 1) // 2:
        second = 2 * (second + 1)
        if comp(a[first + second], a[first + second - 1]):
            second -= 1
        a[first + hole] = a[first + second]
        hole = second
    if (length & 1) == 0 and second == (length - 2) // 2:
        second = 2 * (second + 1)
        a[first + hole] = a[first + second - 1]
        hole = second - 1
    _push_heap(a, first, hole, top, value, comp)


def _pop_heap_to(a, first, last, result, comp):
    value = a[result]
    a[result] = a[first]
    _adjust_heap(a, first, 0, last - first, value, comp)


def _stl_make_heap(a, first, last, comp):
    n = last - first
    if n < 2:
        return
    parent = (n - 2) // 2
    while True:
        _adjust_heap(a, first, parent, n, a[first + parent], comp)
        if parent == 0:
            return
        parent -= 1


def _stl_sort_heap(a, first, last, comp):
    while last - first > 1:
        last -= 1
        _pop_heap_to(a, first, last, last, comp)


def _stl_heap_select(a, first, middle, last, comp):
    _stl_make_heap(a, first, middle, comp)
    for i in range(middle, last):
        if comp(a[i], a[first]):
            _pop_heap_to(a, first, middle, i, comp)


def _stl_partial_sort(a, first, middle, last, comp):
    _stl_heap_select(a, first, middle, last, comp)
    _stl_sort_heap(a, first, middle, comp)


def _lg(n):
    return n.bit_length() - 1


def _move_median_to_first(a, result, x, y, z, comp):
    if comp(a[x], a[y]):
        if comp(a[y], a[z]):
            m = y
        elif comp(a[x], a[z]):
            m = z
        else:
            m = x
    elif comp(a[x], a[z]):
        m = x
    elif comp(a[y], a[z]):
        m = z
    else:
        m = y
    a[result], a[m] = a[m], a[result]


def _unguarded_partition(a, first, last, pivot, comp):
    while True:
        while comp(a[first], a[pivot]):
            first += 1
        last -= 1
        while comp(a[pivot], a[last]):
            last -= 1
        if not first < last:
            return first
        a[first], a[last] = a[last], a[first]
        first += 1


def _partition_pivot(a, first, last, comp):
    mid = first + (last - first) // 2
    _move_median_to_first(a, first, first + 1, mid, last - 1, comp)
    return _unguarded_partition(a, first + 1, last, first, comp)


def _unguarded_linear_insert(a, last, comp):
    val = a[last]
    nxt = last - 1
    while comp(val, a[nxt]):
        a[last] = a[nxt]
        last = nxt
        nxt -= 1
    a[last] = val


def _insertion_sort(a, first, last, comp):
    if first == last:
        return
    for i in range(first + 1, last):
        if comp(a[i], a[first]):
            val = a[i]
            a[first + 1:i + 1] = a[first:i]
            a[first] = val
        else:
            _unguarded_linear_insert(a, i, comp)


def _stl_nth_element(a, first, nth, last, comp):
    if first == last or nth == last:
        return
    depth = _lg(last - first) * 2
    while last - first > 3:
        if depth == 0:
            _stl_heap_select(a, first, nth + 1, last, comp)
            a[first], a[nth] = a[nth], a[first]
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        if cut <= nth:
            first = cut
        else:
            last = cut
    _insertion_sort(a, first, last, comp)


def _introsort_loop(a, first, last, depth, comp):
    while last - first > 16:
        if depth == 0:
            _stl_partial_sort(a, first, last, last, comp)
            return
        depth -= 1
        cut = _partition_pivot(a, first, last, comp)
        _introsort_loop(a, cut, last, depth, comp)
        last = cut


def _stl_sort(a, first, last, comp):
    if first == last:
        return
    _introsort_loop(a, first, last, _lg(last - first) * 2, comp)
    if last - first > 16:
        _insertion_sort(a, first, first + 16, comp)
        for i in range(first + 16, last):
            _unguarded_linear_insert(a, i, comp)
    else:
        _insertion_sort(a, first, last, comp)


def _topk_cmp(x, y):
    a, b = x[0], y[0]
    return a > b or (a != a and b == b)


def _topk_row(vals, k):
    """Indices of torch.topk(vals, k) (largest, sorted) on CPU, ties included."""
    n = vals.shape[0]
    if not np.isnan(vals).any():
        order = np.argsort(-vals.astype(np.float64), kind="stable")
        sv = vals[order]
        m = min(k + 1, n)
        if not np.any(sv[:m - 1] == sv[1:m]):
            return order[:k]
    buf = list(zip(vals.astype(np.float64).tolist(), range(n)))
    if k * 64 <= n:
        _stl_partial_sort(buf, 0, k, n, _topk_cmp)
    else:
        _stl_nth_element(buf, 0, k - 1, n, _topk_cmp)
        _stl_sort(buf, 0, k - 1, _topk_cmp)
    return np.array([b[1] for b in buf[:k]], dtype=np.int64)


# --- multinomial ---------------------------------------------------------------

def check_args(probs, num_samples, replacement):
    """multinomial's argument checks (every device); the number of samples."""
    if probs.dtype not in _FLOATS:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{_dtype.c_name(probs.dtype)}")
    if probs.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    num_samples = operator.index(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    return num_samples


def check_rows(rows, replacement, num_samples):
    """The rows' checks: finite, non-negative, a positive sum where the exponential trick samples them."""
    if not (bool(np.all(np.isfinite(rows))) and bool(np.all(rows >= 0))):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    if (not replacement or num_samples == 1) and bool(np.any(rows.sum(axis=-1, dtype=np.float64) == 0)):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(gen, probs, num_samples, replacement=False):
    """``torch.multinomial(probs, num_samples, replacement, generator=gen)`` (int64)."""
    gen = _gen(gen)
    probs = np.asarray(probs)
    num_samples = check_args(probs, num_samples, replacement)
    n_cat = probs.shape[-1]
    rows = np.ascontiguousarray(probs).reshape(-1, n_cat)
    out_shape = probs.shape[:-1] + (num_samples,)
    if rows.shape[0] == 0:
        return np.empty(out_shape, dtype=np.int64)
    check_rows(rows, replacement, num_samples)
    if not replacement or num_samples == 1:
        # Gumbel/exponential trick: argmax/topk of p / q with q ~ Exp(1)
        q = exponential(gen, rows.shape, 1.0, probs.dtype)
        with np.errstate(all="ignore"):
            r = rows / q
        if num_samples == 1:
            res = np.argmax(r, axis=-1)[:, None]
        else:
            res = np.stack([_topk_row(row, num_samples) for row in r])
        return res.astype(np.int64).reshape(out_shape)
    acc = np.float64 if probs.dtype == _f64 else np.float32
    res = np.empty((rows.shape[0], num_samples), dtype=np.int64)
    for i in range(rows.shape[0]):
        cum = np.cumsum(rows[i].astype(acc), dtype=acc)  # sequential, like torch
        total = cum[-1]
        if not total > 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        cum = cum / total
        cum[-1] = 1
        u = _u53(gen, num_samples)
        res[i] = np.searchsorted(cum.astype(np.float64), u, side="left")
    return res.reshape(out_shape)
