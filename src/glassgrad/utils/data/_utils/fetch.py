"""torch.utils.data._utils.fetch"""
from .._fetch import _IterableDatasetFetcher, _MapDatasetFetcher  # noqa: F401
