"""Issue 15's floors: glassgrad's share of torch's public names, per namespace, measured by
scripts/api_coverage.py against the installed torch; a namespace that drops below its floor fails."""
import importlib.util
import pathlib

import pytest

_SCRIPT = pathlib.Path(__file__).resolve().parents[1] / "scripts" / "api_coverage.py"
_spec = importlib.util.spec_from_file_location("api_coverage", _SCRIPT)
api_coverage = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(api_coverage)

ROWS = api_coverage.measure()


@pytest.mark.parametrize("row", [r for r in ROWS if r[3] is not None], ids=lambda r: r[0])
def test_namespace_holds_its_floor(row):
    label, have, total, floor, missing = row
    assert total > 0, f"{label}: torch has no public names here (the measure is broken)"
    assert have / total >= floor, f"{label}: {have} of {total} is below {floor:.0%}; missing: {missing}"


def test_measure_sees_a_missing_name():
    """The measure can fail: a name torch has and glassgrad lacks is counted as missing."""
    class Empty:
        pass
    assert api_coverage.public_names(Empty) == []
    rows = {r[0]: r for r in ROWS}
    assert rows["torch.nn.init"][2] == len(set(__import__("torch").nn.init.__all__))
