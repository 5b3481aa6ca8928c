"""Helpers shared by the torch.fx tests: a model built under both libraries with the same weights, outputs
compared, graphs compared node by node."""

import re

import numpy as np
import torch

import glassgrad
import glassgrad.fx  # noqa: F401


def _pair(factory, seed=0):
    torch.manual_seed(seed)
    tm, *shapes = factory(torch)
    gm, *_ = factory(glassgrad)
    gm.load_state_dict({k: glassgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    return tm, gm, inputs


def _np(x):
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(_np(v) for v in x)
    return x.detach().numpy() if hasattr(x, "detach") else x


def _assert_same_outputs(a, b):
    a, b = _np(a), _np(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same_outputs(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same_outputs(x, y)
    else:
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-5)


def _t(text):
    """torch's text with its C-namespace spelling of torch.special / linalg / fft functions
    (torch._C._linalg.linalg_vector_norm) and of nn.functional's C functions (torch._C._nn.gelu) written as the
    public name glassgrad prints (torch.linalg.vector_norm, torch.nn.functional.gelu)."""
    text = re.sub(r"torch\._C\._(special|linalg|fft)\.\1_", r"torch.\1.", text)
    return text.replace("torch._C._nn.", "torch.nn.functional.")


def _structure(graph):
    """(op, name, printed target, printed args, printed kwargs, users, module stack) of every node."""
    return [(n.op, n.name, _t(n._pretty_print_target(n.target)) if n.op != "placeholder" else n.target,
             str(n.args), str(n.kwargs), sorted(u.name for u in n.users),
             [(k, p, c.__name__) for k, (p, c) in n.meta.get("nn_module_stack", {}).items()]) for n in graph.nodes]
