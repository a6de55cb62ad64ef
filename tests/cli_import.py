"""The CLI's `import --from FORMAT --url` of a file into a memory under test: its dry run's counts,
then the import itself, for the importer tests that check one against the other."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COUNTS = re.compile(r"(\d+) would be stored, (\d+) merged as duplicates, (\d+) proposed as replacing a fact, (\d+) refused")


def run(service, path: Path, fmt: str, *more: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMORY_SECRET": service.secret, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "memories", "import", str(path), "--from", fmt, "--url", service.url,
                           "--quiet", *more], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)


def dry_run_then_import(service, path: Path, fmt: str) -> tuple[int, int, int, int]:
    """(store, merged, proposed, refused) as the dry run said them; then the file imported."""
    dry = run(service, path, fmt, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    counts = tuple(map(int, COUNTS.search(dry.stderr).groups()))
    done = run(service, path, fmt)
    assert done.returncode == 0, done.stderr
    return counts  # type: ignore[return-value]
