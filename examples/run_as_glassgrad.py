"""Run a PyTorch script unchanged on glassgrad: `python examples/run_as_glassgrad.py [--torch] [--seed N] script.py`.

The script's `import torch` and `from torch... import ...` are served by glassgrad (the import hook
`glassgrad._torch_alias`, exactly what `import glassgrad as torch` does); nothing in the script is edited.

`--torch` runs the script on real PyTorch instead, and `--seed N` seeds the default generator
first: PyTorch 2.13 seeds it randomly at start-up, so an unseeded script (seed 003's first
snippet) can only be compared between the two libraries from a common seed.
"""
import runpy
import sys

from glassgrad._torch_alias import install

if __name__ == "__main__":
    args = sys.argv[1:]
    use_torch = "--torch" in args
    seed = None
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    args = [a for a in args if a != "--torch"]
    if use_torch:
        import torch as lib
    else:
        install()
        import torch as lib
    if seed is not None:
        lib.manual_seed(seed)
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")
