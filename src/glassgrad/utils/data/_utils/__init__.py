"""torch.utils.data._utils: the module paths some code imports collate/worker helpers from."""
from . import collate, fetch, worker  # noqa: F401
from .._worker import MP_STATUS_CHECK_INTERVAL  # noqa: F401
