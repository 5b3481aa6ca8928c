import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_terminal_summary(terminalreporter):
    """Print how many torch functions / Tensor methods the op table covers."""
    try:
        from opinfo import ALL_OPS
    except Exception as e:  # pragma: no cover
        terminalreporter.write_line(f"op table: not loaded ({e})")
        return
    names = {o.name for o in ALL_OPS}
    terminalreporter.write_line(f"op table: {len(names)} entries (tests/opinfo), each run against torch 2.13.0")
