"""The pairs kept on write stay exactly the all-pairs answer at the floor, whatever happens."""

import random
import sqlite3

import numpy as np
import pytest

from memories.storage import snapshot
from memories.storage.pairs import top, unpack
from memories.facts import DEFAULT_FLOOR
from memories.store import Memory
from memories.storage.vectors import TYPES
from tests.fakes import HashEmbedder
from tests.memory_service import Service

WORDS = "tea jazz chess Lisbon Anna brother sister moved works loves hates boat".split()
MARGIN = 1e-5  # a pair this close to the floor may round either way


def text(rng: random.Random) -> str:
    return " ".join(rng.sample(WORDS, 4)) + f" note{rng.randint(0, 3)}"


def brute_force(db: str, floor: float) -> dict[tuple[int, int], float]:
    """All same-type pairs at or above the floor, from the vectors table (the source of truth)."""
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT f.id, f.type, v.embedding FROM facts f JOIN vectors v ON v.fact_id = f.id").fetchall()
    out = {}
    for t in TYPES:
        ids = [r[0] for r in rows if r[1] == t]
        if len(ids) < 2:
            continue
        m = np.array([np.frombuffer(r[2], "<f4") for r in rows if r[1] == t])
        s = m @ m.T
        for i, j in zip(*np.nonzero(np.triu(s, 1) >= floor - MARGIN)):
            out[min(ids[i], ids[j]), max(ids[i], ids[j])] = float(s[i, j])
    return out


def assert_exact(db: str, floor: float) -> int:
    kept = {}
    with sqlite3.connect(db) as conn:
        for b, type, best, ids, scores in conn.execute("SELECT fact_id, type, best, ids, scores FROM neighbours"):
            ids, scores = unpack(ids, scores)
            assert len(ids) and best == float(scores.max()) and (ids < b).all() and (np.diff(ids) > 0).all()
            types = dict(conn.execute(f"SELECT id, type FROM facts WHERE id IN ({b}, {','.join(map(str, ids.tolist()))})"))
            assert set(types.values()) == {type}, f"row {b} mixes types {types}"
            kept.update({(a, b): s for a, s in zip(ids.tolist(), scores.tolist())})
    want = brute_force(db, floor)
    for key, s in want.items():
        if s >= floor + MARGIN:
            assert key in kept, f"missing pair {key} at {s}"
    for key, s in kept.items():
        assert key in want, f"stale pair {key}"
        assert s == pytest.approx(want[key], abs=1e-5)
    return len(kept)


def test_pairs_stay_exact_through_adds_edits_deletes_undo_and_reindex(tmp_path):
    db = str(tmp_path / "m.db")
    m = Memory(db, HashEmbedder(16), floor=0.8, threshold=0.999)
    rng = random.Random(3)
    facts = m.add_many([{"text": text(rng), "type": rng.choice(TYPES)} for _ in range(120)])
    ids = [r.fact.id for r in facts if r.created]
    assert assert_exact(db, 0.8) > 50
    for fid in rng.sample(ids, 20):  # text edits
        try:
            m.edit(fid, text=text(rng))
        except Exception:
            pass  # a 409: it would duplicate another fact
    for fid in rng.sample(ids, 10):  # type edits
        try:
            m.edit(fid, type=rng.choice(TYPES))
        except Exception:
            pass
    assert_exact(db, 0.8)
    gone = [m.delete(fid) for fid in rng.sample(ids, 15)]
    assert_exact(db, 0.8)
    for fact in gone[:8]:  # undo: the same fact back under its id and times
        m.add(fact.text, fact.type, fact.source, id=fact.id, created_at=fact.created_at, updated_at=fact.updated_at)
    assert_exact(db, 0.8)
    m.reindex()
    assert_exact(db, 0.8)
    # Reads at or above the floor are the table; below it, computed: both agree with brute force.
    pairs, total = m.duplicates(threshold=0.9, limit=100_000)
    want = {k for k, s in brute_force(db, 0.9).items() if s >= 0.9}
    assert total == len(pairs) and {(p["a"]["id"], p["b"]["id"]) for p in pairs} == want
    low, low_total = m.duplicates(threshold=0.5, limit=100_000)
    assert low_total == len({k for k, s in brute_force(db, 0.5).items() if s >= 0.5})
    m.close()


