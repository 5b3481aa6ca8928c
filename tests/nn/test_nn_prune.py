"""nn.utils.prune vs torch: masks (seeded random ones included), hooks, containers, remove, errors."""
import numpy as np
import pytest
import torch
import torch.nn.utils.prune  # noqa: F401  (not loaded by import torch)

import glassgrad

LIBS = (torch, glassgrad)


def A(t):
    return t.detach().numpy()


def _sd(m):
    return {k: A(v) for k, v in m.state_dict().items()}


def _catch(f):
    try:
        f()
        return None
    except Exception as e:            # noqa: BLE001
        msg = str(e).replace("glassgrad.", "torch.")
        return type(e).__name__, msg.split(" of module")[0].split(" to PruningContainer")[0]


def _eq(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _eq(x, y)
    elif isinstance(a, dict):
        assert list(a) == list(b), (list(a), list(b))
        for k in a:
            _eq(a[k], b[k])
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    else:
        assert a == b, (a, b)


STEPS = {
    "random_unstructured": lambda P, m: P.random_unstructured(m, "weight", amount=0.4),
    "l1_unstructured": lambda P, m: P.l1_unstructured(m, "weight", amount=5),
    "random_structured": lambda P, m: P.random_structured(m, "weight", amount=0.5, dim=0),
    "ln_structured": lambda P, m: P.ln_structured(m, "weight", amount=1, n=2, dim=1),
    "ln_structured_inf": lambda P, m: P.ln_structured(m, "weight", amount=0.3, n=float("inf"), dim=-1),
    "identity": lambda P, m: P.identity(m, "bias"),
    "bias_l1": lambda P, m: P.l1_unstructured(m, "bias", amount=0.5),
}


@pytest.mark.parametrize("chain", [["random_unstructured"], ["l1_unstructured", "random_structured"],
                                   ["ln_structured", "random_unstructured", "l1_unstructured"],
                                   ["ln_structured_inf", "identity", "bias_l1"]])
def test_prune_chain(chain):
    def run(T):
        T.manual_seed(11)
        m = T.nn.Conv2d(3, 6, 2)
        P = T.nn.utils.prune
        out = []
        for step in chain:
            STEPS[step](P, m)
            out += [_sd(m), [n for n, _ in m.named_parameters()], A(m.weight)]
        hook = [h for h in m._forward_pre_hooks.values()][0]
        out += [type(hook).__name__, len(hook) if hasattr(hook, "__len__") else None, P.is_pruned(m)]
        x = T.randn(1, 3, 4, 4)
        m(x).sum().backward()
        out.append(A(m.weight_orig.grad))
        P.remove(m, "weight")
        out += [_sd(m), type(m.weight).__name__, P.is_pruned(m) if "bias" not in " ".join(chain) else None,
                A(T.rand(2))]
        return out
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


def test_global_unstructured_and_custom_mask():
    def run(T):
        T.manual_seed(12)
        net = T.nn.Sequential(T.nn.Linear(4, 5), T.nn.ReLU(), T.nn.Linear(5, 3))
        P = T.nn.utils.prune
        params = [(net[0], "weight"), (net[2], "weight"), (net[2], "bias")]
        P.global_unstructured(params, pruning_method=P.L1Unstructured, amount=0.35)
        out = [_sd(net)]
        P.global_unstructured(params[:2], pruning_method=P.RandomUnstructured, amount=4,
                              importance_scores={(net[0], "weight"): T.ones(5, 4)})
        out.append(_sd(net))
        P.custom_from_mask(net[0], "bias", mask=T.tensor([1.0, 0.0, 1.0, 0.0, 1.0]))
        out += [_sd(net), A(net(T.randn(2, 4)))]
        return out
    a, b = (run(T) for T in LIBS)
    _eq(a, b)


def test_prune_method_objects_and_errors():
    def run(T):
        P = T.nn.utils.prune
        T.manual_seed(13)
        t = T.randn(4, 5)
        out = [A(P.L1Unstructured(amount=0.5).prune(t)),
               A(P.LnStructured(amount=2, n=1, dim=0).prune(t, importance_scores=t.abs().flip(0))),
               A(P.RandomStructured(amount=0.25, dim=1).prune(t))]
        m = T.nn.Linear(3, 2)
        out += [_catch(lambda: P.l1_unstructured(m, "weight", amount=-1)),
                _catch(lambda: P.l1_unstructured(m, "weight", amount=1.5)),
                _catch(lambda: P.l1_unstructured(m, "weight", amount="a")),
                _catch(lambda: P.l1_unstructured(m, "weight", amount=7)),
                [n for n, _ in m.named_parameters()],
                _catch(lambda: P.ln_structured(m, "bias", amount=1, n=2, dim=0)),
                _catch(lambda: P.random_structured(m, "weight", amount=1, dim=2)),
                _catch(lambda: P.remove(m, "weight")),
                _catch(lambda: P.global_unstructured([(m, "weight")], P.RandomStructured, amount=1)),
                _catch(lambda: P.global_unstructured(5, P.L1Unstructured, amount=1))]
        return out
    a, b = (run(T) for T in LIBS)
    _eq(a, b)
