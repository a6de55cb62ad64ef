"""kill -9 at random points of edits and deletes; after each restart the store is whole."""

import random
import sqlite3

import pytest

from tests.memory_service import Service

CRASH_POINTS = 4  # per operation; a run kills the service this many times mid-stream


def integrity(db) -> str:
    with sqlite3.connect(db) as conn:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]


def check_whole(api) -> dict:
    stats = api.get("/stats").json()
    assert not any(stats["orphans"].values()), stats
    assert stats["facts"] == stats["fts"] == stats["vectors"] == stats["vectors_in_memory"], stats
    return stats


@pytest.mark.slow
@pytest.mark.parametrize("operation", ["edit", "delete"])
def test_kill_9_mid_edit_or_delete_leaves_a_whole_store(tmp_path, operation):
    service = Service(tmp_path / "crash.db").start()
    with service.client() as api:
        ids = [api.post("/facts", json={"text": f"Seed fact {i}: shelf {i * 7} holds box {i * 13}."}).json()["id"]
               for i in range(400)]
    try:
        rng = random.Random(operation)
        for point in range(CRASH_POINTS):
            done: list[tuple[int, str | None]] = []  # acknowledged writes, in order
            sent: dict[int, list[str]] = {}  # every edit sent, acknowledged or cut off by the kill

            def write(api):
                if not ids:
                    return False
                fid = rng.choice(ids)
                if operation == "edit":
                    text = f"Edited {fid} at crash point {point}: shelf {rng.randint(0, 10**6)}."
                    sent.setdefault(fid, []).append(text)
                    if api.patch(f"/facts/{fid}", json={"text": text}).status_code == 200:
                        done.append((fid, text))
                elif api.delete(f"/facts/{fid}").status_code == 200:
                    ids.remove(fid)
                    done.append((fid, None))

            service.kill_mid_writes(write, after=rng.uniform(0.3, 1.5))
            assert integrity(tmp_path / "crash.db") == "ok"
            service.start()
            with service.client() as api:
                check_whole(api)
                last = dict(done)  # each fact's last acknowledged write
                for fid, text in list(last.items())[-20:]:  # acknowledged writes survived
                    r = api.get(f"/facts/{fid}")
                    if text is None:
                        assert r.status_code == 404
                    else:
                        # That text, or one sent after it whose answer the kill cut off (it may
                        # have committed): never an older one.
                        later = sent[fid][sent[fid].index(text):]
                        assert r.json()["text"] in later
    finally:
        service.stop()


def test_reindex_heals_vectors_after_the_model_changes(tmp_path):
    """Facts embedded by one model; the service restarts with another: recall is keyword-only
    for them until /reindex re-embeds every fact with the new model."""
    old = Service(tmp_path / "m.db", env={"MEMORY_EMBEDDER": "tests.fakes:hash_embedder"}).start()
    with old.client() as api:
        fid = api.post("/facts", json={"text": "Priya is the owner's sister."}).json()["id"]
    old.stop()

    new = Service(tmp_path / "m.db").start()
    try:
        with new.client() as api:
            stats = api.get("/stats").json()
            assert stats["stale_vectors"] == 1 and stats["vectors_in_memory"] == 0
            body = api.post("/recall", json={"query": "Who is my sister?", "debug": True}).json()
            assert body["vec"] == []
            assert api.post("/reindex").json()["vectors"] == 1
            stats = check_whole(api)
            assert stats["stale_vectors"] == 0
            body = api.post("/recall", json={"query": "Who is my sister?", "debug": True}).json()
            assert body["vec"][0]["fact"]["id"] == fid
    finally:
        new.stop()


def test_reindex_without_a_model_fails_clearly_and_changes_nothing(tmp_path):
    seeded = Service(tmp_path / "m.db").start()
    with seeded.client() as api:
        api.post("/facts", json={"text": "Priya is the owner's sister."})
    seeded.stop()
    broken = Service(tmp_path / "m.db", env={"MEMORY_EMBEDDER": "no.such:Model"}).start()
    try:
        with broken.client() as api:
            r = api.post("/reindex")
            assert r.status_code == 503 and r.json()["error"]["code"] == "model_unavailable"
            stats = api.get("/stats").json()
            assert stats["vectors"] == 1 and stats["fts"] == 1
    finally:
        broken.stop()


@pytest.mark.slow
def test_the_history_and_the_recall_log_survive_kill_9_and_a_delete_is_undone_after_it(tmp_path):
    service = Service(tmp_path / "crash.db", env={"MEMORY_EMBEDDER": "tests.fakes:hash_embedder"}).start()
    with service.client() as api:
        ids = [api.post("/facts", json={"text": f"Box {i} holds {i * 7} jars of jam."}).json()["id"] for i in range(200)]
    deleted: list[int] = []  # acknowledged deletes
    recalled: list[str] = []  # acknowledged, logged recalls
    rng = random.Random(7)

    def write(api):
        if rng.random() < 0.5:
            if not ids:
                return False
            fid = ids.pop(rng.randrange(len(ids)))
            if api.delete(f"/facts/{fid}", headers={"X-Memory-Client": "agent"}).status_code == 200:
                deleted.append(fid)
        else:
            query = f"jam jars {rng.randint(0, 10**6)}"
            if api.post("/recall", json={"query": query, "mode": "keyword"}, headers={"X-Memory-Client": "agent"}).status_code == 200:
                recalled.append(query)

    try:
        service.kill_mid_writes(write, after=1.0)
        assert integrity(tmp_path / "crash.db") == "ok" and deleted and recalled
        service.start()
        with service.client() as api:
            check_whole(api)
            for fid in deleted:
                [entry] = [e for e in api.get("/history", params={"fact_id": fid}).json()["entries"] if e["op"] == "delete"]
                assert entry["client"] == "agent" and entry["before"]["id"] == fid
            logged = {r["query"] for r in api.get("/recalls", params={"limit": 100}).json()["recalls"]}
            assert set(recalled[-20:]) <= logged  # a recall answered was logged before it answered
            undo = api.post(f"/history/{entry['id']}/undo")
            assert undo.status_code == 200 and undo.json()["fact"]["id"] == deleted[-1]
            assert api.get(f"/facts/{deleted[-1]}").status_code == 200
            check_whole(api)
    finally:
        service.stop()
