"""The layers of the house import only downward (docs/architecture.md section 1, DESIGN.md).

Every module under src/glassgrad is placed in a layer; every import it makes -- at module level or inside a
function, absolute or relative -- is resolved to a glassgrad module and must lie in the same layer or a lower
one.  A module the map does not place fails the test: a new module must be placed here.
"""
import ast
import os

import pytest

SRC = os.path.join(os.path.dirname(__file__), os.pardir, "src", "glassgrad")
PKG = "glassgrad"

LAYERS = ("leaves", "tensor", "autograd", "ops", "library", "top")

# module name (without "glassgrad.") or "prefix.*" (the package and everything under it) -> layer.
# The most specific entry wins: an exact name, then the longest prefix.
LAYER_MAP = {
    # 0 leaves: NumPy (and ctypes) only, plus each other
    "_dtype": 0, "_memory_format": 0, "_device": 0, "backend": 0, "_rng.*": 0, "_blas": 0, "_malloc": 0, "_atomic": 0,
    "_cuda_kernels.*": 0,    # the fused CuPy kernels (a real GPU; tests/strict/cuda_emu.py runs them on the CPU)
    "_shm": 0,               # shared-memory buffers: Tensor.share_memory_ and glassgrad.multiprocessing
    "storage": 0,            # UntypedStorage / TypedStorage: the memory under a tensor (NumPy views)
    "_globals": 0,           # deterministic mode, matmul precision, flush-denormal, ... (torch's global switches)
    "_grad_state": 0,        # the grad-mode flags Tensor reads (autograd.grad_mode is their public face)
    "_strict": 0,            # the strict stand-in device: a CuPy look-alike on NumPy (GLASSGRAD_STRICT_DEVICE=1)
    "_layout": 0, "_sparse_coo": 0,   # torch.layout objects; sparse COO storage (NumPy)
    # 1 tensor: Tensor, its methods and repr, and torch's argument checks (which know Tensor)
    "_tensor": 1, "_tensor_methods": 1, "_tensor_linalg_methods": 1, "_tensor_complex_methods": 1, "_tensor_more_methods": 1, "_tensor_copy_methods": 1, "_tensor_protocol": 1, "_tensor_str": 1, "_args": 1,
    "_tensor_sparse_methods": 1, "_sparse_tensor": 1,     # sparse family methods; SparseTensor (sparse COO)
    # 2 autograd (functional is built on ops: the library layer)
    "autograd.*": 2, "autograd.functional": 4, "autograd.forward_ad": 4,
    # 3 ops
    "ops.*": 3,
    # 4 library: layers, optimizers, data, checkpoints
    "nn.*": 4, "optim.*": 4, "utils.*": 4, "distributed.*": 4, "multiprocessing.*": 4, "distributions.*": 4,
    "serialization": 4, "safetensors": 4, "_pt_reader": 4, "_pt_pickle": 4, "_pt_writer": 4, "_pt_objects": 4,
    "_serialization_extras": 4,
    "_foreach": 4,           # torch._foreach_* (per-tensor ops over lists of tensors)
    "_pt_file_reader": 4,    # torch.PyTorchFileReader: a torch.save archive's records (over _pt_reader)
    "linalg.*": 4,           # torch.linalg: a namespace re-exporting ops (like nn.functional)
    "sparse": 4,             # torch.sparse: a namespace of ops under torch's names (as torch.special)
    "special": 4,            # torch.special: a namespace of ops under torch's names (as nn.functional)
    "overrides": 4,          # torch.overrides: the __torch_function__ helpers (nn.functional re-exports them)
    "_torch_nn": 4,          # torch.kl_div, torch.lstm_cell, ...: nn.functional under ATen's signatures
    "testing.*": 4,          # torch.testing: assert_close, make_tensor
    "onnx.*": 4,             # torch.onnx: export through the autograd graph of one traced forward
    "backends.*": 4,         # torch.backends: the switches and availability queries (cudnn, cuda, mps, cpu, ...)
    "func.*": 4,             # torch.func: grad / vjp / jvp / jacrev / jacfwd / hessian / vmap / functional_call
    "version": 0,            # torch.version (a leaf: glassgrad.__version__ comes from it)
    "fft": 4,                # torch.fft: the same, over ops/fft.py
    "_legacy": 4,            # FloatTensor, LongTensor, ...: legacy constructors built on ops.creation
    "_sampling": 4,          # torch.poisson / torch.binomial: distributions' samplers with ops/sampling.py's graph
    "_autocast_state": 0,    # autocast's flags, dtypes, nesting and cast cache (the one flag ops test)
    "mps.*": 4, "_symbolic": 4, "_toplevel_misc": 4,  # torch.mps (no MPS here), sym_* helpers, small torch.* names
    "amp.*": 4, "cuda.*": 4, "cpu.*": 4, "accelerator.*": 4,  # torch.amp, torch.cuda / cpu, torch.accelerator
    "profiler.*": 4, "hub": 4, "jit.*": 4, "compiler.*": 4, "_dynamo.*": 4,   # torch.profiler / hub / jit / compile
    "random": 4,     # torch.random (fork_rng saves torch.cuda's generators)
    "signal.*": 4, "masked.*": 4,   # torch.signal.windows, torch.masked (both composed of ops)
    "_lowrank": 4, "_lobpcg": 4,   # torch.svd_lowrank / pca_lowrank, torch.lobpcg (composed of ops)
    "types": 4, "futures": 4, "library": 4, "_op_registry": 4, "_custom_op": 4, "_higher_order": 4,  # torch.types / futures / library / ops / cond
    "torch_version": 0,     # torch.torch_version (a leaf over version)
    "_C": 0,                # torch._C: the few C-extension functions libraries call (_log_api_usage_once, ...)
    "_C._nn": 4,            # torch._C._nn._parse_to (over ops.conversion); glassgrad/__init__ binds it
    # 5 top: the torch namespace, the glass box, the command
    "": 5, "__main__": 5, "explain.*": 5, "cli": 5, "_launch": 5, "demo": 5, "_torch_alias": 5, "_numpy_kwargs": 5,
    "fx.*": 5,               # torch.fx: tracing patches the torch namespace itself (glassgrad, nn.functional, ...)
    "functional": 5,         # torch.functional: torch.split / norm / einsum / ... under that module's name
}

