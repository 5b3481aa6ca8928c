"""torch.optim: optimizers and learning-rate schedulers."""
from . import lr_scheduler  # noqa: F401
from . import swa_utils  # noqa: F401
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .lbfgs import LBFGS
from .rprop import Rprop
from .asgd import ASGD
from ._adafactor import Adafactor
from ._muon import Muon
from .sparse_adam import SparseAdam
from ._stateless import swap_in_optimizer_params_and_state

__all__ = ["Adafactor", "Adadelta", "Adagrad", "Adam", "Adamax", "AdamW", "ASGD", "LBFGS", "lr_scheduler", "Muon",
           "NAdam", "Optimizer", "RAdam", "RMSprop", "Rprop", "SGD", "SparseAdam", "swa_utils",
           "swap_in_optimizer_params_and_state"]
