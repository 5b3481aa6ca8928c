"""The op table: every op described once (see core.py); test_ops.py generates the tests.

Each family module defines OPS, a list of OpInfo.  ALL_OPS gathers them.
"""
import importlib
import pkgutil

from .core import OpInfo

ALL_OPS = []
for _m in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in ("core", "expected_failures")):
    ALL_OPS.extend(importlib.import_module(f"{__name__}.{_m}").OPS)


def by_name():
    return {o.name: o for o in ALL_OPS}
