"""Known differences from PyTorch, one line each with its reason: {(op name, test kind): reason}.

Test kinds: "values", "grad_fn", "grads", "gradcheck", "gradgrad", "errors".
"""
EXPECTED = {
    ("sgn", "grads"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("Tensor.sgn", "grads"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("sgn", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("Tensor.sgn", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("abs", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("absolute", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("Tensor.abs", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("Tensor.absolute", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("abs_", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("abs_kink", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    # -- reduction --
    ("norm_p1", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("norm_p1_dim", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("norm_inf", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("norm_neginf", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("norm_p0", "gradgrad"): "torch returns a ZeroTensor here, which the harness cannot turn into NumPy",
    ("norm_zero_vector", "gradgrad"): "torch's second derivative at the zero vector is NaN (0/0 inside its masked formula); glassgrad gives 0",
    # -- views (ops/views.py) --
    ("as_strided", "gradgrad"): "double backward through as_strided is not implemented yet",
    ("as_strided_overlap", "gradgrad"): "double backward through as_strided is not implemented yet",
}
