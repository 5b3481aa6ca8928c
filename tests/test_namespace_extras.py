"""torch.compiler's guard filters and cache artifacts, and torch.overrides' wrap_torch_function,
is_tensor_method_or_property and enable_reentrant_dispatch, against torch."""
import types

import pytest
import torch

import glassgrad


# -- torch.compiler -------------------------------------------------------------------------------------------

def _entries(lib):
    """Guard entries as torch.compile hands them to a guard_filter_fn (the attributes the filters read)."""
    def entry(guard_type, is_global, value, builtin_module=False, nn_module=False):
        source = types.SimpleNamespace(is_unspecialized_builtin_nn_module=lambda: builtin_module,
                                       is_unspecialized_nn_module=lambda: nn_module)
        return types.SimpleNamespace(guard_type=guard_type, is_global=is_global, value=value,
                                     orig_guard=types.SimpleNamespace(source=source))
    return [entry("TENSOR_MATCH", False, lib.ones(1)), entry("TENSOR_MATCH", True, lib.nn.Parameter(lib.ones(1))),
            entry("TENSOR_MATCH", False, lib.nn.Parameter(lib.ones(1))), entry("GLOBAL_STATE", True, None),
            entry("SHAPE_ENV", False, None), entry("ID_MATCH", True, None, builtin_module=True, nn_module=True),
            entry("TYPE_MATCH", False, None, nn_module=True)]


@pytest.mark.parametrize("name", ["skip_guard_on_inbuilt_nn_modules_unsafe", "skip_guard_on_all_nn_modules_unsafe",
                                  "keep_tensor_guards_unsafe", "skip_guard_on_globals_unsafe", "skip_all_guards_unsafe",
                                  "keep_portable_guards_unsafe"])
def test_guard_filters_keep_what_torchs_keep(name):
    ours = getattr(glassgrad.compiler, name)(_entries(glassgrad))
    theirs = getattr(torch.compiler, name)(_entries(torch))
    assert ours == theirs and len(set(theirs)) == (1 if name == "skip_all_guards_unsafe" else 2)
    if name == "keep_tensor_guards_unsafe":
        assert glassgrad.compiler.keep_tensor_guards_unsafe(_entries(glassgrad), keep_parameters=True) == \
            torch.compiler.keep_tensor_guards_unsafe(_entries(torch), keep_parameters=True)


def test_guard_filters_are_accepted_by_compile():
    f = glassgrad.compile(lambda x: x * 2, options={"guard_filter_fn": glassgrad.compiler.skip_all_guards_unsafe})
    assert f(glassgrad.ones(2)).tolist() == [2.0, 2.0]


def test_cache_artifacts_in_eager_mode():
    assert glassgrad.compiler.save_cache_artifacts() is None is torch.compiler.save_cache_artifacts()
    assert glassgrad.compiler.load_cache_artifacts(b"") is None


# -- torch.overrides ------------------------------------------------------------------------------------------

def test_wrap_torch_function_dispatches_as_torchs():
    calls = []
    for lib in (torch, glassgrad):
        @lib.overrides.wrap_torch_function(lambda a, b=None: (a,))
        def f(a, b=None):
            return ("plain", a)

        class Duck:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return ("dispatched", func.__name__, len(args), sorted(kwargs or {}))
        calls.append((f(3), f(Duck(), b=1), f.__name__))
    assert calls[0] == calls[1] == (("plain", 3), ("dispatched", "f", 1, ["b"]), "f")


def test_wrap_torch_function_raises_torchs_error_when_nobody_handles_it():
    errors = []
    for lib in (torch, glassgrad):
        @lib.overrides.wrap_torch_function(lambda a: (a,))
        def g(a):
            return a

        class No:
            @classmethod
            def __torch_function__(cls, func, types, args=(), kwargs=None):
                return NotImplemented
        with pytest.raises(TypeError) as e:
            g(No())
        errors.append(str(e.value).split("__torch_function__")[0])
    assert errors[0].replace("torch", "") == errors[1].replace("glassgrad", "").replace("torch", "")


