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

test: $(VENV)/.test
	sh scripts/ci_system_deps.sh
	$(BIN)/python -m pytest -n 2 tests

clean:
	rm -rf $(VENV)
