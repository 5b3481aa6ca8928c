"""torch.optim's functional forms (torch.optim.adam.adam, torch.optim._functional.sgd, ...): three updates of the same
parameters, gradients and state lists in torch and in glassgrad give the same parameters and state (in place)."""
import importlib

import numpy as np
import pytest
import torch

import glassgrad

RNG = np.random.default_rng(11)
P = [RNG.standard_normal((3, 4)).astype(np.float32), RNG.standard_normal(5).astype(np.float32)]
G = [[RNG.standard_normal(p.shape).astype(np.float32) for p in P] for _ in range(3)]


def _zeros(lib, n=2):
    return [lib.zeros(p.shape) for p in P][:n]


def _steps(lib):
    return [lib.tensor(0.0) for _ in P]


# name -> (module path, make(lib) -> (positional state lists, keyword hyperparameters))
CASES = {
    "adam": ("adam", lambda lib: ([_zeros(lib), _zeros(lib), _zeros(lib), _steps(lib)],
                                  dict(amsgrad=True, beta1=0.9, beta2=0.99, lr=0.01, weight_decay=0.1, eps=1e-8,
                                       maximize=False))),
    "adamw": ("adamw", lambda lib: ([_zeros(lib), _zeros(lib), [], _steps(lib)],
                                    dict(amsgrad=False, beta1=0.8, beta2=0.999, lr=0.02, weight_decay=0.05, eps=1e-6,
                                         maximize=True))),
    "sgd": ("sgd", lambda lib: ([[None, None]], dict(weight_decay=0.01, momentum=0.9, lr=0.1, dampening=0.0,
                                                     nesterov=True, maximize=False))),
    "rmsprop": ("rmsprop", lambda lib: ([_zeros(lib), _zeros(lib), _zeros(lib), _steps(lib)],
                                        dict(lr=0.01, alpha=0.9, eps=1e-8, weight_decay=0.0, momentum=0.5,
                                             centered=True))),
    "adagrad": ("adagrad", lambda lib: ([[lib.full(p.shape, 0.1) for p in P], _steps(lib)],
                                        dict(lr=0.1, weight_decay=0.01, lr_decay=0.01, eps=1e-10, maximize=False))),
    "adadelta": ("adadelta", lambda lib: ([_zeros(lib), _zeros(lib), _steps(lib)],
                                          dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False))),
    "adamax": ("adamax", lambda lib: ([_zeros(lib), _zeros(lib), _steps(lib)],
                                      dict(eps=1e-8, beta1=0.9, beta2=0.999, lr=0.002, weight_decay=0.0))),
    "nadam": ("nadam", lambda lib: ([_zeros(lib), _zeros(lib), [lib.tensor(1.0) for _ in P], _steps(lib)],
                                    dict(beta1=0.9, beta2=0.999, lr=0.002, weight_decay=0.01, momentum_decay=4e-3,
                                         eps=1e-8))),
    "radam": ("radam", lambda lib: ([_zeros(lib), _zeros(lib), _steps(lib)],
                                    dict(beta1=0.9, beta2=0.999, lr=0.01, weight_decay=0.0, eps=1e-8))),
    "asgd": ("asgd", lambda lib: ([_zeros(lib), [lib.tensor(1.0) for _ in P], [lib.tensor(0.01) for _ in P],
                                   _steps(lib)], dict(lambd=1e-4, lr=0.01, t0=1e6, alpha=0.75, weight_decay=0.0))),
    "rprop": ("rprop", lambda lib: ([_zeros(lib), [lib.full(p.shape, 0.01) for p in P], _steps(lib)],
                                    dict(step_size_min=1e-6, step_size_max=50.0, etaminus=0.5, etaplus=1.2))),
}


def _run(lib, name):
    module, make = CASES[name]
    fn = getattr(importlib.import_module(f"{lib.__name__}.optim.{module}"), name)
    assert fn is getattr(importlib.import_module(f"{lib.__name__}.optim._functional"), name)
    params = [lib.tensor(p.copy()) for p in P]
    lists, hyper = make(lib)
    for g in G:
        with lib.no_grad():
            fn(params, [lib.tensor(x) for x in g], *lists, **hyper)
    flat = [t for lst in lists for t in lst if t is not None]
    return [p.numpy() for p in params], [t.numpy() for t in flat]


@pytest.mark.parametrize("name", sorted(CASES))
def test_functional_updates_as_torch(name):
    (gp, gs), (tp, ts) = _run(glassgrad, name), _run(torch, name)
    assert len(gs) == len(ts)
    for a, b in zip(gp + gs, tp + ts):          # float32 kernels may round differently by CPU: a stated tolerance
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-7)
    assert not all(np.array_equal(a, p) for a, p in zip(gp, P))        # the parameters did move


def test_functional_errors_as_torch():
    for lib in (torch, glassgrad):
        p = [lib.ones(2)]
        with pytest.raises(RuntimeError, match="state_steps` argument must contain a list of singleton tensors"):
            importlib.import_module(f"{lib.__name__}.optim.adam").adam(p, [lib.ones(2)], [lib.zeros(2)], [lib.zeros(2)], [], [0], amsgrad=False, beta1=0.9,
                                beta2=0.99, lr=0.1, weight_decay=0.0, eps=1e-8, maximize=False)
