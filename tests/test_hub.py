"""torch.hub and torch.utils.model_zoo against torch: the cache directory rules, checkpoints by URL (file:// and
a local http.server; torch.save's files, the legacy single-file zip), the hash check and its message, hub
repositories (local, and a GitHub one from the cache) with dependencies and entry points.  No internet."""
import contextlib
import functools
import hashlib
import http.server
import os
import subprocess
import sys
import threading
import warnings
import zipfile

import numpy as np
import pytest
import torch
import torch.hub

import glassgrad.hub as ghub


@contextlib.contextmanager
def _hub_dirs(tmp_path, monkeypatch):
    """Both libraries' hub state isolated under tmp_path (and put back)."""
    old = torch.hub._hub_dir, ghub._hub_dir
    torch.hub._hub_dir = ghub._hub_dir = None
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    try:
        yield
    finally:
        torch.hub._hub_dir, ghub._hub_dir = old


def test_get_dir_and_set_dir_follow_torchs_rules(tmp_path, monkeypatch):
    with _hub_dirs(tmp_path, monkeypatch):
        monkeypatch.delenv("TORCH_HOME")
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        assert ghub.get_dir() == torch.hub.get_dir() == os.path.expanduser("~/.cache/torch/hub")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert ghub.get_dir() == torch.hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub")
        monkeypatch.setenv("TORCH_HOME", "~/th")
        assert ghub.get_dir() == torch.hub.get_dir() == os.path.expanduser("~/th/hub")
        ghub.set_dir("~/elsewhere")
        torch.hub.set_dir("~/elsewhere")
        assert ghub.get_dir() == torch.hub.get_dir() == os.path.expanduser("~/elsewhere")


def _checkpoint(tmp_path, legacy=False):
    torch.manual_seed(0)
    sd = torch.nn.Linear(3, 2).state_dict()
    raw = tmp_path / "raw.pth"
    torch.save(sd, raw, _use_new_zipfile_serialization=not legacy)
    digest = hashlib.sha256(raw.read_bytes()).hexdigest()
    named = tmp_path / "srv" / f"linear-{digest[:8]}.pth"
    named.parent.mkdir(exist_ok=True)
    raw.rename(named)
    return sd, named, digest


def _same(sd, got):
    assert list(got) == list(sd)
    for k in sd:
        np.testing.assert_array_equal(got[k].numpy(), sd[k].numpy())


def test_load_state_dict_from_file_url_caches_and_checks_hash(tmp_path, monkeypatch, capsys):
    sd, path, _ = _checkpoint(tmp_path)
    with _hub_dirs(tmp_path, monkeypatch):
        got = ghub.load_state_dict_from_url(path.as_uri(), check_hash=True, progress=False)
        _same(sd, got)
        cached = tmp_path / "home" / "hub" / "checkpoints" / path.name
        assert cached.exists()
        assert capsys.readouterr().out == f'Downloading: "{path.as_uri()}" to {cached}\n'
        _same(sd, ghub.load_state_dict_from_url(path.as_uri()))      # from the cache: no download
        assert capsys.readouterr().out == ""
        import glassgrad.utils.model_zoo
        got = glassgrad.utils.model_zoo.load_url(path.as_uri(), model_dir=str(tmp_path / "md"), file_name="x.pt",
                                                 map_location="cpu", weights_only=True)
        _same(sd, got)
        assert (tmp_path / "md" / "x.pt").exists()
        m = glassgrad.nn.Linear(3, 2)
        m.load_state_dict(got)


def test_hash_mismatch_raises_torchs_error_and_leaves_nothing(tmp_path):
    _, path, digest = _checkpoint(tmp_path)
    msgs = []
    for i, fn in enumerate((torch.hub.download_url_to_file, ghub.download_url_to_file)):
        dst = tmp_path / f"out{i}" / "f.pth"
        dst.parent.mkdir()
        with pytest.raises(RuntimeError) as e:
            fn(path.as_uri(), str(dst), hash_prefix="0000beef", progress=False)
        msgs.append(str(e.value))
        assert list(dst.parent.iterdir()) == []
    assert msgs[0] == msgs[1] == f'invalid hash value (expected "0000beef", got "{digest}")'
    dst = tmp_path / "ok.pth"
    ghub.download_url_to_file(path.as_uri(), str(dst), hash_prefix=digest[:10], progress=False)
    assert dst.read_bytes() == path.read_bytes()


@contextlib.contextmanager
def _http_server(directory):
    handler = functools.partial(_QuietHandler, directory=str(directory))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def test_load_state_dict_over_http_with_progress(tmp_path, monkeypatch, capsys):
    sd, path, _ = _checkpoint(tmp_path)
    with _hub_dirs(tmp_path, monkeypatch), _http_server(path.parent) as base:
        got = ghub.load_state_dict_from_url(f"{base}/{path.name}", check_hash=True, progress=True)
        _same(sd, got)
        err = capsys.readouterr().err
        assert "100%" in err            # tqdm's bar reached the Content-Length
        with pytest.raises(Exception):
            ghub.download_url_to_file(f"{base}/missing.pth", str(tmp_path / "m.pth"), progress=False)
        assert not (tmp_path / "m.pth").exists()


def test_legacy_single_file_zip_is_extracted_and_loaded_as_torch(tmp_path, monkeypatch):
    sd, path, _ = _checkpoint(tmp_path, legacy=True)
    z = tmp_path / "srv" / "legacy.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.write(path, arcname="weights.pth")
    with _hub_dirs(tmp_path, monkeypatch):
        for lib in (torch.hub, ghub):
            md = tmp_path / ("t" if lib is torch.hub else "g")
            with pytest.warns(FutureWarning, match="Falling back to the old format < 1.6"):
                got = lib.load_state_dict_from_url(z.as_uri(), model_dir=str(md), progress=False, weights_only=True)
            _same(sd, got)
            assert (md / "weights.pth").exists()


