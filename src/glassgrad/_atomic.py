"""Durable, atomic file writes for checkpoints (glassgrad.save, both formats, and safetensors.save_file).

A save leaves the file what torch.save leaves it -- same permissions, same owner, links followed -- and
replaces it atomically wherever that changes nothing else:

- The data goes to a temporary file '.NAME.HOST-PID.XXXXXXXX.tmp' in the file's folder, is flushed and
  fsynced, renamed over the file, and the folder is fsynced: a crash or kill at any moment leaves the old
  file or the complete new one, never a torn one.
- The temporary file is given the permissions the saved file should end with: a new file gets
  0666 & ~umask (as open() would), a replaced file keeps its mode, owner and group.
- A symlink is followed (os.path.realpath) and stays a link: its target is replaced atomically, in the
  target's folder.
- The save is written in place instead -- open(path, "wb"), write, fsync, which is what torch.save always
  does -- where the atomic route cannot be taken without changing more than the content:
    * the folder is not writable but the file is (no temporary file can be made beside it);
    * the file belongs to another user, or to a group the saver is not in: a rename would hand it to the
      saver, so its owner could no longer chmod or reclaim it and its group could lose access.  Keeping the
      file's owner wins over atomicity here because ownership is what everyone else relies on to use the
      file, while the saver (overwriting someone else's file) gets exactly torch.save's guarantee;
    * the path is not a regular file (a device such as /dev/null, a FIFO): it is written to, never replaced.
  An in-place save keeps no atomicity: a crash, a kill or an error mid-write (a full disk, an object the
  format cannot hold) leaves a truncated or partial file, as torch.save does.
- A writer killed mid-save leaves its temporary file behind.  Any later save into the same folder removes
  those of writers on this host whose pid is no longer running and whose file has not changed for a minute,
  whichever file they were saving; a running writer's file is never touched."""
import os
import re
import socket
import stat
import tempfile
import time

_STALE_AFTER = 60.0                # seconds a dead writer's temporary file is left alone before it is removed


def _host():
    return "".join(c if c.isalnum() else "_" for c in socket.gethostname())


def _temp_prefix(filename):
    """'.NAME.HOST-' -- the start of every temporary file that saves to `filename` write on this host."""
    return "." + os.path.basename(filename) + "." + _host() + "-"


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:                # e.g. EPERM: it exists, it is somebody else's
        return True
    return True


def _remove_stale(folder):
    """Remove temporary files that writers on this host left in `folder` when they were killed mid-save,
    whatever file they were saving: their writer pid is no longer running and they have not changed for
    _STALE_AFTER seconds.  Another process's save in progress is never touched (its pid is alive, or its
    file is still being written)."""
    if os.name != "posix":
        return
    ours = re.compile(r"\..+\." + re.escape(_host()) + r"-(\d+)\.[a-z0-9_]{8}\.tmp", re.S)  # mkstemp's 8 characters
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


def _umask():
    """The process umask.  Linux shows it in /proc/self/status; elsewhere os.umask has to set it to read it,
    which another thread creating a file at that instant could notice."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _take_identity(fd, old):
    """Give the temporary file `fd` the permissions the saved file should have: 0666 & ~umask for a new file,
    the mode, owner and group of `old` (the replaced file's stat) otherwise.  False where the owner or group
    cannot be kept (another user's file, a group we are not in)."""
    if os.name != "posix":
        return True
    if old is None:
        os.fchmod(fd, 0o666 & ~_umask())
        return True
    mine = os.fstat(fd)
    if (mine.st_uid, mine.st_gid) != (old.st_uid, old.st_gid):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except OSError:            # EPERM; EINVAL for an id outside this user namespace
            return False
    os.fchmod(fd, stat.S_IMODE(old.st_mode))       # after fchown, which clears set-id bits
    return True


def _write_in_place(path, write):
    """torch.save's way: truncate and write the file itself (no atomicity), fsync it if it is a file."""
    with open(path, "wb") as f:
        write(f)
        f.flush()
        if stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            os.fsync(f.fileno())


def atomic_write(filename, write):
    """Call write(f) on a temporary file beside `filename` (its target if it is a symlink), make it durable
    and give it the file's permissions, then rename it over the file; on any failure the temporary file is
    removed and the file is untouched.  Written in place instead where that cannot be done (see the module
    docstring)."""
    path = os.fspath(filename)
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    _remove_stale(folder)
    try:
        old = os.stat(target)
    except FileNotFoundError:
        old = None
    if old is not None and not stat.S_ISREG(old.st_mode):
        return _write_in_place(path, write)            # a device or FIFO is written to, never replaced
    try:
        fd, tmp = tempfile.mkstemp(prefix=f"{_temp_prefix(target)}{os.getpid()}.", suffix=".tmp", dir=folder)
    except PermissionError:                            # a folder we may not write to: the file may be writable
        return _write_in_place(path, write)
    try:
        with os.fdopen(fd, "wb") as f:
            atomic = _take_identity(f.fileno(), old)
            if atomic:
                write(f)
                f.flush()
                os.fsync(f.fileno())
        if atomic:
            os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if not atomic:                                     # another user's file: keep its owner, as torch.save does
        os.unlink(tmp)
        return _write_in_place(path, write)
    try:                                               # make the rename itself durable
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)
