"""``import glassgrad`` vs ``import torch`` in a fresh process (bench/run.py times the import itself in
the child before anything else is imported; one sample per process)."""
NAME = "import"
TITLE = "import glassgrad vs import torch"
UNIT = "ms"
TARGET = {"time": 0.2}
