"""torch.hub: checkpoints by URL (`load_state_dict_from_url`, `download_url_to_file`), the hub cache directory
(`get_dir` / `set_dir`: $TORCH_HOME/hub, $TORCH_HOME defaulting to $XDG_CACHE_HOME/torch, that to ~/.cache),
and hub repositories (`load` / `list` / `help`: a directory with a hubconf.py, local or a GitHub repository
in the cache or downloaded as torch does, with torch's trust check).

Downloads go through urllib only (a temporary ``.partial`` file moved into place, the SHA-256 prefix check of
`check_hash`, a tqdm progress bar when tqdm is installed).  A downloaded checkpoint is read by glassgrad.load,
which never unpickles: nothing in it can run, whatever `weights_only` says.  (A hub repository's hubconf.py is
Python the caller asked to run, as in torch.)
"""
import errno
import hashlib
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_PATH_SEP_PATTERN = re.compile(r"[/\\]")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
ENV_GITHUB_TOKEN = "GITHUB_TOKEN"
ENV_TORCH_HOME = "TORCH_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"
VAR_DEPENDENCY = "dependencies"
MODULE_HUBCONF = "hubconf.py"
READ_DATA_CHUNK = 128 * 1024
_hub_dir = None


class _Faketqdm:
    """torch's stand-in progress bar (percent on stderr) when tqdm is not installed."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total = total
        self.disable = disable
        self.n = 0

    def update(self, n):
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if not self.disable:
            sys.stderr.write("\n")


try:
    from tqdm import tqdm
except ImportError:
    tqdm = _Faketqdm


def _get_torch_home():
    return os.path.expanduser(os.getenv(ENV_TORCH_HOME, os.path.join(os.getenv(ENV_XDG_CACHE_HOME,
                                                                               DEFAULT_CACHE_DIR), "torch")))


def get_dir():
    """The hub cache directory: set_dir's, else $TORCH_HOME/hub."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download `url` to `dst` through a temporary file; with `hash_prefix`, the file's SHA-256 must start
    with it (torch's RuntimeError otherwise, and nothing is left behind)."""
    dst = os.path.expanduser(dst)
    for _ in range(tempfile.TMP_MAX):
        tmp_dst = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp_dst, "w+b")  # noqa: SIM115
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    req = Request(url, headers={"User-Agent": "torch.hub"})
    try:
        with urlopen(req) as u:
            lengths = u.info().get_all("Content-Length")
            file_size = int(lengths[0]) if lengths else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with tqdm(total=file_size, disable=not progress, unit="B", unit_scale=True, unit_divisor=1024) as pbar:
                while True:
                    buffer = u.read(READ_DATA_CHUNK)
                    if len(buffer) == 0:
                        break
                    f.write(buffer)
                    if sha256 is not None:
                        sha256.update(buffer)
                    pbar.update(len(buffer))
            f.close()
            if sha256 is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _safe_extract_zip(zip_file, extract_to):
    """Extract, refusing absolute paths and entries that leave `extract_to` (torch's zip-slip checks)."""
    extract_to = Path(extract_to).resolve(strict=False)
    for member in zip_file.infolist():
        filename = os.path.normpath(member.filename)
        if filename.startswith(("/", "\\")) or (len(filename) >= 2 and filename[1] == ":" and filename[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(_PATH_SEP_PATTERN, filename):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (extract_to / filename).resolve(strict=False).is_relative_to(extract_to):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zip_file.extract(member, extract_to)


def _is_legacy_zip_format(filename):
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            infolist = zf.infolist()
        return len(infolist) == 1 and not infolist[0].is_dir()
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    from .serialization import load as _load
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in favor of default "
                  "zipfile format introduced in 1.6. Please redo torch.save() to save it in the new zipfile format.",
                  FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as f:
        members = f.infolist()
        if len(members) != 1:
            raise RuntimeError("Only one file(not dir) is allowed in the zipfile")
        _safe_extract_zip(f, model_dir)
        extracted_file = os.path.join(model_dir, members[0].filename)
    return _load(extracted_file, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """The checkpoint at `url`, downloaded once into `model_dir` (default <hub dir>/checkpoints) and read by
    glassgrad.load (safe whatever `weights_only` says).  check_hash: the file name's ``-<hex>.`` part must
    prefix the file's SHA-256."""
    from .serialization import load as _load
    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = os.path.basename(urlparse(url).path)
    if file_name is not None:
        filename = file_name
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)


# -- hub repositories ---------------------------------------------------------------------------------------
class _on_sys_path:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        sys.path.insert(0, self.path)

    def __exit__(self, *exc):
        sys.path.remove(self.path)


def _import_module(name, path):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise AssertionError(f"failed to load spec from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _hubconf(repo_dir):
    with _on_sys_path(repo_dir):
        return _import_module(MODULE_HUBCONF, os.path.join(repo_dir, MODULE_HUBCONF))


def _load_attr_from_module(module, func_name):
    if func_name not in dir(module):
        return None
    return getattr(module, func_name)


def _check_dependencies(m):
    import importlib.util
    dependencies = _load_attr_from_module(m, VAR_DEPENDENCY)
    if dependencies is not None:
        missing = [pkg for pkg in dependencies if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(m)
    func = _load_attr_from_module(m, model)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _parse_repo_info(github):
    if ":" in github:
        repo_info, ref = github.split(":")
    else:
        repo_info, ref = github, None
    repo_owner, repo_name = repo_info.split("/")
    if ref is None:
        try:
            with urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except URLError as e:
            for possible_ref in ("main", "master"):
                if os.path.exists(f"{get_dir()}/{repo_owner}_{repo_name}_{possible_ref}"):
                    ref = possible_ref
                    break
            if ref is None:
                raise RuntimeError("It looks like there is no internet connection and the repo could not be found "
                                   f"in the cache ({get_dir()})") from e
    return repo_owner, repo_name, ref


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo):
    """torch's trust check: the owner or repository in <hub dir>/trusted_list (or cached already), else ask."""
    hub_dir = get_dir()
    filepath = os.path.join(hub_dir, "trusted_list")
    if not os.path.exists(filepath):
        Path(filepath).touch()
    with open(filepath) as file:
        trusted_repos = tuple(line.strip() for line in file)
    trusted_repos_legacy = next(os.walk(hub_dir))[1]
    owner_name = "_".join([repo_owner, repo_name])
    is_trusted = (owner_name in trusted_repos or owner_name_branch in trusted_repos_legacy
                  or repo_owner in _TRUSTED_REPO_OWNERS)
    if (trust_repo is False) or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                         "such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                         "list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002  (torch's type)
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(filepath, "a") as file:
            file.write(owner_name + "\n")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    """<hub dir>/<owner>_<repo>_<ref>: from the cache, or GitHub's zip archive of the ref extracted there.
    (glassgrad does not ask GitHub's API whether the ref belongs to a fork: `skip_validation` is implied.)"""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    normalized_br = ref.replace("/", "_")
    owner_name_branch = "_".join([repo_owner, repo_name, normalized_br])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo=trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    cached_file = os.path.join(hub_dir, normalized_br + ".zip")
    if os.path.exists(cached_file):
        os.remove(cached_file)
    url = f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    download_url_to_file(url, cached_file, progress=False)
    with zipfile.ZipFile(cached_file) as cached_zipfile:
        extracted_repo = os.path.join(hub_dir, cached_zipfile.infolist()[0].filename)
        shutil.rmtree(extracted_repo, ignore_errors=True)
        _safe_extract_zip(cached_zipfile, hub_dir)
    os.remove(cached_file)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(extracted_repo, repo_dir)
    return repo_dir


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):  # noqa: A001
    """The public callables of the repository's hubconf.py (its entry points)."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                    skip_validation=skip_validation)
    hub_module = _hubconf(repo_dir)
    return [f for f in dir(hub_module) if callable(getattr(hub_module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):  # noqa: A001
    """The docstring of entry point `model`."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=skip_validation)
    return _load_entry_from_hubconf(_hubconf(repo_dir), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Call entry point `model` of a hub repository (source="github": "owner/repo[:ref]"; "local": a directory
    with a hubconf.py) with `args` / `kwargs`."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose=verbose,
                                           skip_validation=skip_validation)
    return _load_local(repo_or_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _on_sys_path(hubconf_dir):
        hub_module = _import_module(MODULE_HUBCONF, os.path.join(hubconf_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(hub_module, model)
        return entry(*args, **kwargs)