def test_another_process_writes_keep_the_pairs_right(tmp_path):
    db = str(tmp_path / "m.db")
    rng = random.Random(5)
    one, two = Memory(db, HashEmbedder(16), floor=0.8), Memory(db, HashEmbedder(16), floor=0.8)
    one.add_many([{"text": text(rng)} for _ in range(40)])
    two.add_many([{"text": text(rng)} for _ in range(40)])  # two syncs its matrix first
    one.delete(one.list(limit=1)[0][0].id)
    two.add_many([{"text": text(rng)} for _ in range(10)])
    assert_exact(db, 0.8)
    assert one.stats()["consistent"] and two.stats()["consistent"]
    one.close(), two.close()


def test_a_memory_from_before_the_table_gets_its_pairs_when_opened(tmp_path):
    db = str(tmp_path / "m.db")
    rng = random.Random(9)
    m = Memory(db, HashEmbedder(16), floor=0.8)
    m.add_many([{"text": text(rng)} for _ in range(60)])
    m.db.execute("DELETE FROM neighbours")
    m.db.execute("DELETE FROM meta WHERE key = 'pairs_floor'")
    m.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM neighbours").fetchone()[0] == 0
    Memory(db, HashEmbedder(16), floor=0.8).close()
    assert assert_exact(db, 0.8) > 0
    Memory(db, HashEmbedder(16), floor=0.85).close()  # another floor: rebuilt at it
    assert_exact(db, 0.85)


def test_a_snapshot_opens_the_memory_and_is_patched_from_the_change_log(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "MIN_FACTS", 1)
    db = str(tmp_path / "m.db")
    rng = random.Random(11)
    m = Memory(db, HashEmbedder(16))
    m.add_many([{"text": text(rng), "type": rng.choice(TYPES)} for _ in range(50)])
    m.close()  # writes the snapshot
    other = Memory(db, HashEmbedder(16))  # opens from it
    assert other.state.saved_seq is not None
    other.add("A fact written after the snapshot, tea and jazz.")
    victim = other.list(limit=50)[0][-1]
    other.edit(victim.id, type="log" if victim.type != "log" else "fact")
    other.db.close()  # killed: no new snapshot
    loaded = []
    monkeypatch.setattr("memories.storage.state.VectorIndex.of", lambda *a: loaded.append(1))  # the table must not be read whole
    again = Memory(db, HashEmbedder(16))
    assert not loaded and again.stats()["consistent"]
    assert again.vectors.type_of(victim.id) != victim.type
    again.close()


def test_a_damaged_snapshot_falls_back_to_the_table(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "MIN_FACTS", 1)
    db = str(tmp_path / "m.db")
    m = Memory(db, HashEmbedder(16))
    m.add_many([{"text": f"fact number {i} about tea"} for i in range(30)])
    m.close()
    with open(db + ".vectors", "r+b") as f:
        f.truncate(200)
    again = Memory(db, HashEmbedder(16))
    assert len(again.vectors) == 30 and again.stats()["consistent"]
    again.close()


@pytest.mark.slow
def test_kill_9_mid_write_leaves_the_pairs_exact(tmp_path):
    db = tmp_path / "crash.db"
    service = Service(db, env={"MEMORY_EMBEDDER": "tests.fakes:hash_embedder"}).start()
    rng = random.Random(13)
    try:
        def write(api):
            op = rng.random()
            if op < 0.6:
                api.post("/facts/batch", json={"facts": [{"text": text(rng)} for _ in range(20)]})
            else:
                facts = api.get("/facts", params={"limit": 20}).json()["facts"]
                if facts:
                    fid = rng.choice(facts)["id"]
                    if op < 0.8:
                        api.patch(f"/facts/{fid}", json={"text": text(rng)})
                    else:
                        api.delete(f"/facts/{fid}")

        for _ in range(3):
            service.kill_mid_writes(write, after=rng.uniform(0.5, 1.5))
            assert assert_exact(str(db), DEFAULT_FLOOR) > 0  # the service runs at the default floor
            service.start()
    finally:
        service.stop()


