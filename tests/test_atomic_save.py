"""Saving a checkpoint to a path (glassgrad.save in both formats and safetensors.save_file, which all go
through glassgrad._atomic.atomic_write) leaves the file what torch.save leaves it -- its permissions, its
owner, a symlink still a link -- and replaces it atomically wherever that changes nothing else; where it
cannot (a read-only folder, another user's file) it writes in place, as torch.save always does.  Temporary
files of killed writers are removed by any later save in their folder.

Permission bits do not bind root, so where a test needs them to, it runs the save in a forked child that
has become uid/gid 65534 (nobody) when the suite runs as root, and in-process otherwise."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

import pytest

import glassgrad
import glassgrad._pt_writer  # noqa: F401  (imported here: a child that drops privileges cannot read the sources)
from glassgrad import safetensors as gs
from glassgrad._atomic import _temp_prefix

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes, owners, symlinks and pids")

NOBODY = 65534
ROOT = os.geteuid() == 0

SAVERS = {
    "glassgrad": lambda path, v: glassgrad.save({"w": glassgrad.tensor([v] * 3)}, path),
    "torch": lambda path, v: glassgrad.save({"w": glassgrad.tensor([v] * 3)}, path, format="torch"),
    "safetensors": lambda path, v: gs.save_file({"w": glassgrad.tensor([v] * 3)}, path),
}


def value(path, kind):
    w = gs.load_file(path)["w"] if kind == "safetensors" else glassgrad.load(path)["w"]
    return w.tolist()


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def as_nobody(fn):
    """Run fn() where permission bits apply to it: in this process when it is not root, else in a forked
    child that drops to uid/gid 65534 first.  A failure in the child fails the test with its traceback."""
    if not ROOT:
        return fn()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                       # the child: never returns into pytest
        code = 1
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            fn()
            code = 0
        except BaseException:
            os.write(w, traceback.format_exc().encode())
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        err = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, err


@pytest.fixture
def shared_dir():
    """A folder a child that became nobody can reach (pytest's tmp_path lies under a root-only folder)."""
    d = tempfile.mkdtemp(prefix="glassgrad-atomic-")
    os.chmod(d, 0o755)
    yield Path(d)
    for folder, dirs, _ in os.walk(d):
        for n in dirs:
            os.chmod(os.path.join(folder, n), 0o755)
    shutil.rmtree(d)


@pytest.fixture
def umask():
    """Set the umask for one test and put the previous one back."""
    old = os.umask(0o022)
    yield os.umask
    os.umask(old)


# -- 1. permissions and owner ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("mask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_0666_less_the_umask(tmp_path, umask, kind, mask, mode):
    umask(mask)
    SAVERS[kind](tmp_path / "ck", 1.0)
    assert umask(mask) == mask                         # reading the umask left it as it was
    assert mode_of(tmp_path / "ck") == mode            # what open(path, "wb") -- torch.save -- gives
    assert value(tmp_path / "ck", kind) == [1.0] * 3


def test_the_umask_is_read_right_without_proc_too(umask, monkeypatch):
    from glassgrad import _atomic
    umask(0o027)
    assert _atomic._umask() == 0o027                   # from /proc/self/status on Linux
    real_open = open

    def no_proc(name, *a, **k):
        if str(name).startswith("/proc/"):
            raise FileNotFoundError(name)
        return real_open(name, *a, **k)
    monkeypatch.setattr("builtins.open", no_proc)
    assert _atomic._umask() == 0o027                   # set and put back with os.umask
    assert umask(0o027) == 0o027


@pytest.mark.parametrize("kind", SAVERS)
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o664])
def test_replacing_a_file_keeps_its_mode_and_is_still_atomic(tmp_path, umask, kind, mode):
    path = tmp_path / "ck"
    SAVERS[kind](path, 1.0)
    os.chmod(path, mode)
    before = os.stat(path)
    umask(0o077)                                       # the umask does not apply to a file that exists
    SAVERS[kind](path, 2.0)
    after = os.stat(path)
    assert stat.S_IMODE(after.st_mode) == mode
    assert (after.st_uid, after.st_gid) == (before.st_uid, before.st_gid)
    assert after.st_ino != before.st_ino               # renamed over the file, not rewritten in place
    assert value(path, kind) == [2.0] * 3
    assert os.listdir(tmp_path) == ["ck"]


@pytest.mark.skipif(not ROOT, reason="making a file that belongs to another user takes root")
@pytest.mark.parametrize("kind", SAVERS)
def test_root_replacing_another_users_file_keeps_its_owner_and_mode(tmp_path, kind):
    path = tmp_path / "ck"
    SAVERS[kind](path, 1.0)
    os.chown(path, NOBODY, NOBODY)
    os.chmod(path, 0o640)
    before = os.stat(path)
    SAVERS[kind](path, 2.0)
    after = os.stat(path)
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (NOBODY, NOBODY, 0o640)
    assert after.st_ino != before.st_ino               # root may chown: still atomic
    assert value(path, kind) == [2.0] * 3
    assert os.listdir(tmp_path) == ["ck"]