# Known upward imports, each to be removed (the list may only shrink: a stale entry fails the test).
# (importing module, imported module, reason)
ALLOWED = [
    ("_tensor_methods", "ops", "the one-line family methods name ops through the glassgrad.ops package, bound at call "
     "time: ops/__init__ is empty, so loading Tensor loads no op (test_tensor_layer_loads_no_op)"),
    ("_tensor_linalg_methods", "ops", "the linear-algebra methods name ops the same way"),
    ("_tensor_more_methods", "ops", "the later families' methods name ops the same way"),
    ("_tensor_copy_methods", "ops", "the view-copy and scatter methods name ops the same way"),
    ("_tensor_complex_methods", "ops", "the complex-tensor methods name ops the same way"),
    ("_tensor_protocol", "ops", "the operators, conversions and constructors name ops the same way"),
    ("_tensor_sparse_methods", "ops", "the dense Tensor's sparse-family methods name ops the same way"),
    ("_sparse_tensor", "ops", "SparseTensor's methods name ops the same way"),
    ("_tensor_protocol", "autograd", "Tensor.backward, the hooks and a view's grad_fn refresh import autograd when "
     "called (_autograd()): autograd imports _tensor at module level, so _tensor must not load it"),
]


def _module_files():
    for root, dirs, files in os.walk(SRC):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith(".py"):
                path = os.path.join(root, f)
                rel = os.path.relpath(path, SRC)[:-3].replace(os.sep, ".")
                is_pkg = rel == "__init__" or rel.endswith(".__init__")
                name = rel[:-len("__init__")].rstrip(".") if is_pkg else rel
                yield name, path, is_pkg


