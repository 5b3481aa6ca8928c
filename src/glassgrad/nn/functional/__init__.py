"""torch.nn.functional: the stateless form of every layer, activation and loss.

One file per family; each defines __all__.
"""
from ._linear import *  # noqa: F401,F403
from ._activation import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
from ._pool import *  # noqa: F401,F403
from ._vision import *  # noqa: F401,F403
from ._norm import *  # noqa: F401,F403
from ._dropout import *  # noqa: F401,F403
from ._sparse import *  # noqa: F401,F403
from ._loss import *  # noqa: F401,F403
from ._attention import *  # noqa: F401,F403
from ._attention import (_canonical_mask, _none_or_dtype, _mha_shape_check, _in_projection_packed,  # noqa: F401
                         _in_projection)
