"""Benchmark workloads, each written once in plain PyTorch idiom (``import torch``).

bench/run.py runs every module twice: in a child process where ``torch`` is real PyTorch, and in
one where ``glassgrad._torch_alias.install()`` serves ``import torch`` with glassgrad.  Each module
defines:

    NAME     short name used by ``--only``
    TITLE    one line for the table
    UNIT     how a time is printed: "ms" / "us" per iteration, or "us/op" (the iteration time
             divided by ``setup()``'s ``per`` count)
    TARGET   dict: {"time": max glassgrad/torch time ratio, "floor": max glassgrad/BLAS-floor
             ratio (optional)}; peak RSS ratio <= 1.0 applies to every workload
    setup(quick) -> (step, per)   step() runs one iteration; per = ops per iteration (for us/op)
    gemms(quick) -> [(M, K, N), ...]   optional: the GEMMs one iteration needs (the BLAS floor)

The list of workloads is MODULES in bench/run.py.  This package must not import torch or numpy at import time (the child imports the library first).
"""
