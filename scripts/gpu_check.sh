#!/bin/sh
# Issue 17's GPU legs in one device call (the lent machine's image has python3 3.12 with CuPy 14 / cupy-cuda13x,
# torch (CUDA), pytest, hypothesis; nothing is fetched).  From the repository root, on the GPU machine:
#     sh scripts/gpu_check.sh [OUTDIR]          (OUTDIR defaults to $OUT, the device tool's folder)
# writes OUTDIR/strict.log (tests/strict on real CuPy: the op table, modules, optimizers, library, models, bench
# workloads, each against the CPU), OUTDIR/bench.txt (bench/run.py --compare --device cuda: glassgrad on CuPy next
# to torch CUDA eager, ratios per workload), OUTDIR/rng.txt (scripts/gpu_rng_vs_torch.py: glassgrad's CUDA
# generator against torch's, draw by draw) and OUTDIR/env.txt.
OUT=${1:-${OUT:-/tmp/gpu_check}}
mkdir -p "$OUT"
export PYTHONPATH=src PYTHONUNBUFFERED=1 GLASSGRAD_STRICT_DEVICE=1   # (collects tests/strict; real CuPy takes precedence)
{ nvidia-smi -L; python3 -c "import cupy, numpy, torch; print('cupy', cupy.__version__, 'numpy', numpy.__version__, \
'torch', torch.__version__, torch.cuda.is_available())"; } > "$OUT/env.txt" 2>&1
timeout 420 python3 -m pytest -p no:cacheprovider -q --maxfail=25 --timeout 120 -n 4 -rs tests/strict > "$OUT/strict.log" 2>&1
echo "strict rc=$?" >> "$OUT/env.txt"
timeout 120 python3 scripts/gpu_rng_vs_torch.py > "$OUT/rng.txt" 2>&1
echo "rng rc=$?" >> "$OUT/env.txt"
timeout 300 python3 bench/run.py --compare --quick --device cuda --only gemm,mlp,mlp_large,cnn,gpt,resnet,lstm \
    > "$OUT/bench.txt" 2>&1
echo "bench rc=$?" >> "$OUT/env.txt"
tail -3 "$OUT/strict.log"; tail -1 "$OUT/rng.txt"; cat "$OUT/bench.txt" "$OUT/env.txt"
