"""torch.distributed.TCPStore: the master process serves the store (a thread per connection over one
dict, store._apply) and every TCPStore, the master's own included, is a client of it over a TCP socket.

The wire format is this module's own (not torch's): a request is a command name and its arguments, an
answer one value, each value tagged (str, bytes, int, float, bool, None, list) and length-prefixed.  Nothing
is unpickled.  ``wait`` / ``get`` wait on the server, which answers when the keys exist or the timeout
(sent with the request) has passed.
"""
import socket
import struct
import threading
import time

from .distributed_c10d import DistNetworkError, DistStoreError
from .store import _DEFAULT_TIMEOUT, _apply, _DictStore

_INIT_KEY = "\0init/"


def _pack(value):
    if value is None:
        return b"n"
    if isinstance(value, bool):
        return b"B" + (b"\1" if value else b"\0")
    if isinstance(value, int):
        return b"i" + struct.pack("<q", value)
    if isinstance(value, float):
        return b"f" + struct.pack("<d", value)
    if isinstance(value, str):
        raw = value.encode()
        return b"s" + struct.pack("<I", len(raw)) + raw
    if isinstance(value, bytes):
        return b"b" + struct.pack("<I", len(value)) + value
    if isinstance(value, (list, tuple)):
        return b"l" + struct.pack("<I", len(value)) + b"".join(_pack(v) for v in value)
    raise TypeError(f"TCPStore cannot send {type(value).__name__}")


def _read_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise DistNetworkError("Failed to recv, got 0 bytes. Connection was likely closed. Did the remote "
                                   "server shutdown or crash?")
        buf += chunk
    return bytes(buf)


def _unpack(sock):
    tag = _read_exact(sock, 1)
    if tag == b"n":
        return None
    if tag == b"B":
        return _read_exact(sock, 1) == b"\1"
    if tag == b"i":
        return struct.unpack("<q", _read_exact(sock, 8))[0]
    if tag == b"f":
        return struct.unpack("<d", _read_exact(sock, 8))[0]
    if tag in (b"s", b"b", b"e"):
        raw = _read_exact(sock, struct.unpack("<I", _read_exact(sock, 4))[0])
        return raw.decode() if tag == b"s" else (raw if tag == b"b" else _RemoteError(raw.decode()))
    if tag == b"l":
        return [_unpack(sock) for _ in range(struct.unpack("<I", _read_exact(sock, 4))[0])]
    raise DistNetworkError(f"TCPStore: bad message tag {tag!r}")


class _RemoteError:
    def __init__(self, message):
        self.message = message


class _Server:
    """The store's data and the threads serving it on a listening socket."""

    def __init__(self, host, port):
        self.data = {}
        self.cond = threading.Condition()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.listener = socket.socket(family, socket.SOCK_STREAM)
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            self.listener.bind(("", port))
        except OSError as e:
            self.listener.close()
            raise DistNetworkError(f"The server socket has failed to listen on any local network address. port: "
                                   f"{port}, useIpv6: 0, code: -{e.errno}, name: {e.strerror}") from None
        self.listener.listen(128)
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            while True:
                try:
                    cmd, args = _unpack(conn), _unpack(conn)
                except (DistNetworkError, OSError):
                    return
                conn.sendall(self._answer(cmd, args))

    def _answer(self, cmd, args):
        try:
            if cmd == "wait":
                keys, secs = args
                with self.cond:
                    return _pack(self.cond.wait_for(lambda: all(k in self.data for k in keys), secs))
            with self.cond:
                out = _apply(self.data, cmd, args)
                self.cond.notify_all()
            return _pack(out)
        except (ValueError, KeyError) as e:
            raw = str(e).encode()
            return b"e" + struct.pack("<I", len(raw)) + raw


class TCPStore(_DictStore):
    """TCPStore(host_name, port, world_size=None, is_master=False, timeout=timedelta(seconds=300),
    wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True): the master serves
    the store on `port` (0: a free port, then ``.port`` says which); the others connect to host_name:port,
    retrying until `timeout`.  With `world_size` and wait_for_workers, the master waits for that many."""

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=_DEFAULT_TIMEOUT,
                 wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=True):
        super().__init__()
        self._timeout = timeout
        self.host = host_name
        self.libuvBackend = bool(use_libuv)
        self._server = _Server(host_name, port) if is_master else None
        self.port = self._server.port if is_master else port
        self._lock = threading.Lock()
        self._sock = self._connect(self._seconds(None))
        if not is_master or (wait_for_workers and world_size is not None):
            self.add(_INIT_KEY, 1)
        if is_master and wait_for_workers and world_size is not None:
            self._wait_workers(world_size)

    def _connect(self, secs):
        deadline = time.monotonic() + secs
        while True:
            try:
                sock = socket.create_connection((self.host, self.port), timeout=max(0.05, deadline - time.monotonic()))
                sock.settimeout(None)
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                return sock
            except OSError:
                if time.monotonic() > deadline:
                    raise DistNetworkError(f"The client socket has timed out after {int(secs * 1000)}ms while trying "
                                           f"to connect to ({self.host}, {self.port}).") from None
                time.sleep(0.05)

    def _wait_workers(self, world_size):
        deadline = time.monotonic() + self._seconds(None)
        while int(self._run("get", (_INIT_KEY,))) < world_size:
            if time.monotonic() > deadline:
                raise DistStoreError(f"Timed out after {int(self._seconds(None))} seconds waiting for clients. "
                                     f"{int(self._run('get', (_INIT_KEY,)))}/{world_size} clients joined.")
            time.sleep(0.01)

    def _run(self, cmd, args):
        with self._lock:
            self._sock.sendall(_pack(cmd) + _pack(list(args) if isinstance(args, tuple) else args))
            out = _unpack(self._sock)
        if isinstance(out, _RemoteError):
            raise ValueError(out.message)
        return out

    def _wait_for(self, keys, secs):
        return self._run("wait", (list(keys), float(secs)))

    def _timeout_error(self, keys, secs):
        return DistStoreError(f"wait timeout after {int(secs * 1000)}ms, keys: " + ", ".join("/" + k for k in keys))

    def barrier(self, key, world_size, timeout=None):
        """Block until `world_size` callers reached the barrier: a count under `key` itself, as torch's."""
        secs = self._seconds(timeout)
        deadline = time.monotonic() + secs
        self.add(key, 1)
        while int(self._run("get", (key,))) < world_size:
            if time.monotonic() > deadline:
                raise self._timeout_error([key], secs)
            time.sleep(0.005)

    def clone(self):
        return TCPStore(self.host, self.port, None, False, self._timeout, False)

    def __del__(self):
        """A client's socket closes; the master's server stops taking connections (as torch's daemon ends
        with its TCPStore)."""
        sock, server = self.__dict__.get("_sock"), self.__dict__.get("_server")
        if sock is not None:
            sock.close()
        if server is not None:
            try:
                server.listener.shutdown(socket.SHUT_RDWR)      # wakes the thread blocked in accept()
            except OSError:
                pass
            server.listener.close()


__all__ = ["TCPStore"]
