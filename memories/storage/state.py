"""What one process holds of a memory file, and how it stays in step with the file.

The state is the connection, the lock (one writer at a time, as in a Durable Object; reads take
it too, so none sees half a write), the vector index recall searches (vectors.py: int8 codes,
rescored from the `vectors` table in the same transaction), the vocabulary and the pairs.
`reading()` and `writing()` are the only ways in: each is one SQLite transaction with the index
in step with it.

Another process may write the same file (`python -m memories import --db`, a second `serve`).
Its rows, FTS entries and vectors are in the file, but not in this process's index. So every
read and every write starts by asking SQLite whether anyone else has committed since we last
looked (`PRAGMA data_version`, one cheap pragma) and, if so, re-reads the vectors of the facts
that the change log (`vector_changes`, kept by triggers) names since the index was last in
step. Reads run in one read transaction and writes check inside their BEGIN IMMEDIATE, so the
index and the rows they read are always the same snapshot. The check is about 10 microseconds.

Opening a big memory reads a snapshot of the index beside the file (snapshot.py), patched from
the same log; the table is read whole only without a usable snapshot.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, fields, replace
from pathlib import Path

import numpy as np

from ..writes import replace_at_once
from . import snapshot
from ..model.embeddings import Embedder
from ..facts import MemoryFull, StoreError, Unavailable, now
from .codes import encode
from .migrations import migrate, transaction
from ..model.models import numbers_for
from .pairs import Pairs
from ..recall.ranking import Fusion
from .term_lists import TermLists
from ..recall.text_vectors import TextVectors
from .vectors import TYPE_CODE, TYPES, VectorIndex
from .vocabulary import Vocabulary


log = logging.getLogger(__name__)

SAMPLED_ROWS = 256  # rows of the index /stats compares with the table
READ_CHUNK = 500  # fact ids a read of the vectors table names at once
MIB = 2**20
WAY_OUT = ("Delete facts, or move some to another memory by name (python -m memories export, then import into "
           "another memory's file or --url).")


def mib(n: float) -> str:
    return f"{n / MIB:.1f} MiB"


def to_blob(vector: np.ndarray) -> bytes:
    return vector.astype("<f4").tobytes()


def wal(db: sqlite3.Connection, tries: int = 100) -> None:
    """WAL mode. Switching a new file to it needs the file to itself, and SQLite answers "locked"
    at once rather than wait (no busy handler for it): two processes opening a new file together
    take turns here."""
    for attempt in range(tries):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or attempt == tries - 1:
                raise
            time.sleep(0.05)


class State:
    def __init__(self, path: str | Path, embedder: Embedder | None, fusion: Fusion, threshold: float | None,
                 floor: float | None, budget: int | None = None, expand: float | None = None):
        self.path = str(path)
        # Bytes the vectors and words in memory may take (MEMORY_BUDGET_BYTES; None: no limit).
        # Past it a write is a 507 `memory_full`, and a file whose vectors would pass it opens
        # without them (`full` says why): keyword recall, the facts, get, delete and export work.
        self.budget = budget
        self.full: str | None = None
        self.embedder = embedder
        # The model's numbers (models.py) unless this process was given its own (the environment).
        self.numbers = numbers_for(self.model)
        self.sources = {"duplicate": "model" if threshold is None else "environment",
                        "review_floor": "model" if floor is None else "environment",
                        "expand": "model" if expand is None and fusion.expand else "environment"}
        if fusion.expand:  # (a preset that turns expansion off keeps it off)
            fusion = replace(fusion, expand=self.numbers.expand if expand is None else expand)
        self.shipped = fusion  # this process's default; the memory's own settings win (`settings`)
        self.fusion = fusion
        self.threshold_setting = self.numbers.threshold if threshold is None else threshold
        self.own_threshold: float | None = None  # the memory's own (PUT /settings), which wins
        self.review: dict = {"mode": "after", "trusted": []}  # the memory's own (reviewing.py)
        self.proposals = replace_at_once.DEFAULT  # the memory's own (replace_at_once.py)
        self._stale: tuple | None = None  # (history's last id, review mode, until, the ids): `stale`
        floor = self.numbers.floor if floor is None else floor
        self.floor = floor  # the file's, once read (sync); `floor_setting` is this process's
        self.floor_setting = floor
        self.lock = threading.RLock()
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA busy_timeout=5000")
        wal(self.db)
        # NORMAL in WAL mode survives a killed process; only a power cut can lose the last commits.
        self.db.execute("PRAGMA synchronous=NORMAL")
        # What a delete frees is zeroed, not left for a later write to overwrite: a fact deleted and
        # forgotten leaves no byte of its text in the file (forgetting.py).
        self.db.execute("PRAGMA secure_delete=ON")
        migrate(self.db)
        self.dims = embedder.dims if embedder else 0
        self.pairs = Pairs(self.db)
        self.vectors = VectorIndex(self.dims, self.read_vectors)
        self.vocab = Vocabulary(self.db, self.model, self.dims, self.lock, self.path)
        self.text_vectors = TextVectors()  # the texts recall embeds, kept (text_vectors.py)
        self.term_lists = TermLists(self.db)  # the keyword list's own postings (term_lists.py)
        self.version: int | None = None  # PRAGMA data_version when the index was last in step
        self.seq: int | None = None  # the last vector_changes entry the index includes
        self.saved_seq: int | None = None  # ... and the snapshot on disk
        self.reread = 0  # rows read from the table by the last sync
        self.vocabulary_ready = threading.Event()  # set once the vocabulary holds every fact's words
        self.closing = False  # a background build stops at its next batch
        self.keyword_errors = 0  # FTS5 searches that failed since opening (recall went on by vector)
        self.in_write = False  # inside `writing()`: rows not committed yet, which the term lists must not take

    @property
    def committed_seq(self) -> int | None:
        """The change log's entry the file is at, outside a write (None inside one, or without
        the log kept: no model). What the term lists follow."""
        return None if self.in_write else self.seq

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

    @property
    def threshold(self) -> float:
        """The duplicate threshold writes use: the memory's own, else this process's."""
        return self.threshold_setting if self.own_threshold is None else self.own_threshold

    def settings(self) -> dict:
        """The memory's own settings as stored and recorded in the history: the recall settings
        (those stored in it, or the shipped default), `threshold` when it has its own, and
        `review` and `proposals` when they are not the default."""
        own = {} if self.own_threshold is None else {"threshold": self.own_threshold}
        review = {} if self.review == {"mode": "after", "trusted": []} else {"review": dict(self.review)}
        proposals = {} if self.proposals == replace_at_once.DEFAULT else {"proposals": self.proposals}
        return asdict(self.fusion) | own | review | proposals

    def stale(self) -> tuple[int, ...]:
        """The ids recall leaves out now (lifecycle.hidden: past their valid_until, and pending ones
        when the review is "before"), inside a read the caller holds. Kept between recalls while no
        write was recorded (the history's last id: every write records one, any process's) and no
        valid_until has passed since: the same tuple, so the index looks its rows up once."""
        from ..writes.lifecycle import hidden

        at = now()
        marker = (self.db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'history'").fetchone(), self.review["mode"])
        if self._stale and self._stale[:2] == marker and at < self._stale[2]:
            return self._stale[3]
        ids = tuple(r[0] for r in self.db.execute(*hidden(None, self.review["mode"] == "before")))
        until = self.db.execute("SELECT min(valid_until) FROM facts WHERE valid_until > ?", (at,)).fetchone()[0]
        self._stale = (*marker, until or "9999", ids)
        return ids

    def use_settings(self, stored: dict | None) -> None:
        """Recall and dedup with `stored` from now on (the fields this version knows; None: the shipped)."""
        known = {f.name for f in fields(Fusion)}
        stored = stored or {}
        self.fusion = replace(self.shipped, **{k: v for k, v in stored.items() if k in known}) if stored else self.shipped
        self.own_threshold = stored.get("threshold")
        self.review = {"mode": "after", "trusted": []} | (stored.get("review") or {})
        self.proposals = stored.get("proposals") or replace_at_once.DEFAULT

    def pairs_built(self, floor: float | None = None) -> bool:
        """The pairs are this model's at `floor` (the file's by default; a file from before
        `pairs_model` has had one model)."""
        return (self.meta("pairs_floor") == (floor or self.floor)
                and self.meta("pairs_model") in (None, self.model))

    def vocabulary_built(self) -> bool:
        return self.model is not None and self.meta("words_model") == self.model

    # -- transactions ------------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[None]:
        """The lock, one read snapshot of the file, and the index in step with it."""
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
    def writing(self) -> Iterator[list[Callable[[], None]]]:
        """The lock and BEGIN IMMEDIATE, then the index in step: no other writer can commit now,
        so dedup decides against everything in the file. The caller lists the changes to the
        index its write makes (`after`); they are applied once COMMIT has succeeded, and never
        if anything failed: the index never holds a vector the file does not, nor lacks one it does."""
        with self.lock:
            after: list[Callable[[], None]] = []
            with transaction(self.db):
                self.in_write = True
                try:
                    self.sync()
                    yield after
                    last = self.last_change()
                finally:
                    self.in_write = False
            for apply in after:
                apply()
            self.seq = last  # committed: the index is at it
            try:
                self.vocab.load()
            except Exception:  # the write stands; the next read loads the words again
                log.exception("could not read the vocabulary after a write to %s", self.path)
                self.version = None

    # -- other processes' writes and the snapshot --------------------------------------

    def last_change(self) -> int:
        return self.db.execute("SELECT max(seq) FROM vector_changes").fetchone()[0] or 0

    def sync(self) -> None:
        """Bring the index in step if another connection has committed since we last looked (call
        it inside a transaction, so the rows read next are the snapshot the index comes from).
        Only the facts the change log names are read again; the whole table only when the log
        no longer reaches back to our index (a snapshot pruned it) or on first open without a
        snapshot."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if version == self.version:
            return
        if self.embedder and (self.full or self.seq is None):
            self._check_budget()  # before anything is read: never more than the budget
        if self.embedder and self.full:
            self.seq = self.last_change()
        elif self.embedder:
            last = self.last_change()
            if self.seq is None:
                self.vocab.read_ahead(self.path, self.meta("memory_id"))  # beside the vectors' snapshot
                snap = snapshot.load(self.path, self.model, self.dims)
                if snap and self._log_reaches(snap.seq) and snap.origin == self.meta("memory_id"):
                    self.vectors = VectorIndex.of_blocks(self.dims, snap.ids, snap.types, snap.blocks, self.read_vectors)
                    self.seq = snap.seq
                    self.saved_seq = snap.seq
            if self.seq is None or not self._log_reaches(self.seq) or not self._patch(self.seq, last):
                # The old index's memory first; a read that fails leaves an empty one to read again.
                self.seq, self.vectors = None, VectorIndex(self.dims, self.read_vectors)
                rows = self.db.execute(
                    "SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id"
                    " WHERE v.model = ? AND v.dims = ?",
                    (self.model, self.dims),
                )
                self.vectors = VectorIndex.of(self.dims, rows, self.read_vectors)
                self.reread = len(self.vectors)
            self.seq = last
        self.vocab.open(self.path, self.meta("memory_id"))  # its snapshot, on first open
        self.vocab.load()
        # The floor belongs to the file: another process that opened it with another floor rebuilt
        # the pairs at its own (background.py), and every write from now on keeps them at that one.
        self.floor = self.meta("pairs_floor") or self.floor
        stored = self.meta("settings")  # as the floor: another process may have changed them
        self.use_settings(json.loads(stored) if stored else None)
        self.version = version

    def _check_budget(self) -> None:
        """`full` when the file's vectors and words of this model would pass the budget (counted
        from the tables); a memory that fits again (after deletes) reads them all anew."""
        if self.budget is None:
            return
        facts = dict(self.db.execute(
            "SELECT f.type, count(*) FROM vectors v JOIN facts f ON f.id = v.fact_id WHERE v.model = ? AND v.dims = ?"
            " GROUP BY f.type", (self.model, self.dims)).fetchall())
        words = self.db.execute("SELECT count(*) FROM words WHERE model IS ?", (self.model,)).fetchone()[0]
        need = self._need_anew(facts, words)
        if need > self.budget:
            self.full = (f"this memory's {sum(facts.values())} vectors and {words} words would take {mib(need)} of memory, "
                         f"past its budget of {mib(self.budget)}: it answers keyword recall, lists, gets, deletes and exports "
                         f"its facts, but stores none and finds none by meaning. {WAY_OUT}")
            self.vectors = VectorIndex(self.dims, self.read_vectors)
            self.vocab.empty()
            self.vocabulary_ready.set()
        elif self.full:
            self.full, self.seq = None, None  # read everything below
            self.vocab.reload()

    def _need_anew(self, facts: dict[str, int], words: int) -> int:
        """The most an empty index and vocabulary would hold with these facts (by type) and words."""
        vocab = Vocabulary(self.db, self.model, self.dims)
        return VectorIndex(self.dims).nbytes_with(facts) + vocab.nbytes_with(words)

    def memory_bytes(self) -> dict[str, int]:
        """The bytes the vectors and words in memory take (exact for the arrays, a bound for the maps)."""
        return {"vectors": self.vectors.nbytes(), "vocabulary": self.vocab.nbytes(), "text_vectors": self.text_vectors.nbytes(),
                "term_lists": self.term_lists.nbytes()}

    def ensure_room(self, more: dict[str, int], words: list[str]) -> None:
        """MemoryFull unless `more[type]` new facts and `words` new words fit in the budget."""
        if self.full:
            raise MemoryFull(self.full)
        if self.budget is None:
            return
        need = self.vectors.nbytes_with(more) + self.vocab.nbytes_with(len(words))
        # ...and the next open, which counts from the tables, must find that it fits too.
        after = {t: p.n + more.get(t, 0) for t, p in self.vectors.parts.items()}
        need = max(need, self._need_anew(after, len(self.vocab) + len(words)))
        if need > self.budget:
            n = sum(more.values())
            held = self.db.execute("SELECT count(*) FROM facts").fetchone()[0] - max(0, n - 1)  # not the batch's own
            raise MemoryFull(f"this memory holds {held} facts, and {'this fact' if n == 1 else f'these {n} facts'} would take "
                             f"its vectors and words past its memory budget of {mib(self.budget)}: nothing was stored. {WAY_OUT}")

    def ensure_room_anew(self, facts: dict[str, int], words: list[str]) -> None:
        """MemoryFull unless these facts and words would fit in place of what is held (a reindex)."""
        if self.budget is None:
            return
        need = self._need_anew(facts, len(words))
        if need > self.budget:
            raise MemoryFull(f"this memory's {sum(facts.values())} facts and {len(words)} words would take {mib(need)} of "
                             f"memory with {self.model}, past its budget of {mib(self.budget)}: nothing was reindexed. {WAY_OUT}")

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
        for i in range(0, len(changed), READ_CHUNK):
            part = changed[i : i + READ_CHUNK]
            rows = self.db.execute(
                "SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id"
                f" WHERE v.model = ? AND v.dims = ? AND v.fact_id IN ({','.join('?' * len(part))})",
                (self.model, self.dims, *part),
            ).fetchall()
            if rows:
                self.vectors.extend(np.array([r[0] for r in rows], dtype=np.int64),
                                    np.array([TYPE_CODE[r[1]] for r in rows], dtype=np.int8),
                                    *encode(np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), -1)))
        return True

    def read_vectors(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The exact vectors of these facts from the table, for the index to rescore its
        candidates (inside the caller's transaction: the rows its codes come from)."""
        found, blobs = [], []
        for i in range(0, len(ids), READ_CHUNK):
            part = ids[i : i + READ_CHUNK].tolist()
            for fid, blob in self.db.execute(
                f"SELECT fact_id, embedding FROM vectors WHERE model = ? AND dims = ? AND fact_id IN ({','.join('?' * len(part))})",
                (self.model, self.dims, *part),
            ):
                found.append(fid)
                blobs.append(blob)
        return np.array(found, dtype=np.int64), np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(found), self.dims)

    def save_snapshot(self) -> bool:
        """Write the index's codes beside the database so the next open reads it in one go, then prune
        the change log up to it. Skipped when nothing changed; a small memory has no snapshot
        (its table reads in well under a second) and its log is pruned all the same."""
        with self.lock:
            if not self.embedder or self.full:
                return False  # (a memory past its budget holds no index to save)
            # The words' codes first, in a file of their own (a forget changes them, not the vectors).
            words = self.vocab.save(self.path, self.meta("memory_id"), snapshot.MIN_FACTS)
            if self.seq is None or self.seq == self.saved_seq:
                return words
            if len(self.vectors) < snapshot.MIN_FACTS:
                self._prune_log(self.seq)  # a process whose index is older reads the table again
                self.saved_seq = self.seq
                return words
            parts = [self.vectors.parts[t] for t in TYPES]
            blocks = [b for p in parts for b in p.blocks()]
            seq = self.seq
            snapshot.save(self.path, self.model, seq, self.dims,
                          np.concatenate([p.fact_ids for p in parts]),
                          np.concatenate([np.full(p.n, TYPE_CODE[t], np.int8) for t, p in zip(TYPES, parts)]),
                          [b[2] for b in blocks], [b[1] for b in blocks], self.meta("memory_id"))
            self.saved_seq = seq
            self._prune_log(seq)
            return True

    def _prune_log(self, seq: int) -> None:
        """Drop the change log's entries before `seq` (it keeps `seq` itself: see `_log_reaches`)."""
        try:
            with transaction(self.db):
                self.db.execute("DELETE FROM vector_changes WHERE seq < ?", (seq,))
        except (sqlite3.OperationalError, StoreError):
            pass  # busy, or the commit failed: the log is pruned next time

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
                "keyword_errors": self.keyword_errors,
            }
            parts = self.memory_bytes()
            counts |= {"memory_bytes": sum(parts.values()), "memory_parts": parts, "memory_budget": self.budget,
                       "memory_full": self.full is not None}
            if self.full:
                counts["warning"] = self.full
            orphans = {name: [r[0] for r in self.db.execute(sql + " LIMIT 100")] for name, sql in q.items()}
            by_type = dict(self.db.execute("SELECT type, count(*) FROM facts GROUP BY type").fetchall())
            # The index recall searches must hold exactly the table's vectors (none of another model).
            table = {r[0] for r in self.db.execute("SELECT fact_id FROM vectors")}
            in_step = not self.embedder or self.full is not None or self.vectors.ids() == table
            orphans["vectors_out_of_step"] = self._rows_out_of_step(SAMPLED_ROWS)
        counts["by_type"] = {t: by_type.get(t, 0) for t in TYPES}
        counts["orphans"] = orphans
        counts["consistent"] = (in_step and not any(orphans.values())
                                and counts["facts"] == counts["fts"] == counts["vectors"])
        return counts

    def _rows_out_of_step(self, sample: int) -> list[int]:
        """Of `sample` facts drawn at random, those whose code in the index is not their vector's in
        the table (as a snapshot that paired vectors with the wrong facts would leave): a
        sample, so /stats stays cheap at any size."""
        if not self.embedder:
            return []
        held = np.concatenate([p.fact_ids for p in self.vectors.parts.values()])
        drawn = np.random.default_rng().choice(held, min(sample, len(held)), replace=False).tolist()
        rows = self.db.execute(
            f"SELECT fact_id, embedding FROM vectors WHERE model = ? AND dims = ? AND fact_id IN ({','.join('?' * len(drawn))})",
            (self.model, self.dims, *drawn)).fetchall()
        out = []
        for fid, blob in rows:
            if not self.vectors.holds(fid, np.frombuffer(blob, dtype="<f4")):
                out.append(fid)
        return sorted(out)

    def integrity(self) -> str:
        with self.lock:
            return self.db.execute("PRAGMA integrity_check").fetchone()[0]
