"""Shared memory for tensors: ``Tensor.share_memory_()``, ``is_shared()`` and glassgrad.multiprocessing's pickling.

A shared storage is a memfd -- anonymous memory with a file descriptor (``os.memfd_create``; where that is
missing, an unlinked temporary file) -- mapped ``MAP_SHARED``.  It has no name, so nothing is ever left in
/dev/shm and no resource tracker is involved: the memory lives while some process maps it or holds its
descriptor, and goes back to the system when the last one lets go, also when processes are killed.  Another
process gets it by being handed the descriptor (``multiprocessing.reduction.DupFd`` in
glassgrad/multiprocessing/reductions.py, torch's "file_descriptor" strategy) and maps it itself.

``SharedBuffer`` is one mapping.  It keeps the descriptor open (to hand on), gives the memory to NumPy through
``__array_interface__`` -- so every array on it has the buffer at the end of its ``.base`` chain, which is how
``is_shared`` tells -- and unmaps and closes when the last array on it is gone.  The buffers a process has
mapped are cached by the file's (inode, device): memory that arrives twice is mapped once, so two tensors sent
from one storage alias in the receiver too.

``share(tensors, cls)`` moves memory into shared memory in place, as torch's ``share_memory_`` does: NumPy
cannot move an array's memory, so the bytes are copied into a new buffer and every Tensor on the old memory --
the tensor, its views, ``detach()`` aliases, a Parameter and the tensor it wraps -- gets an array at the same
offset and strides of the new buffer.  Those tensors are found by a scan of the garbage collector's objects,
skipped when reference counts show the tensor alone reaches its memory (a fresh tensor put on a queue).
NumPy arrays outside tensors (``from_numpy``'s source) keep the old memory, as in torch.
"""
import ctypes
import gc
import mmap
import os
import sys
import threading
import weakref

import numpy as np

_ndarray = np.ndarray

_MAP_FAILED = ctypes.c_void_p(-1).value
_libc = []                  # the C library's mmap and munmap, bound on first use (keeps `import glassgrad` fast)


def _c():
    if not _libc:
        lib = ctypes.CDLL(None, use_errno=True)
        lib.mmap.restype = ctypes.c_void_p
        lib.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                             ctypes.c_int64]
        lib.munmap.restype = ctypes.c_int
        lib.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        _libc.append(lib)
    return _libc[0]


def _release(addr, length, fd):
    _c().munmap(addr, length)
    os.close(fd)


class SharedBuffer:
    """``nbytes`` bytes of shared memory mapped from descriptor ``fd`` (which it owns and closes)."""
    __slots__ = ("fd", "nbytes", "addr", "key", "__weakref__")

    def __init__(self, fd, nbytes):
        length = max(nbytes, 1)                 # mmap refuses length 0; an empty storage maps one byte
        addr = _c().mmap(None, length, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
        if addr in (None, _MAP_FAILED):
            err = ctypes.get_errno()
            os.close(fd)
            raise OSError(err, f"mmap of shared memory failed: {os.strerror(err)}")
        self.fd, self.nbytes, self.addr, self.key = fd, nbytes, addr, file_key(fd)
        f = weakref.finalize(self, _release, addr, length, fd)
        f.atexit = False                        # at exit the OS unmaps; arrays may outlive the finalizers

    @property
    def __array_interface__(self):
        return {"data": (self.addr, False), "shape": (self.nbytes,), "typestr": "|u1", "version": 3}

    def array(self):
        """The whole buffer as a uint8 array (whose .base is this buffer)."""
        return np.asarray(self)


_cache = weakref.WeakValueDictionary()          # file_key -> SharedBuffer mapped in this process
_lock = threading.Lock()                        # guards _cache
_move_lock = threading.Lock()                   # one move at a time (a Queue pickles in its feeder thread)


def _new_lock():
    global _lock, _move_lock
    _lock, _move_lock = threading.Lock(), threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock)


def file_key(fd):
    """(inode, device): the same memory has the same key in every process (torch's fd_id)."""
    st = os.fstat(fd)
    return (st.st_ino, st.st_dev)


def _new_fd(nbytes):
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("glassgrad-shared", os.MFD_CLOEXEC)
    else:
        import tempfile
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="glassgrad-shared-", dir=base)
        os.unlink(path)
    os.ftruncate(fd, max(nbytes, 1))
    return fd


