"""Reading PyTorch's zip checkpoints (``torch.save``) without PyTorch and without unpickling.

The archive's ``data.pkl`` is interpreted, opcode by opcode, by the restricted pickle machine of
``_pt_pickle.py`` (``_Machine``: only the globals in its ``_ALLOWED`` table, nothing imported, nothing
called outside it).  A storage's declared size is checked here against the bytes of its archive entry
before it is read; every tensor view is checked against its storage before it is built.

The zip archive is read here too, not by Python's zipfile: its directory is parsed with every offset, size
and count checked against the file (and at most _MAX_ENTRIES entries, refused from the end record before
anything is parsed), names must be unique, and entries are stored (or, but for storages, deflated --
inflated no further than their declared size); bzip2 and lzma, which torch does not read, are refused.
"""
import io
import struct
import zlib
from collections import namedtuple

import numpy as np

from .serialization import Placement
from ._pt_pickle import UnsafeCheckpointError, _Machine, _Storage, _bad, _check_pid

__all__ = ["UnsafeCheckpointError", "is_torch_zip", "load_torch_zip", "is_torch_legacy", "load_torch_legacy"]


def is_torch_zip(head):
    return head[:4] == b"PK\x03\x04"


_Entry = namedtuple("_Entry", "flags method crc csize size offset")
_MAX_ENTRIES = 100_000      # torch.save writes one entry per storage, and six more
_METHODS = {0: "stored", 8: "deflate", 12: "bzip2", 14: "lzma"}


class _Archive:
    """A zip archive (path or binary file object) read without Python's zipfile (whose directory costs ~500
    bytes an entry, parsed in full whatever the end record counts, and which inflates bzip2/lzma entries
    whole before checking their size), every count, size and offset checked against the file.  `read`
    returns an entry's bytes through its checked local header -- read and CRC checked or, for a storage with
    `mmap`, mapped copy-on-write."""

    def __init__(self, f, size, mmap):
        self.size, self.mapped, self.fh, self.opened = size, None, None, False
        if mmap:            # copy-on-write, or shared with the file under set_default_mmap_options(MAP_SHARED)
            from ._serialization_extras import mmap_mode
            self.mapped = np.memmap(f, dtype=np.uint8, mode=mmap_mode())
        elif hasattr(f, "read"):
            self.fh = f
        else:
            self.fh, self.opened = open(f, "rb"), True

    def close(self):
        if self.opened:
            self.fh.close()

    def _bytes(self, at, n, what):
        if at + n > self.size:
            raise _bad(f"{what} extends past the end of the archive")
        if self.mapped is not None:
            return bytes(self.mapped[at:at + n])
        self.fh.seek(at)
        b = self.fh.read(n)
        if len(b) != n:
            raise _bad(f"{what} is truncated")
        return b

    def directory(self):
        """The entries' names, each mapped to its record in the central directory (parsed by `entry`): ~190
        bytes an entry, and more than _MAX_ENTRIES are refused from the end record's count."""
        tail_at = max(0, self.size - 22 - 0xFFFF)            # the end record, then at most a 64 KiB comment
        tail = self._bytes(tail_at, self.size - tail_at, "end record")
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) - at < 22:
            raise _bad("not a readable zip archive (no end of central directory record)")
        count, cd_size, cd_at = struct.unpack_from("<HII", tail, at + 10)
        if at >= 20 and tail[at - 20:at - 16] == b"PK\x06\x07":  # zip64 (torch writes it): counts in its record
            rec = self._bytes(struct.unpack_from("<Q", tail, at - 12)[0], 56, "zip64 end record")
            if rec[:4] != b"PK\x06\x06":
                raise _bad("corrupt zip64 end record")
            count, cd_size, cd_at = struct.unpack_from("<QQQ", rec, 32)
        if count > _MAX_ENTRIES:
            raise _bad(f"archive has {count} entries; glassgrad reads at most {_MAX_ENTRIES} (torch.save writes "
                       "one per storage, and six more)")
        self.cd = cd = self._bytes(cd_at, cd_size, "central directory")
        names, pos = {}, 0
        for _ in range(count):
            if cd[pos:pos + 4] != b"PK\x01\x02" or pos + 46 > len(cd):
                raise _bad("corrupt central directory (a record is missing)")
            flags, = struct.unpack_from("<H", cd, pos + 8)
            n, m, k = struct.unpack_from("<HHH", cd, pos + 28)
            if pos + 46 + n + m + k > len(cd):
                raise _bad("corrupt central directory (a record runs past its end)")
            try:
                name = cd[pos + 46:pos + 46 + n].decode("utf-8" if flags & 0x800 else "cp437")
            except UnicodeDecodeError:
                raise _bad("an entry's name is not valid UTF-8") from None
            if name in names:
                raise _bad(f"archive holds two entries named {name!r}")
            names[name] = pos
            pos += 46 + n + m + k
        if pos != len(cd):
            raise _bad(f"corrupt central directory (it holds more than the {count} records its end record counts)")
        self.names = names
        return names

    def entry(self, name):
        """The _Entry of `name` (None if there is none)."""
        pos = self.names.get(name)
        if pos is None:
            return None
        flags, method, crc, csize, size, n, m = struct.unpack_from("<HH4xIIIHH", self.cd, pos + 8)
        offset, = struct.unpack_from("<I", self.cd, pos + 42)
        if 0xFFFFFFFF in (size, csize, offset):
            size, csize, offset = _zip64(self.cd[pos + 46 + n:pos + 46 + n + m], (size, csize, offset))
        return _Entry(flags, method, crc, csize, size, offset)

    def read(self, name, e=None, storage=False, skip=False):
        """The bytes of entry `name` (its _Entry `e`, if the caller has it): stored, or (but for a storage)
        deflated and inflated no further than its declared size."""
        e = e or self.entry(name)
        if e.flags & 1:
            raise _bad(f"entry {name!r} is encrypted")
        if e.method not in ((0,) if storage else (0, 8)):
            raise _bad(f"entry {name!r} is compressed with {_METHODS.get(e.method, f'method {e.method}')}; "
                       f"glassgrad reads {'storages' if storage else 'entries'} stored" + (
                           "" if storage else " or deflated") + " (torch.save stores them)")
        if e.method == 0 and e.csize != e.size:
            raise _bad(f"stored entry {name!r} declares two sizes")
        head = self._bytes(e.offset, 30, f"entry {name!r}")
        if head[:4] != b"PK\x03\x04":
            raise _bad(f"entry {name!r} has no valid local header")
        start = e.offset + 30 + sum(struct.unpack_from("<HH", head, 26))
        if not storage:
            raw = self._bytes(start, e.csize, f"entry {name!r}")
            raw = _inflate(raw, e.size, name) if e.method == 8 else raw
        elif start + e.size > self.size:
            raise _bad(f"entry {name!r} extends past the end of the archive")
        elif skip:
            return bytearray(e.size)        # serialization.skip_data: the bytes are not read
        elif self.mapped is not None:
            return self.mapped[start:start + e.size]
        else:
            raw = bytearray(e.size)
            self.fh.seek(start)
            if self.fh.readinto(raw) != e.size:
                raise _bad(f"entry {name!r} is truncated")
        if e.crc and zlib.crc32(raw) != e.crc:     # 0: not recorded (torch's set_crc32_options(False), skip_data)
            raise _bad(f"archive entry {name!r} is corrupt (CRC mismatch)")
        return raw