@pytest.mark.skipif(not ROOT, reason="making a file that belongs to another user takes root")
@pytest.mark.parametrize("kind", SAVERS)
def test_a_saver_who_cannot_chown_another_users_file_writes_it_in_place(shared_dir, kind):
    os.chmod(shared_dir, 0o777)                        # nobody could make a temporary file and rename it
    path = shared_dir / "ck"
    SAVERS[kind](path, 1.0)
    os.chown(path, 1234, 1234)
    os.chmod(path, 0o666)
    before = os.stat(path)
    as_nobody(lambda: SAVERS[kind](path, 2.0))
    after = os.stat(path)
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == (1234, 1234, 0o666)
    assert after.st_ino == before.st_ino               # the owner is kept by writing in place, as torch does
    assert value(path, kind) == [2.0] * 3
    assert os.listdir(shared_dir) == ["ck"]


# -- 2. symlinks -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", SAVERS)
def test_a_symlink_stays_a_link_and_its_target_is_replaced_atomically(tmp_path, kind):
    links, files = tmp_path / "links", tmp_path / "files"
    links.mkdir()
    files.mkdir()
    SAVERS[kind](files / "real", 1.0)
    os.chmod(files / "real", 0o640)
    before = os.stat(files / "real")
    os.symlink("../files/real", links / "hop")
    os.symlink("hop", links / "ck")                    # a link to a link
    SAVERS[kind](links / "ck", 2.0)
    assert os.readlink(links / "ck") == "hop" and os.readlink(links / "hop") == "../files/real"
    after = os.stat(files / "real")
    assert stat.S_ISREG(after.st_mode) and stat.S_IMODE(after.st_mode) == 0o640
    assert after.st_ino != before.st_ino               # atomic, in the target's folder ...
    assert value(files / "real", kind) == [2.0] * 3
    assert sorted(os.listdir(files)) == ["real"]       # ... leaving no temporary file anywhere
    assert sorted(os.listdir(links)) == ["ck", "hop"]
    os.symlink("../files/new", links / "dangling")     # torch.save creates a dangling link's target
    SAVERS[kind](links / "dangling", 3.0)
    assert os.path.islink(links / "dangling") and value(files / "new", kind) == [3.0] * 3


@pytest.mark.parametrize("kind", SAVERS)
def test_a_fifo_is_written_to_not_replaced(tmp_path, kind):
    fifo = tmp_path / "ck"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    reader.start()
    SAVERS[kind](fifo, 1.0)
    reader.join(10)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert len(got) == 1
    (tmp_path / "copy").write_bytes(got[0])
    assert value(tmp_path / "copy", kind) == [1.0] * 3


# -- 3. a read-only folder -------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", SAVERS)
def test_a_writable_file_in_a_read_only_folder_is_saved_in_place(shared_dir, kind):
    folder = shared_dir / "ro"
    folder.mkdir()
    path = folder / "ck"
    SAVERS[kind](path, 1.0)
    os.chmod(path, 0o644)
    if ROOT:
        os.chown(path, NOBODY, NOBODY)                 # nobody's file, root's folder
    before = os.stat(path)
    os.chmod(folder, 0o555)

    def save():
        SAVERS[kind](path, 2.0)
        with pytest.raises(PermissionError):           # a new file still cannot be made there
            SAVERS[kind](folder / "new", 2.0)
    as_nobody(save)
    after = os.stat(path)
    assert after.st_ino == before.st_ino
    assert (after.st_uid, after.st_gid, stat.S_IMODE(after.st_mode)) == \
        (before.st_uid, before.st_gid, 0o644)
    assert value(path, kind) == [2.0] * 3
    assert os.listdir(folder) == ["ck"]


# -- 4. temporary files of killed writers ----------------------------------------------------------------

@pytest.mark.parametrize("kind", SAVERS)
def test_a_save_removes_dead_writers_temporary_files_whatever_file_they_were_for(tmp_path, kind):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    other = _temp_prefix(str(tmp_path / "other.pt"))
    names = {
        "dead": f"{other}{dead.pid}.abc_1234.tmp",                     # removed, though not for "ck"
        "dotted": f"{_temp_prefix('a.b.c')}{dead.pid}.xyz98765.tmp",   # removed too
        "live": f"{other}{os.getppid()}.live1234.tmp",                 # a running writer's: kept
        "fresh": f"{other}{dead.pid}.fresh123.tmp",                    # changed just now: kept
        "user": "other.pt.tmp",                                        # not a temporary file of ours: kept
    }
    for k, n in names.items():
        (tmp_path / n).write_bytes(b"x" * 100)
        if k != "fresh":
            os.utime(tmp_path / n, (time.time() - 3600,) * 2)
    SAVERS[kind](tmp_path / "ck", 1.0)
    assert sorted(os.listdir(tmp_path)) == sorted(["ck", names["live"], names["fresh"], names["user"]])
