"""gradcheck / gradgradcheck: analytical (backward) Jacobians against central finite differences.

Follows PyTorch's slow mode (torch/autograd/gradcheck.py): same defaults, same checks in the
same order, same messages.  ``fast_mode=True`` runs the slow (exact) check; forward-mode
checks (``check_forward_ad``) compare the same reverse-mode Jacobian.
"""
import numpy as np

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    r"""Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


def _T():
    import glassgrad
    return glassgrad


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x):
    return isinstance(x, _T().Tensor)


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if o.requires_grad)


def _check_inputs(tupled_inputs):
    import warnings
    any_rg = False
    for idx, inp in enumerate(tupled_inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp._data.dtype != np.float64:
                warnings.warn(f"Input #{idx} requires gradient and is not a double precision floating point or "
                              "complex. This check will likely fail if all the inputs are not of double precision "
                              "floating point or complex. ", stacklevel=3)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.size())):
                raise RuntimeError(f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs "
                                   "that are non-overlapping to be able to compute the numerical gradients correctly. "
                                   "You should call .contiguous on the input before passing it to gradcheck.")
            any_rg = True
    if not any_rg:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")
    return True


def _numerical_jacobian(func, inputs, func_out, eps):
    """jac[i][j]: d out_j / d input_i as an (inp.numel(), out.numel()) Tensor, by central differences."""
    T = _T()
    func_out = _as_tuple(func_out)
    res = []
    for inp in inputs:
        if not (_is_tensor(inp) and inp.requires_grad):
            continue
        arr = inp._data
        n = arr.size
        cols = [np.zeros((n, o.numel()), o._data.dtype if o._data.dtype.kind == "f" else np.float64)
                for o in func_out]
        for k in range(n):
            idx = np.unravel_index(k, arr.shape) if arr.ndim else ()
            orig = arr[idx].copy()
            arr[idx] = orig - eps
            outa = [np.array(o._data, copy=True) for o in _as_tuple(func(*inputs))]
            arr[idx] = orig + eps
            outb = [np.array(o._data, copy=True) for o in _as_tuple(func(*inputs))]
            arr[idx] = orig
            for j, (a, b) in enumerate(zip(outa, outb)):
                d = (b - a) / (2 * eps) if b.dtype.kind == "f" else (b.astype(np.float64) - a) / (2 * eps)
                cols[j][k] = d.reshape(-1)
        res.append([T.from_numpy(c) for c in cols])
    return res


def _analytical_rows(output, diff_inputs):
    """Rows of the Jacobian of `output` w.r.t. each of `diff_inputs`, computed by backward."""
    T = _T()
    n = output.numel()
    jac = [np.zeros((i._data.size, n), i._data.dtype) for i in diff_inputs]
    sizes_ok = True
    flat_go = np.zeros(n, output._data.dtype)
    for k in range(n):
        flat_go[:] = 0
        flat_go[k] = 1
        go = T.from_numpy(flat_go.reshape(output._data.shape).copy())
        grads = T.autograd.grad(output, diff_inputs, go, retain_graph=True, allow_unused=True)
        for i, (g, inp) in enumerate(zip(grads, diff_inputs)):
            if g is None:
                continue
            if g._data.shape != inp._data.shape:
                sizes_ok = False
                continue
            jac[i][:, k] = g._data.reshape(-1)
    return jac, sizes_ok


def _check_analytical_jacobian_attributes(inputs, output, nondet_tol):
    T = _T()
    diff_inputs = [i for i in inputs if _is_tensor(i) and i.requires_grad]
    j1, sizes_ok = _analytical_rows(output, diff_inputs)
    j2, _ = _analytical_rows(output, diff_inputs)
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for a, b in zip(j1, j2):
        if a.size and np.abs(a.astype(np.float64) - b).max() > nondet_tol:
            raise GradcheckError("Backward is not reentrant, i.e., running backward with same input and grad_output "
                                 "multiple times gives different values, although analytical gradient matches "
                                 f"numerical gradient.The tolerance for nondeterminism was {nondet_tol}.")
    return [T.from_numpy(a) for a in j1]


def _allclose(a, n, rtol, atol):
    a = a._data.astype(np.float64)
    n = n._data.astype(np.float64)
    return bool(np.all(np.abs(a - n) <= atol + rtol * np.abs(n)))


def _notallclose_msg(analytical, numerical, output_idx, input_idx):
    return (f"Jacobian mismatch for output {output_idx:d} with respect to input {input_idx:d},\n"
            f"numerical:{numerical}\nanalytical:{analytical}\n")


def _slow_gradcheck(func, func_out, tupled_inputs, outputs, eps, rtol, atol, nondet_tol):
    func_out = _as_tuple(func_out)
    if not outputs:
        for per_input in _numerical_jacobian(func, tupled_inputs, func_out, eps):
            for jac in per_input:
                if np.count_nonzero(jac._data):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    numerical = _numerical_jacobian(func, tupled_inputs, func_out, eps)
    # transpose to [output][input], keeping only the differentiable outputs
    numerical = [[numerical[i][j] for i in range(len(numerical))] for j in range(len(func_out))]
    numerical = [nj for o, nj in zip(func_out, numerical) if o.requires_grad]
    for i, o in enumerate(outputs):
        analytical = _check_analytical_jacobian_attributes(tupled_inputs, o, nondet_tol)
        for j, (a, n) in enumerate(zip(analytical, numerical[i])):
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(_notallclose_msg(a, n, i, j))
    return True


def _test_backward_mul_by_grad_output(outputs, inputs):
    T = _T()
    diff_inputs = [i for i in inputs if _is_tensor(i) and i.requires_grad]
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    grads_input = T.autograd.grad(outputs, diff_inputs, [T.zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(grads_input, diff_inputs):
        if gi is None:
            continue
        if np.count_nonzero(gi._data):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype != di.dtype:
            raise GradcheckError("grad is incorrect type")
        if gi.shape != di.shape:
            raise GradcheckError("grad is incorrect size")
    return True


def _test_undefined_backward_mode(func, outputs, inputs):
    """All-zero output gradients must give zero (or no) input gradients, one output at a time too."""
    T = _T()
    diff_inputs = [i for i in inputs if _is_tensor(i) and i.requires_grad]
    if not diff_inputs:
        raise GradcheckError("no Tensors requiring grad found in input")
    for _ in range(1 + (len(outputs) if len(outputs) > 1 else 0)):
        group = list(_differentiable_outputs(func(*inputs)))     # a fresh graph each time, as torch
        try:
            grads = T.autograd.grad(group, diff_inputs, [T.zeros_like(o) for o in group], allow_unused=True)
        except RuntimeError as e:
            raise GradcheckError('Expected backward function to handle undefined output grads. Please look at '
                                 '"Notes about undefined output gradients" in "tools/autograd/derivatives.yaml"') from e
        for gi in grads:
            if gi is not None and np.count_nonzero(gi._data):
                raise GradcheckError("Expected all input grads to be undefined or zero when all output grads are "
                                     'undefined or zero. Please look at "Notes about undefined output gradients" in '
                                     '"tools/autograd/derivatives.yaml"')
    return True


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_backward_ad,
                      check_forward_ad):
    tupled_inputs = _as_tuple(inputs)
    _check_inputs(tupled_inputs)
    func_out = func(*tupled_inputs)
    outputs = _differentiable_outputs(func_out)
    _slow_gradcheck(func, func_out, tupled_inputs, outputs, eps, rtol, atol, nondet_tol)
    if not check_backward_ad:
        return True
    if outputs:
        _test_backward_mul_by_grad_output(outputs, tupled_inputs)
    if check_undefined_grad and outputs:
        _test_undefined_backward_mode(func, outputs, tupled_inputs)
    return True


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Check the backward of `func` at `inputs` against finite differences (see torch.autograd.gradcheck)."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad, check_backward_ad,
                                 check_forward_ad)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0, check_undefined_grad=True,
                  check_grad_dtypes=False, check_batched_grad=False, check_fwd_over_rev=False,
                  check_rev_over_rev=True, fast_mode=False, masked=False):
    """gradcheck of the function inputs, grad_outputs -> d(func)/d(inputs) . grad_outputs."""
    T = _T()
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to be True")
    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        rng = np.random.default_rng(0)
        tupled_grad_outputs = tuple(
            T.from_numpy(rng.uniform(-1, 1, tuple(x.shape)).astype(
                x._data.dtype if x._data.dtype.kind == "f" else np.float64)).requires_grad_()
            for x in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(tupled_grad_outputs)
    diff_input_args_indices = {i for i, x in enumerate(tupled_inputs) if _is_tensor(x) and x.requires_grad}
    diff_grad_output_indices = {i for i, x in enumerate(tupled_grad_outputs) if x.requires_grad}

    def new_func(*args):
        input_args = tuple(x.requires_grad_() if i in diff_input_args_indices else x
                           for i, x in enumerate(args[:-num_outputs]))
        outputs = _differentiable_outputs(func(*input_args))
        grad_outputs = tuple(x.requires_grad_() if i in diff_grad_output_indices else x
                             for i, x in enumerate(args[-num_outputs:]))
        diff_input_args = tuple(x for i, x in enumerate(input_args) if i in diff_input_args_indices)
        grad_inputs = T.autograd.grad(outputs, diff_input_args, grad_outputs, create_graph=True, allow_unused=True)
        return tuple(g for g in grad_inputs if g is not None)

    return gradcheck(new_func, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev, masked=masked)
