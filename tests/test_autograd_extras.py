"""torch.autograd.set_multithreading_enabled and torch.autograd.variable, against torch."""
import threading

import pytest
import torch

import glassgrad
from glassgrad.autograd.grad_mode import is_multithreading_enabled


def _both_states():
    return torch._C._is_multithreading_enabled(), is_multithreading_enabled()


@pytest.fixture(autouse=True)
def _reset():
    yield
    torch._C._set_multithreading_enabled(True)
    glassgrad.autograd.set_multithreading_enabled(True)


def test_as_a_function_and_a_context_manager():
    assert _both_states() == (True, True)
    for lib in (torch, glassgrad):
        lib.autograd.set_multithreading_enabled(False)
    assert _both_states() == (False, False)
    for lib in (torch, glassgrad):
        lib.autograd.set_multithreading_enabled(True)
    with torch.autograd.set_multithreading_enabled(False), glassgrad.autograd.set_multithreading_enabled(False):
        assert _both_states() == (False, False)
    assert _both_states() == (True, True)


def test_as_a_decorator_as_torch():
    """torch's decorator sets the switch when it is made and restores the value seen then on exit."""
    seen = []
    for lib, state in ((torch, torch._C._is_multithreading_enabled), (glassgrad, is_multithreading_enabled)):
        @lib.autograd.set_multithreading_enabled(False)
        def f():
            return state()
        seen.append((state(), f(), state()))
    assert seen[0] == seen[1] == (False, False, False)


def test_backward_is_unchanged_and_the_switch_is_per_thread():
    with glassgrad.autograd.set_multithreading_enabled(False):
        x = glassgrad.arange(3.0, requires_grad=True)
        (x * x).sum().backward()
        assert x.grad.tolist() == [0.0, 2.0, 4.0]
        seen = []
        t = threading.Thread(target=lambda: seen.append(is_multithreading_enabled()))
        t.start()
        t.join()
        assert seen == [True]


@pytest.mark.parametrize("value", [1, "x", None])
def test_non_bools_are_refused_as_in_torch(value):
    errors = []
    for lib in (torch, glassgrad):
        with pytest.raises(TypeError) as e:
            lib.autograd.set_multithreading_enabled(value)
        errors.append(str(e.value))
    assert errors[0] == errors[1]


def test_variable_module_and_the_deprecated_function():
    import sys
    import glassgrad.autograd.variable  # noqa: F401
    from glassgrad.autograd.variable import Variable, VariableMeta  # noqa: F401
    errors = []
    for lib in (torch, glassgrad):
        with pytest.raises(RuntimeError) as e:
            lib.autograd.variable(lib.ones(2))
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    v = sys.modules["glassgrad.autograd.variable"]
    assert v.Variable is glassgrad.autograd.Variable and isinstance(glassgrad.ones(1), v.Variable)
    assert isinstance(glassgrad.autograd.Variable, v.VariableMeta)
    assert sorted(v.__all__) == sorted(sys.modules["torch.autograd.variable"].__all__)
