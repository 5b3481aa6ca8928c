"""Durable, atomic file writes for checkpoints: write to a temporary file in the target's folder, flush and
fsync it, rename it over the target, fsync the folder.  A writer killed mid-save leaves the previous file
intact; its temporary file is recognised by name and removed by a later save."""
import os
import tempfile

_STALE_AFTER = 60.0                # seconds a dead writer's temporary file is left alone before it is removed


def _temp_prefix(filename):
    """'.NAME.HOST-' -- the start of every temporary file that saves to `filename` write on this host."""
    import socket
    host = "".join(c if c.isalnum() else "_" for c in socket.gethostname())
    return "." + os.path.basename(filename) + "." + host + "-"


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:                # e.g. EPERM: it exists, it is somebody else's
        return True
    return True


def _remove_stale(folder, prefix):
    """Remove temporary files that writers on this host left when they were killed mid-save: their
    writer pid is no longer running and they have not changed for _STALE_AFTER seconds.  Another
    process's save in progress is never touched (its pid is alive, or its file is still being written)."""
    import re
    import time
    if os.name != "posix":
        return
    ours = re.compile(re.escape(prefix) + r"(\d+)\.[a-z0-9_]{8}\.tmp")      # mkstemp's 8 random characters
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for n in names:
        m = ours.fullmatch(n)
        if m is None or int(m.group(1)) == os.getpid() or _pid_alive(int(m.group(1))):
            continue
        path = os.path.join(folder, n)
        try:
            if time.time() - os.stat(path).st_mtime > _STALE_AFTER:
                os.unlink(path)
        except OSError:
            pass


def atomic_write(filename, write):
    """Call write(f) on a temporary file next to `filename`, make it durable, then rename it over
    `filename`; on any failure the temporary file is removed and `filename` is untouched.  Temporary files
    are named '.NAME.HOST-PID.XXXXXXXX.tmp', so those of writers killed mid-save are recognised and removed
    by the next save to the same file."""
    filename = os.fspath(filename)
    folder = os.path.dirname(os.path.abspath(filename))
    prefix = _temp_prefix(filename)
    _remove_stale(folder, prefix)
    fd, tmp = tempfile.mkstemp(prefix=f"{prefix}{os.getpid()}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, filename)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:                                   # make the rename itself durable
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
