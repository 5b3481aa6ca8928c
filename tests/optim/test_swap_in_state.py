"""torch.optim.swap_in_optimizer_params_and_state vs torch: the step on swapped-in tensors, the live
optimizer untouched and restored, the checks."""
import copy

import numpy as np
import torch

import glassgrad

LIBS = (torch, glassgrad)


def A(t):
    return t.detach().numpy()


def _catch(f):
    try:
        f()
        return None
    except Exception as e:            # noqa: BLE001
        return type(e).__name__, str(e)


def _swap(T, opt, params, osd):
    with T.optim.swap_in_optimizer_params_and_state(opt, params, osd):
        pass


def run(T):
    T.manual_seed(41)
    m = T.nn.Sequential(T.nn.Linear(3, 2), T.nn.Linear(2, 1))
    opt = T.optim.AdamW([{"params": m[0].parameters()}, {"params": m[1].parameters(), "lr": 0.01}], lr=0.1)
    m(T.randn(4, 3)).sum().backward()
    opt.step()
    osd = copy.deepcopy(opt.state_dict())
    params = {n: p.detach().clone() for n, p in m.named_parameters()}
    for p in params.values():
        p.grad = T.ones_like(p)
    live_params = opt.param_groups[0]["params"]
    with T.optim.swap_in_optimizer_params_and_state(opt, params, osd):
        inside = [opt.param_groups[1]["lr"], opt.param_groups[0]["params"][0] is params["0.weight"]]
        opt.step()
    out = inside + [[A(p) for p in params.values()], [A(v) for v in osd["state"][0].values()],
                    [A(p) for p in m.parameters()], opt.param_groups[0]["params"] is live_params,
                    sorted(opt.state_dict()["state"][0]), A(opt.state_dict()["state"][0]["exp_avg"])]
    bad = copy.deepcopy(osd)
    bad["param_groups"][0]["extra"] = 1
    fewer = copy.deepcopy(osd)
    fewer["param_groups"] = fewer["param_groups"][:1]
    extra = copy.deepcopy(osd)
    extra["state"][9] = {}
    out += [_catch(lambda: _swap(T, T.optim.SGD(m.parameters(), lr=0.1), params, osd)),
            _catch(lambda: _swap(T, opt, params, [])), _catch(lambda: _swap(T, opt, params, bad)),
            _catch(lambda: _swap(T, opt, params, fewer)), _catch(lambda: _swap(T, opt, params, extra)),
            _catch(lambda: _swap(T, opt, dict(list(params.items())[:2]), osd))]
    return out


def _eq(a, b):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _eq(x, y)
    elif isinstance(a, np.ndarray):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    else:
        assert a == b, (a, b)


def test_swap_in_optimizer_params_and_state():
    _eq(run(torch), run(glassgrad))