def _zip64(extra, fields):
    """(size, compressed size, header offset) with each that reads 0xFFFFFFFF taken, in order, from the zip64
    extra field."""
    i = 0
    while i + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, i)
        if tag == 1:
            data = extra[i + 4:i + 4 + n]
            big = iter(struct.unpack_from(f"<{len(data) // 8}Q", data))
            out = tuple(next(big, None) if f == 0xFFFFFFFF else f for f in fields)
            if None in out:
                break
            return out
        i += 4 + n
    raise _bad("corrupt central directory (an entry's zip64 sizes are missing)")


def _inflate(raw, size, name):
    d = zlib.decompressobj(-15)
    try:
        out = d.decompress(raw, size + 1)                   # at most one byte past the declared size
    except zlib.error as e:
        raise _bad(f"entry {name!r} is corrupt ({e})") from None
    if len(out) != size or not d.eof:
        raise _bad(f"entry {name!r} inflates to other than its declared {size} bytes")
    return out


def load_torch_zip(f, place=None, mmap=False, full=None):
    """The object a ``torch.save`` zip archive holds (path or binary file object); `place(array, location)`
    puts each storage where map_location says (serialization.Placement; default: where it was saved).
    With `mmap` (a path only) storages map the file copy-on-write instead of being read.  `full` (a dict of
    pickle.load's arguments, only for load(weights_only=False)) unpickles with Python's pickle instead of
    the restricted machine."""
    place = place or Placement()
    if hasattr(f, "seek"):
        size = f.seek(0, 2)
        f.seek(0)
    else:
        import os
        size = os.path.getsize(f)
    archive = _Archive(f, size, mmap)
    try:
        return _load_zip(archive, place, full)
    finally:
        archive.close()


