# `make run` starts the product on a demo memory; `make test` runs every test.
# `python` is 3.12 here through .python-version (pyenv); the check below says so if not.
PYTHON ?= python
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run test test-fast bench evalsets clean

$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 12) else "Python 3.12+ is needed: install it with pyenv (.python-version says 3.12)")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	touch $@

install: $(VENV)/.installed

run: install
	$(BIN)/python scripts/run.py

test: install
	$(BIN)/python -m pytest

test-fast: install
	$(BIN)/python -m pytest -m "not browser and not slow"

bench: install
	$(BIN)/python benchmarks/memory_bench.py
	$(BIN)/python benchmarks/dashboard_bench.py
	$(BIN)/python benchmarks/recall_quality.py

# Load the shipped evaluation sets into the running demo memory (start `make run` first).
evalsets: install
	$(BIN)/python manage.py load_evalset

clean:
	rm -rf $(VENV) var artifacts
