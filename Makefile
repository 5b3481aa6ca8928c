# Each target creates .venv on first use and installs what it needs.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.demo: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e ".[demo]"
	touch $@

$(VENV)/.test: $(BIN)/python pyproject.toml
	$(BIN)/pip install -q -e ".[test]"
	touch $@

demo: $(VENV)/.demo
	$(BIN)/glassgrad demo

# tests/strict: the op table on the strict stand-in `cuda` device (src/glassgrad/_strict.py), in its own process;
# then once more with the fused CUDA kernels on everywhere (run through tests/strict/cuda_emu.py's CPU emulation).
# The tests that judge float results against torch, run a second time on the plain x86-64 paths of torch,
# NumPy and OpenBLAS (docs/numerics.md): a CPU-dependent comparison fails here, not on the next machine.
NUMERIC_TESTS := tests/test_ops.py tests/nn tests/optim tests/models tests/test_fast_paths_act_index.py \
	tests/test_properties.py tests/test_autograd_functional.py tests/test_autograd_engine.py tests/test_blas.py \
	tests/explain/test_attribute.py tests/explain/test_flow.py tests/explain/test_nan.py \
	tests/test_bfloat16.py tests/test_distributions.py tests/test_linalg.py tests/test_low_precision.py \
	tests/test_complex.py tests/test_fft.py tests/test_stft.py tests/test_linalg_eig.py tests/test_linalg_complex.py \
	tests/test_sparse.py tests/test_nan_gradients.py tests/test_out_argument.py tests/test_amp_autocast.py \
	tests/test_amp_grad_scaler.py tests/test_func_transforms.py tests/test_func_vmap.py tests/test_forward_ad.py \
	tests/test_activation_checkpoint.py tests/test_saved_tensors_hooks.py tests/test_onnx.py tests/test_onnx_ops.py \
	tests/test_training_script.py tests/test_sampler_grads_vectorised.py tests/test_philox.py tests/test_torch_random.py \
	tests/test_masked.py tests/test_lowrank.py tests/test_lobpcg.py tests/test_signal_windows.py tests/test_segment_reduce.py \
	tests/test_memory_format.py tests/test_fx_shape_prop.py tests/test_lib_surface.py tests/test_hf_surface.py
PLAIN_X86_64 := ATEN_CPU_CAPABILITY=default MKL_ENABLE_INSTRUCTIONS=SSE4_2 ONEDNN_MAX_CPU_ISA=SSE41 \
	OPENBLAS_CORETYPE=Nehalem NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR"

test: $(VENV)/.test
	sh scripts/ci_system_deps.sh
	$(BIN)/python -m pytest -n 2 tests
	$(PLAIN_X86_64) $(BIN)/python -m pytest -n 2 $(NUMERIC_TESTS)
	GLASSGRAD_STRICT_DEVICE=1 $(BIN)/python -m pytest -n 2 tests/strict
	GLASSGRAD_STRICT_DEVICE=1 GLASSGRAD_TEST_FUSED=1 $(BIN)/python -m pytest -n 2 tests/strict

clean:
	rm -rf $(VENV)
