"""torch.autograd.graph.register_multi_grad_hook against torch: "all" mode (which gradients each backward /
backward(inputs=) / autograd.grad computes, handle.remove), "any" mode (once per backward), errors."""
import pytest

import torch
import glassgrad


def _all_mode(T):
    T.manual_seed(0)
    a = T.rand(2, 3, requires_grad=True)
    b = T.rand(2, 3, requires_grad=True)
    c = a * b
    d = a * b
    log = []
    h = T.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda gs: log.append([g is not None for g in gs]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    T.autograd.grad(c.sum() + d.sum(), (c,), retain_graph=True)
    (c.sum() + d.sum()).backward(retain_graph=True)
    try:
        T.autograd.grad(c.sum() + d.sum(), (b,), retain_graph=True)     # a captured leaf: torch refuses
    except RuntimeError as e:
        log.append(str(e))
    h.remove()
    c.sum().backward(retain_graph=True)
    return log


def _any_mode(T):
    a = T.ones(2, requires_grad=True)
    b = a * 2
    c = b * 3
    log = []
    T.autograd.graph.register_multi_grad_hook((a, b, c), lambda g: log.append(g.tolist()), mode="any")
    c.sum().backward(retain_graph=True)
    (b.sum() * 5).backward()
    return log


@pytest.mark.parametrize("case", [_all_mode, _any_mode])
def test_matches_torch(case):
    assert case(glassgrad) == case(torch)


def test_bad_mode():
    for T in (torch, glassgrad):
        with pytest.raises(ValueError, match=r"^Expects mode to be one of \('all', 'any'\) but got x$"):
            T.autograd.graph.register_multi_grad_hook((T.ones(1, requires_grad=True),), print, mode="x")
