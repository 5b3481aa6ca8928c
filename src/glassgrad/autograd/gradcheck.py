"""gradcheck / gradgradcheck: compare the engine's gradients with central finite differences.

For every differentiable output o_i and every input x_j that requires grad, the analytical
Jacobian is built row by row with autograd.grad and the numerical one column by column by
nudging each element of x_j by +-eps.  Inputs are meant to be float64, as in PyTorch.
"""
import numpy as np

from .. import _tensor     # Tensor, read as _tensor.Tensor
from .grad_mode import no_grad, enable_grad

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck/gradgradcheck when the two Jacobians differ."""


def _tensors(x):
    if isinstance(x, _tensor.Tensor):
        return (x,)
    return tuple(x)


def _jacobians(func, inputs, eps):
    outs = [o for o in _tensors(func(*inputs)) if isinstance(o, _tensor.Tensor)]
    wrt = [i for i, x in enumerate(inputs) if isinstance(x, _tensor.Tensor) and x.requires_grad]
    numerical = {}
    for j in wrt:
        data = inputs[j].detach().numpy()   # shares memory with the input: nudge in place
        cols = []
        for k in range(data.size):
            idx = np.unravel_index(k, data.shape)
            old = data[idx]
            data[idx] = old + eps
            with no_grad():
                plus = [o.detach().numpy().astype(np.float64).ravel() for o in _tensors(func(*inputs))
                        if isinstance(o, _tensor.Tensor)]
            data[idx] = old - eps
            with no_grad():
                minus = [o.detach().numpy().astype(np.float64).ravel() for o in _tensors(func(*inputs))
                         if isinstance(o, _tensor.Tensor)]
            data[idx] = old
            cols.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
        for i in range(len(outs)):
            numerical[(i, j)] = (np.stack([c[i] for c in cols], axis=1) if cols
                                 else np.zeros((outs[i].numel(), 0)))
    from . import grad      # autograd.grad
    analytical = {}
    for i, o in enumerate(outs):
        flat = o.reshape(-1)
        rows = {j: [] for j in wrt}
        for k in range(flat.numel()):
            if not o.requires_grad:
                gs = (None,) * len(wrt)
            else:
                gs = grad(flat[k], [inputs[j] for j in wrt], retain_graph=True, allow_unused=True)
            for j, g in zip(wrt, gs):
                rows[j].append(np.zeros(inputs[j].numel()) if g is None else g.detach().numpy().ravel())
        for j in wrt:
            analytical[(i, j)] = (np.stack(rows[j]) if rows[j] else np.zeros((0, inputs[j].numel())))
    return numerical, analytical


def gradcheck(func, inputs, *, eps=1e-06, atol=1e-05, rtol=0.001, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    inputs = _tensors(inputs)
    numerical, analytical = _jacobians(func, inputs, eps)
    for (i, j), num in numerical.items():
        ana = analytical[(i, j)]
        # numerical is (outputs x inputs); analytical rows are outputs too
        if num.shape != ana.shape or not np.allclose(ana, num, rtol=rtol, atol=atol):
            if not raise_exception:
                return False
            raise GradcheckError(f"Jacobian mismatch for output {i} with respect to input {j},\n"
                                 f"numerical:{num.T}\nanalytical:{ana.T}\n")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-06, atol=1e-05, rtol=0.001, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the function (inputs, grad_outputs) -> d<func(inputs), grad_outputs>/d inputs."""
    inputs = _tensors(inputs)
    outs = [o for o in _tensors(func(*inputs)) if isinstance(o, _tensor.Tensor) and o.requires_grad]
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(_tensor._make(rng.standard_normal(tuple(o.shape)).astype(o.detach().numpy().dtype))
                             .requires_grad_(True) for o in outs)
    grad_outputs = _tensors(grad_outputs)
    n = len(inputs)

    def first_derivative(*args):
        from . import grad      # autograd.grad
        xs, gos = args[:n], args[n:]
        with enable_grad():      # also when gradcheck evaluates it for finite differences
            ys = [o for o in _tensors(func(*xs)) if isinstance(o, _tensor.Tensor) and o.requires_grad]
            gs = grad(ys, [x for x in xs if isinstance(x, _tensor.Tensor) and x.requires_grad], gos,
                      create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)
    return gradcheck(first_derivative, tuple(inputs) + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
