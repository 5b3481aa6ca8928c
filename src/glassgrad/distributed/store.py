"""torch.distributed's key-value stores: Store (the base a Python store subclasses), HashStore (in this
process), FileStore (a file shared by processes on one machine), PrefixStore (keys of another store under
"prefix/"), TCPStore (_tcpstore.py: a server in the master process, clients over TCP).

Values are bytes (a str is stored UTF-8 encoded); ``add`` keeps a decimal integer; ``get`` and ``wait``
block until the keys exist or the store's timeout passes.  Every store does its operations through
``_apply`` on a dict of bytes, so the semantics (compare_set, add, queues, barrier) are the same for all.
"""
import datetime
import fcntl
import os
import struct
import threading
import time

from .distributed_c10d import DistError, DistStoreError

_DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)


class QueueEmptyError(DistError):
    """queue_pop(block=False) on an empty queue."""


def _bytes(value, what="set"):
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    raise TypeError(f"{what}(): incompatible function arguments. The following argument types are supported:\n"
                    f"    1. (self: torch._C._distributed_c10d.Store, arg0: str, arg1: str) -> None\n\n"
                    f"Invoked with: {value!r}")


def _to_int(raw):
    try:
        return int(raw.decode())
    except ValueError:
        raise ValueError("stoll") from None


def _apply(data, cmd, args):
    """Run one store operation on `data` (a dict of bytes; queues are lists) and return its answer; the
    caller holds the store's lock.  Pure bookkeeping: no waiting here."""
    if cmd == "set":
        data[args[0]] = args[1]
    elif cmd == "get":
        value = data.get(args[0])
        return value if isinstance(value, bytes) else None
    elif cmd == "add":
        new = (_to_int(data[args[0]]) if args[0] in data else 0) + args[1]
        data[args[0]] = str(new).encode()
        return new
    elif cmd == "compare_set":
        key, expected, desired = args
        if key not in data:
            if expected:
                return expected
            data[key] = desired
            return desired
        if data[key] == expected:
            data[key] = desired
        return data[key]
    elif cmd == "append":
        data[args[0]] = data.get(args[0], b"") + args[1]
    elif cmd == "check":
        return all(k in data for k in args[0])
    elif cmd == "delete_key":
        return data.pop(args[0], None) is not None
    elif cmd == "num_keys":
        return sum(1 for v in data.values() if isinstance(v, bytes))
    elif cmd == "list_keys":
        return [k for k, v in data.items() if isinstance(v, bytes) and not k.startswith("\0")]
    elif cmd == "queue_push":
        data.setdefault(args[0], []).append(args[1])
    elif cmd == "queue_pop":
        queue = data.get(args[0])
        return queue.pop(0) if queue else None
    elif cmd == "queue_len":
        return len(data.get(args[0]) or ())
    else:
        raise ValueError(f"unknown store operation {cmd}")
    return None


class Store:
    """torch.distributed.Store: the base class of the stores.  A Python subclass implements set, get, add,
    compare_set, wait, check, delete_key, num_keys (torch's calls reach them by name); the base's own
    raise torch's error for an operation the subclass does not have."""

    def __init__(self):
        self._timeout = _DEFAULT_TIMEOUT

    def _not_implemented(self, *args, **kwargs):
        raise RuntimeError("Not implemented.")

    set = get = add = compare_set = wait = check = delete_key = num_keys = _not_implemented
    append = multi_get = multi_set = list_keys = queue_push = queue_pop = queue_len = _not_implemented

    @property
    def timeout(self):
        return self._timeout

    def set_timeout(self, timeout):
        self._timeout = timeout

    def has_extended_api(self):
        return False


