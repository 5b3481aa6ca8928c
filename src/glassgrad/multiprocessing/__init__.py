"""torch.multiprocessing: Python's ``multiprocessing`` (every name of it, as torch re-exports them), whose
pickler sends glassgrad tensors through shared memory, plus ``spawn`` / ``start_processes`` (spawn.py).

Sharing (see glassgrad/_shm.py and reductions.py).  A tensor put on a ``Queue``, sent through a ``Pipe`` or
passed to a process being started arrives in the other process on the same memory: the sender's storage is
moved in place into shared memory (``Tensor.share_memory_()``) if it is not there already, and its file
descriptor travels with the tensor's offset, shape, strides, dtype and ``requires_grad`` -- so an in-place
change in one process is seen by the other (Hogwild training: ``model.share_memory()``, then pass the model to
the workers).  Shared memory is a memfd: nameless, so nothing can leak into /dev/shm and Python's resource
tracker is not involved; it is freed when the last process holding it lets go, and each process maps a given
piece of it once.  With the ``fork`` start method a child inherits what was shared before it started (its
arguments are not pickled, so, as in torch, share them first); queues share in every start method.

Both of torch's strategy names are accepted, and both send the descriptor ("file_descriptor", the default):
a descriptor needs no manager process to free the memory, which torch's "file_system" names exist for.
"""
import multiprocessing
import sys

from .reductions import init_reductions

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]

from multiprocessing import *  # noqa: E402,F403

__all__ += multiprocessing.__all__

from .spawn import (ENV_VAR_PARALLEL_START, ProcessContext, ProcessExitedException,  # noqa: E402
                    ProcessRaisedException, spawn, SpawnContext, start_processes)

if sys.platform in ("darwin", "win32"):
    _sharing_strategy = "file_system"
    _all_sharing_strategies = {"file_system"}
else:
    _sharing_strategy = "file_descriptor"
    _all_sharing_strategies = {"file_descriptor", "file_system"}


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors (one of ``get_all_sharing_strategies()``)."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of {_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    """Return the current strategy for sharing CPU tensors."""
    return _sharing_strategy


def get_all_sharing_strategies():
    """Return a set of sharing strategies supported on a current system."""
    return _all_sharing_strategies


init_reductions()
