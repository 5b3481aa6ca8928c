"""torch.nn's layer classes, one file per family (each defines __all__).

Only the classes are exported: a star import must not bring submodules (such as ``utils``) along.
"""
from .module import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .attention import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .linear_cross_entropy_options import *  # noqa: F401,F403
from . import (module, container, linear, flatten, activation, conv, pooling, padding, upsampling, fold, batchnorm,
              normalization, instancenorm, dropout, sparse, loss, rnn, attention, transformer, lazy,
              channelshuffle, adaptive, linear_cross_entropy_options)

__all__ = [*module.__all__, *container.__all__, *linear.__all__, *flatten.__all__, *activation.__all__,
           *conv.__all__, *pooling.__all__, *padding.__all__, *upsampling.__all__, *fold.__all__, *batchnorm.__all__,
           *normalization.__all__, *instancenorm.__all__, *dropout.__all__, *sparse.__all__, *loss.__all__,
           *rnn.__all__, *attention.__all__, *transformer.__all__, *lazy.__all__,
           *channelshuffle.__all__, *adaptive.__all__, *linear_cross_entropy_options.__all__]
