"""torch.optim's functional forms (torch.optim._functional, and torch.optim.adam.adam, .sgd.sgd, ...): one update of
the given parameters with the given gradients and per-parameter state lists, all updated in place.

Each is the optimizer class's own step, not a second copy of its arithmetic: `_step` builds the optimizer over
`params`, hands it the caller's state tensors as its state and the caller's gradients as `.grad` (restored after),
and runs `step()` -- so the functional and the class round alike, as torch's do (both call the same kernel).
State an update creates (SGD's first momentum buffer) is written back into the caller's list, as torch does.
The parameters must be leaf tensors, as for any optimizer: torch's `differentiable=True` path (updating
non-leaf parameters inside a graph) is not offered, nor is sparse_adam (glassgrad's Embedding(sparse=True) still
gives dense gradients, which SparseAdam refuses as torch's does).
"""
import importlib

from .._tensor import Tensor

__all__ = ["adadelta", "adagrad", "adam", "adamax", "adamw", "asgd", "nadam", "radam", "rmsprop", "rprop", "sgd"]


def _check_steps(state_steps):
    if not all(isinstance(t, Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of singleton tensors")


def _no_scale(grad_scale, found_inf):
    if grad_scale is not None or found_inf is not None:
        raise RuntimeError("glassgrad's functional optimizers take grad_scale / found_inf only with fused=True, "
                           "which glassgrad does not have (unscale the gradients first: GradScaler.unscale_)")


def _opt(module, name):
    """The optimizer class `name` of glassgrad.optim.`module` (imported when called: each optimizer's module
    re-exports its functional form from here, so this module imports none of them at load)."""
    return getattr(importlib.import_module(f"glassgrad.optim.{module}"), name)


def _step(cls, params, grads, states, **hyper):
    """One `cls` step over `params` with gradients `grads` and per-parameter `states` (dicts of the caller's
    tensors, updated in place); returns the states as the optimizer left them."""
    params = list(params)
    opt = cls(params, **hyper)
    for p, st in zip(params, states):
        opt.state[p] = {k: v for k, v in st.items() if v is not None}
    saved = [p.grad for p in params]
    try:
        for p, g in zip(params, grads):
            p.grad = g
        opt.step()
    finally:
        for p, g in zip(params, saved):
            p.grad = g
    return [opt.state[p] for p in params]


def _states(state_steps, **lists):
    """Per-parameter state dicts from the functional form's parallel lists (state key -> list)."""
    _check_steps(state_steps)
    n = len(state_steps)
    return [dict({k: (v[i] if v else None) for k, v in lists.items()}, step=state_steps[i]) for i in range(n)]


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None, capturable=False,
         differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False,
         decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize):
    """Functional Adam (torch.optim.adam.adam)."""
    _no_scale(grad_scale, found_inf)
    st = _states(state_steps, exp_avg=exp_avgs, exp_avg_sq=exp_avg_sqs,
                 max_exp_avg_sq=max_exp_avg_sqs if amsgrad else None)
    _step(_opt("adam", "Adam"), params, grads, st, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
          maximize=maximize, decoupled_weight_decay=decoupled_weight_decay)


def adamw(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None, capturable=False,
          differentiable=False, fused=None, grad_scale=None, found_inf=None, has_complex=False, *, amsgrad, beta1,
          beta2, lr, weight_decay, eps, maximize):
    """Functional AdamW (torch.optim.adamw.adamw): Adam with decoupled weight decay."""
    _no_scale(grad_scale, found_inf)
    st = _states(state_steps, exp_avg=exp_avgs, exp_avg_sq=exp_avg_sqs,
                 max_exp_avg_sq=max_exp_avg_sqs if amsgrad else None)
    _step(_opt("adam", "AdamW"), params, grads, st, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
          amsgrad=amsgrad, maximize=maximize)


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None, fused=None, grad_scale=None,
        found_inf=None, *, weight_decay, momentum, lr, dampening, nesterov, maximize):
    """Functional SGD (torch.optim.sgd.sgd); a momentum buffer the step creates is stored into
    momentum_buffer_list."""
    _no_scale(grad_scale, found_inf)
    states = [{"momentum_buffer": b} for b in momentum_buffer_list]
    out = _step(_opt("sgd", "SGD"), params, d_p_list, states, lr=lr, momentum=momentum, dampening=dampening,
                weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
    for i, st in enumerate(out):
        if momentum != 0:
            momentum_buffer_list[i] = st.get("momentum_buffer")


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, foreach=None, maximize=False,
            differentiable=False, capturable=False, has_complex=False, *, lr, alpha, eps, weight_decay, momentum,
            centered):
    """Functional RMSprop (torch.optim.rmsprop.rmsprop)."""
    st = _states(state_steps, square_avg=square_avgs, grad_avg=grad_avgs if centered else None,
                 momentum_buffer=momentum_buffer_list if momentum > 0 else None)
    _step(_opt("rmsprop", "RMSprop"), params, grads, st, lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
          centered=centered, maximize=maximize)


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None, found_inf=None,
            has_sparse_grad=False, foreach=None, differentiable=False, has_complex=False, *, lr, weight_decay,
            lr_decay, eps, maximize):
    """Functional Adagrad (torch.optim.adagrad.adagrad)."""
    _no_scale(grad_scale, found_inf)
    st = _states(state_steps, sum=state_sums)
    _step(_opt("adagrad", "Adagrad"), params, grads, st, lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
          maximize=maximize)


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False, foreach=None,
             differentiable=False, has_complex=False, *, lr, rho, eps, weight_decay, maximize):
    """Functional Adadelta (torch.optim.adadelta.adadelta)."""
    st = _states(state_steps, square_avg=square_avgs, acc_delta=acc_deltas)
    _step(_opt("adadelta", "Adadelta"), params, grads, st, lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False, differentiable=False,
           capturable=False, has_complex=False, *, eps, beta1, beta2, lr, weight_decay):
    """Functional Adamax (torch.optim.adamax.adamax)."""
    st = _states(state_steps, exp_avg=exp_avgs, exp_inf=exp_infs)
    _step(_opt("adamax", "Adamax"), params, grads, st, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
          maximize=maximize)


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, decoupled_weight_decay=False,
          foreach=None, capturable=False, differentiable=False, has_complex=False, maximize=False, *, beta1, beta2,
          lr, weight_decay, momentum_decay, eps):
    """Functional NAdam (torch.optim.nadam.nadam)."""
    st = _states(state_steps, mu_product=mu_products, exp_avg=exp_avgs, exp_avg_sq=exp_avg_sqs)
    _step(_opt("nadam", "NAdam"), params, grads, st, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
          momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, decoupled_weight_decay=False, foreach=None,
          differentiable=False, capturable=False, has_complex=False, maximize=False, *, beta1, beta2, lr,
          weight_decay, eps):
    """Functional RAdam (torch.optim.radam.radam)."""
    st = _states(state_steps, exp_avg=exp_avgs, exp_avg_sq=exp_avg_sqs)
    _step(_opt("radam", "RAdam"), params, grads, st, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weight_decay,
          decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)


def asgd(params, grads, axs, mus, etas, state_steps, foreach=None, maximize=False, differentiable=False,
         capturable=False, has_complex=False, *, lambd, lr, t0, alpha, weight_decay):
    """Functional ASGD (torch.optim.asgd.asgd)."""
    st = _states(state_steps, eta=etas, mu=mus, ax=axs)
    _step(_opt("asgd", "ASGD"), params, grads, st, lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
          maximize=maximize)


def rprop(params, grads, prevs, step_sizes, state_steps, foreach=None, capturable=False, maximize=False,
          differentiable=False, has_complex=False, *, step_size_min, step_size_max, etaminus, etaplus):
    """Functional Rprop (torch.optim.rprop.rprop); the initial step size is whatever step_sizes holds."""
    st = _states(state_steps, prev=prevs, step_size=step_sizes)
    _step(_opt("rprop", "Rprop"), params, grads, st, etas=(etaminus, etaplus), step_sizes=(step_size_min, step_size_max),
          maximize=maximize)