class _DictStore(Store):
    """A store whose data is a dict reached through `_run(cmd, args)` (atomic) and `_wait_for(keys,
    seconds)`: everything above that is here."""

    _queues = True

    def set(self, key, value):
        self._run("set", (key, _bytes(value)))

    def get(self, key):
        self._wait_get(key, self._seconds(None))
        return self._run("get", (key,))

    def _wait_get(self, key, secs):
        self._wait_or_raise([key], secs)

    def add(self, key, amount):
        return self._run("add", (key, int(amount)))

    def compare_set(self, key, expected_value, desired_value):
        return self._run("compare_set", (key, _bytes(expected_value, "compare_set"),
                                         _bytes(desired_value, "compare_set")))

    def append(self, key, value):
        self._run("append", (key, _bytes(value, "append")))

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        for k, v in zip(keys, values):
            self.set(k, v)

    def check(self, keys):
        return self._run("check", (list(keys),))

    def delete_key(self, key):
        return self._run("delete_key", (key,))

    def num_keys(self):
        return self._run("num_keys", ())

    def list_keys(self):
        return self._run("list_keys", ())

    def wait(self, keys, timeout=None):
        self._wait_or_raise(list(keys), self._seconds(timeout))

    def _seconds(self, timeout):
        t = self._timeout if timeout is None else timeout
        return t.total_seconds() if isinstance(t, datetime.timedelta) else float(t)

    def _wait_or_raise(self, keys, secs):
        if not self._wait_for(keys, secs):
            raise self._timeout_error(keys, secs)

    def _timeout_error(self, keys, secs):
        return DistStoreError("Wait timeout")

    def queue_push(self, key, value):
        self._queue_check()
        self._run("queue_push", (key, _bytes(value, "queue_push")))

    def queue_pop(self, key, block=True):
        self._queue_check()
        deadline = time.monotonic() + self._seconds(None)
        while True:
            got = self._run("queue_pop", (key,))
            if got is not None:
                return got
            if not block:
                raise QueueEmptyError("queue is empty")
            if time.monotonic() > deadline:
                raise self._timeout_error([key], self._seconds(None))
            time.sleep(0.002)

    def queue_len(self, key):
        self._queue_check()
        return self._run("queue_len", (key,))

    def _queue_check(self):
        if not self._queues:
            raise NotImplementedError("queue support is not implemented.")

    def barrier(self, key, world_size, timeout=None):
        """Block until `world_size` callers reached the barrier named `key`."""
        secs = self._seconds(timeout)
        if self.add(f"{key}/num_members", 1) == world_size:
            self.set(f"{key}/last_member", "1")
        self._wait_or_raise([f"{key}/last_member"], secs)

    def has_extended_api(self):
        return True


class HashStore(_DictStore):
    """A store in this process's memory (threads share it)."""

    def __init__(self):
        super().__init__()
        self._data = {}
        self._cond = threading.Condition()

    def _run(self, cmd, args):
        with self._cond:
            out = _apply(self._data, cmd, args)
            self._cond.notify_all()
        return out

    def _wait_for(self, keys, secs):
        with self._cond:
            return self._cond.wait_for(lambda: all(k in self._data for k in keys), secs)

    def clone(self):
        twin = HashStore.__new__(HashStore)
        twin.__dict__.update(self.__dict__)
        return twin


_REFCOUNT = "refcount/"


class FileStore(_DictStore):
    """A store in a file that processes on one machine share (each operation reads and rewrites it under an
    exclusive lock); the file is removed when the last of `world_size` users is gone."""

    _queues = False

    def __init__(self, file_name, world_size=-1):
        super().__init__()
        self.path = file_name
        self._num_workers = world_size
        self._closed = False
        self._run("add", (_REFCOUNT, 1))

    def _run(self, cmd, args):
        with open(self.path, "a+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                f.seek(0)
                data = _decode(f.read())
                out = _apply(data, cmd, args)
                if cmd not in ("get", "check", "num_keys", "list_keys"):
                    f.seek(0)
                    f.truncate()
                    f.write(_encode(data))
                    f.flush()
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)
        if cmd == "list_keys":
            out = [k for k in out if k != _REFCOUNT]
        return True if cmd == "delete_key" else out

    def _wait_for(self, keys, secs):
        deadline = time.monotonic() + secs
        while not self._run("check", (keys,)):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)
        return True

    def _wait_get(self, key, secs):
        if not self._wait_for([key], secs):
            raise RuntimeError(f"Timeout waiting for key: {key} after {int(secs * 1000)} ms")

    def _timeout_error(self, keys, secs):
        return RuntimeError("Wait timeout")

    def clone(self):
        return FileStore(self.path, self._num_workers)

    def __del__(self):
        try:
            if not self._closed and os.path.exists(self.path):
                self._closed = True
                if self._run("add", (_REFCOUNT, -1)) == 0 and self._num_workers != -1:
                    os.remove(self.path)
        except Exception:       # noqa: BLE001 -- interpreter shutdown: the file stays
            pass


