"""torch.torch_version: TorchVersion, a str that compares as a PEP 440 version against strings, tuples and
Version objects (``torch.__version__ >= "2.0"``, ``> (1, 12)``), and falls back to str comparison where the other
side is no version. ``Version`` / ``InvalidVersion`` are a small PEP 440 parser of glassgrad's own."""
import re
from collections.abc import Iterable

from .version import __version__ as internal_version

__all__ = ["TorchVersion"]


class InvalidVersion(ValueError):
    """A string that is no PEP 440 version."""


_PATTERN = re.compile(r"""
    \s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?:(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""", re.VERBOSE | re.IGNORECASE)
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc", "rc": "rc"}


class _Inf:
    def __lt__(self, other):
        return False

    def __gt__(self, other):
        return not isinstance(other, _Inf)

    def __eq__(self, other):
        return isinstance(other, _Inf)

    def __hash__(self):
        return hash("inf")


class _NegInf:
    def __lt__(self, other):
        return not isinstance(other, _NegInf)

    def __gt__(self, other):
        return False

    def __eq__(self, other):
        return isinstance(other, _NegInf)

    def __hash__(self):
        return hash("-inf")


_INF, _NEG = _Inf(), _NegInf()


class Version:
    """A PEP 440 version: epoch, release, pre / post / dev release and local label, ordered as PEP 440 says."""

    def __init__(self, version):
        m = _PATTERN.match(version)
        if m is None:
            raise InvalidVersion(f"Invalid version: {version!r}")
        self.epoch = int(m["epoch"] or 0)
        self.release = tuple(int(p) for p in m["release"].split("."))
        self.pre = (_PRE[m["pre_l"].lower()], int(m["pre_n"] or 0)) if m["pre_l"] else None
        post = m["post_n1"] or m["post_n2"]
        self.post = int(post or 0) if (m["post_n1"] or m["post_l"]) else None
        self.dev = int(m["dev_n"] or 0) if m["dev_l"] else None
        self.local = tuple(int(p) if p.isdigit() else p.lower() for p in re.split(r"[-_.]", m["local"])) \
            if m["local"] else None
        self._key = self._sort_key()

    def _sort_key(self):
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        if self.pre is None and self.post is None and self.dev is not None:
            pre = _NEG                       # 1.0.dev0 sorts before 1.0a0
        else:
            pre = _INF if self.pre is None else self.pre
        post = _NEG if self.post is None else self.post
        dev = _INF if self.dev is None else self.dev
        local = _NEG if self.local is None else tuple((p, "") if isinstance(p, int) else (_NEG, p)
                                                      for p in self.local)
        return self.epoch, tuple(release), pre, post, dev, local

    def __str__(self):
        s = (f"{self.epoch}!" if self.epoch else "") + ".".join(map(str, self.release))
        s += f"{self.pre[0]}{self.pre[1]}" if self.pre else ""
        s += f".post{self.post}" if self.post is not None else ""
        s += f".dev{self.dev}" if self.dev is not None else ""
        return s + ("+" + ".".join(map(str, self.local)) if self.local else "")

    def __repr__(self):
        return f"<Version('{self}')>"

    def __hash__(self):
        return hash(self._key)

    def _cmp(self, other, op):
        if not isinstance(other, Version):
            return NotImplemented
        return op(self._key, other._key)

    def __lt__(self, other):
        return self._cmp(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._cmp(other, lambda a, b: a < b or a == b)

    def __eq__(self, other):
        return self._cmp(other, lambda a, b: a == b)

    def __ge__(self, other):
        return self._cmp(other, lambda a, b: a > b or a == b)

    def __gt__(self, other):
        return self._cmp(other, lambda a, b: a > b)

    def __ne__(self, other):
        return self._cmp(other, lambda a, b: a != b)


class TorchVersion(str):
    """A version string that compares as a version with strings, tuples ((1, 12) is 1.12) and Version objects."""
    __slots__ = ()

    def _convert_to_version(self, inp):
        if isinstance(inp, Version):
            return inp
        if isinstance(inp, str):
            return Version(inp)
        if isinstance(inp, Iterable):
            return Version(".".join(str(item) for item in inp))
        raise InvalidVersion(inp)

    def _cmp_wrapper(self, cmp, method):
        try:
            return getattr(Version(self), method)(self._convert_to_version(cmp))
        except InvalidVersion:
            return getattr(super(), method)(cmp)


def _comparison(method):
    def compare(self, other):
        return self._cmp_wrapper(other, method)
    compare.__name__ = method
    return compare


for _m in ("__gt__", "__lt__", "__eq__", "__ge__", "__le__"):
    setattr(TorchVersion, _m, _comparison(_m))

__version__ = TorchVersion(internal_version)
