"""torch.autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp.

Same algorithms, checks and messages as PyTorch's reverse-mode implementation: jvp and hvp
use the double-backward trick (differentiate a vjp with respect to its grad_outputs), which
works because every backward formula is itself differentiable (see ops/_ns.py).
"""
from .grad_mode import enable_grad, set_grad_enabled, is_grad_enabled

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _T():
    import glassgrad
    return glassgrad


def _as_tuple(inp, arg_name=None, fn_name=None):
    Tensor = _T().Tensor
    if arg_name is None and fn_name is None:
        return inp if isinstance(inp, tuple) else tuple(inp) if isinstance(inp, list) else (inp,)
    is_inp_tuple = True
    if not isinstance(inp, tuple):
        inp = (inp,)
        is_inp_tuple = False
    for i, el in enumerate(inp):
        if not isinstance(el, Tensor):
            if is_inp_tuple:
                raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                                f"the value at index {i} has type {type(el)}.")
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"given {arg_name} has type {type(el)}.")
    return is_inp_tuple, inp


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    res = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            res.append(inp.view_as(inp))
        else:
            res.append(inp.detach().requires_grad_(need_graph))
    return tuple(res)


def _grad_postprocess(inputs, create_graph):
    if isinstance(inputs[0], _T().Tensor):
        if not create_graph:
            return tuple(inp.detach() for inp in inputs)
        return inputs
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.size() != el_other.size():
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.size()} but got {el_v.size()}.")


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not inp.requires_grad:
            if input_type == "hessian":
                raise RuntimeError(f"The hessian of the user-provided function with respect to input {i} is "
                                   "independent of the input. This is not allowed in strict mode. You should ensure "
                                   "that your function is thrice differentiable and that the hessian depends on the "
                                   "inputs.")
            if input_type == "jacobian":
                raise RuntimeError("While computing the hessian, found that the jacobian of the user-provided "
                                   f"function with respect to input {i} is independent of the input. This is not "
                                   "allowed in strict mode. You should ensure that your function is twice "
                                   "differentiable and that the jacobian depends on the inputs (this would be "
                                   "violated by a linear function for example).")
            if input_type == "grad_inputs":
                raise RuntimeError(f"The gradient with respect to input {i} is independent of the inputs of the "
                                   "user-provided function. This is not allowed in strict mode.")
            raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The outputs "
                               "must be computed in a differentiable manner from the input when running in strict "
                               "mode.")


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
                   is_grads_batched=False):
    T = _T()
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    new_outputs, new_grad_outputs = (), ()
    for out, grad_out in zip(outputs, grad_outputs):
        if out is not None and out.requires_grad:
            new_outputs += (out,)
            new_grad_outputs += (grad_out,)
    if not new_outputs:
        return (None,) * len(inputs)
    return T.autograd.grad(new_outputs, inputs, new_grad_outputs, allow_unused=True, create_graph=create_graph,
                           retain_graph=retain_graph, is_grads_batched=is_grads_batched)