def _encode(data):
    """The FileStore file: (key length, key, value length, value) records; queues are not kept here."""
    out = []
    for k, v in data.items():
        kb = k.encode()
        out.append(struct.pack("<I", len(kb)) + kb + struct.pack("<I", len(v)) + v)
    return b"".join(out)


def _decode(raw):
    data, i = {}, 0
    while i < len(raw):
        (n,) = struct.unpack_from("<I", raw, i)
        key = raw[i + 4:i + 4 + n].decode()
        i += 4 + n
        (n,) = struct.unpack_from("<I", raw, i)
        data[key] = raw[i + 4:i + 4 + n]
        i += 4 + n
    return data


class PrefixStore(Store):
    """The keys of `store` under "prefix/": ``PrefixStore("p", s).set("k", v)`` sets "p/k" in s."""

    def __init__(self, prefix, store):
        super().__init__()
        self.prefix = prefix
        self.underlying_store = store

    def _k(self, key):
        return f"{self.prefix}/{key}"

    @property
    def timeout(self):
        return self.underlying_store.timeout

    def set_timeout(self, timeout):
        self.underlying_store.set_timeout(timeout)

    def set(self, key, value):
        self.underlying_store.set(self._k(key), value)

    def get(self, key):
        return self.underlying_store.get(self._k(key))

    def add(self, key, amount):
        return self.underlying_store.add(self._k(key), amount)

    def compare_set(self, key, expected_value, desired_value):
        return self.underlying_store.compare_set(self._k(key), expected_value, desired_value)

    def append(self, key, value):
        self.underlying_store.append(self._k(key), value)

    def multi_get(self, keys):
        return self.underlying_store.multi_get([self._k(k) for k in keys])

    def multi_set(self, keys, values):
        self.underlying_store.multi_set([self._k(k) for k in keys], values)

    def check(self, keys):
        return self.underlying_store.check([self._k(k) for k in keys])

    def delete_key(self, key):
        return self.underlying_store.delete_key(self._k(key))

    def num_keys(self):
        return self.underlying_store.num_keys()

    def list_keys(self):
        head = self.prefix + "/"
        return [k[len(head):] for k in self.underlying_store.list_keys() if k.startswith(head)]

    def wait(self, keys, timeout=None):
        keys = [self._k(k) for k in keys]
        if timeout is None:
            self.underlying_store.wait(keys)
        else:
            self.underlying_store.wait(keys, timeout)

    def queue_push(self, key, value):
        self.underlying_store.queue_push(self._k(key), value)

    def queue_pop(self, key, block=True):
        return self.underlying_store.queue_pop(self._k(key), block)

    def queue_len(self, key):
        return self.underlying_store.queue_len(self._k(key))

    def barrier(self, key, world_size, timeout=None):
        self.underlying_store.barrier(self._k(key), world_size, timeout)

    def has_extended_api(self):
        return self.underlying_store.has_extended_api()

    def clone(self):
        return PrefixStore(self.prefix, self.underlying_store.clone())


__all__ = ["Store", "HashStore", "FileStore", "PrefixStore", "QueueEmptyError"]
