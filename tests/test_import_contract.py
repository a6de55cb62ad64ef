"""Imports from other tools against both memories (real model, real HTTP): a batch's dry run keeps
nothing and answers what the batch then does, and the CLI's `import --from ... --url` stores
exactly what its dry run said, as unreviewed facts with the file named in the history."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def state(api):
    return (api.get("/stats").json()["facts"], api.get("/history", params={"limit": 5}).json()["entries"],
            api.get("/conflicts").json()["total"], api.get("/facts", params={"limit": 100}).json()["facts"])


def test_a_dry_run_keeps_nothing_and_answers_what_the_batch_then_does(api):
    tag = uuid.uuid4().hex[:6]
    api.post("/facts", json={"text": f"The owner's accountant is Maria Lopez ({tag})."})
    batch = [{"text": f"The owner's accountant is Tom Berg ({tag})."}, {"text": f"the owner's accountant is maria lopez ({tag})."},
             {"text": f"The owner's bicycle is a green Brompton ({tag})."}, {"text": f"The owner's bicycle is a green Brompton ({tag})."}]
    before = state(api)
    dry = api.post("/facts/batch", json={"facts": batch, "dry_run": True})
    assert dry.status_code == 200, dry.text
    assert state(api) == before
    real = api.post("/facts/batch", json={"facts": batch, "note": f"import of test-{tag}.txt"}).json()["results"]
    shape = lambda results: [(r["created"], (r.get("duplicate") or {}).get("match"), len(r.get("conflicts", []))) for r in results]  # noqa: E731
    assert shape(dry.json()["results"]) == shape(real) == [(True, None, 1), (False, "exact", 0), (True, None, 0), (False, "exact", 0)]
    entry = api.get("/history", params={"fact_id": real[0]["id"]}).json()["entries"][0]
    assert entry["note"] == f"import of test-{tag}.txt"


def test_the_cli_imports_exactly_what_its_dry_run_showed_into_the_inbox(service, api):
    env = {**os.environ, "MEMORY_SECRET": service.secret, "PYTHONPATH": str(ROOT)}
    run = lambda *a: subprocess.run([sys.executable, "-m", "memories", "import", str(FIXTURES / "mem0.json"), "--from", "mem0",  # noqa: E731
                                     "--url", service.url, "--quiet", *a], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    dry = run("--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "2 would be stored, 0 merged as duplicates" in dry.stderr and "1 refused" in dry.stderr
    assert api.get("/facts", params={"source": "import:mem0"}).json()["total"] == 0
    done = run()
    assert done.returncode == 0 and "imported 2 facts from mem0.json" in done.stderr, done.stderr
    stored = api.get("/facts", params={"source": "import:mem0", "reviewed": "false"}).json()
    assert stored["total"] == 2 and {f["created_at"] for f in stored["facts"]} == {"2025-02-26T06:57:00.108347Z",
                                                                               "2025-03-01T08:00:00.000001Z"}
    assert api.get("/history", params={"fact_id": stored["facts"][0]["id"]}).json()["entries"][0]["note"] == "import of mem0.json (mem0)"
    again = run("--dry-run")
    assert "0 would be stored, 2 merged as duplicates" in again.stderr