_FILL_MSGS = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in "
            "strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in "
                  "strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed "
                   "in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    T = _T()
    res = ()
    for i, grads_i in enumerate(grads):
        if grads_i is None:
            if strict:
                raise RuntimeError(_FILL_MSGS[stage].format(i=i))
            grads_i = T.zeros_like(refs[i])
        elif strict and create_graph and not grads_i.requires_grad:
            if "double" not in stage:
                raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. This "
                                   "is not allowed in strict mode when create_graph=True.")
            raise RuntimeError(f"The hessian of the user-provided function is independent of input {i}. This is "
                               "not allowed in strict mode when create_graph=True.")
        res += (grads_i,)
    return res


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T . J)."""
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function returns a single Tensor "
                               "with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J . v), by the double-backward trick."""
    T = _T()
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        if v is not None:
            _, v = _as_tuple(v, "v", "jvp")
            v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
            _validate_v(v, inputs, is_inputs_tuple)
        elif len(inputs) != 1 or inputs[0].nelement() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided function is a "
                               "single Tensor with a single element.")
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(outputs, "outputs", strict=strict)
        grad_outputs = tuple(T.zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, outputs, strict, create_graph, "back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_outputs_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of func at inputs: out.shape + inp.shape blocks, nested like torch's."""
    T = _T()
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(  # PyTorch raises AssertionError here
        'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function has more outputs '
        'than inputs, "forward-mode" tends to be more performant. Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and `strategy=\"forward-mode\"` are not "
                "supported together (yet). Please either set `create_graph=False` or `strategy=\"reverse-mode\"`.")
        if not vectorize:
            raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                                      "implemented for `vectorize=True`.")
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict=strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = ()
        for i, out in enumerate(outputs):
            jac_i = tuple([] for _ in inputs)
            flat = out.reshape(-1)
            n = out.nelement()
            if vectorize and n:
                # one batched vjp over the standard basis (as torch's vmap path computes)
                basis = T.eye(n, dtype=out.dtype).reshape((n,) + tuple(out.shape))
                vjs = _autograd_grad((out,), inputs, (basis,), retain_graph=True, create_graph=create_graph,
                                     is_grads_batched=True)
                for el_idx, (vj, inp) in enumerate(zip(vjs, inputs)):
                    jac_i[el_idx].extend(list(vj) if vj is not None else [T.zeros_like(inp)] * n)
            else:
                for j in range(n):
                    vj = _autograd_grad((flat[j:j + 1].reshape(()),), inputs, retain_graph=True, create_graph=create_graph)
                    for el_idx, (jac_i_el, vj_el, inp_el) in enumerate(zip(jac_i, vj, inputs)):
                        if vj_el is not None:
                            if strict and create_graph and not vj_el.requires_grad:
                                raise RuntimeError("The jacobian of the user-provided function is independent of "
                                                   f"input {i}. This is not allowed in strict mode when "
                                                   "create_graph=True.")
                            jac_i_el.append(vj_el)
                        else:
                            if strict:
                                raise RuntimeError(f"Output {i} of the user-provided function is independent of "
                                                   f"input {el_idx}. This is not allowed in strict mode.")
                            jac_i_el.append(T.zeros_like(inp_el))
            jac += (tuple(
                (T.stack(jac_i_el, dim=0) if jac_i_el else T.zeros((0,) + tuple(inputs[el_idx].shape),
                                                                    dtype=inputs[el_idx].dtype))
                .view(tuple(out.size()) + tuple(inputs[el_idx].size()))
                for el_idx, jac_i_el in enumerate(jac_i)),)
        jac = _grad_postprocess(jac, create_graph)
        return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function: the jacobian of its jacobian."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def ensure_single_output_function(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, _T().Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def jac_func(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    # (torch's forward-over-reverse result keeps requires_grad=True: mimic it with create_graph)
    fwd = outer_jacobian_strategy == "forward-mode"
    res = jacobian(jac_func, inputs, create_graph=create_graph or fwd, strict=strict, vectorize=vectorize,
                   strategy="reverse-mode" if fwd and not create_graph else outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_fn_prologue(func, inputs, v, create_graph, strict, name):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", name)
    inputs = _grad_preprocess(inputs, create_graph=create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", name)
        v = _grad_preprocess(v, create_graph=create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].nelement() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided function is a single "
                           "Tensor with a single element.")
    outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function", name)
    _check_requires_grad(outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs[0], _T().Tensor):
        raise RuntimeError(f"The function given to {name} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single element")
    jac = _autograd_grad(outputs, inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict=strict)
    return is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T . H)."""
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _scalar_fn_prologue(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H . v), by the double-backward trick."""
    T = _T()
    with enable_grad():
        is_inputs_tuple, inputs, v, outputs, is_outputs_tuple, jac = _scalar_fn_prologue(
            func, inputs, v, create_graph, strict, "hvp")
        grad_jac = tuple(T.zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict=strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grad_res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(grad_res, inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess(outputs, create_graph)
    res = _grad_postprocess(res, create_graph)
    return _tuple_postprocess(outputs, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)
