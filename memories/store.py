"""The memory engine: facts in SQLite, an FTS5 index and vectors kept in step with them.

Every write changes the row, its FTS entry and its vector in one transaction, under one lock
(one writer at a time, as in a Durable Object). Reads take the same lock, so none sees half a
write. Embedding, the slow part, happens before the lock is taken.

Another process may write the same file (`python -m memories import --db`, a second `serve`).
Its rows, FTS entries and vectors are in the file, but not in this process's vector matrix. So
every read and every write starts by asking SQLite whether anyone else has committed since we
last looked (`PRAGMA data_version`, one cheap pragma) and, if so, re-reads the vectors of the
facts that the change log (`vector_changes`, kept by triggers) names since the matrix was last
in step. Reads run in one read transaction and writes check inside their BEGIN IMMEDIATE, so the
matrix and the rows they read are always the same snapshot. The check is about 10 microseconds.

Opening a big memory reads a snapshot of the matrix beside the file (snapshot.py), patched from
the same log; the table is read whole only without a usable snapshot.

Near-duplicate pairs at or above the review floor live in SQLite (pairs.py, one row per fact),
written in the same transaction as the fact, so they stay right whichever process writes.
"""

from __future__ import annotations

import base64
import logging
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from . import snapshot
from .embeddings import Embedder, ModelUnavailable
from .migrations import migrate, transaction
from .pairs import MARGIN, Pairs, top
from .dedup import distinct
from .recall import (DEFAULT, Fused, Fusion, expand, expansion_kept, fuse, idf, information, quote, rerank, rerank_plan,
                     terms, via)
from .vectors import TYPE_CODE, TYPES, VectorIndex
from .vocabulary import Vocabulary, words_of

log = logging.getLogger(__name__)

MAX_TEXT = 8000
MAX_SOURCE = 200
MAX_QUERY = 32_000
MAX_FILTER = MAX_TEXT  # a longer substring can match no fact
DEFAULT_THRESHOLD = 0.97
# Pairs at or above this cosine are kept on write (pairs.py): /duplicates at or above
# it is a table read; below it, all pairs are computed.
DEFAULT_FLOOR = 0.80
NEAR_CANDIDATES = 10  # same-type neighbours over the threshold that dedup looks at
MODES = ("hybrid", "keyword", "vector")  # hybrid fuses both lists; the others answer from one


class StoreError(Exception):
    """Root of the engine's errors; `code` and `status` are what the HTTP contract says."""

    code, status = "error", 500


class InvalidInput(StoreError):
    code, status = "invalid", 422


class TooLarge(StoreError):
    code, status = "too_large", 413


class NotFound(StoreError):
    code, status = "not_found", 404


class Conflict(StoreError):
    code, status = "duplicate", 409

    def __init__(self, message: str, existing: Fact, match: str, score: float):
        super().__init__(message)
        self.existing, self.match, self.score = existing, match, score


class IdTaken(StoreError):
    code, status = "id_taken", 409


class Unavailable(StoreError):
    code, status = "model_unavailable", 503


@dataclass(frozen=True)
class Fact:
    id: int
    text: str
    type: str
    source: str
    created_at: str
    updated_at: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AddResult:
    fact: Fact
    created: bool
    match: str | None = None  # "exact" or "near" when not created
    score: float | None = None


FACT_COLUMNS = "id, text, type, source, created_at, updated_at"


def stamp(when: datetime) -> str:
    """UTC, microseconds, Z: one fixed width, so the text sorts as the time does (years < 1000 too)."""
    return when.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def now() -> str:
    return stamp(datetime.now(UTC))


def text_key(text: str) -> str:
    """What exact dedup compares: the text without surrounding white space, case-folded."""
    return text.strip().casefold()


def valid_unicode(value: str, name: str) -> str:
    """JSON's \\ud800 escape gives Python a lone surrogate, which SQLite, the model and UTF-8 refuse."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{name} contains a lone surrogate: it is not valid Unicode") from None
    return value


def clean_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInput("text must be a string")
    text = valid_unicode(text, "text").strip()
    if not text:
        raise InvalidInput("text is empty")
    if len(text) > MAX_TEXT:
        raise TooLarge(f"text is {len(text)} characters; the limit is {MAX_TEXT}")
    return text


def clean_type(type: object) -> str:
    if type not in TYPES:
        raise InvalidInput(f"type must be one of {', '.join(TYPES)}")
    return type  # type: ignore[return-value]


def clean_source(source: object) -> str:
    if not isinstance(source, str):
        raise InvalidInput("source must be a string")
    if len(source) > MAX_SOURCE:
        raise TooLarge(f"source is longer than {MAX_SOURCE} characters")
    return valid_unicode(source, "source").strip()


def clean_time(value: object, name: str) -> str | None:
    """An ISO-8601 time as this store writes it (UTC, microseconds, Z), or None."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        if when.tzinfo is None:
            raise InvalidInput(f"{name} needs a time zone (end it in Z for UTC)")
        return stamp(when)
    except (ValueError, OverflowError):
        raise InvalidInput(f"{name} is not an ISO-8601 time") from None


