"""One import at a time (issue 49 §1), against both memories over real HTTP with the real model:
while one import runs, a batch of another is a 409 import_running that says so and stores
nothing; the running import goes on and keeps all it stored; an ordinary batch is never refused;
the next import is taken once the first ends, or once it has sent nothing for the idle time
(here 2 s: MEMORY_IMPORT_IDLE_SECONDS); and the CLI's `import --url` says the refusal in words."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

import pytest

from tests.memory_service import ROOT, Service
from tests.worker_service import WorkerHost

IDLE = 2  # seconds


@pytest.fixture(scope="module", params=["python", "worker"])
def service(request, tmp_path_factory):
    """Each memory with an idle time short enough to wait out."""
    if request.param == "worker":
        host = WorkerHost(tmp_path_factory.mktemp("worker-imports"), variables={"MEMORY_IMPORT_IDLE_SECONDS": str(IDLE)}).start()
        yield host.memory()
        host.stop()
        return
    s = Service(tmp_path_factory.mktemp("service") / "memory.db", env={"MEMORY_IMPORT_IDLE_SECONDS": str(IDLE)}).start()
    yield s
    s.stop()


def facts(tag: str, n: int, start: int = 0) -> list[dict]:
    return [{"text": f"Import {tag} line {i}: the owner's locker {i} holds item {i * 7}.", "source": f"import-{tag}"}
            for i in range(start, start + n)]


def batch(api, items, import_id=None, client="cli", **more):
    body = {"facts": items, **({"import_id": import_id} if import_id else {}), **more}
    return api.post("/facts/batch", json=body, headers={"X-Memory-Client": client})


def stored(api, tag: str) -> list[str]:
    return sorted(f["text"] for f in api.get("/facts", params={"source": f"import-{tag}", "limit": 100}).json()["facts"])


def end(api, import_id):
    r = batch(api, [], import_id, import_done=True)
    assert r.status_code == 200 and r.json() == {"results": []}, r.text


def test_a_second_import_is_refused_while_the_first_runs_and_taken_once_it_ends(api):
    a, b = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
    assert batch(api, facts(a, 5), a, client="cli alice").status_code == 200
    refused = batch(api, facts(b, 3), b, client="dashboard-import bob")
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "import_running"
    assert "another import is running into this memory by cli alice" in error["message"]
    assert "refused, not queued" in error["message"]
    assert error["running"]["client"] == "cli alice" and error["running"]["idle_seconds"] == IDLE
    assert error["running"]["last_seen"].endswith("Z")
    assert batch(api, facts(b, 3), b, dry_run=True).status_code == 409  # its answers would not hold
    assert stored(api, b) == []
    # the first goes on, and holds all it stored
    assert batch(api, facts(a, 5, start=5), a).status_code == 200
    assert stored(api, a) == sorted(f["text"] for f in facts(a, 10))
    end(api, a)
    taken = batch(api, facts(b, 3), b)
    assert taken.status_code == 200 and all(r["created"] for r in taken.json()["results"])
    end(api, b)
    assert stored(api, a) == sorted(f["text"] for f in facts(a, 10))


def test_a_last_batch_marked_done_ends_the_import(api):
    a, b = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
    assert batch(api, facts(a, 2), a).status_code == 200
    assert batch(api, facts(a, 2, start=2), a, import_done=True).status_code == 200
    assert batch(api, facts(b, 2), b).status_code == 200
    end(api, b)


def test_ordinary_batches_and_writes_are_never_refused_while_an_import_runs(api):
    a, plain = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
    assert batch(api, facts(a, 2), a).status_code == 200
    assert batch(api, facts(plain, 3), client="some-agent").status_code == 200
    assert batch(api, facts(plain, 2, start=3), dry_run=True).status_code == 200
    assert api.post("/facts", json={"text": f"A single write {plain} while an import runs."}).status_code == 201
    assert len(stored(api, plain)) == 3
    end(api, a)


def test_an_import_that_sends_nothing_for_the_idle_time_no_longer_holds_the_memory(api):
    a, b = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
    assert batch(api, facts(a, 2), a).status_code == 200  # and then it crashes: no end
    assert batch(api, facts(b, 1), b).status_code == 409
    time.sleep(IDLE + 1)
    assert batch(api, facts(b, 2), b).status_code == 200
    assert batch(api, facts(a, 1, start=2), a).status_code == 409  # the crashed one, back, waits its turn now
    end(api, b)
    assert len(stored(api, a)) == 2 and len(stored(api, b)) == 2


def test_an_import_id_is_checked(api):
    for body, words in [({"import_id": ""}, "import_id must be"), ({"import_id": "a b"}, "import_id must be"),
                        ({"import_id": "x" * 65}, "import_id must be"), ({"import_id": 7}, "import_id must be"),
                        ({"import_done": True}, "import_done goes with the import_id"),
                        ({"import_id": "ok", "import_done": "yes"}, "import_done must be true or false")]:
        r = api.post("/facts/batch", json={"facts": [], **body})
        assert r.status_code == 422 and words in r.json()["error"]["message"], (body, r.text)


def test_the_cli_says_another_import_is_running_and_imports_once_it_ends(service, api, tmp_path):
    a, tag = uuid.uuid4().hex[:8], uuid.uuid4().hex[:8]
    path = tmp_path / "list.txt"
    path.write_text("".join(f"The owner's cellar {tag} shelf {i} holds {i * 3} bottles.\n" for i in range(4)))
    env = {**os.environ, "MEMORY_SECRET": service.secret, "PYTHONPATH": str(ROOT)}
    run = lambda: subprocess.run([sys.executable, "-m", "memories", "import", str(path), "--from", "list",  # noqa: E731
                                  "--url", service.url, "--quiet"], capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert batch(api, facts(a, 1), a, client="dashboard-import alice").status_code == 200
    refused = run()
    assert refused.returncode == 3, refused.stderr
    assert "error: another import is running into this memory by dashboard-import alice" in refused.stderr
    assert "nothing of this file was stored" in refused.stderr and "Traceback" not in refused.stderr
    end(api, a)
    done = run()
    assert done.returncode == 0 and "imported 4 facts" in done.stderr, done.stderr
    assert batch(api, facts(a, 1, start=1), a).status_code == 200  # the CLI ended its import: the memory is free
    end(api, a)
