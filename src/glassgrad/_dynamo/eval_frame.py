"""torch._dynamo.eval_frame.OptimizedModule: what torch.compile returns for a module -- the module under
``_orig_mod`` (so state_dict keys carry torch's ``_orig_mod.`` prefix), run eagerly."""
from ..nn import Module

__all__ = ["OptimizedModule"]


class OptimizedModule(Module):
    """Calls the original module (its hooks included); other attributes are the original module's."""

    def __init__(self, mod, dynamo_ctx=None):
        super().__init__()
        self._orig_mod = mod
        self.training = mod.training
        self.dynamo_ctx = dynamo_ctx

    def forward(self, *args, **kwargs):
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name):
        mods = self.__dict__.get("_modules")
        if mods is None or "_orig_mod" not in mods:
            raise AttributeError(f"'OptimizedModule' object has no attribute '{name}'")
        if name == "_orig_mod":
            return mods["_orig_mod"]
        return getattr(self._orig_mod, name)
