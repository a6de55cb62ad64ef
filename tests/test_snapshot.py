"""The snapshot beside the database never pairs a vector with the wrong fact."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest

from memories.storage import snapshot
from memories.store import Memory
from tests.fakes import HashEmbedder
from tests.memory_service import ROOT

DIMS = 16


def rows_out_of_step(memory: Memory) -> list[int]:
    """Every fact whose code in memory is not its row's in the vectors table (not a sample)."""
    table = dict(memory.db.execute("SELECT fact_id, embedding FROM vectors"))
    assert memory.vectors.ids() == set(table)
    return [fid for fid, blob in table.items() if not memory.vectors.holds(fid, np.frombuffer(blob, "<f4"))]


def seed(db: str, n: int = 60) -> Memory:
    m = Memory(db, HashEmbedder(DIMS))
    m.add_many([{"text": f"Fact {i} about shelf {i * 7}, box {i * 13} and tea.", "type": ("fact", "skill", "log")[i % 3]}
                for i in range(n)])
    return m


def test_a_matrix_whose_rows_were_swapped_is_not_loaded(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "MIN_FACTS", 1)
    db = str(tmp_path / "m.db")
    seed(db).close()
    path = snapshot.path_of(db)
    data = bytearray(path.read_bytes())
    row = DIMS  # int8 codes, the file's last part
    first, second = len(data) - 2 * row, len(data) - row  # the last two rows' codes: same ids, swapped codes
    data[first:second], data[second:] = data[second:], data[first:second]
    path.write_bytes(bytes(data))
    assert snapshot.load(db, HashEmbedder.model_id, DIMS) is None
    again = Memory(db, HashEmbedder(DIMS))
    assert rows_out_of_step(again) == [] and again.stats()["consistent"]
    again.close()


def test_stats_catches_a_matrix_row_that_disagrees_with_its_table_row(tmp_path):
    m = seed(str(tmp_path / "m.db"), n=20)
    a, b = sorted(m.vectors.ids())[:2]
    va, vb = m.vectors.vector(a).copy(), m.vectors.vector(b).copy()
    m.vectors.put(a, m.vectors.type_of(a), vb)  # as a snapshot that paired them the wrong way round would
    m.vectors.put(b, m.vectors.type_of(b), va)
    stats = m.stats()
    assert not stats["consistent"] and {a, b} <= set(stats["orphans"]["vectors_out_of_step"])
    m.close()


SAVER = """
import random, sys, time
from memories.storage import snapshot
from memories.store import Memory
from tests.fakes import HashEmbedder
snapshot.MIN_FACTS = 1
m = Memory(sys.argv[1], HashEmbedder(16))
rng = random.Random(sys.argv[2])
ids = sorted(m.vectors.ids())
end = time.monotonic() + float(sys.argv[3])
while time.monotonic() < end:
    fid = rng.choice(ids)
    m.edit(fid, type=rng.choice(["fact", "skill", "log"]))  # moves its row: another order, same count
    m.save_snapshot()
m.db.close()  # no save at close: the loop's last save stands
"""


@pytest.mark.slow
def test_two_processes_saving_in_a_loop_never_pair_ids_with_the_other_matrix(tmp_path, monkeypatch):
    monkeypatch.setattr(snapshot, "MIN_FACTS", 1)
    db = str(tmp_path / "m.db")
    seed(db).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    savers = [subprocess.Popen([sys.executable, "-c", SAVER, db, str(seed_), "4"], cwd=ROOT, env=env)
              for seed_ in (1, 2)]
    opened = 0
    try:
        while any(p.poll() is None for p in savers):
            reader = Memory(db, HashEmbedder(DIMS))  # opens from whichever snapshot is in place
            assert rows_out_of_step(reader) == []
            reader.db.close()
            opened += 1
            time.sleep(0.02)
    finally:
        for p in savers:
            p.wait(timeout=60)
    assert all(p.returncode == 0 for p in savers) and opened > 5
    last = Memory(db, HashEmbedder(DIMS))
    assert rows_out_of_step(last) == [] and last.stats()["consistent"]
    loaded = snapshot.load(db, HashEmbedder.model_id, DIMS)
    assert loaded is not None and np.array_equal(np.sort(loaded.ids), np.array(sorted(last.vectors.ids())))
    last.close()


def test_a_snapshot_is_not_loaded_by_another_database_at_its_path(tmp_path, monkeypatch):
    # The backup that left DB.vectors out, the other way round: memory.db removed alone, a new
    # memory written at its path. Its change log reaches as far as the old snapshot's, so only
    # the database's identity tells them apart.
    monkeypatch.setattr(snapshot, "MIN_FACTS", 1)
    db = str(tmp_path / "memory.db")
    seed(db, n=60).close()
    assert snapshot.path_of(db).exists()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    other = Memory(db, HashEmbedder(DIMS))
    other.add_many([{"text": f"Another memory's note {i}: the kettle is in cupboard {i * 3}."} for i in range(70)])
    other.db.close()  # no save at close: the old snapshot stays in place
    again = Memory(db, HashEmbedder(DIMS))
    assert rows_out_of_step(again) == [] and again.stats()["consistent"]  # every row, not a sample
    again.close()
    assert snapshot.load(db, HashEmbedder.model_id, DIMS).origin == identity_of(db)


def identity_of(db: str) -> str:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT value FROM meta WHERE key = 'memory_id'").fetchone()[0]


def test_every_database_has_its_own_identity_written_once(tmp_path):
    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    Memory(a, HashEmbedder(DIMS)).close()
    Memory(b, HashEmbedder(DIMS)).close()
    first = identity_of(a)
    Memory(a, HashEmbedder(DIMS)).close()
    assert identity_of(a) == first != identity_of(b) and len(first) == 32