def test_is_tensor_method_or_property_matches_torch():
    names = sorted(n for n in set(dir(torch.Tensor)) & set(dir(glassgrad.Tensor))
                   if not (n.startswith("_") and not n.endswith("__")) and n != "__str__")
    # (__str__: glassgrad's is its __repr__ function, a Tensor method; torch's is object's)
    checked = 0
    for n in names:
        tv, gv = getattr(torch.Tensor, n), getattr(glassgrad.Tensor, n)
        if callable(tv) and callable(gv):
            assert glassgrad.overrides.is_tensor_method_or_property(gv) == \
                torch.overrides.is_tensor_method_or_property(tv), n
            checked += 1
    assert checked > 500
    assert glassgrad.overrides.is_tensor_method_or_property(glassgrad.Tensor.shape.__get__)
    assert not glassgrad.overrides.is_tensor_method_or_property(glassgrad.add)
    assert not torch.overrides.is_tensor_method_or_property(torch.add)


def test_enable_reentrant_dispatch_outside_torch_dispatch_is_torchs_error():
    errors = []
    for lib in (torch, glassgrad):
        with pytest.raises(RuntimeError) as e:
            with lib.overrides.enable_reentrant_dispatch():
                pass
        errors.append(str(e.value))
    assert errors[0] == errors[1]


# -- torch.compiler.config ------------------------------------------------------------------------------------

def test_compiler_config_values_and_aliases_as_torchs():
    gc_, tc = glassgrad.compiler.config, torch.compiler.config
    assert gc_.get_config_copy() == tc.get_config_copy()
    for name in tc.__all__:
        assert getattr(gc_, name) == getattr(tc, name), name
    import glassgrad._dynamo.config as gdc
    import torch._dynamo.config as tdc
    try:
        for c in (gc_, tc):
            c.verbose, c.recompile_limit = True, 3
        assert (gdc.verbose, gdc.recompile_limit) == (tdc.verbose, tdc.recompile_limit) == (True, 3)
    finally:
        for c in (gc_, tc):
            c.verbose, c.recompile_limit = False, 8


def test_compiler_config_patch_and_unknown_names_as_torchs():
    for c in (glassgrad.compiler.config, torch.compiler.config):
        with c.patch(job_id="j", cache_key_tag="t"):
            assert (c.job_id, c.cache_key_tag) == ("j", "t")
        assert (c.job_id, c.cache_key_tag) == (None, "")

        @c.patch("job_id", "k")
        def f():
            return c.job_id
        assert f() == "k" and c.job_id is None
        c.patch("nope", 1)                       # made, not entered: no error yet
        for action in (lambda: c.patch(nope=1).__enter__(), lambda: setattr(c, "nope", 1), lambda: c.nope):
            with pytest.raises(AttributeError, match=r"torch.compiler.config.nope does not exist"):
                action()


def test_compiler_config_environment_defaults():
    import os
    import subprocess
    import sys
    names = ["job_id", "force_disable_caches", "force_cudagraph_gc", "cache_key_tag"]
    code = ("import torch, glassgrad\n"
            f"for n in {names!r}:\n"
            "    print(repr(getattr(torch.compiler.config, n)), repr(getattr(glassgrad.compiler.config, n)))")
    env = dict(os.environ, TORCH_COMPILE_JOB_ID="job7", TORCH_COMPILE_FORCE_DISABLE_CACHES="1",
               TORCH_CUDAGRAPH_GC="1", TORCH_COMPILE_CACHE_KEY_TAG="tag")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    rows = [line.split() for line in out.stdout.splitlines()]
    assert len(rows) == len(names) and all(theirs == ours for theirs, ours in rows), rows
    assert rows[0][0] == "'job7'" and rows[1][0] == "True"
