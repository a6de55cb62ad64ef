"""A mixed, bounded load of concurrent adds, edits, deletes and recalls on loopback."""

import random
import threading

import httpx

from tests.memory_service import Service

WRITERS = 6
ROUNDS = 40


def test_mixed_concurrent_load_loses_no_update_and_leaves_no_orphan(tmp_path):
    service = Service(tmp_path / "race.db").start()
    final: dict[int, str | None] = {}  # what each writer last did to each of its facts: text, or None if deleted
    errors: list[str] = []
    lock = threading.Lock()

    def writer(n: int) -> None:
        rng = random.Random(n)
        mine: list[int] = []
        with service.client() as api:
            for i in range(ROUNDS):
                action = rng.choice(["add", "add", "edit", "delete", "recall"]) if mine else "add"
                try:
                    if action == "add":
                        text = f"Writer {n} fact {i}: parcel {rng.randint(0, 10**9)} is at depot {n * 100 + i}."
                        r = api.post("/facts", json={"text": text})
                        assert r.status_code in (200, 201), r.text
                        if r.status_code == 201:  # 200: another writer's fact was that close (dedup)
                            mine.append(r.json()["id"])
                            with lock:
                                final[r.json()["id"]] = text
                    elif action == "edit":
                        fid = rng.choice(mine)
                        text = f"Writer {n} edited {fid} in round {i}: crate {rng.randint(0, 10**9)} in bay {i}."
                        r = api.patch(f"/facts/{fid}", json={"text": text})
                        assert r.status_code in (200, 409), r.text
                        if r.status_code == 200:  # 409: it would have duplicated another fact; unchanged
                            with lock:
                                final[fid] = text
                    elif action == "delete":
                        fid = mine.pop(rng.randrange(len(mine)))
                        assert api.delete(f"/facts/{fid}").status_code == 200
                        with lock:
                            final[fid] = None
                    else:
                        assert api.post("/recall", json={"query": f"writer {n} parcel depot"}).status_code == 200
                except (AssertionError, httpx.HTTPError) as e:
                    errors.append(f"writer {n} round {i} {action}: {e}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    try:
        assert not errors, errors[:5]
        with service.client() as api:
            stats = api.get("/stats").json()
            alive = {fid: text for fid, text in final.items() if text is not None}
            assert stats["facts"] == stats["fts"] == stats["vectors"] == stats["vectors_in_memory"] == len(alive)
            assert not any(stats["orphans"].values())
            for fid, text in final.items():
                r = api.get(f"/facts/{fid}")
                if text is None:
                    assert r.status_code == 404
                else:
                    assert r.json()["text"] == text, "an acknowledged edit was lost"
            # Every surviving fact is findable by its own words through both lists.
            for fid, text in list(alive.items())[:10]:
                body = api.post("/recall", json={"query": text, "debug": True}).json()
                assert body["kw"][0]["fact"]["id"] == fid and body["vec"][0]["fact"]["id"] == fid
    finally:
        service.stop()