def test_zip_slip_refused(tmp_path):
    z = tmp_path / "evil.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("../evil.txt", "x")
    with zipfile.ZipFile(z) as f, pytest.raises(ValueError, match="directory traversal"):
        ghub._safe_extract_zip(f, tmp_path / "out")
    assert not (tmp_path / "evil.txt").exists()


_HUBCONF = '''"""a hub repo"""
dependencies = {deps!r}


def double(x, times=2):
    """Multiplies x."""
    return x * times


def _private():
    return None


helper_value = 3
'''


def _repo(d, deps=("numpy",)):
    d.mkdir(parents=True)
    (d / "hubconf.py").write_text(_HUBCONF.format(deps=list(deps)))
    return d


def test_local_repo_load_as_torch(tmp_path):
    repo = _repo(tmp_path / "repo")
    for lib in (torch.hub, ghub):
        assert lib.load(str(repo), "double", 4, source="local") == 8
        assert lib.load(str(repo), "double", 4, times=3, source="LOCAL") == 12
        with pytest.raises(RuntimeError, match="Cannot find callable missing in hubconf"):
            lib.load(str(repo), "missing", source="local")
        with pytest.raises(ValueError, match='Unknown source: "svn". Allowed values: "github" | "local".'):
            lib.load(str(repo), "double", source="svn")
        with pytest.raises(ValueError, match="model should be a string of function name"):
            lib.load(str(repo), 3, source="local")
    bad = _repo(tmp_path / "bad", deps=("numpy", "no_such_pkg_xyz", "no_such_pkg_abc"))
    msgs = []
    for lib in (torch.hub, ghub):
        with pytest.raises(RuntimeError) as e:
            lib.load(str(bad), "double", 1, source="local")
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] == "Missing dependencies: no_such_pkg_xyz, no_such_pkg_abc"


def test_cached_github_repo_list_help_load_as_torch(tmp_path, monkeypatch):
    with _hub_dirs(tmp_path, monkeypatch):
        hub_dir = tmp_path / "home" / "hub"
        _repo(hub_dir / "someone_models_v1.0")
        out = []
        for lib in (torch.hub, ghub):
            out.append((lib.list("someone/models:v1.0", trust_repo=True, verbose=False),
                        lib.help("someone/models:v1.0", "double", trust_repo=True),
                        lib.load("someone/models:v1.0", "double", 5, trust_repo=True, verbose=False)))
        assert out[0] == out[1] == (["double"], "Multiplies x.", 10)
        assert (hub_dir / "trusted_list").read_text() == ""        # a cached repo counts as trusted already
        monkeypatch.setattr("builtins.input", lambda prompt: "n")
        for lib in (torch.hub, ghub):
            with pytest.raises(Exception, match="Untrusted repository."):
                lib.load("someone/models:v1.0", "double", 1, trust_repo=False)


def test_hub_script_runs_through_glassgrad_run(tmp_path):
    sd, path, _ = _checkpoint(tmp_path)
    script = tmp_path / "hubscript.py"
    script.write_text(
        "import sys\nimport torch\nimport torch.hub\nfrom torch.utils import model_zoo\n"
        "torch.hub.set_dir(sys.argv[1])\n"
        f"sd = model_zoo.load_url({path.as_uri()!r}, progress=False, check_hash=True)\n"
        "m = torch.nn.Linear(3, 2)\nm.load_state_dict(sd)\n"
        "print(round(float(m(torch.ones(1, 3)).sum()), 4))\n")
    outs = []
    for k, cmd in enumerate(([sys.executable, "-m", "glassgrad", "run", str(script)], [sys.executable, str(script)])):
        r = subprocess.run(cmd + [str(tmp_path / f"hub{k}")], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.splitlines()[-1])
    assert outs[0] == outs[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = torch.nn.functional.linear(torch.ones(1, 3), sd["weight"], sd["bias"]).sum()
    assert outs[0] == str(round(float(want), 4))


def test_github_repo_downloaded_extracted_and_trusted_as_torch(tmp_path, monkeypatch):
    """The GitHub path without a network: download_url_to_file is replaced by a copy of a zip archive laid out
    as GitHub's (one top folder); both libraries extract it to <hub>/<owner>_<repo>_<ref> and trust the repo."""
    archive = tmp_path / "gh.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("someone-models-0123abc/", "")
        z.writestr("someone-models-0123abc/hubconf.py", _HUBCONF.format(deps=["numpy"]))
    urls = []

    def fake_download(url, dst, hash_prefix=None, progress=True):
        urls.append(url)
        with open(dst, "wb") as f:
            f.write(archive.read_bytes())
    out = []
    for lib in (torch.hub, ghub):
        with _hub_dirs(tmp_path / lib.__name__, monkeypatch):
            monkeypatch.setattr(lib, "download_url_to_file", fake_download)
            out.append(lib.load("someone/models:dev/x", "double", 21, trust_repo=True, skip_validation=True,
                                verbose=False))
            hub_dir = tmp_path / lib.__name__ / "home" / "hub"
            out.append(sorted(p.name for p in hub_dir.iterdir()))
            out.append((hub_dir / "trusted_list").read_text())
            out.append(lib.list("someone/models:dev/x", trust_repo="check", verbose=False))     # cached now
    assert out[:4] == out[4:] == [42, ["someone_models_dev_x", "trusted_list"], "someone_models\n", ["double"]]
    assert urls == ["https://github.com/someone/models/zipball/dev/x"] * 2
