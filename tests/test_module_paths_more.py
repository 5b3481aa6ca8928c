"""More of torch's module paths: torch.utils.hooks, torch.autograd.variable / anomaly_mode,
torch.distributions.beta / chi2 resolve to glassgrad's objects and behave as torch's."""
import importlib
from collections import OrderedDict
import warnings

import pytest
import torch

import glassgrad


@pytest.mark.parametrize("path", ["utils.hooks", "autograd.variable", "autograd.anomaly_mode", "distributions.beta",
                                  "distributions.chi2"])
def test_paths_export_torch_names(path):
    tm, gm = importlib.import_module("torch." + path), importlib.import_module("glassgrad." + path)
    names = tm.__all__
    for n in names:
        if n == "BackwardHook":          # torch's Module-hook machinery (documented in utils/hooks.py)
            continue
        assert hasattr(gm, n), n
    for n in names:
        g = getattr(glassgrad.distributions, n, None) if path.startswith("distributions") else None
        if g is not None:
            assert getattr(gm, n) is g


def test_removable_handle_extra_dict_as_torch():
    for lib in (torch, glassgrad):
        hooks, flags, more = OrderedDict(), OrderedDict(), OrderedDict()   # (torch keeps weak references)
        h = lib.utils.hooks.RemovableHandle(hooks, extra_dict=[flags, more])
        hooks[h.id], flags[h.id], more[h.id] = print, True, 1
        with h:
            pass
        assert hooks == flags == more == {}
        h2 = lib.utils.hooks.RemovableHandle(hooks, extra_dict=flags)
        hooks[h2.id], flags[h2.id] = print, True
        h2.remove()
        assert hooks == flags == {}


def test_warn_if_has_hooks_as_torch():
    for lib in (torch, glassgrad):
        leaf = lib.ones(2, requires_grad=True)
        mid = leaf * 2
        for t in (leaf, mid):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                lib.utils.hooks.warn_if_has_hooks(t)
            assert not w
            t.register_hook(lambda g: g)
            t.register_hook(lib.utils.hooks.unserializable_hook(lambda g: g))
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                lib.utils.hooks.warn_if_has_hooks(t)
            assert len(w) == 1 and "will not be serialized" in str(w[0].message), lib


def test_variable_and_anomaly_paths():
    from glassgrad.autograd.variable import Variable     # (the attribute autograd.variable is torch's deprecated function)
    v = Variable(glassgrad.ones(2), requires_grad=True)
    assert isinstance(v, glassgrad.Tensor) and v.requires_grad
    with glassgrad.autograd.anomaly_mode.detect_anomaly():
        assert glassgrad.is_anomaly_enabled()
    assert not glassgrad.is_anomaly_enabled()
