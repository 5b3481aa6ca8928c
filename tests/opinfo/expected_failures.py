"""Known differences from PyTorch, one line each with its reason: {(op name, test kind): reason}.

Test kinds: "values", "grad_fn", "grads", "gradcheck", "gradgrad", "errors".
"""
EXPECTED = {
    # -- reduction --
    ("norm_zero_vector", "gradgrad"): "torch's second derivative at the zero vector is NaN (0/0 inside its masked formula); glassgrad gives 0",
    # -- views (ops/views.py) --
    ("as_strided", "gradgrad"): "double backward through as_strided is not implemented yet",
    ("as_strided_overlap", "gradgrad"): "double backward through as_strided is not implemented yet",
    ("as_strided_of_view", "gradgrad"): "double backward through as_strided is not implemented yet",
    ("as_strided_of_transpose", "gradgrad"): "double backward through as_strided is not implemented yet",
    ("as_strided_of_expand", "gradgrad"): "double backward through as_strided is not implemented yet",
    # -- view copies and scatters (ops/view_copies.py) --
    ("as_strided_scatter", "grads"): "torch's as_strided_scatter_backward copies the region's gradient into input's "
    "gradient instead of zeroing it there (its own gradcheck fails); glassgrad's passes finite differences",
    ("Tensor.as_strided_scatter", "grads"): "as as_strided_scatter",
    ("slice_inverse", "gradcheck"): "the result views all of input's storage, but torch's derivative (which glassgrad "
    "follows) gives input only the slice's gradient: finite differences see the rest too",
}
