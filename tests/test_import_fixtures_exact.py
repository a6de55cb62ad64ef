"""Every importer fixture, found by `--from auto` and imported by the CLI into both memories
(issue 47, done when: "the dry run on each fixture is exact, on both memories"): the import stores
exactly as many facts as its dry run said it would, every fact the reader read is stored, merged
or refused there, and the queue holds at least the proposals it named (a pair across two batches
of 100 is beyond the dry run's sight, so never fewer). The fixtures with a test of their own
(tests/test_importers_*.py) are checked here again, through `auto`."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories import importers
from tests.cli_import import dry_run_said_then_import

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"
NAMES = sorted(p.name for p in FIXTURES.iterdir() if p.name != "README.md")


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


@pytest.mark.parametrize("name", NAMES)
def test_the_dry_run_is_what_the_import_stores(name, service, api):
    path = FIXTURES / name
    fmt, _ = importers.detected(path)
    parsed = importers.read(fmt, path)
    facts_before = api.get("/facts", params={"limit": 1}).json()["total"]
    queue_before = api.get("/conflicts", params={"limit": 1}).json()["total"]
    (store, merged, proposed, refused), said = dry_run_said_then_import(service, path, "auto")
    assert f"read as {fmt}" in said
    assert store + merged + refused == len(parsed.items) + len(parsed.refused), said
    assert api.get("/facts", params={"limit": 1}).json()["total"] == facts_before + store, said
    assert api.get("/conflicts", params={"limit": 1}).json()["total"] >= queue_before + min(proposed, 1)
