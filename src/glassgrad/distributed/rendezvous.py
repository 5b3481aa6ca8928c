"""torch.distributed.rendezvous: ``rendezvous(url, rank, world_size)`` returns an iterator whose one item is
(store, rank, world_size) for the url's scheme -- file:// (a FileStore), tcp://host:port and env:// (a
TCPStore that rank 0 serves) -- and ``register_rendezvous_handler`` adds a scheme.  rank and world_size come
from the arguments, the url's query (``?rank=0&world_size=2``) or, for env://, RANK / WORLD_SIZE /
MASTER_ADDR / MASTER_PORT.
"""
import numbers
import os
from urllib.parse import urlparse, urlunparse

from ._tcpstore import TCPStore
from .distributed_c10d import default_pg_timeout
from .store import FileStore

_handlers = {}


def register_rendezvous_handler(scheme, handler):
    """handler(url, **kwargs) yields (store, rank, world_size) for urls of `scheme`."""
    if scheme in _handlers:
        raise RuntimeError(f"Rendezvous handler for {scheme}:// already registered")
    _handlers[scheme] = handler


def _query(query):
    return dict(pair.split("=", 1) for pair in query.split("&") if pair)


def rendezvous(url, rank=-1, world_size=-1, **kwargs):
    if not isinstance(url, (str, bytes)):
        raise RuntimeError(f"`url` must be a string. {type(url)}: {url}")
    if not isinstance(rank, numbers.Integral):
        raise RuntimeError(f"`rank` must be an integer. {rank}")
    if not isinstance(world_size, numbers.Integral):
        raise RuntimeError(f"`world_size` must be an integer. {world_size}")
    parts = urlparse(url)
    if rank != -1 or world_size != -1:
        query = _query(parts.query)
        if "rank" in query or "world_size" in query:
            raise AssertionError(f"The url: {url} has node-specific arguments(rank, world_size) already.")
        if rank != -1:
            query["rank"] = str(rank)
        if world_size != -1:
            query["world_size"] = str(world_size)
        parts = parts._replace(query="&".join(f"{k}={v}" for k, v in query.items()))
        url = urlunparse(parts)
    if parts.scheme not in _handlers:
        raise RuntimeError(f"No rendezvous handler for {parts.scheme}://")
    return _handlers[parts.scheme](url, **kwargs)


def _error(scheme, msg):
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: {msg}")


def _rank_and_size(scheme, query):
    if "rank" not in query:
        raise _error(scheme, "rank parameter missing")
    if "world_size" not in query:
        raise _error(scheme, "world size parameter missing")
    return int(query["rank"]), int(query["world_size"])


def _file_handler(url, **kwargs):
    parts = urlparse(url)
    if not parts.path:
        raise _error("file", "path missing")
    rank, world_size = _rank_and_size("file", _query(parts.query))
    yield FileStore(parts.path, world_size), rank, world_size
    raise RuntimeError("Unable to perform rerendezvous using file:// method")


def _tcp_store(host, port, rank, world_size, timeout):
    if not 0 <= port < 2 ** 16:
        raise ValueError(f"port must have value from 0 to 65535 but was {port}.")
    return TCPStore(host, port, world_size, rank == 0, timeout, multi_tenant=True)


def _tcp_handler(url, timeout=default_pg_timeout, **kwargs):
    parts = urlparse(url)
    if parts.port is None:
        raise _error("tcp", "port number missing")
    rank, world_size = _rank_and_size("tcp", _query(parts.query))
    yield _tcp_store(parts.hostname, parts.port, rank, world_size, timeout), rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using tcp:// method")


def _env(var):
    value = os.environ.get(var)
    if not value:
        raise _error("env", f"environment variable {var} expected, but not set")
    return value


def _env_handler(url, timeout=default_pg_timeout, **kwargs):
    query = _query(urlparse(url).query)
    rank = int(query["rank"]) if "rank" in query else int(_env("RANK"))
    world_size = int(query["world_size"]) if "world_size" in query else int(_env("WORLD_SIZE"))
    host, port = _env("MASTER_ADDR"), int(_env("MASTER_PORT"))
    yield _tcp_store(host, port, rank, world_size, timeout), rank, world_size
    raise RuntimeError("Unable to perform re-rendezvous using env:// method")


register_rendezvous_handler("file", _file_handler)
register_rendezvous_handler("tcp", _tcp_handler)
register_rendezvous_handler("env", _env_handler)

__all__ = ["register_rendezvous_handler", "rendezvous"]
