PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv test lint demo bench faults clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev,cloud]'
	touch $(STAMP)

test: venv
	$(BIN)/python -m pytest -q

lint: venv
	$(BIN)/ruff check verify tests bench tools
	$(BIN)/mypy
	$(BIN)/shellcheck verify/flow/probe/probe.sh

demo: venv
	$(BIN)/python -m tests.support.demo

bench: venv
	$(BIN)/python -m compileall -q verify  # as installed: an editable install compiles nothing
	$(BIN)/python -m bench.run

faults: venv
	$(BIN)/python -m bench.faults

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