def test_pairs_of_the_one_row_a_pair_table_move_over_when_opened(tmp_path):
    db = str(tmp_path / "m.db")
    rng = random.Random(5)
    m = Memory(db, HashEmbedder(16), floor=0.8)
    m.add_many([{"text": text(rng), "type": rng.choice(TYPES)} for _ in range(80)])
    want = assert_exact(db, 0.8)
    # Back to schema 2: the pairs one row each, as an older version kept them.
    s, a, b = m.pairs.read(0.8, list(TYPES))
    types = dict(m.db.execute("SELECT id, type FROM facts"))
    with m.db:
        m.db.execute("DROP TABLE neighbours")
        m.db.execute("CREATE TABLE pairs (a INTEGER, b INTEGER, type TEXT, score REAL, PRIMARY KEY (a, b)) WITHOUT ROWID")
        m.db.executemany("INSERT INTO pairs VALUES (?, ?, ?, ?)",
                         [(x, y, types[x], z) for x, y, z in zip(a.tolist(), b.tolist(), s.tolist())])
        m.db.execute("DELETE FROM schema_migrations WHERE version = 3")
    m.close()
    Memory(db, HashEmbedder(16), floor=0.8, threshold=0.999).close()
    assert assert_exact(db, 0.8) == want
    with sqlite3.connect(db) as conn:
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name LIKE 'pairs%'").fetchone()


@pytest.mark.parametrize("limit", [0, 1, 7, 50, 500])
def test_the_top_pairs_are_the_full_sorts_first_ones_ties_included(limit):
    rng = np.random.default_rng(limit)
    s = rng.choice(np.array([0.8, 0.85, 0.9, 0.97], np.float32), 300)  # many ties
    a, b = rng.integers(1, 40, 300), rng.integers(40, 80, 300)
    want = np.lexsort((b, a, -s))[:limit]
    assert top(s, a, b, limit).tolist() == want.tolist()


def test_nearest_and_pairs_hold_a_fact_restored_under_the_largest_id(tmp_path):
    m = Memory(str(tmp_path / "m.db"), HashEmbedder(16), floor=0.5, threshold=0.9999)
    small = m.add("tea jazz chess Lisbon").fact.id
    big = m.add("tea jazz chess boat", id=2**53 - 1).fact.id
    nearest = dict(m.nearest())
    assert set(nearest) == {small, big} and nearest[small] == nearest[big]
    assert [(p["a"]["id"], p["b"]["id"]) for p in m.duplicates(threshold=0.5)[0]] == [(small, big)]


def test_the_floor_belongs_to_the_file_not_to_each_process(tmp_path):
    """A service at 0.9 and an import at 0.8 on one file: the pairs are kept at one floor, the one
    the file was last rebuilt at, so a delete leaves no pair pointing at a deleted fact."""
    db = str(tmp_path / "m.db")
    rng = random.Random(21)
    service = Memory(db, HashEmbedder(16), floor=0.9)
    service.add_many([{"text": text(rng)} for _ in range(60)])
    importer = Memory(db, HashEmbedder(16), floor=0.8)  # rebuilds the pairs at its floor
    importer.add_many([{"text": text(rng)} for _ in range(20)])
    for fact in service.list(limit=30)[0]:  # the service deletes at the file's floor, not its own
        service.delete(fact.id)
    assert service.floor == importer.floor == 0.8
    assert_exact(db, 0.8)
    pairs, total = service.duplicates(0.8)  # no KeyError on a pair whose fact is gone
    assert total == len(pairs) and all(p["a"]["id"] != p["b"]["id"] for p in pairs)
    alive = {f.id for f in service.list(limit=100)[0]}
    assert {fid for fid, _ in service.nearest()} <= alive
    service.close(), importer.close()