MODULES = {name: (path, is_pkg) for name, path, is_pkg in _module_files()}


def layer_of(name):
    """The layer of glassgrad module `name` ("" is the package itself), or None if the map does not place it."""
    if name in LAYER_MAP:
        return LAYER_MAP[name]
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k]) + ".*"
        if key in LAYER_MAP:
            return LAYER_MAP[key]
    return None


def _resolve(name, modules):
    """The glassgrad module a dotted name under glassgrad refers to: itself, or the package/module holding it
    (``from x import name`` where name is a function)."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in modules else ""


def imports_of(source, module, is_pkg, modules):
    """[(line, imported glassgrad module)] for every import in `source` (module `module`), at any depth."""
    out = []
    pkg = module if is_pkg else module.rpartition(".")[0]     # the package relative imports start from
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == PKG or a.name.startswith(PKG + "."):
                    out.append((node.lineno, _resolve(a.name[len(PKG) + 1:], modules)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".") if pkg else []
                up = node.level - 1
                if up > len(base):
                    raise AssertionError(f"{module}:{node.lineno}: relative import above the package")
                base = base[:len(base) - up] if up else base
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module == PKG or (node.module or "").startswith(PKG + "."):
                target = node.module[len(PKG) + 1:]
            else:
                continue
            for a in node.names:
                sub = f"{target}.{a.name}" if target else a.name
                out.append((node.lineno, sub if sub in modules else _resolve(target, modules)))
    return out


def violations(modules=MODULES, allowed=ALLOWED):
    """(unplaced modules, upward imports not in `allowed` as 'path:line imports X (layer a -> b)', the
    ALLOWED entries seen)."""
    unplaced, bad, seen = [], [], set()
    ok = {(a, b) for a, b, _ in allowed}
    for name, (path, is_pkg) in sorted(modules.items()):
        la = layer_of(name)
        if la is None:
            unplaced.append(name)
            continue
        with open(path, encoding="utf-8") as f:
            src = f.read()
        for line, imp in imports_of(src, name, is_pkg, modules):
            lb = layer_of(imp)
            if lb is None or lb <= la:
                continue
            if (name, imp) in ok:
                seen.add((name, imp))
                continue
            rel = os.path.relpath(path, os.path.join(SRC, os.pardir, os.pardir))
            bad.append(f"{rel}:{line} imports {PKG + ('.' + imp if imp else '')} "
                       f"(layer {LAYERS[la]} -> {LAYERS[lb]})")
    return unplaced, bad, seen


def test_every_module_is_placed():
    unplaced, _, _ = violations()
    assert not unplaced, "modules the layer map does not place (add them to LAYER_MAP): " + ", ".join(unplaced)


def test_imports_go_downward():
    _, bad, _ = violations()
    assert not bad, "upward imports:\n" + "\n".join(bad)


def test_allowed_entries_are_real():
    """Every ALLOWED exception is still an upward import (remove an entry once its import is gone)."""
    _, _, seen = violations()
    stale = [(a, b) for a, b, _ in ALLOWED if (a, b) not in seen]
    assert not stale, f"ALLOWED entries that are no longer upward imports: {stale}"


def _fake(tmp_path, files):
    mods = {}
    for rel, text in files.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        is_pkg = rel.endswith("__init__.py")
        name = rel[:-len("__init__.py")].rstrip("/") if is_pkg else rel[:-3]
        mods[name.replace("/", ".")] = (str(p), is_pkg)
    return mods


def test_checker_flags_upward_imports(tmp_path):
    """The checker can fail: upward imports at module level, in functions, relative and absolute, are found."""
    mods = _fake(tmp_path, {
        "__init__.py": "",
        "ops/__init__.py": "",
        "ops/elementwise.py": "x = 1\n",
        "nn/__init__.py": "",
        "nn/functional/__init__.py": "",
        "autograd/__init__.py": "",
        "autograd/engine.py": "from ..ops import elementwise\n",                 # relative, module level
        "autograd/graph.py": "def f():\n    import glassgrad.nn.functional\n",  # absolute, in a function
        "_dtype.py": "def g():\n    from .ops.elementwise import x\n",           # a name from a module
        "_tensor.py": "from . import _dtype\n",                                    # downward: fine
        "ops/views.py": "from ..autograd import engine\nfrom .elementwise import x\n",   # downward / same
    })
    unplaced, bad, _ = violations(mods, [])
    assert unplaced == []
    found = sorted(b.split(" imports ")[1] for b in bad)
    assert found == ["glassgrad.nn.functional (layer autograd -> library)",
                     "glassgrad.ops.elementwise (layer autograd -> ops)",
                     "glassgrad.ops.elementwise (layer leaves -> ops)"], bad
    assert all(":" in b.split(" imports ")[0] for b in bad)


def test_checker_flags_unplaced_modules(tmp_path):
    mods = _fake(tmp_path, {"__init__.py": "", "newthing.py": "import numpy\n"})
    unplaced, _, _ = violations(mods, [])
    assert unplaced == ["newthing"]


@pytest.mark.parametrize("name,layer", [("_dtype", 0), ("_rng.engine", 0), ("_grad_state", 0), ("autograd.grad_mode", 2),
                                        ("autograd.engine", 2), ("autograd", 2), ("autograd.functional", 4),
                                        ("ops.elementwise", 3), ("nn.modules.rnn", 4), ("", 5)])
def test_layer_map(name, layer):
    assert layer_of(name) == layer


def test_tensor_layer_loads_no_op():
    """Tensor and its methods reach ops only through the glassgrad.ops package object, whose __init__ imports
    nothing: loading _tensor loads no op family (the op modules are named when a method runs)."""
    for name in ("_tensor", "_tensor_methods", "_tensor_linalg_methods", "_tensor_complex_methods", "_tensor_more_methods", "_tensor_copy_methods", "_tensor_protocol",
                 "_tensor_sparse_methods", "_sparse_tensor"):
        path, is_pkg = MODULES[name]
        with open(path, encoding="utf-8") as f:
            src = f.read()
        op_modules = [(line, imp) for line, imp in imports_of(src, name, is_pkg, MODULES)
                      if imp.startswith("ops.")]
        assert not op_modules, f"{name} imports op modules: {op_modules}"
    path, _ = MODULES["ops"]
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))], \
        "ops/__init__.py must stay empty of imports: the Tensor layer names the package at call time"


def _ops_import_graph():
    graph = {}
    for name, (path, is_pkg) in MODULES.items():
        if name.startswith("ops."):
            with open(path, encoding="utf-8") as f:
                src = f.read()
            graph[name] = {imp for _, imp in imports_of(src, name, is_pkg, MODULES)
                           if imp.startswith("ops.") and imp != name}
    return graph


def _cycle(graph):
    """One import cycle of `graph` (a list of modules, first == last), or None."""
    state, stack = {}, []

    def visit(v):
        state[v] = 1
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state:
                found = visit(w)
                if found:
                    return found
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            found = visit(v)
            if found:
                return found
    return None


def test_no_import_cycle_among_the_op_families():
    """The families of ops/ import each other one way only, counting imports inside functions too (a lazy
    import is how a cycle hides): no family reaches back to one that imports it."""
    graph = _ops_import_graph()
    assert len(graph) > 30, "the ops modules were not found"
    assert _cycle(graph) is None, f"import cycle among ops modules: {' -> '.join(_cycle(graph))}"


def test_the_cycle_check_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
