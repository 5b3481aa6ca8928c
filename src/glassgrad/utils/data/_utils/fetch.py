"""torch.utils.data._utils.fetch (module path kept for imports; the readers live in ../_fetch.py)"""
from .._fetch import _IndexReader as _MapDatasetFetcher, _StreamReader as _IterableDatasetFetcher  # noqa: F401
