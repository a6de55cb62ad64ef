"""Every benchmark's imports from the engine resolve: the scripts run by hand, not in the suite, so
a module moved into another room (memories.embeddings -> memories.model.embeddings) broke
concurrency.py unseen until it was run."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parent.parent / "benchmarks").glob("*.py"))


def engine_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None) of each `memories` import in the file, in functions too."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "memories":
            out += [(node.lineno, node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name, None) for a in node.names if a.name.split(".")[0] == "memories"]
    return out


def test_the_benchmarks_are_found():
    assert len(BENCHMARKS) >= 20 and any(engine_imports(p) for p in BENCHMARKS)


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.name)
def test_each_engine_import_of_a_benchmark_resolves(path):
    missing = []
    for line, module, name in engine_imports(path):
        try:
            found = importlib.import_module(module)
        except ImportError as e:
            missing.append(f"line {line}: {module}: {e}")
            continue
        if name and not hasattr(found, name):
            try:
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                missing.append(f"line {line}: from {module} import {name}")
    assert not missing, missing
