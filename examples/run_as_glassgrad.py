"""Run a PyTorch script unchanged on glassgrad: `python examples/run_as_glassgrad.py script.py`.

The script's `import torch` and `from torch... import ...` are served by glassgrad (a module alias,
exactly what `import glassgrad as torch` does); nothing in the script is edited.
"""
import runpy
import sys

import glassgrad

sys.modules["torch"] = glassgrad
sys.modules["torch.autograd"] = glassgrad.autograd

if __name__ == "__main__":
    path = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(path, run_name="__main__")
