"""torch.func: composable function transforms on glassgrad's autograd.

  grad, grad_and_value, vjp, jacrev            reverse mode (autograd.grad, one pass per cotangent)
  jvp, linearize, jacfwd                       forward mode by the double-vjp trick (autograd.forward_ad)
  hessian                                      jacfwd(jacrev(f))
  vmap                                         batching rules for common Tensor methods and operators
                                               (_batched.py), else a per-sample loop; torch's in_dims /
                                               out_dims / randomness / chunk_size checks (see _vmap.py)
  functional_call, stack_module_state,         module utilities (nn.utils.stateless underneath)
  replace_all_batch_norm_modules_
  functionalize                                torch's eager semantics (copies in, mutations copied back)

  rearrange                                    einops-style reordering (reshape / permute / reshape)

Transforms nest freely (every glassgrad backward is differentiable).  Not here: ``debug_unwrap`` (glassgrad
has no wrapper tensors to unwrap, and the per-sample loop has no batched value to show).
"""
from ._transforms import grad, grad_and_value, vjp, jvp, linearize
from ._jacobians import jacrev, jacfwd, hessian
from ._vmap import vmap
from ._module import functional_call, stack_module_state, replace_all_batch_norm_modules_, functionalize
from ._rearrange import rearrange

__all__ = ["grad", "grad_and_value", "vmap", "replace_all_batch_norm_modules_", "functionalize", "hessian", "jacfwd",
           "jacrev", "jvp", "linearize", "vjp", "functional_call", "stack_module_state",
           "rearrange"]
