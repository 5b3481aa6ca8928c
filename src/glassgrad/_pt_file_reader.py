"""torch.PyTorchFileReader (torch._C's reader of torch.save's zip archives), for the code that reads an archive's
records itself (Lightning's lazy checkpoint loading reads ``data.pkl`` through it): the records by name under
the archive's one top folder, their sizes and data offsets, the serialization id.  Built on _pt_reader's checked
zip reader.  Not here: ``get_storage_from_record`` (a tensor over raw storage bytes) and
``get_record_offset_no_read``."""
import os
import struct

from ._pt_reader import _Archive
from .serialization import CheckpointError

__all__ = ["PyTorchFileReader"]

_MINIZ = (" This is an internal miniz error. If you are seeing this error, there is a high likelihood that your "
          "checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was transferred "
          "incorrectly, or the file was modified after saving.")


class PyTorchFileReader:
    """PyTorchFileReader(path or binary file): the records of a torch.save zip archive."""

    def __init__(self, file):
        if isinstance(file, str):
            if not os.path.isfile(file):
                raise RuntimeError(f"open file failed because of errno 2 on fopen: No such file or directory, "
                                   f"file path: {file}")
            size = os.path.getsize(file)
        else:
            size = file.seek(0, 2)
        self._archive = _Archive(file, size, False)
        try:
            names = list(self._archive.directory())
        except CheckpointError:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding central "
                               "directory." + _MINIZ) from None
        top = names[0].split("/")[0] + "/" if names and "/" in names[0] else ""
        self._prefix = top
        self._records = [n[len(top):] for n in names if n.startswith(top)]

    def _entry(self, name):
        e = self._archive.entry(self._prefix + name) if name in self._records else None
        if e is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not found." + _MINIZ)
        return e

    def get_all_records(self):
        return list(self._records)

    def has_record(self, name):
        return name in self._records

    def get_record(self, name):
        """The record's bytes."""
        e = self._entry(name)
        return bytes(self._archive.read(self._prefix + name, e))

    def get_record_size(self, name):
        return self._entry(name).size

    def get_record_header_offset(self, name):
        """Where the record's local zip header starts."""
        return self._entry(name).offset

    def get_record_offset(self, name):
        """Where the record's data starts in the file."""
        e = self._entry(name)
        head = self._archive._bytes(e.offset, 30, f"entry {name!r}")
        return e.offset + 30 + sum(struct.unpack_from("<HH", head, 26))

    def serialization_id(self):
        """The archive's ``.data/serialization_id`` record as text ("" if it has none)."""
        return self.get_record(".data/serialization_id").decode() if self.has_record(".data/serialization_id") else ""
