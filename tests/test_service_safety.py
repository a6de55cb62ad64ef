"""Serialised writes, crash safety, a missing model and other processes writing the same file,
against real service processes."""

import json
import random
import sqlite3
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.memory_service import Service


def consistent(api) -> dict:
    stats = api.get("/stats").json()
    assert not any(stats["orphans"].values()), stats
    assert stats["facts"] == stats["fts"] == stats["vectors"] == stats["vectors_in_memory"], stats
    return stats


def test_fifty_concurrent_posts_of_one_fact_leave_one_row(service, api):
    def post(i):
        text = "The owner's favourite colour is teal." if i % 2 else "  the OWNER'S favourite colour is teal. "
        return httpx.post(service.url + "/facts", json={"text": text}, headers={"X-Memory-Secret": service.secret}, timeout=60)

    with ThreadPoolExecutor(max_workers=50) as pool:
        responses = list(pool.map(post, range(50)))
    assert sorted(r.status_code for r in responses) == [200] * 49 + [201]
    assert len({r.json()["id"] for r in responses}) == 1
    assert api.get("/facts", params={"q": "favourite colour"}).json()["total"] == 1
    consistent(api)


def test_concurrent_near_duplicates_collapse_to_one(service, api):
    # One exact and one near (cosine ~0.99) variant of the same fact.
    texts = ["Leo's swimming lesson is on Wednesday.", "Leo's swimming lesson is on Wednesday",
             "LEO'S SWIMMING LESSON IS ON WEDNESDAY."]

    def post(i):
        return httpx.post(service.url + "/facts", json={"text": texts[i % 3]}, headers={"X-Memory-Secret": service.secret}, timeout=60)

    with ThreadPoolExecutor(max_workers=30) as pool:
        ids = {r.json()["id"] for r in pool.map(post, range(30))}
    assert len(ids) == 1
    consistent(api)


def test_kill_9_during_a_bulk_import_loses_no_consistency(tmp_path):
    service = Service(tmp_path / "crash.db").start()
    stop = threading.Event()
    acknowledged: list[int] = []

    def writer(n):
        with service.client() as c:
            for i in range(10_000):
                if stop.is_set():
                    return
                try:
                    r = c.post("/facts", json={"text": f"Crash test fact {n}-{i}: the {i}th visit to city {n * 7919 + i}."})
                except httpx.TransportError:
                    return
                if r.status_code == 201:
                    acknowledged.append(r.json()["id"])

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    time.sleep(random.uniform(2.0, 3.0))
    service.kill()
    stop.set()
    for t in threads:
        t.join()
    assert len(acknowledged) > 20, "the writers should have stored facts before the kill"

    db = sqlite3.connect(tmp_path / "crash.db")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    db.close()
    service.start()
    with service.client() as api:
        stats = consistent(api)
        # Every write the service acknowledged survived the crash.
        assert stats["facts"] >= len(acknowledged)
        for fid in random.sample(acknowledged, 10):
            assert api.get(f"/facts/{fid}").status_code == 200
    service.stop()


def test_kill_9_during_a_command_line_import(tmp_path):
    import subprocess
    import sys

    from tests.memory_service import ROOT

    source = tmp_path / "big.jsonl"
    with source.open("w") as f:
        for i in range(5000):
            f.write(json.dumps({"text": f"Imported fact {i}: parcel {i * 31} went to depot {i % 97}.", "source": "bulk"}) + "\n")
    db = tmp_path / "import.db"
    proc = subprocess.Popen([sys.executable, "-m", "memories", "import", str(source), "--db", str(db), "--quiet"],
                            cwd=ROOT, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until some batches are in
        try:
            with sqlite3.connect(db) as c:
                if c.execute("SELECT count(*) FROM facts").fetchone()[0] > 100:
                    break
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    service = Service(db).start()
    with service.client() as api:
        stats = consistent(api)
        assert 100 <= stats["facts"] < 5000
        assert stats["facts"] % 64 == 0, "imports commit whole batches of 64"
    service.stop()


def test_without_the_model_the_service_serves_keyword_recall_and_refuses_writes(tmp_path):
    seeded = Service(tmp_path / "m.db").start()
    with seeded.client() as api:
        fid = api.post("/facts", json={"text": "Priya is the owner's sister."}).json()["id"]
    seeded.stop()

    broken = Service(tmp_path / "m.db", env={"MEMORY_EMBEDDER": "no.such.module:Model"}).start()
    with broken.client() as api:
        health = api.get("/health").json()
        assert health["mode"] == "keyword-only" and health["model"] is None
        body = api.post("/recall", json={"query": "Who is Priya?"}).json()
        assert body["mode"] == "keyword-only" and "keyword-only" in body["warning"]
        assert [h["fact"]["id"] for h in body["results"]] == [fid]
        r = api.post("/facts", json={"text": "A new fact."})
        assert r.status_code == 503 and r.json()["error"]["code"] == "model_unavailable"
        assert api.get("/stats").json()["facts"] == 1
    broken.stop()


def test_the_service_refuses_to_start_without_a_secret(tmp_path):
    service = Service(tmp_path / "m.db", env={"MEMORY_SECRET": ""})
    with pytest.raises(RuntimeError, match="MEMORY_SECRET"):
        service.start(timeout=20)


def test_the_service_sees_writes_to_its_file_by_an_import_and_a_second_serve(tmp_path):
    import subprocess
    import sys

    from tests.memory_service import ROOT

    db = tmp_path / "shared.db"
    first = Service(db).start()
    second = None
    try:
        source = tmp_path / "facts.jsonl"
        source.write_text(json.dumps({"text": "The owner prefers metric units.", "source": "import"}) + "\n")
        subprocess.run([sys.executable, "-m", "memories", "import", str(source), "--db", str(db), "--quiet"],
                       cwd=ROOT, check=True, stderr=subprocess.DEVNULL)
        with first.client() as api:
            vec = api.post("/recall", json={"query": "Which units does the owner like?", "debug": True}).json()["vec"]
            imported = vec[0]["fact"]["id"]
            assert vec[0]["fact"]["text"] == "The owner prefers metric units."
            r = api.post("/facts", json={"text": "The owner prefers the metric units."})  # a rewording, cosine 0.995
            assert r.status_code == 200 and r.json()["id"] == imported and r.json()["duplicate"]["match"] == "near"
            assert consistent(api)["vectors_in_memory"] == 1 and api.get("/stats").json()["consistent"]

        second = Service(db).start()
        with first.client() as api, second.client() as other:
            kept = api.post("/facts", json={"text": "Priya is the owner's sister."}).json()["id"]
            assert other.delete(f"/facts/{imported}").status_code == 200
            r = api.post("/recall", json={"query": "the owner's metric units and sister", "debug": True})
            assert r.status_code == 200, r.text
            body = r.json()
            assert {h["fact"]["id"] for h in body["results"] + body["kw"] + body["vec"]} == {kept}
            assert api.post("/explain", json={"query": "metric units", "id": kept}).status_code == 200
            assert api.post("/explain", json={"query": "metric units", "id": imported}).status_code == 404
            assert consistent(api)["facts"] == 1 and api.get("/stats").json()["consistent"]
    finally:
        if second:
            second.stop()
        first.stop()
