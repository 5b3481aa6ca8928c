"""torch.cuda.nvtx: NVTX ranges and marks for profilers (CuPy's NVTX); without CUDA, torch's RuntimeError."""
from contextlib import contextmanager

from .. import backend

__all__ = ["mark", "range_push", "range_pop", "range"]

_MISSING = "NVTX functions not installed. Are you sure you have a CUDA build?"


def _nvtx():
    if not backend.cuda_available():
        raise RuntimeError(_MISSING)
    return backend._cupy.cuda.nvtx


_depth = [0]


def range_push(msg):
    """Open a nested range; returns its zero-based depth."""
    _nvtx().RangePush(msg)
    _depth[0] += 1
    return _depth[0] - 1


def range_pop():
    """Close the innermost range; returns its zero-based depth."""
    _nvtx().RangePop()
    _depth[0] -= 1
    return _depth[0]


def mark(msg):
    _nvtx().Mark(msg)


@contextmanager
def range(msg, *args, **kwargs):
    """An NVTX range around the block (`msg` formatted with args / kwargs)."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
