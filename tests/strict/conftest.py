"""The strict-device suite: run with GLASSGRAD_STRICT_DEVICE=1 (make test does), never silently without it."""
import pytest

from glassgrad import backend


def pytest_collection_modifyitems(config, items):
    if not backend.STRICT and backend._cupy is None:
        raise pytest.UsageError("tests/strict needs the strict stand-in device: run it with GLASSGRAD_STRICT_DEVICE=1 "
                                "(make test does), or on a GPU with CuPy")