def _load_zip(archive, place, full=None):
    """load_torch_zip on the opened `archive`."""
    entries = archive.directory()
    for n in entries:
        if n.startswith("/") or ".." in n.replace("\\", "/").split("/"):
            raise _bad(f"archive entry with an unsafe path: {n!r}")
    pkl = [n for n in entries if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        raise _bad("archive has no single <name>/data.pkl")
    prefix = pkl[0][:-len("data.pkl")]
    if prefix + "constants.pkl" in entries or any(n.startswith(prefix + "code/") for n in entries):
        raise UnsafeCheckpointError(         # torch.load dispatched these to torch.jit.load (CVE-2025-32434)
            "torch checkpoint: this is a TorchScript archive (torch.jit.save), which holds code; glassgrad "
            "loads weights only -- save the model's state_dict with torch.save and load that")
    from ._serialization_extras import fallback_byteorder, skipping_data
    order, skip = prefix + "byteorder", skipping_data()
    mark = archive.read(order).strip() if order in entries else b""
    if mark not in (b"little", b"big", b""):
        raise _bad("Unknown endianness type: " + mark[:40].decode("utf-8", "replace"))
    endian = {b"little": "<", b"big": ">"}.get(mark) or fallback_byteorder()
    cache = {}

    def storage(pid):
        _, stype, key, location, numel = _check_pid(pid, 5)
        if key in cache:
            s = cache[key]
            if s.array.dtype != stype.dtype:
                raise _bad(f"storage {key!r} used with two dtypes")
            return s
        name = prefix + "data/" + key
        e = archive.entry(name)
        if e is None:
            raise _bad(f"storage {key!r} is missing from the archive")
        need = numel * stype.dtype.itemsize
        if numel < 0 or e.size != need:
            raise _bad(f"storage {key!r} declares {numel} elements ({need} bytes) but holds {e.size}")
        raw = archive.read(name, e, storage=True, skip=skip)
        host = np.frombuffer(raw, dtype=stype.dtype.newbyteorder(endian)).astype(stype.dtype, copy=False)
        s = cache[key] = _Storage(place(host, location))
        return s

    data = archive.read(pkl[0])
    if full is not None:
        from ._pt_objects import FullUnpickler
        return FullUnpickler(io.BytesIO(data), storage, **full).load()
    try:
        return _Machine(data, storage).run()
    except RecursionError:
        raise _bad("structure nested too deeply") from None
    except UnicodeDecodeError:
        raise _bad("a string in data.pkl is not valid UTF-8") from None


# -- the legacy format (torch.save(..., _use_new_zipfile_serialization=False), PyTorch < 1.6) ----------------
# five pickles in a row -- magic number, protocol version, system info, the object, the storage keys --
# then each storage as an int64 element count and its bytes.
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C


def is_torch_legacy(head):
    return head[:4] == b"\x80\x02\x8a\x0a"


def load_torch_legacy(data, place=None):
    """The object a legacy (non-zip) torch.save file holds, from its bytes (`place`: as load_torch_zip)."""
    try:
        return _load_legacy(data, place or Placement())
    except RecursionError:
        raise _bad("structure nested too deeply") from None
    except UnicodeDecodeError:
        raise _bad("a string in the pickle is not valid UTF-8") from None


def _load_legacy(data, place):
    def no_storage(pid):
        raise _bad("unexpected storage in the legacy header")

    def plain(pos):
        m = _Machine(data, no_storage, pos)
        return m.run(), m.pos

    magic, pos = plain(0)
    if magic != _LEGACY_MAGIC:
        raise _bad("not a legacy torch checkpoint (bad magic number)")
    proto, pos = plain(pos)
    info, pos = plain(pos)
    if proto != 1001 or not isinstance(info, dict):
        raise _bad("unsupported legacy protocol")
    if info.get("little_endian") is not True:
        raise _bad("big-endian checkpoints are not supported")
    types = {}

    def record(pid):
        _check_pid(pid, 6)
        if pid[5] is not None:
            raise _bad("legacy storage views are not supported")
        if types.setdefault(pid[2], pid[1].dtype) != pid[1].dtype:
            raise _bad(f"storage {pid[2]!r} used with two dtypes")
        return None

    obj_pos = pos
    dry = _Machine(data, record, pos, dry=True)
    dry.run()
    m = _Machine(data, no_storage, dry.pos)
    keys = m.run()
    pos = m.pos
    if not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
        raise _bad("malformed storage key list")
    arrays = {}
    for k in keys:
        if k not in types:
            raise _bad(f"storage {k!r} is not used by any tensor")
        if pos + 8 > len(data):
            raise _bad("storage data is truncated")
        n = struct.unpack("<q", data[pos:pos + 8])[0]
        nbytes = n * types[k].itemsize
        if n < 0 or pos + 8 + nbytes > len(data):
            raise _bad(f"storage {k!r} declares {n} elements but the file holds fewer bytes")
        arrays[k] = _Storage(np.frombuffer(bytearray(memoryview(data)[pos + 8:pos + 8 + nbytes]),
                                           dtype=types[k].newbyteorder("<")).astype(types[k], copy=False))
        pos += 8 + nbytes
    if set(types) - set(arrays):
        raise _bad("a tensor's storage is missing from the file")

    def storage(pid):
        s = arrays[pid[2]]
        if pid[4] != s.array.size:
            raise _bad(f"storage {pid[2]!r} declares {pid[4]} elements but holds {s.array.size}")
        if pid[2] not in placed:
            placed[pid[2]] = _Storage(place(s.array, pid[3]))
        return placed[pid[2]]
    placed = {}
    return _Machine(data, storage, obj_pos).run()
