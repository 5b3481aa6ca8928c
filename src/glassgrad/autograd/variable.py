"""torch.autograd.variable: Variable (a Tensor since PyTorch 0.4; the legacy constructor is autograd's) and its
metaclass (isinstance(t, Variable) holds for every Tensor)."""
from . import Variable, _VariableMeta as VariableMeta

__all__ = ["VariableMeta", "Variable"]
