"""What one process holds of a memory file, and how it stays in step with the file.

The state is the connection, the lock (one writer at a time, as in a Durable Object; reads take
it too, so none sees half a write), the vector matrix recall searches, the vocabulary and the
pairs. `reading()` and `writing()` are the only ways in: each is one SQLite transaction with the
matrix in step with it.

Another process may write the same file (`python -m memories import --db`, a second `serve`).
Its rows, FTS entries and vectors are in the file, but not in this process's vector matrix. So
every read and every write starts by asking SQLite whether anyone else has committed since we
last looked (`PRAGMA data_version`, one cheap pragma) and, if so, re-reads the vectors of the
facts that the change log (`vector_changes`, kept by triggers) names since the matrix was last
in step. Reads run in one read transaction and writes check inside their BEGIN IMMEDIATE, so the
matrix and the rows they read are always the same snapshot. The check is about 10 microseconds.

Opening a big memory reads a snapshot of the matrix beside the file (snapshot.py), patched from
the same log; the table is read whole only without a usable snapshot.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from . import snapshot
from .embeddings import Embedder
from .facts import Unavailable
from .migrations import migrate, transaction
from .pairs import Pairs
from .recall import Fusion
from .vectors import TYPE_CODE, TYPES, VectorIndex
from .vocabulary import Vocabulary


def to_blob(vector: np.ndarray) -> bytes:
    return vector.astype("<f4").tobytes()


class State:
    def __init__(self, path: str | Path, embedder: Embedder | None, fusion: Fusion, threshold: float, floor: float):
        self.path = str(path)
        self.embedder = embedder
        self.fusion = fusion
        self.threshold = threshold
        self.floor = floor
        self.lock = threading.RLock()
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a killed process; only a power cut can lose the last commits.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA busy_timeout=5000")
        migrate(self.db)
        self.dims = embedder.dims if embedder else 0
        self.pairs = Pairs(self.db)
        self.vectors = VectorIndex(self.dims)
        self.vocab = Vocabulary(self.db, self.model, self.dims)
        self.version: int | None = None  # PRAGMA data_version when the matrix was last in step
        self.seq: int | None = None  # the last vector_changes entry the matrix includes
        self.saved_seq: int | None = None  # ... and the snapshot on disk
        self.reread = 0  # rows read from the table by the last sync
        self.vocabulary_ready = threading.Event()  # set once the vocabulary holds every fact's words
        self.closing = False  # a background build stops at its next batch

    @property
    def model(self) -> str | None:
        return self.embedder.model_id if self.embedder else None

    def embed(self, texts: list[str]) -> np.ndarray:
        if not self.embedder:
            raise Unavailable("the embedding model is not loaded, so facts cannot be stored; recall is keyword-only")
        try:
            return self.embedder.embed(texts)
        except Exception as e:
            raise Unavailable(f"the embedding model failed: {e}") from e

    def meta(self, key: str):
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def pairs_built(self) -> bool:
        return self.meta("pairs_floor") == self.floor

    def vocabulary_built(self) -> bool:
        return self.model is not None and self.meta("words_model") == self.model

    # -- transactions ------------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[None]:
        """The lock, one read snapshot of the file, and the matrix in step with it."""
        with self.lock:
            if self.db.in_transaction:  # inside another read or a write, which has synced
                yield
                return
            self.db.execute("BEGIN")
            try:
                self.sync()
                yield
            finally:
                if self.db.in_transaction:  # (an I/O error may have ended it)
                    self.db.execute("COMMIT")  # a read: nothing to keep or undo

    @contextmanager
    def writing(self) -> Iterator[None]:
        """The lock and BEGIN IMMEDIATE, then the matrix in step: no other writer can commit now,
        so dedup decides against everything in the file."""
        with self.lock:
            with transaction(self.db):
                self.sync()
                yield
                last = self.last_change()
            self.seq = last  # committed: the matrix, changed by the caller under this lock, is at it
            self.vocab.load()

    # -- other processes' writes and the snapshot --------------------------------------

    def last_change(self) -> int:
        return self.db.execute("SELECT max(seq) FROM vector_changes").fetchone()[0] or 0

    def sync(self) -> None:
        """Bring the matrix in step if another connection has committed since we last looked (call
        it inside a transaction, so the rows read next are the snapshot the matrix comes from).
        Only the facts the change log names are read again; the whole table only when the log
        no longer reaches back to our matrix (a snapshot pruned it) or on first open without a
        snapshot."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if version == self.version:
            return
        if self.embedder:
            last = self.last_change()
            if self.seq is None:
                snap = snapshot.load(self.path, self.model, self.dims)
                if snap and self._log_reaches(snap.seq):
                    self.vectors = VectorIndex.from_arrays(self.dims, snap.ids, snap.types, snap.matrix)
                    self.seq = self.saved_seq = snap.seq
            if self.seq is None or not self._log_reaches(self.seq) or not self._patch(self.seq, last):
                rows = self.db.execute(
                    "SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id"
                    " WHERE v.model = ? AND v.dims = ?",
                    (self.model, self.dims),
                ).fetchall()
                self.vectors = VectorIndex.of(self.dims, rows)
                self.reread = len(rows)
            self.seq = last
        self.vocab.load()
        self.version = version

    def _log_reaches(self, seq: int) -> bool:
        """The change log still holds every entry after `seq` (pruning keeps `seq` itself)."""
        first = self.db.execute("SELECT min(seq) FROM vector_changes").fetchone()[0]
        return first is not None and first <= seq <= self.last_change()

    def _patch(self, since: int, last: int) -> bool:
        """Read again the facts changed after `since`; False when so many changed that the whole
        table is the quicker read."""
        if last == since:
            return True
        changed = [r[0] for r in self.db.execute(
            "SELECT DISTINCT fact_id FROM vector_changes WHERE seq > ?", (since,))]
        if len(changed) > max(1000, len(self.vectors) // 4):
            return False
        self.reread = len(changed)
        for fid in changed:
            self.vectors.remove(fid)
        for i in range(0, len(changed), 500):
            part = changed[i : i + 500]
            rows = self.db.execute(
                "SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id"
                f" WHERE v.model = ? AND v.dims = ? AND v.fact_id IN ({','.join('?' * len(part))})",
                (self.model, self.dims, *part),
            )
            for fid, type, blob in rows:
                self.vectors.put(fid, type, np.frombuffer(blob, dtype="<f4"))
        return True

    def save_snapshot(self) -> bool:
        """Write the matrix beside the database so the next open reads it in one go, then prune
        the change log up to it. Skipped for small memories and when nothing changed."""
        with self.lock:
            if not self.embedder or self.seq is None or self.seq == self.saved_seq or len(self.vectors) < snapshot.MIN_FACTS:
                return False
            parts = [self.vectors.parts[t] for t in TYPES]
            seq = self.seq
            snapshot.save(self.path, self.model, seq,
                          np.concatenate([p.fact_ids for p in parts]),
                          np.concatenate([np.full(p.n, TYPE_CODE[t], np.int8) for t, p in zip(TYPES, parts)]),
                          np.concatenate([p.m for p in parts]))
            self.saved_seq = seq
            try:
                with transaction(self.db):
                    self.db.execute("DELETE FROM vector_changes WHERE seq < ?", (seq,))
            except sqlite3.OperationalError:
                pass  # busy: the log is pruned next time
            return True

    # -- consistency -------------------------------------------------------------------

    def stats(self) -> dict:
        """Counts of rows, FTS entries and vectors, and every id that does not line up."""
        q = {
            "fts_without_fact": "SELECT rowid FROM facts_fts WHERE rowid NOT IN (SELECT id FROM facts)",
            "vectors_without_fact": "SELECT fact_id FROM vectors WHERE fact_id NOT IN (SELECT id FROM facts)",
            "facts_without_fts": "SELECT id FROM facts WHERE id NOT IN (SELECT rowid FROM facts_fts)",
            "facts_without_vector": "SELECT id FROM facts WHERE id NOT IN (SELECT fact_id FROM vectors)",
        }
        with self.reading():
            counts = {
                "facts": self.db.execute("SELECT count(*) FROM facts").fetchone()[0],
                "fts": self.db.execute("SELECT count(*) FROM facts_fts").fetchone()[0],
                "vectors": self.db.execute("SELECT count(*) FROM vectors").fetchone()[0],
                "stale_vectors": self.db.execute(
                    "SELECT count(*) FROM vectors WHERE model IS NOT ?", (self.model,)
                ).fetchone()[0] if self.model else 0,
                "vectors_in_memory": len(self.vectors),
            }
            orphans = {name: [r[0] for r in self.db.execute(sql + " LIMIT 100")] for name, sql in q.items()}
            by_type = dict(self.db.execute("SELECT type, count(*) FROM facts GROUP BY type").fetchall())
            # The matrix recall searches must hold exactly the table's vectors (none of another model).
            table = {r[0] for r in self.db.execute("SELECT fact_id FROM vectors")}
            in_step = not self.embedder or self.vectors.ids() == table
        counts["by_type"] = {t: by_type.get(t, 0) for t in TYPES}
        counts["orphans"] = orphans
        counts["consistent"] = (in_step and not any(orphans.values())
                                and counts["facts"] == counts["fts"] == counts["vectors"])
        return counts

    def integrity(self) -> str:
        with self.lock:
            return self.db.execute("PRAGMA integrity_check").fetchone()[0]
