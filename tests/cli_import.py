"""The CLI's `import --from FORMAT --url` of a file into a memory under test: its dry run's counts,
then the import itself, for the importer tests that check one against the other."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNTS = re.compile(r"(\d+) would be stored, (\d+) merged as duplicates, (\d+) proposed as replacing a fact \(\d+ proposals for the queue\), (\d+) refused")


def run(service, path: Path, fmt: str, *more: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMORY_SECRET": service.secret, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "memories", "import", str(path), "--from", fmt, "--url", service.url,
                           "--quiet", *more], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)


def dry_run_then_import(service, path: Path, fmt: str) -> tuple[int, int, int, int]:
    """(store, merged, proposed, refused) as the dry run said them; then the file imported."""
    return dry_run_said_then_import(service, path, fmt)[0]


def dry_run_said_then_import(service, path: Path, fmt: str) -> tuple[tuple[int, int, int, int], str]:
    """The dry run's counts and all it said; then the file imported."""
    dry = run(service, path, fmt, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    counts = tuple(map(int, COUNTS.search(dry.stderr).groups()))
    done = run(service, path, fmt)
    assert done.returncode == 0, done.stderr
    return counts, dry.stderr  # type: ignore[return-value]


def imported_as_its_dry_run_said(service, api, path: Path, fmt: str, prefix: str) -> tuple[tuple[int, int, int, int], str]:
    """dry_run_said_then_import, checked: each fact the reader reads was stored or merged, none was
    refused, and the memory holds as many more facts under the source `prefix` as the dry run said."""
    from memories import importers

    before = api.get("/facts", params={"source_prefix": prefix, "limit": 1}).json()["total"]
    counts, said = dry_run_said_then_import(service, path, fmt)
    store, merged, _, refused = counts
    assert store + merged == len(importers.read(fmt, path).items) and refused == 0
    assert api.get("/facts", params={"source_prefix": prefix, "limit": 1}).json()["total"] == before + store
    return counts, said
