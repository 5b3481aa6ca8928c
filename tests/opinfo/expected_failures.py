"""Known differences from PyTorch, one line each with its reason: {(op name, test kind): reason}.

Test kinds: "values", "grad_fn", "grads", "gradcheck", "gradgrad", "errors".
"""
EXPECTED = {
}
