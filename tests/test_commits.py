"""What happens at the edges of a commit: one that fails, work after one that succeeded, two
processes creating one file, and a reindex that must not stop reads."""

import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from memories.storage.migrations import CommitFailed, migrate
from memories.store import Memory
from tests.fakes import HashEmbedder
from tests.memory_service import ROOT


class FailingCommit:
    """The memory's connection, whose next COMMIT fails as a full disk would make it."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn, self.armed = conn, True

    def __getattr__(self, name):
        return getattr(self.conn, name)

    def execute(self, sql, *args):
        if sql == "COMMIT" and self.armed:
            self.armed = False
            raise sqlite3.OperationalError("database or disk is full")
        return self.conn.execute(sql, *args)


def test_a_failed_commit_is_rolled_back_and_the_next_write_works(fake_memory, monkeypatch):
    kept = fake_memory.add("Kept before the disk filled.").fact.id
    monkeypatch.setattr(fake_memory.state, "db", FailingCommit(fake_memory.db))
    with pytest.raises(CommitFailed, match="disk is full.*nothing of it was stored") as failed:
        fake_memory.add("Lost to the full disk.")
    assert failed.value.status == 503
    assert not fake_memory.db.in_transaction
    assert len(fake_memory.vectors) == 1  # the matrix never took the vector of the fact not stored
    after = fake_memory.add("Written once there was room.").fact.id
    monkeypatch.undo()
    assert [f.id for f in fake_memory.list()[0]] == [after, kept]
    assert fake_memory.stats()["consistent"]


def test_a_failed_commit_of_a_delete_keeps_the_fact_searchable(fake_memory, monkeypatch):
    fid = fake_memory.add("Priya is the owner's sister.").fact.id
    monkeypatch.setattr(fake_memory.state, "db", FailingCommit(fake_memory.db))
    with pytest.raises(CommitFailed):
        fake_memory.delete(fid)
    monkeypatch.undo()
    assert fid in fake_memory.vectors and fake_memory.get(fid)
    assert fake_memory.recall("Priya sister", mode="vector")["results"][0]["fact"]["id"] == fid
    assert fake_memory.stats()["consistent"]


def test_a_failure_after_the_commit_leaves_the_written_facts_in_the_matrix(fake_memory, monkeypatch):
    def broken_load():
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(fake_memory.vocab, "load", broken_load)
    stored = fake_memory.add_many([{"text": "Tea at four."}, {"text": "Chess on Fridays."}])  # committed: it stands
    monkeypatch.undo()
    assert all(r.fact.id in fake_memory.vectors for r in stored)
    assert fake_memory.stats()["consistent"]
    chess = fake_memory.db.execute("SELECT id FROM words WHERE word = 'chess'").fetchone()[0]
    assert chess in fake_memory.vocab.ids()  # read again by the next read


def test_two_connections_creating_one_file_take_turns_at_the_migrations(tmp_path):
    path = tmp_path / "new.db"
    first, second = sqlite3.connect(path, isolation_level=None), sqlite3.connect(path, isolation_level=None)

    class Slow:
        """`first`, overtaken by `second` between creating the version table and its first migration."""

        def __getattr__(self, name):
            return getattr(first, name)

        def execute(self, sql, *args):
            if sql == "BEGIN IMMEDIATE" and not hasattr(self, "overtaken"):
                self.overtaken = migrate(second)
            return first.execute(sql, *args)

    assert migrate(Slow()) == migrate(first)
    assert first.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == len({*range(1, migrate(first) + 1)})


OPEN = """
import sys, time
from memories.store import Memory
from tests.fakes import HashEmbedder
while time.time() < float(sys.argv[2]):
    pass
Memory(sys.argv[1], HashEmbedder(16)).close()
"""


@pytest.mark.slow
def test_two_processes_opening_one_new_file_at_once_both_succeed(tmp_path):
    import time

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for n in range(5):
        start = time.time() + 1.0  # both past their imports, then off together
        procs = [subprocess.Popen([sys.executable, "-c", OPEN, str(tmp_path / f"{n}.db"), str(start)], cwd=ROOT, env=env,
                                  stderr=subprocess.PIPE) for _ in range(2)]
        errors = [p.communicate(timeout=60)[1].decode() for p in procs]
        assert all(p.returncode == 0 for p in procs), errors


class Held(HashEmbedder):
    """Embeds only once `go` is set: a reindex of a big memory, still in the model."""

    def __init__(self):
        super().__init__(16)
        self.go, self.waiting = threading.Event(), threading.Event()
        self.hold = False

    def embed(self, texts):
        if self.hold:
            self.waiting.set()
            assert self.go.wait(10)
        return super().embed(texts)


def test_reads_and_writes_go_on_while_reindex_is_in_the_model(tmp_path):
    embedder = Held()
    m = Memory(tmp_path / "m.db", embedder)
    m.add_many([{"text": f"Fact {i} about tea."} for i in range(20)])
    embedder.hold = True
    reindex = threading.Thread(target=m.reindex)
    reindex.start()
    assert embedder.waiting.wait(10)
    counted = []
    reader = threading.Thread(target=lambda: counted.append(m.count()))
    reader.start()
    reader.join(2)
    assert counted == [20], "a read waited for the reindex's model calls"
    embedder.hold = False
    added = m.add("Written while the reindex embeds.").fact.id  # embedded below, under the lock
    embedder.go.set()
    reindex.join(10)
    assert not reindex.is_alive() and added in m.vectors and m.stats()["consistent"]
    m.close()
