"""nn.SyncBatchNorm's op (ops/sync_batch_norm.py) with the collectives simulated in one process, against torch's
batch_norm on the concatenated batch."""
import numpy as np
import pytest
import torch

import glassgrad
from glassgrad.ops.sync_batch_norm import sync_batch_norm


# -- the op with the collectives simulated: every rank run in turn, twice ----------------------------------
def _simulated_ranks(parts, weight, bias, rms, rvs, gys, momentum):
    """sync_batch_norm on each rank's part, the gather / all-reduce served from a first pass that records each
    rank's contribution; returns the second pass's outputs and input / weight / bias gradients."""
    sent = {"gather": {}, "sum": {}}
    ranks = range(len(parts))

    def run(gathered, summed):
        """One pass over the ranks; `gathered` / `summed`: serve every rank's recorded contribution (else a
        world of one, recording this rank's)."""
        outs = []
        for k, (x, gy) in enumerate(zip(parts, gys)):
            def gather(local, k=k):
                sent["gather"][k] = local
                return np.stack([sent["gather"][j] for j in ranks]) if gathered else local[None]

            def all_sum(local, k=k):
                if summed:
                    return sum(sent["sum"][j] for j in ranks)
                sent["sum"][k] = local
                return local
            xi = glassgrad.tensor(x, requires_grad=True)
            w, b = (glassgrad.tensor(t, requires_grad=True) for t in (weight, bias))
            rm, rv = glassgrad.tensor(rms[k]), glassgrad.tensor(rvs[k])
            y = sync_batch_norm(xi, w, b, rm, rv, 1e-5, momentum, gather, all_sum)
            assert type(y.grad_fn).__name__ == "SyncBatchNormBackward"
            assert len(y.grad_fn.next_functions) == 5
            y.backward(glassgrad.tensor(gy))
            outs.append((y, xi, w, b, rm, rv))
        return outs

    run(False, False)                   # records each rank's statistics
    run(True, False)                    # records each rank's gradient sums (an empty rank sends zeros)
    return run(True, True)


@pytest.mark.parametrize("shape,rows", [((3,), (2, 0, 5)), ((3, 4), (1, 3)), ((3, 2, 3), (4, 1, 2)),
                                        ((3, 2, 2, 3), (2, 3))])
def test_sync_op_equals_torch_batch_norm_on_the_concatenated_batch(shape, rows):
    """float64, rtol 1e-10: outputs, input gradients, the sum of the ranks' weight / bias gradients and every
    rank's running statistics against torch.nn.functional.batch_norm on the concatenation (2D to 5D inputs,
    unequal ranks, an empty one)."""
    g = np.random.default_rng(2)
    parts = [g.standard_normal((n,) + shape) * 3 + 1 for n in rows]
    gys = [g.standard_normal(p.shape) for p in parts]
    weight, bias = g.standard_normal(shape[0]), g.standard_normal(shape[0])
    rm0, rv0 = g.standard_normal(shape[0]), g.random(shape[0]) + 0.5
    outs = _simulated_ranks(parts, weight, bias, [rm0] * len(rows), [rv0] * len(rows), gys, 0.3)
    tx = torch.tensor(np.concatenate(parts), requires_grad=True)
    tw, tb = torch.tensor(weight, requires_grad=True), torch.tensor(bias, requires_grad=True)
    trm, trv = torch.tensor(rm0), torch.tensor(rv0)
    ty = torch.nn.functional.batch_norm(tx, trm, trv, tw, tb, True, 0.3, 1e-5)
    ty.backward(torch.tensor(np.concatenate(gys)))
    cuts = np.cumsum((0,) + rows)
    tol = dict(rtol=1e-10, atol=1e-12)
    for k, (y, xi, w, b, rm, rv) in enumerate(outs):
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy()[cuts[k]:cuts[k + 1]], **tol)
        if rows[k]:
            np.testing.assert_allclose(xi.grad.numpy(), tx.grad.numpy()[cuts[k]:cuts[k + 1]], **tol)
        else:
            assert xi.grad is None
        np.testing.assert_allclose(rm.numpy(), trm.numpy(), **tol)
        np.testing.assert_allclose(rv.numpy(), trv.numpy(), **tol)
    gw = sum(o[2].grad.numpy() for o in outs if o[2].grad is not None)
    gb = sum(o[3].grad.numpy() for o in outs if o[3].grad is not None)
    np.testing.assert_allclose(gw, tw.grad.numpy(), **tol)
    np.testing.assert_allclose(gb, tb.grad.numpy(), **tol)


def test_sync_op_refuses_double_backward():
    x = glassgrad.randn(4, 2, requires_grad=True)
    y = sync_batch_norm(x, None, None, None, None, 1e-5, 0.1, lambda a: np.stack([a, a]), lambda a: 2 * a)
    with pytest.raises(RuntimeError, match="double backward"):
        glassgrad.autograd.grad(y.sum(), x, create_graph=True)
