"""torch.nn's layer classes, one file per family (each defines __all__).

Only the classes are exported: a star import must not bring submodules (such as ``utils``) along.
"""
import importlib

_FAMILIES = ("module", "container", "linear", "flatten", "activation", "conv", "pooling", "padding", "upsampling",
             "fold", "batchnorm", "normalization", "instancenorm", "dropout", "sparse", "loss", "rnn", "attention",
             "transformer")

__all__ = []
for _family in _FAMILIES:
    _mod = importlib.import_module(f"{__name__}.{_family}")
    globals().update({_n: getattr(_mod, _n) for _n in _mod.__all__})
    __all__ += _mod.__all__
del _family, _mod
