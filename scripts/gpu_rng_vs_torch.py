"""On a GPU machine with torch (CUDA) and CuPy: glassgrad's CUDA generator against torch's, draw by draw.

    PYTHONPATH=src python3 scripts/gpu_rng_vs_torch.py

For each sampler, seed and size, prints how many elements equal torch's bit for bit, the largest difference,
and whether the generator's offset advanced as torch's did (get_rng_state()[8:]).  glassgrad's reproduction of
the CUDA streams (_rng/philox.py) was written from ATen's kernels without a GPU: this is its check."""
import sys

import numpy as np
import torch

import glassgrad as gg

CASES = [
    ("rand f32", lambda T, n: T.rand(n, device="cuda")),
    ("rand f64", lambda T, n: T.rand(n, dtype=T.float64, device="cuda")),
    ("rand f16", lambda T, n: T.rand(n, dtype=T.float16, device="cuda")),
    ("uniform_(-2, 3)", lambda T, n: T.empty(n, device="cuda").uniform_(-2, 3)),
    ("randn f32", lambda T, n: T.randn(n, device="cuda")),
    ("randn f64", lambda T, n: T.randn(n, dtype=T.float64, device="cuda")),
    ("normal_(1, 3)", lambda T, n: T.empty(n, device="cuda").normal_(1, 3)),
    ("randint(0, 10)", lambda T, n: T.randint(0, 10, (n,), device="cuda")),
    ("randint(0, 2**40)", lambda T, n: T.randint(0, 2 ** 40, (n,), device="cuda")),
    ("random_() i64", lambda T, n: T.empty(n, dtype=T.int64, device="cuda").random_()),
    ("random_() i32", lambda T, n: T.empty(n, dtype=T.int32, device="cuda").random_()),
    ("bernoulli_(0.3)", lambda T, n: T.empty(n, device="cuda").bernoulli_(0.3)),
    ("bernoulli(p)", lambda T, n: T.bernoulli(T.full((n,), 0.3, device="cuda"))),
    ("exponential_", lambda T, n: T.empty(n, device="cuda").exponential_()),
    ("geometric_(0.2)", lambda T, n: T.empty(n, device="cuda").geometric_(0.2)),
    ("log_normal_", lambda T, n: T.empty(n, device="cuda").log_normal_()),
    ("cauchy_", lambda T, n: T.empty(n, device="cuda").cauchy_()),
    ("dropout(0.5)", lambda T, n: T.nn.functional.dropout(T.ones(n, device="cuda"), 0.5, True)),
    ("dropout(0.5) n%4=2", lambda T, n: T.nn.functional.dropout(T.ones(n + 2, device="cuda"), 0.5, True)),
    ("dropout(0.5) n odd", lambda T, n: T.nn.functional.dropout(T.ones(n + 1, device="cuda"), 0.5, True)),
    ("randperm", lambda T, n: T.randperm(n, device="cuda")),
    ("multinomial", lambda T, n: T.multinomial(T.ones(8, 50, device="cuda"), 10)),
]


def main():
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name()}; glassgrad sm_layout "
          f"{gg.backend.sm_layout(0)}")
    bad = 0
    for name, fn in CASES:
        for n in (5, 1000, 300001):
            for seed in (0, 1234):
                torch.manual_seed(seed)
                gg.manual_seed(seed)
                fn(torch, 7)              # a draw first: the offset must advance alike
                fn(gg, 7)
                a = fn(torch, n).cpu().numpy()
                b = fn(gg, n).cpu().numpy()
                sa, sb = torch.cuda.get_rng_state()[8:].tolist(), gg.cuda.get_rng_state()[8:].tolist()
                eq = int((a == b).sum()) if a.shape == b.shape else -1
                diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64)))) if eq >= 0 else float("nan")
                ok = eq == a.size and sa == sb
                bad += not ok
                print(f"{name:20s} n={n:6d} seed={seed:4d}: {eq}/{a.size} equal, max |diff| {diff:.3g}, "
                      f"offset {'same' if sa == sb else f'torch {sa} glassgrad {sb}'}{'' if ok else '   <-- differs'}")
    print(f"{bad} case(s) differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
