"""How much of torch's public surface glassgrad has, namespace by namespace, against the installed torch.

A name counts as torch's public surface when it is in the namespace's ``__all__`` (where the namespace has one),
otherwise when it is a public (no leading underscore) submodule of the namespace, or a callable or class that torch
defines (imports such as ``math``, ``np`` or ``typing.Callable`` are not torch's surface); for
``torch.Tensor`` it is every public attribute.  glassgrad has a name when the same attribute exists on the matching
glassgrad object.  Presence is what is counted; whether a name is real and faithful is what the test suite checks.

    python scripts/api_coverage.py             # the table
    python scripts/api_coverage.py --missing   # and the names still missing, per namespace
"""

import argparse
import importlib
import inspect
import sys
import types

# (label, torch path, glassgrad path, floor from issue 15 or None)
NAMESPACES = [
    ("torch.*", "torch", "glassgrad", 0.80),
    ("torch.Tensor methods", "torch.Tensor", "glassgrad.Tensor", 0.85),
    ("torch.nn", "torch.nn", "glassgrad.nn", 0.93),
    ("torch.nn.functional", "torch.nn.functional", "glassgrad.nn.functional", 0.92),
    ("torch.nn.init", "torch.nn.init", "glassgrad.nn.init", 1.00),
    ("torch.nn.utils", "torch.nn.utils", "glassgrad.nn.utils", 0.75),
    ("torch.nn.utils.memory_format", "torch.nn.utils.memory_format", "glassgrad.nn.utils.memory_format", 1.00),
    ("torch.optim", "torch.optim", "glassgrad.optim", None),
    ("torch.optim.lr_scheduler", "torch.optim.lr_scheduler", "glassgrad.optim.lr_scheduler", 0.90),
    ("torch.linalg", "torch.linalg", "glassgrad.linalg", 0.90),
    ("torch.fft", "torch.fft", "glassgrad.fft", 0.90),
    ("torch.special", "torch.special", "glassgrad.special", 0.85),
    ("torch.distributions", "torch.distributions", "glassgrad.distributions", 0.80),
    ("torch.sparse", "torch.sparse", "glassgrad.sparse", None),
    # issue 16's namespaces (its Done-when: amp >= 70%, func >= 70%, testing >= 75%; the floors guard what is built)
    ("torch.backends", "torch.backends", "glassgrad.backends", 0.90),
    ("torch.amp", "torch.amp", "glassgrad.amp", 0.90),
    ("torch.cuda", "torch.cuda", "glassgrad.cuda", None),
    ("torch.cpu", "torch.cpu", "glassgrad.cpu", 0.85),
    ("torch.accelerator", "torch.accelerator", "glassgrad.accelerator", 0.85),
    ("torch.func", "torch.func", "glassgrad.func", 0.90),
    ("torch.testing", "torch.testing", "glassgrad.testing", 0.75),
    ("torch.onnx", "torch.onnx", "glassgrad.onnx", None),
    # profiler / hub / jit / compile
    ("torch.profiler", "torch.profiler", "glassgrad.profiler", 0.85),
    ("torch.autograd.profiler", "torch.autograd.profiler", "glassgrad.autograd.profiler", None),
    ("torch.hub", "torch.hub", "glassgrad.hub", 1.00),
    ("torch.utils.model_zoo", "torch.utils.model_zoo", "glassgrad.utils.model_zoo", None),
    ("torch.jit", "torch.jit", "glassgrad.jit", 0.90),
    ("torch.compiler", "torch.compiler", "glassgrad.compiler", None),
    # saved-tensor hooks and activation checkpointing
    ("torch.autograd.graph", "torch.autograd.graph", "glassgrad.autograd.graph", 0.65),
    ("torch.utils.checkpoint", "torch.utils.checkpoint", "glassgrad.utils.checkpoint", 0.75),
    # the generators (issue 17: torch.random, torch.cuda's RNG functions)
    ("torch.random", "torch.random", "glassgrad.random", 0.90),
    ("torch.signal.windows", "torch.signal.windows", "glassgrad.signal.windows", 1.00),
    ("torch.masked", "torch.masked", "glassgrad.masked", 0.80),
    # small modules libraries import (pytree, custom ops, futures, types, version, functional)
    ("torch.utils._pytree", "torch.utils._pytree", "glassgrad.utils._pytree", 1.00),
    ("torch.library", "torch.library", "glassgrad.library", 0.60),
    ("torch.futures", "torch.futures", "glassgrad.futures", 1.00),
    ("torch.types", "torch.types", "glassgrad.types", 1.00),
    ("torch.torch_version", "torch.torch_version", "glassgrad.torch_version", 1.00),
    ("torch.functional", "torch.functional", "glassgrad.functional", 0.90),
    # smaller namespaces (serialization, utils, autograd, hooks, overrides)
    ("torch.serialization", "torch.serialization", "glassgrad.serialization", 1.00),
    ("torch.utils", "torch.utils", "glassgrad.utils", 0.65),
    ("torch.autograd", "torch.autograd", "glassgrad.autograd", 0.85),
    ("torch.utils.hooks", "torch.utils.hooks", "glassgrad.utils.hooks", 1.00),
    ("torch.overrides", "torch.overrides", "glassgrad.overrides", 0.50),
    ("torch.fx", "torch.fx", "glassgrad.fx", 1.00),
    ("torch.distributed", "torch.distributed", "glassgrad.distributed", 0.75),
    ("torch.mps", "torch.mps", "glassgrad.mps", 1.00),
    ("torch.distributed.nn", "torch.distributed.nn", "glassgrad.distributed.nn", 0.80),
]


def resolve(path):
    """The object at a dotted path (a module, or an attribute of one), or None when it does not exist."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return None
        return obj
    return None


def public_names(obj):
    if isinstance(obj, type):
        return sorted(n for n in dir(obj) if not n.startswith("_"))
    declared = getattr(obj, "__all__", None)
    if declared is not None:
        return sorted(set(declared))
    names = []
    for n in dir(obj):
        if n.startswith("_"):
            continue
        v = getattr(obj, n, None)
        if isinstance(v, types.ModuleType):
            if v.__name__.startswith(obj.__name__ + "."):       # a submodule, not an import (math, np, torch)
                names.append(n)
        elif (inspect.isclass(v) or callable(v)) and (getattr(v, "__module__", None) or "").startswith("torch"):
            names.append(n)                                     # torch's own, not typing's Callable
    return sorted(names)


def measure():
    rows = []
    for label, tpath, gpath, floor in NAMESPACES:
        tobj = resolve(tpath)
        gobj = resolve(gpath)
        names = public_names(tobj)
        have = [n for n in names if gobj is not None and hasattr(gobj, n)]
        missing = [n for n in names if n not in set(have)]
        rows.append((label, len(have), len(names), floor, missing))
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--missing", action="store_true", help="list the names still missing")
    args = ap.parse_args(argv)
    import torch

    rows = measure()
    print(f"against torch {torch.__version__}\n")
    print("| namespace | glassgrad has | share | floor | |")
    print("| --- | --- | --- | --- | --- |")
    below = 0
    for label, have, total, floor, _ in rows:
        share = have / total if total else 1.0
        mark = "" if floor is None else ("ok" if share + 1e-12 >= floor else "BELOW")
        below += mark == "BELOW"
        fl = "" if floor is None else f"{floor:.0%}"
        print(f"| `{label}` | {have} of {total} | {share:.1%} | {fl} | {mark} |")
    if args.missing:
        for label, _, _, _, missing in rows:
            if missing:
                print(f"\n## {label}: {len(missing)} missing\n" + ", ".join(missing))
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