def clean_id(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and value < 2**53:  # JSON's 5.0, as the Worker reads it
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**63:
        raise InvalidInput("id must be a positive whole number")
    return value


def encode_cursor(fact: Fact) -> str:
    return base64.urlsafe_b64encode(f"{fact.created_at}|{fact.id}".encode()).decode()


def decode_cursor(cursor: str) -> tuple[str, int]:
    try:
        created_at, _, fid = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        if 1 <= int(fid) < 2**63:  # a fact id; a bigger one would overflow SQLite's integers
            return created_at, int(fid)
    except Exception:
        pass
    raise InvalidInput("cursor is not one this service gave out")


def _clean_items(items: list[dict]) -> list[tuple]:
    return [
        (clean_text(i.get("text")), clean_type(i.get("type", "fact")), clean_source(i.get("source", "")),
         clean_time(i.get("created_at"), "created_at"), clean_time(i.get("updated_at"), "updated_at"),
         clean_id(i.get("id")))
        for i in items
    ]


def to_blob(vector: np.ndarray) -> bytes:
    return vector.astype("<f4").tobytes()


class Memory:
    def __init__(
        self,
        path: str | Path,
        embedder: Embedder | None,
        fusion: Fusion | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        floor: float = DEFAULT_FLOOR,
    ):
        self.path = str(path)
        self.embedder = embedder
        self.fusion = fusion or DEFAULT
        self.threshold = threshold
        self.floor = floor
        self._lock = threading.RLock()
        self.db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        # NORMAL in WAL mode survives a killed process; only a power cut can lose the last commits.
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA busy_timeout=5000")
        migrate(self.db)
        self.pairs = Pairs(self.db)
        self.vectors = VectorIndex(embedder.dims if embedder else 0)
        self.vocab = Vocabulary(self.db, self.model, embedder.dims if embedder else 0)
        self._version: int | None = None  # PRAGMA data_version when the matrix was last in step
        self._seq: int | None = None  # the last vector_changes entry the matrix includes
        self._saved_seq: int | None = None  # ... and the snapshot on disk
        self._reread = 0  # rows read from the table by the last sync
        self._vocabulary_ready = threading.Event()  # set once the vocabulary holds every fact's words
        self._closing = False
        self._builder: threading.Thread | None = None
        with self._reading():  # loads the matrix
            pass
        if self._reread > 1000:  # the next open reads a snapshot instead (after a kill -9, say)
            self.save_snapshot()
        self._build_pairs()
        # For "why this rank?": the stemmed tokens of any text, by the index's own tokenizer.
        self.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe USING fts5(text, tokenize = 'porter unicode61')")
        self.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe_terms USING fts5vocab(temp, probe, instance)")
        self.db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms USING fts5vocab(main, facts_fts, instance)")
        self._build_vocabulary()  # last: it may start a thread that shares the connection

    @property
    def model(self) -> str | None:
        return self.embedder.model_id if self.embedder else None

    def close(self) -> None:
        self._closing = True  # a vocabulary build stops at its next batch of words
        if self._builder:
            self._builder.join()
        with self._lock:
            self.save_snapshot()
            self.db.close()

    def _last_change(self) -> int:
        return self.db.execute("SELECT max(seq) FROM vector_changes").fetchone()[0] or 0

    def _sync(self) -> None:
        """Bring the matrix in step if another connection has committed since we last looked (call
        it inside a transaction, so the rows read next are the snapshot the matrix comes from).
        Only the facts the change log names are read again; the whole table only when the log
        no longer reaches back to our matrix (a snapshot pruned it) or on first open without a
        snapshot."""
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        if version == self._version:
            return
        if self.embedder:
            last = self._last_change()
            if self._seq is None:
                snap = snapshot.load(self.path, self.model, self.embedder.dims)
                if snap and self._log_reaches(snap.seq):
                    self.vectors = VectorIndex.from_arrays(self.embedder.dims, snap.ids, snap.types, snap.matrix)
                    self._seq = self._saved_seq = snap.seq
            if self._seq is None or not self._log_reaches(self._seq) or not self._patch(self._seq, last):
                rows = self.db.execute(
                    "SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id"
                    " WHERE v.model = ? AND v.dims = ?",
                    (self.model, self.embedder.dims),
                ).fetchall()
                self.vectors = VectorIndex.of(self.embedder.dims, rows)
                self._reread = len(rows)
            self._seq = last
        self.vocab.load()
        self._version = version

    def _log_reaches(self, seq: int) -> bool:
        """The change log still holds every entry after `seq` (pruning keeps `seq` itself)."""
        first = self.db.execute("SELECT min(seq) FROM vector_changes").fetchone()[0]
        return first is not None and first <= seq <= self._last_change()

    def _patch(self, since: int, last: int) -> bool:
        """Read again the facts changed after `since`; False when so many changed that the whole
        table is the quicker read."""
        if last == since:
            return True
        changed = [r[0] for r in self.db.execute(
            "SELECT DISTINCT fact_id FROM vector_changes WHERE seq > ?", (since,))]
        if len(changed) > max(1000, len(self.vectors) // 4):
            return False
        self._reread = len(changed)
        for fid in changed:
            self.vectors.remove(fid)
        for i in range(0, len(changed), 500):
            part = changed[i : i + 500]
            rows = self.db.execute(
                "SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id"
                f" WHERE v.model = ? AND v.dims = ? AND v.fact_id IN ({','.join('?' * len(part))})",
                (self.model, self.embedder.dims, *part),
            )
            for fid, type, blob in rows:
                self.vectors.put(fid, type, np.frombuffer(blob, dtype="<f4"))
        return True

    def save_snapshot(self) -> bool:
        """Write the matrix beside the database so the next open reads it in one go, then prune
        the change log up to it. Skipped for small memories and when nothing changed."""
        with self._lock:
            if not self.embedder or self._seq is None or self._seq == self._saved_seq or len(self.vectors) < snapshot.MIN_FACTS:
                return False
            parts = [self.vectors.parts[t] for t in TYPES]
            seq = self._seq
            snapshot.save(self.path, self.model, seq,
                          np.concatenate([p.fact_ids for p in parts]),
                          np.concatenate([np.full(p.n, TYPE_CODE[t], np.int8) for t, p in zip(TYPES, parts)]),
                          np.concatenate([p.m for p in parts]))
            self._saved_seq = seq
            try:
                with transaction(self.db):
                    self.db.execute("DELETE FROM vector_changes WHERE seq < ?", (seq,))
            except sqlite3.OperationalError:
                pass  # busy: the log is pruned next time
            return True

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """The lock, one read snapshot of the file, and the matrix in step with it."""
        with self._lock:
            if self.db.in_transaction:  # inside another read or a write, which has synced
                yield
                return
            self.db.execute("BEGIN")
            try:
                self._sync()
                yield
            finally:
                if self.db.in_transaction:  # (an I/O error may have ended it)
                    self.db.execute("COMMIT")  # a read: nothing to keep or undo

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """The lock and BEGIN IMMEDIATE, then the matrix in step: no other writer can commit now,
        so dedup decides against everything in the file."""
        with self._lock:
            with transaction(self.db):
                self._sync()
                yield
                last = self._last_change()
            self._seq = last  # committed: the matrix, changed by the caller under this lock, is at it
            self.vocab.load()

    # -- reads -------------------------------------------------------------------------

    def _fact(self, row: tuple) -> Fact:
        return Fact(*row)

    def get(self, fact_id: int) -> Fact:
        with self._reading():
            row = self.db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ?", (fact_id,)).fetchone()
        if row is None:
            raise NotFound(f"no fact with id {fact_id}")
        return self._fact(row)

    def _get_many(self, ids: Iterable[int]) -> dict[int, Fact]:
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id IN ({marks})", ids)
        return {row[0]: self._fact(row) for row in rows}

    def count(self) -> int:
        with self._reading():
            return self.db.execute("SELECT count(*) FROM facts").fetchone()[0]

    def list(
        self,
        type: str | None = None,
        source: str | None = None,
        q: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
    ) -> tuple[list[Fact], str | None, int]:
        """Newest first: (facts, next cursor or None, total matching the filters)."""
        where, args = [], []
        if type:
            where.append("type = ?")
            args.append(clean_type(type))
        if source:
            where.append("source = ?")
            args.append(valid_unicode(source, "source"))
        if q:
            if len(q) > MAX_FILTER:
                raise InvalidInput(f"q is {len(q)} characters; the limit is {MAX_FILTER}, the longest a fact can be")
            valid_unicode(q, "q")
            # instr, not LIKE: nothing to escape, and the Worker's SQLite caps LIKE patterns at 50
            # bytes. lower() folds ASCII only, as LIKE does.
            where.append("instr(lower(text), lower(?)) > 0")
            args.append(q)
        filters = " AND ".join(where) or "1"
        page_where, page_args = filters, list(args)
        if cursor:
            created_at, fid = decode_cursor(cursor)
            page_where += " AND (created_at < ? OR (created_at = ? AND id < ?))"
            page_args += [created_at, created_at, fid]
        with self._reading():
            total = self.db.execute(f"SELECT count(*) FROM facts WHERE {filters}", args).fetchone()[0]
            rows = self.db.execute(
                f"SELECT {FACT_COLUMNS} FROM facts WHERE {page_where} ORDER BY created_at DESC, id DESC LIMIT ?",
                [*page_args, limit + 1],
            ).fetchall()
        facts = [self._fact(r) for r in rows[:limit]]
        next_cursor = encode_cursor(facts[-1]) if len(rows) > limit else None
        return facts, next_cursor, total

    def sources(self) -> list[tuple[str, int]]:
        with self._reading():
            return self.db.execute("SELECT source, count(*) FROM facts GROUP BY source ORDER BY count(*) DESC").fetchall()

    # -- writes ------------------------------------------------------------------------

    def _embed(self, texts: list[str]) -> np.ndarray:
        if not self.embedder:
            raise Unavailable("the embedding model is not loaded, so facts cannot be stored; recall is keyword-only")
        try:
            return self.embedder.embed(texts)
        except Exception as e:
            raise Unavailable(f"the embedding model failed: {e}") from e

    def _exact_duplicate(self, text: str, type: str, exclude: int | None = None) -> tuple[int, str, float] | None:
        row = self.db.execute(
            "SELECT id FROM facts WHERE type = ? AND text_key = ? AND id IS NOT ? LIMIT 1",
            (type, text_key(text), exclude),
        ).fetchone()
        return (row[0], "exact", 1.0) if row else None

    def _near_among(self, text: str, ids: np.ndarray, scores: np.ndarray) -> tuple[int, str, float] | None:
        """Of the same-type facts `ids` with their cosines `scores`, the first at or above the
        threshold that says the same thing (best score first, then lowest id): one that differs in a
        number, date, name or negation is another fact (dedup.py)."""
        over = scores >= self.threshold
        if not over.any():
            return None
        ids, scores = ids[over], scores[over]
        order = np.lexsort((ids, -scores))[:NEAR_CANDIDATES]
        near = [(int(ids[i]), float(scores[i])) for i in order]
        facts = self._get_many(fid for fid, _ in near)
        return next(((fid, "near", s) for fid, s in near if fid in facts and distinct(text, facts[fid].text) is None), None)

    def _unlink(self, fid: int) -> None:
        """Remove fact `fid`'s pairs (inside the write, before its vector leaves the matrix)."""
        vector, type = self.vectors.vector(fid), self.vectors.type_of.get(fid)
        if vector is None or type is None:
            self.pairs.unlink(fid, None)
            return
        part = self.vectors.parts[type]
        self.pairs.unlink(fid, part.fact_ids[part.m @ vector >= self.floor - MARGIN])

    def _similar(self, fid: int, type: str, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The other same-type facts and their cosines with `vector`: one row serves an edit's
        dedup check and its pairs."""
        part = self.vectors.parts[type]
        ids, scores = part.fact_ids, part.m @ vector
        other = ids != fid
        return ids[other], scores[other]

    def _build_pairs(self) -> None:
        """All pairs at the floor, when the table was built at another floor or not yet (a memory
        from before the table, or a new floor setting): one all-pairs pass, then kept on write.
        Pairs of the one-row-a-pair table (migration 3) move over without that pass."""
        with self._lock:
            if self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'pairs_old'").fetchone():
                with self._writing():
                    rows = self.db.execute("SELECT type, score, a, b FROM pairs_old").fetchall()
                    for t in TYPES:
                        mine = [r[1:] for r in rows if r[0] == t]
                        if mine:
                            s, a, b = zip(*mine)
                            self.pairs.put_all(t, np.array(s, np.float32), np.array(a, np.int64), np.array(b, np.int64))
                    self.db.execute("DROP TABLE pairs_old")
            if not self.embedder:
                return
            built = self.db.execute("SELECT value FROM meta WHERE key = 'pairs_floor'").fetchone()
            if built and built[0] == self.floor:
                return
            with self._writing():
                self._rebuild_pairs(self.vectors)

    def _rebuild_pairs(self, index: VectorIndex) -> None:
        self.pairs.clear()
        for t in TYPES:
            self.pairs.put_all(t, *index.pairs(t, self.floor))
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('pairs_floor', ?)", (self.floor,))

    def _build_vocabulary(self) -> None:
        """Every word of the facts into the vocabulary, when it was built by another model or not
        yet (a memory from before it): one pass, then kept on write. An empty memory needs no
        model; otherwise the pass runs in a thread of its own, as the Worker's does, so a big old
        memory opens at once and serves reads and writes meanwhile. A recall that expands waits
        for it (`wait_for_vocabulary`): it ranks as it will once the words are in."""
        if not self.embedder:
            self._vocabulary_ready.set()
            return
        with self._reading():
            if self._vocabulary_built():
                self._vocabulary_ready.set()
                return
            empty = self.db.execute("SELECT NOT EXISTS (SELECT 1 FROM facts)").fetchone()[0]
        if empty:
            with self._writing():
                self._rebuild_vocabulary([], np.zeros((0, self.embedder.dims), np.float32))
            self._vocabulary_ready.set()
            return
        self._builder = threading.Thread(target=self._vocabulary_pass, name="vocabulary", daemon=True)
        self._builder.start()

    VOCABULARY_BATCH = 1024  # words embedded at a time: `close` waits for one batch at most

    def _vocabulary_pass(self) -> None:
        try:
            with self._reading():
                words = words_of([r[0] for r in self.db.execute("SELECT text FROM facts")])
            vectors: dict[str, np.ndarray] = {}
            for i in range(0, len(words), self.VOCABULARY_BATCH):  # the model, outside the lock
                if self._closing:
                    return
                batch = words[i : i + self.VOCABULARY_BATCH]
                vectors.update(zip(batch, self._embed(batch)))
            with self._writing():
                if self._closing or self._vocabulary_built():  # another process built it meanwhile
                    return
                # Writes went on meanwhile: the words now, and vectors for the new ones.
                words = words_of([r[0] for r in self.db.execute("SELECT text FROM facts")])
                vectors = self._word_vectors(words, vectors)
                self._rebuild_vocabulary(words, np.array([vectors[w] for w in words]).reshape(len(words), -1))
        except Exception:
            # Recall goes on with the words writes have added; the next open tries again.
            log.exception("could not build the vocabulary of %s", self.path)
        finally:
            self._vocabulary_ready.set()

    def _vocabulary_built(self) -> bool:
        built = self.db.execute("SELECT value FROM meta WHERE key = 'words_model'").fetchone()
        return bool(built) and built[0] == self.model

    def wait_for_vocabulary(self, timeout: float | None = None) -> bool:
        """Whether the vocabulary holds every fact's words, waiting up to `timeout` seconds."""
        return self._vocabulary_ready.wait(timeout)

    def _rebuild_vocabulary(self, words: list[str], vectors: np.ndarray) -> None:
        self.vocab.clear()
        self.vocab.add(words, vectors)
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('words_model', ?)", (self.model,))

    def add(self, text: str, type: str = "fact", source: str = "", **restore) -> AddResult:
        """Store a fact. `restore` (id, created_at, updated_at) puts back one that was deleted
        or exported, under its old id and times."""
        return self.add_many([{"text": text, "type": type, "source": source, **restore}])[0]

    def add_many(self, items: list[dict]) -> list[AddResult]:
        """Store facts with dedup-on-write; each fact is all or nothing, the batch one commit."""
        clean = _clean_items(items)
        return self._store(clean, *self._embed_facts([c[0] for c in clean]))

    def import_batches(self, items: list[dict], size: int = 64) -> Iterator[list[AddResult]]:
        """`add_many` over `items`, `size` at a time, each batch one commit. The next batch is
        embedded in a thread while this one is written: the model and the write (the dedup scan,
        SQLite, the commit) each leave part of the machine idle. Bad input fails before any write."""
        batches = [_clean_items(items[i : i + size]) for i in range(0, len(items), size)]
        with ThreadPoolExecutor(1, thread_name_prefix="embed") as pool:
            ahead = pool.submit(self._embed_facts, [c[0] for c in batches[0]]) if batches else None
            for n, clean in enumerate(batches):
                embedded = ahead.result()  # only the batch in hand and the next are held
                if n + 1 < len(batches):
                    ahead = pool.submit(self._embed_facts, [c[0] for c in batches[n + 1]])
                yield self._store(clean, *embedded)

    def _embed_facts(self, texts: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The texts' vectors, and those of their words the vocabulary lacks (in a call of their own)."""
        words = self.vocab.missing(texts)
        return self._embed(texts), dict(zip(words, self._embed(words))) if words else {}

    def _add_words(self, texts: list[str], embedded: dict[str, np.ndarray]) -> None:
        """The new words of stored texts into the vocabulary (inside their write)."""
        words = self.vocab.missing(texts)
        if words:  # another writer's words we have not read yet may lack vectors: embedded here
            embedded = self._word_vectors(words, embedded)
            self.vocab.add(words, np.array([embedded[w] for w in words]))

    def _word_vectors(self, words: list[str], have: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """`have`, and vectors for those `words` it lacks (each word embedded alone, as a query term is)."""
        lacking = [w for w in words if w not in have]
        return have | dict(zip(lacking, self._embed(lacking))) if lacking else have

    def _store(self, clean: list[tuple], vectors: np.ndarray, words: dict[str, np.ndarray]) -> list[AddResult]:
        results: list[AddResult] = []
        with self._lock:
            added: list[tuple[int, str]] = []
            try:
                with self._writing():
                    # Each type's new facts against that type's stored rows, one matrix product a
                    # type: it serves both the near-dedup check and the pairs kept for review.
                    low = min(self.floor, self.threshold)
                    types = [c[1] for c in clean]
                    prior: dict[int, tuple[np.ndarray, np.ndarray]] = {}
                    for t in set(types):
                        mine = [i for i, u in enumerate(types) if u == t]
                        part = self.vectors.parts[t]
                        ids, scores = part.fact_ids.copy(), vectors[mine] @ part.m.T
                        for row, i in enumerate(mine):
                            keep = scores[row] >= low
                            prior[i] = ids[keep], scores[row][keep]
                    within = vectors @ vectors.T  # the batch against itself, for facts stored earlier in it
                    batch: list[tuple[int, str, int]] = []  # (id, type, position in the batch) stored so far
                    for n, ((text, type, source, created_at, updated_at, wanted_id), vector) in enumerate(zip(clean, vectors)):
                        near_ids, near_scores = prior[n]
                        same = [(fid, k) for fid, t, k in batch if t == type and within[n, k] >= low]
                        if same:
                            near_ids = np.concatenate([near_ids, np.array([f for f, _ in same], dtype=np.int64)])
                            near_scores = np.concatenate([near_scores, within[n, [k for _, k in same]]])
                        dup = self._exact_duplicate(text, type) or self._near_among(text, near_ids, near_scores)
                        if dup:
                            existing = self._get_many([dup[0]])[dup[0]]
                            results.append(AddResult(existing, False, dup[1], round(dup[2], 6)))
                            continue
                        created_at = created_at or now()
                        updated_at = updated_at or created_at
                        if wanted_id is not None and self.db.execute("SELECT 1 FROM facts WHERE id = ?", (wanted_id,)).fetchone():
                            raise IdTaken(f"fact id {wanted_id} is in use by another fact")
                        fid = self.db.execute(
                            "INSERT INTO facts (id, text, text_key, type, source, created_at, updated_at)"
                            " VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (wanted_id, text, text_key(text), type, source, created_at, updated_at),
                        ).lastrowid
                        self.db.execute("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", (fid, text))
                        self.db.execute(
                            "INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
                            (fid, self.model, len(vector), to_blob(vector)),
                        )
                        self.pairs.link(fid, type, near_ids, near_scores, self.floor)
                        # Later items of the same batch must see this one for dedup.
                        self.vectors.put(fid, type, vector)
                        added.append((fid, type))
                        batch.append((fid, type, n))
                        results.append(AddResult(Fact(fid, text, type, source, created_at, updated_at), True))
                    self._add_words([r.fact.text for r in results if r.created], words)
            except BaseException:
                for fid, _ in added:  # the transaction rolled back: so does the matrix
                    self.vectors.remove(fid)
                raise
        return results

    def edit(self, fact_id: int, text: str | None = None, type: str | None = None, source: str | None = None) -> Fact:
        """Change the given fields; the others keep what they hold when the write lock is taken,
        so an edit of one field never undoes a concurrent edit of another."""
        old = self.get(fact_id)
        text = clean_text(text) if text is not None else None
        type = clean_type(type) if type is not None else None
        source = clean_source(source) if source is not None else None
        # Embed before taking the lock (the slow part), if the text is to change.
        vector, words = self._embed_facts([text]) if text is not None and text != old.text else (None, {})
        vector = vector[0] if vector is not None else None
        with self._lock:
            with self._writing():  # the read, the dedup check and the write as one
                row = self.db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ?", (fact_id,)).fetchone()
                if row is None:
                    raise NotFound(f"no fact with id {fact_id}")
                current = self._fact(row)
                new_text = current.text if text is None else text
                new_type = current.type if type is None else type
                new_source = current.source if source is None else source
                reembed = new_text != current.text
                if not reembed:
                    vector = self.vectors.vector(fact_id)
                elif vector is None:  # the text changed under us since we looked
                    vector = self._embed([new_text])[0]
                if reembed:
                    self._add_words([new_text], words)
                changed = reembed or new_type != current.type
                similar = self._similar(fact_id, new_type, vector) if changed and vector is not None else None
                if changed:
                    dup = self._exact_duplicate(new_text, new_type, fact_id) or (similar and self._near_among(new_text, *similar))
                    if dup:
                        existing = self._get_many([dup[0]])[dup[0]]
                        raise Conflict(
                            f"this edit would duplicate fact {existing.id} ({dup[1]} match, score {dup[2]:.3f})",
                            existing, dup[1], dup[2],
                        )
                updated_at = now()
                self.db.execute(
                    "UPDATE facts SET text = ?, text_key = ?, type = ?, source = ?, updated_at = ? WHERE id = ?",
                    (new_text, text_key(new_text), new_type, new_source, updated_at, fact_id),
                )
                if reembed:
                    self.db.execute("DELETE FROM facts_fts WHERE rowid = ?", (fact_id,))
                    self.db.execute("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", (fact_id, new_text))
                    self.db.execute(
                        "INSERT OR REPLACE INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
                        (fact_id, self.model, len(vector), to_blob(vector)),
                    )
                if similar is not None:  # its pairs become those of its new text and type
                    self._unlink(fact_id)
                    self.pairs.link(fact_id, new_type, *similar, self.floor)
            if vector is not None:
                self.vectors.put(fact_id, new_type, vector)
        return Fact(fact_id, new_text, new_type, new_source, current.created_at, updated_at)

    def delete(self, fact_id: int) -> Fact:
        """Remove the row, its FTS entry and its vector together; returns what was removed."""
        with self._lock:
            with self._writing():
                fact = self.get(fact_id)
                self.db.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
                self.db.execute("DELETE FROM facts_fts WHERE rowid = ?", (fact_id,))
                self.db.execute("DELETE FROM vectors WHERE fact_id = ?", (fact_id,))
                self._unlink(fact_id)
            self.vectors.remove(fact_id)
        return fact

    def reindex(self) -> dict:
        """Rebuild the FTS index and every vector from the rows (after a model change, say)."""
        select = "SELECT id, text, type FROM facts ORDER BY id"
        with self._lock:
            with self._reading():
                rows = self.db.execute(select).fetchall()
            # Embed before BEGIN IMMEDIATE: another process's writes must not wait on the model.
            embedded = dict(zip(((r[0], r[1]) for r in rows), self._embed([r[1] for r in rows]))) if rows else {}
            word_vectors = self._word_vectors(words_of([r[1] for r in rows]), {})
            with self._writing():
                rows = self.db.execute(select).fetchall()  # it may have written meanwhile
                missing = [r for r in rows if (r[0], r[1]) not in embedded]
                if missing:
                    embedded.update(zip(((r[0], r[1]) for r in missing), self._embed([r[1] for r in missing])))
                vectors = [embedded[r[0], r[1]] for r in rows]
                self.db.execute("DELETE FROM facts_fts")
                self.db.execute("DELETE FROM vectors")
                self.db.executemany("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", [(r[0], r[1]) for r in rows])
                self.db.executemany(
                    "INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
                    [(r[0], self.model, len(v), to_blob(v)) for r, v in zip(rows, vectors)],
                )
                index = VectorIndex(self.embedder.dims if self.embedder else 0)
                for (fid, _, type), v in zip(rows, vectors):
                    index.put(fid, type, v)
                self._rebuild_pairs(index)
                words = words_of([r[1] for r in rows])
                word_vectors = self._word_vectors(words, word_vectors)
                self._rebuild_vocabulary(words, np.array([word_vectors[w] for w in words]).reshape(len(words), -1))
            self.vectors = index
        return {"facts": len(rows), "fts": len(rows), "vectors": len(rows), "model": self.model}

    # -- recall ------------------------------------------------------------------------

    def _embed_query(self, query: str, fusion: Fusion, mode: str = "hybrid") -> tuple[np.ndarray | None, np.ndarray | None, str | None]:
        """The query's vector, its expandable terms' vectors for hybrid recall (a term the
        vocabulary holds keeps its stored vector) and a warning when the model is down."""
        if not self.embedder:
            return None, None, "the embedding model is not loaded: keyword-only recall"
        try:
            asked = fusion.expandable_terms(query) if mode == "hybrid" else []
            if asked:
                self.wait_for_vocabulary()  # a memory from before it: its words first
            vectors = self.vocab.vectors(asked)
            lacking = [t for t in asked if t not in vectors]
            # One model call: a text's vector does not depend on the others in its batch.
            qvec, *fresh = self.embedder.embed([query, *lacking])
            vectors |= dict(zip(lacking, fresh))
            return qvec, np.array([vectors[t] for t in asked]) if asked else None, None
        except Exception as e:
            return None, None, f"the embedding model failed ({e}): keyword-only recall"

    def _expansions(self, query: str, term_vectors: np.ndarray | None, fusion: Fusion) -> list[dict]:
        """Vocabulary words close to the query's terms (recall.expand), with how many facts hold
        each; a word no fact holds any more, or too many (recall.expansion_kept), is left out.
        Call it under the lock."""
        if term_vectors is None or not fusion.expand:
            return []
        found = expand(terms(query, fusion.alias_self), self.vocab.closest(term_vectors), fusion.expand)
        out = [{"word": w, "term": t, "cosine": c, "facts": self._having(w)} for w, t, c in found]
        return [e for e in out if expansion_kept(e["facts"])]

    def _having(self, term: str) -> int:
        return self.db.execute("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?", (quote(term),)).fetchone()[0]

    def _keyword(self, match: str, type: str | None, depth: int) -> list[tuple[int, float]]:
        """Top `depth` by BM25 as (id, bm25), lower (better) first."""
        if not match:
            return []
        if type:
            sql = ("SELECT facts_fts.rowid, bm25(facts_fts) AS s FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid"
                   " WHERE facts_fts MATCH ? AND facts.type = ? ORDER BY s, facts_fts.rowid LIMIT ?")
            args: tuple = (match, type, depth)
        else:
            sql = "SELECT rowid, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ? ORDER BY s, rowid LIMIT ?"
            args = (match, depth)
        try:
            return self.db.execute(sql, args).fetchall()
        except sqlite3.OperationalError:
            # The builder quotes every term, so this should not happen; if it does, the
            # query still gets its vector results rather than an error.
            return []

    def _term_counts(self, query_terms: list[str], expansions: list[dict] = ()) -> tuple[list[dict], float | None]:
        """Each query term with how many facts hold it and its IDF, as bm25() weighs it, and the
        query's information (their sum; None without terms). An expansion word says its term."""
        if not query_terms:
            return [], None
        rows = self._indexed_rows()
        known = {e["word"]: e for e in expansions}
        having = [known[t]["facts"] if t in known else self._having(t) for t in query_terms]
        counts = [{"term": t, "facts": n, "idf": idf(rows, n), **({"from": known[t]["term"]} if t in known else {})}
                  for t, n in zip(query_terms, having)]
        return counts, information(rows, having)

    def _indexed_rows(self) -> int:
        """The row count bm25() itself uses: the first varint of FTS5's averages record (row 1
        of facts_fts_data). One row read, where count(*) walks the table (about 20 ms at 1M)."""
        row = self.db.execute("SELECT block FROM facts_fts_data WHERE id = 1").fetchone()
        return varint(row[0]) if row and row[0] else 0

    def _matching(self, match: str, ids: list[int], columns: str = "rowid") -> list[tuple]:
        """Rows of `ids` that `match` matches (only these: cheap even when the match is broad)."""
        if not match or not ids:
            return []
        marks = ",".join("?" * len(ids))
        return self.db.execute(f"SELECT {columns} FROM facts_fts WHERE facts_fts MATCH ? AND rowid IN ({marks})", [match, *ids]).fetchall()

    def _check_query(self, query: object, type: str | None) -> None:
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query is empty")
        if len(query) > MAX_QUERY:
            raise TooLarge(f"query is {len(query)} characters; the limit is {MAX_QUERY}")
        valid_unicode(query, "query")
        if type is not None:
            clean_type(type)

    def _rank(self, query: str, match: str, expansions: list[dict], qvec: np.ndarray | None, type: str | None,
              fusion: Fusion, mode: str = "hybrid"):
        """The keyword list, the vector list, every fused hit best first, the query terms' counts
        and the query's information (method "info"): the candidates the store finds, ranked by
        recall.fuse. `match` holds the `expansions` (see `_plan`). Call it under the lock."""
        kw = self._keyword(match, type, fusion.depth) if mode != "vector" else []
        vec = self.vectors.search(qvec, type, fusion.depth) if mode != "keyword" and qvec is not None and len(self.vectors) else []
        words = [e["word"] for e in expansions]
        counts, info = self._term_counts(fusion.terms(query, words), expansions) if kw else ([], None)
        return kw, vec, fuse([(fid, -score) for fid, score in kw], vec, fusion, info), counts, info

    def _plan(self, query: str, term_vectors: np.ndarray | None, fusion: Fusion, mode: str = "hybrid") -> tuple[str, list[dict]]:
        """The FTS5 query and the expansions in it (hybrid recall only). Call it under the lock."""
        if mode == "vector":
            return "", []
        expansions = self._expansions(query, term_vectors, fusion) if mode == "hybrid" else []
        return fusion.match(query, [e["word"] for e in expansions]), expansions

    def _rerank(self, query: str, fused: list[Fused], fusion: Fusion, facts: dict[int, Fact]) -> tuple[list[Fused], dict | None]:
        """recall.rerank over the fused top `fusion.rerank`, and what it did (None when nothing).
        Outside the lock: a model call, over rows already read. The model failing leaves the order."""
        head = fused[: fusion.rerank]
        plan = rerank_plan(query, [facts[h.id].text for h in head], fusion.alias_self) if self.embedder else None
        if plan is None:
            return fused, None
        try:
            qvec, *vectors = self.embedder.embed([plan.query, *plan.facts])
        except Exception:
            log.exception("reranking failed; the fused order stands")
            return fused, None
        cosines = [float(v @ qvec) for v in vectors]
        done = {"shared": plan.shared, "query": plan.query,
                "facts": [{"id": h.id, "text": t, "cosine": c} for h, t, c in zip(head, plan.facts, cosines)]}
        return rerank(head, cosines) + fused[len(head):], done

    def recall(self, query: str, type: str | None = None, limit: int = 15, debug: bool = False,
               fusion: Fusion | None = None, mode: str = "hybrid") -> dict:
        """Hybrid recall, or `mode` "keyword" / "vector" for one list alone. A mode that needs the
        model when it is down answers by keyword and says so (mode "keyword-only", a warning)."""
        self._check_query(query, type)
        if mode not in MODES:
            raise InvalidInput(f"mode must be one of {', '.join(MODES)}")
        fusion = fusion or self.fusion
        qvec, term_vectors, warning = self._embed_query(query, fusion, mode) if mode != "keyword" else (None, None, None)
        if qvec is None and mode != "keyword":
            mode = "keyword"
        with self._reading():
            started = time.perf_counter()
            match, expansions = self._plan(query, term_vectors, fusion, mode)
            kw, vec, fused, counts, info = self._rank(query, match, expansions, qvec, type, fusion, mode)
            fused = fused[: max(limit, fusion.rerank if mode == "hybrid" else 0)]
            wanted = {h.id for h in fused}
            if debug:
                wanted |= {fid for fid, _ in kw} | {fid for fid, _ in vec}
                marked = dict(self._matching(match, [fid for fid, _ in kw], "rowid, highlight(facts_fts, 0, char(2), char(3))"))
            # Under the same lock as the ranking: a delete in between would leave a ranked id with no row.
            facts = self._get_many(wanted)
            rank_ms = (time.perf_counter() - started) * 1000
        fused, reranked = self._rerank(query, fused, fusion, facts) if mode == "hybrid" else (fused, None)
        fused = fused[:limit]
        bm25 = dict(kw)
        cosine = dict(vec)
        out: dict = {
            "results": [
                {
                    "fact": facts[h.id].to_dict(),
                    "score": h.score,
                    "via": via(h.kw_rank, h.vec_rank),
                    "kw_rank": h.kw_rank,
                    "vec_rank": h.vec_rank,
                    "bm25": bm25.get(h.id),
                    "cosine": cosine.get(h.id),
                    "parts": {"kw": h.kw_part, "vec": h.vec_part, "rerank": h.rerank_part},
                }
                for h in fused
            ],
            "mode": "keyword-only" if warning else mode,
        }
        if warning:
            out["warning"] = warning
        if debug:
            out["kw"] = [
                {"fact": facts[f].to_dict(), "rank": r, "bm25": s, "highlighted": marked.get(f, facts[f].text)}
                for r, (f, s) in enumerate(kw, 1)
            ]
            out["vec"] = [{"fact": facts[f].to_dict(), "rank": r, "cosine": s} for r, (f, s) in enumerate(vec, 1)]
            out["match"] = match
            out["expansions"] = [{k: e[k] for k in ("word", "term", "cosine")} for e in expansions]
            out["rerank"] = reranked
            out["information"] = info
            out["terms"] = counts
            out["fusion"] = asdict(fusion)
            out["timing"] = {"rank_ms": rank_ms}  # ranking and reading the rows, not the embedding
        return out

    def tokens(self, text: str) -> list[str]:
        """`text` as the FTS index sees it: lower-cased, split and Porter-stemmed."""
        # Only the temp database is written, statement by statement: no lock on the memory itself,
        # so reads that call this never wait on or block a writer in another process.
        with self._lock:
            rowid = self.db.execute("INSERT INTO temp.probe (text) VALUES (?)", (text,)).lastrowid
            try:
                return [r[0] for r in self.db.execute("SELECT term FROM temp.probe_terms WHERE doc = ? ORDER BY offset", (rowid,))]
            finally:
                self.db.execute("DELETE FROM temp.probe WHERE rowid = ?", (rowid,))

    def explain(self, query: str, fact_id: int, type: str | None = None, fusion: Fusion | None = None) -> dict:
        """Why one fact ranks where it does for a query, list by list."""
        self._check_query(query, type)
        self.get(fact_id)  # an unknown id is a 404 before the model spends time on the query
        fusion = fusion or self.fusion
        qvec, term_vectors, warning = self._embed_query(query, fusion)
        with self._reading():
            fact = self.get(fact_id)  # again under the lock: it may have been deleted meanwhile
            match, expansions = self._plan(query, term_vectors, fusion)
            fact_terms = [r[0] for r in self.db.execute("SELECT term FROM temp.fts_terms WHERE doc = ? ORDER BY offset", (fact_id,))]
            bm25 = kw_rank = None
            if match:
                type_sql, type_args = (" AND facts.type = ?", [type]) if type else ("", [])
                row = self.db.execute(
                    "SELECT bm25(facts_fts) FROM facts_fts WHERE facts_fts MATCH ? AND rowid = ?", (match, fact_id)
                ).fetchone()
                if row and (not type or fact.type == type):
                    bm25 = row[0]
                    better = self.db.execute(
                        "SELECT count(*) FROM (SELECT bm25(facts_fts) AS s, facts_fts.rowid AS id FROM facts_fts"
                        f" JOIN facts ON facts.id = facts_fts.rowid WHERE facts_fts MATCH ?{type_sql})"
                        " WHERE s < ? OR (s = ? AND id < ?)",
                        [match, *type_args, bm25, bm25, fact_id],
                    ).fetchone()[0]
                    kw_rank = better + 1
            vec_rank, cosine = self.vectors.rank_of(qvec, fact_id, type) if qvec is not None else (None, None)
            # Its parts of the fused score come from the ranking recall uses, so the two agree.
            _, _, fused, _, info = self._rank(query, match, expansions, qvec, type, fusion)
            top = self._get_many(h.id for h in fused[: fusion.rerank]) if qvec is not None else {}
        if qvec is not None:
            fused, _ = self._rerank(query, fused, fusion, top)
        query_terms = set(self.tokens(" ".join(match_terms(match))))
        fused_rank, hit = next(((i, h) for i, h in enumerate(fused, 1) if h.id == fact_id), (None, None))
        parts = {"kw": hit.kw_part, "vec": hit.vec_part, "rerank": hit.rerank_part} if hit else {"kw": 0.0, "vec": 0.0, "rerank": 0.0}
        result = {
            "fact": fact.to_dict(),
            "match": match,
            "query_terms": sorted(query_terms),
            "fact_terms": fact_terms,
            "matched_terms": sorted(query_terms & set(fact_terms)),
            "bm25": bm25,
            "kw_rank": kw_rank,
            "cosine": cosine,
            "vec_rank": vec_rank,
            "depth": fusion.depth,
            "kw_contribution": parts["kw"],
            "vec_contribution": parts["vec"],
            "rerank_contribution": parts["rerank"],
            "score": parts["kw"] + parts["vec"] + parts["rerank"],
            "information": info,
            "expansions": [{k: e[k] for k in ("word", "term", "cosine")} for e in expansions],
            "fused_rank": fused_rank,
            "fusion": asdict(fusion),
        }
        if warning:
            result["warning"] = warning
        return result

    # -- curation ----------------------------------------------------------------------

    def duplicates(self, threshold: float = DEFAULT_THRESHOLD, type: str | None = None, limit: int = 1000) -> tuple[list[dict], int]:
        """Same-type pairs with cosine >= threshold, highest first: (pairs, total found). At or
        above the floor they are read from the pairs kept on write; below it, computed."""
        types = [clean_type(type)] if type else list(TYPES)
        with self._reading():
            if threshold >= self.floor and self._pairs_built():
                s, a, b = self.pairs.read(threshold, types)
            else:
                parts = [self.vectors.pairs(t, threshold) for t in types]
                s, a, b = (np.concatenate([p[k] for p in parts]) for k in range(3))
            total = len(s)
            order = top(s, a, b, limit)
            found = list(zip(s[order].tolist(), a[order].tolist(), b[order].tolist()))
            facts = self._get_many({fid for _, a, b in found for fid in (a, b)})
        pairs = [{"a": facts[a].to_dict(), "b": facts[b].to_dict(), "score": s} for s, a, b in found]
        return pairs, total

    def _pairs_built(self) -> bool:
        row = self.db.execute("SELECT value FROM meta WHERE key = 'pairs_floor'").fetchone()
        return bool(row) and row[0] == self.floor

    def nearest(self, type: str | None = None) -> list[tuple[int, float]]:
        """Each fact's cosine with its nearest same-type neighbour, for a threshold histogram,
        from the pairs kept on write: facts whose nearest is below the floor are not listed."""
        types = [clean_type(type)] if type else list(TYPES)
        with self._reading():
            best = self.pairs.nearest(types)
        return sorted(best.items())

    def neighbours(self, fact_id: int, limit: int = 10) -> list[tuple[Fact, float]]:
        self.get(fact_id)
        with self._reading():
            vector = self.vectors.vector(fact_id)
            if vector is None:
                return []
            near = self.vectors.search(vector.copy(), None, limit, exclude=fact_id)
            facts = self._get_many(f for f, _ in near)
        return [(facts[f], s) for f, s in near]

    def stats(self) -> dict:
        """Counts of rows, FTS entries and vectors, and every id that does not line up."""
        q = {
            "fts_without_fact": "SELECT rowid FROM facts_fts WHERE rowid NOT IN (SELECT id FROM facts)",
            "vectors_without_fact": "SELECT fact_id FROM vectors WHERE fact_id NOT IN (SELECT id FROM facts)",
            "facts_without_fts": "SELECT id FROM facts WHERE id NOT IN (SELECT rowid FROM facts_fts)",
            "facts_without_vector": "SELECT id FROM facts WHERE id NOT IN (SELECT fact_id FROM vectors)",
        }
        with self._reading():
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
        with self._lock:
            return self.db.execute("PRAGMA integrity_check").fetchone()[0]


def varint(data: bytes) -> int:
    """SQLite's variable-length integer (as FTS5 writes it): big-endian 7-bit groups with a
    continuation bit, the ninth byte whole."""
    value = 0
    for i, byte in enumerate(data[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    return value


def match_terms(match: str) -> list[str]:
    """The quoted terms (and phrases) of a MATCH expression that `match_expression` built."""
    return [t[1:-1].replace('""', '"') for t in match.split(" OR ")] if match else []