def new_buffer(nbytes):
    """A fresh zero-filled shared buffer of ``nbytes`` bytes."""
    buf = SharedBuffer(_new_fd(nbytes), nbytes)
    with _lock:
        _cache[buf.key] = buf
    return buf


def from_fd(fd, nbytes):
    """The buffer on descriptor ``fd``, which this call owns: the cached mapping of the same memory if this process
    has one (``fd`` is then closed, unless it is that mapping's own descriptor), else a new mapping."""
    key = file_key(fd)
    with _lock:
        buf = _cache.get(key)
        if buf is not None:
            if buf.fd != fd:
                os.close(fd)
            return buf
        buf = SharedBuffer(fd, nbytes)
        _cache[key] = buf
    return buf


def buffer_of(a):
    """The SharedBuffer under NumPy array ``a``, or None when ``a`` is not in shared memory."""
    b = a.base
    while b is not None:
        if b.__class__ is SharedBuffer:
            return b
        if not isinstance(b, _ndarray):
            return None
        b = b.base
    return None


def addr(a):
    return a.__array_interface__["data"][0]


def _root(a):
    """The last array of ``a``'s .base chain: the array whose memory ``a`` views (the group key of a move)."""
    while isinstance(a.base, _ndarray):
        a = a.base
    return a


def root_nbytes(a):
    """The size in bytes of the memory that array ``a`` views (its storage's size)."""
    lo, hi = np.lib.array_utils.byte_bounds(_root(a))
    return hi - lo


def _alone(t):
    """True when nothing but ``t`` reaches its memory: each array of its .base chain is referenced only by the one
    before it (and this frame), and the chain ends in an array that owns its memory."""
    a = t._data
    if sys.getrefcount(a) > 3:                  # t's slot, `a`, getrefcount's argument
        return False
    while True:
        b = a.base
        if b is None:
            return True
        if b.__class__ is not _ndarray or sys.getrefcount(b) > 3:    # a.base, `b`, the argument
            return False
        a = b


def _bytes_of(r):
    """(low address, uint8 array of r's memory from low to its high end)."""
    lo, hi = np.lib.array_utils.byte_bounds(r)
    if r.flags.c_contiguous or r.flags.f_contiguous:
        return lo, r.reshape(-1, order="A").view(np.uint8)
    return lo, np.ctypeslib.as_array((ctypes.c_uint8 * (hi - lo)).from_address(lo))


def share(tensors, cls):
    """Move the memory of ``tensors`` (instances of ``cls``, the Tensor class) into shared memory, in place, with
    every other ``cls`` instance on the same memory (see the module docstring).  Tensors already in shared memory,
    or not in host memory, are left alone."""
    scan = len(tensors) != 1 or not _alone(tensors[0])     # first: the loop below holds references
    with _move_lock:
        _move(tensors, cls, scan)


def _move(tensors, cls, scan):
    groups = {}                                 # id(root array) -> (root, {id: tensor})
    for t in tensors:
        a = t._data
        if a.__class__ is not _ndarray or buffer_of(a) is not None:
            continue
        r = _root(a)
        groups.setdefault(id(r), (r, {}))[1][id(t)] = t
    if not groups:
        return
    if scan:
        for obj in gc.get_objects():
            if issubclass(type(obj), cls):      # not isinstance: that reads obj.__class__, which proxies may warn on
                a = getattr(obj, "_data", None)
                if a.__class__ is _ndarray:
                    g = groups.get(id(_root(a)))
                    if g is not None:
                        g[1][id(obj)] = obj
    for r, members in groups.values():
        lo, src = _bytes_of(r)
        dst = new_buffer(src.nbytes).array()
        dst[...] = src
        for t in members.values():
            a = t._data
            new = np.ndarray(a.shape, a.dtype, buffer=dst, offset=addr(a) - lo, strides=a.strides)
            if not a.flags.writeable:
                new.flags.writeable = False
            t._data = new


def is_shared(a):
    """Whether array ``a`` is in shared memory (arrays on a device count as shared, as CUDA tensors in torch)."""
    return a.__class__ is not _ndarray or buffer_of(a) is not None


def offset_in_buffer(a):
    """``a``'s offset in elements from the start of its shared buffer, or 0 when it is not in shared memory."""
    if a.__class__ is not _ndarray:
        return 0
    buf = buffer_of(a)
    return 0 if buf is None else (addr(a) - buf.addr) // a.itemsize
