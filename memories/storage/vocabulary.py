"""The memory's own words, each embedded alone: what a query term expands to (recall.expand).

A word joins in the transaction of the first fact that holds it and stays (a word no fact holds
any more matches nothing, and recall drops it). The table is the truth: it answers which words
are there and their exact vectors. This process holds only each word's int8 code (codes.py),
its row in the order of the table's ids, and reads the rows it lacks before each recall, so
another process's words arrive too. The closest words to a term are found on the codes and
rescored with their exact vectors from the table, so the expansion is that of exact search.
An answer is kept for the same term vector until a word comes or goes (an agent's questions
repeat their terms: at 10k facts the closest words took 1.1 ms of a 2.8 ms ranking).
Held this way a memory of a million distinct words takes about 400 MB, not 1.5 GB of float32
and the words' Python strings and map (benchmarks/memory_bench.py --million).
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import sys
import threading
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache

import numpy as np

from . import snapshot
from .codes import encode, exact
from .exact_top import exact_top
from ..recall.ranking import vocabulary_words
from .rows import Rows
from .vectors import LOAD_BATCH

CANDIDATES = 8  # closest words per query term handed to recall.expand, which keeps at most 3
RESCORE = 24  # rows rescored past CANDIDATES on the codes (any that could still be closer are too)
READ = 500  # words a query reads at once (SQLite's bound parameters)
KEPT = 1024  # query terms whose closest words are kept while the words do not change (about 1 MB)


def words_of(texts: list[str]) -> list[str]:
    """The vocabulary words of `texts`, each once, in order."""
    return list(dict.fromkeys(w for t in texts for w in vocabulary_words(t)))


@cache
def _ahead_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(1, thread_name_prefix="words-snapshot")


def chunks(items: list, size: int = READ):
    for i in range(0, len(items), size):
        yield items[i : i + size]


def kept_size(closest: list[tuple[str, float]]) -> int:
    """A bound on the bytes one term's kept closest words take (its key and the map's slot too)."""
    return 200 + sum(sys.getsizeof(w) + 90 for w, _ in closest)


class Vocabulary:
    def __init__(self, db: sqlite3.Connection, model: str | None, dims: int, lock: threading.RLock | None = None,
                 path: str | None = None):
        self.db, self.model, self.dims = db, model, dims
        # The engine's lock (state.py), held by its writes: one connection must not run two
        # statements at once.
        self.lock = lock or threading.RLock()
        # Reads from outside the lock (a query's terms, an import's next batch while one is
        # written) go through a connection of their own, which sees committed words only and
        # never waits for a write to end.
        self.path = path
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.rows = Rows(self.dims, keyed=False)  # a word a row, its table id in rows.ids
        self.last = 0  # the highest table id read
        self.saved: tuple | None = None  # (last, epoch) of the snapshot on disk
        self._ahead: tuple[str, Future] | None = None  # (epoch, the snapshot being read): `read_ahead`
        self.off = False  # True: holding no word (a memory past its budget: state.py)
        self.forget_closest()

    def forget_closest(self) -> None:
        """Keep no term's closest words. They are kept by the term vector's hash: the same vector
        and the same words give the same answer, so they stay until a word comes or goes
        (`_kept_for`), or the words are read anew."""
        self._kept: OrderedDict[bytes, list[tuple[str, float]]] = OrderedDict()
        self._kept_for: tuple | None = None
        self._kept_bytes = 0

    def __len__(self) -> int:
        return self.rows.n

    def ids(self) -> list[int]:
        """The table ids of the words held, in their rows' order."""
        return self.rows.fact_ids.tolist()

    def epoch(self) -> str:
        """The words table's epoch: every delete from it moves it on (`drop`, `clear`)."""
        row = self.db.execute("SELECT value FROM meta WHERE key = 'words_epoch'").fetchone()
        return row[0] if row else ""

    def _new_epoch(self) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('words_epoch', ?)", (secrets.token_hex(8),))

    def read_ahead(self, path: str, origin: str | None) -> None:
        """Start reading the snapshot in a thread of its own, for `open` to take: it is read
        beside the vectors' snapshot (file reads and hashing let go of the GIL: at 1M words
        the two took 2.4 s one after the other)."""
        if not (self.off or self.last or not self.model or not origin):
            epoch = self.epoch()
            self._ahead = (epoch, _ahead_pool().submit(snapshot.load_words, path, self.model, self.dims, epoch, origin))

    def open(self, path: str, origin: str | None) -> None:
        """Take the codes of the snapshot beside the database when it is of this model, this
        database and this epoch (first, before `load` reads the words after it)."""
        ahead, self._ahead = self._ahead, None
        if self.off or self.last or not self.model or not origin:
            return
        epoch = self.epoch()
        if ahead and ahead[0] == epoch:
            snap = ahead[1].result()
        else:
            snap = snapshot.load_words(path, self.model, self.dims, epoch, origin)
        if snap is not None:
            self.rows = Rows.of(self.dims, snap.ids, snap.codes, snap.params, keyed=False)
            self.last = snap.last
            self.saved = (snap.last, self.epoch())

    def save(self, path: str, origin: str | None, least: int) -> bool:
        """Write the codes beside the database (a vocabulary of at least `least` words, changed
        since the last save)."""
        epoch = self.epoch()
        if self.off or not self.model or not origin or len(self) < least or self.saved == (self.last, epoch):
            return False
        blocks = list(self.rows.blocks())
        snapshot.save_words(path, self.model, self.dims, self.last, epoch, origin, self.rows.fact_ids,
                            [b[2] for b in blocks], [b[1] for b in blocks])
        self.saved = (self.last, epoch)
        return True

    def load(self) -> None:
        """Read the words written since the last call (by this process or another)."""
        if self.off:
            return
        rows = self.db.execute("SELECT id, embedding FROM words WHERE id > ? AND model IS ? ORDER BY id",
                               (self.last, self.model))
        while batch := rows.fetchmany(LOAD_BATCH):
            ids = np.array([r[0] for r in batch], dtype=np.int64)
            matrix = np.frombuffer(b"".join(r[1] for r in batch), dtype="<f4").reshape(len(batch), self.dims)
            self.rows.extend(ids, *encode(matrix))
            self.last = int(ids[-1])

    def empty(self) -> None:
        """Hold no word until the next `reload` (a memory past its budget)."""
        self._reset()
        self.off = True

    def reload(self) -> None:
        """Read every word again."""
        self._reset()
        self.load()

    def nbytes(self) -> int:
        """The bytes the vocabulary holds: its codes, params and ids, and the closest words kept."""
        return self.rows.nbytes() + self._kept_bytes

    def nbytes_with(self, more: int) -> int:
        """The most it would hold with `more` new words, counting a grow's copy."""
        return self.rows.nbytes_with(more)

    def _held(self, words: list[str], columns: str = "word", committed: bool = False) -> list[tuple]:
        """Rows of the table for `words`: through the engine's connection, inside its lock, or
        (`committed`) through the reader's."""
        out = []
        for part in chunks(words):
            query = f"SELECT {columns} FROM words WHERE model IS ? AND word IN ({','.join('?' * len(part))})"
            if committed and self.path and self.path != ":memory:":
                with self._reader_lock:
                    if self._reader is None:
                        self._reader = sqlite3.connect(self.path, check_same_thread=False)
                        self._reader.execute("PRAGMA busy_timeout = 5000")
                        self._reader.execute("PRAGMA query_only = 1")
                    out += self._reader.execute(query, (self.model, *part)).fetchall()
            else:
                with self.lock:
                    out += self.db.execute(query, (self.model, *part)).fetchall()
        return out

    def close(self) -> None:
        with self._reader_lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def missing(self, texts: list[str], committed: bool = False) -> list[str]:
        """The words of `texts` the vocabulary lacks, each once (a word another model embedded
        counts as lacking: `add` keeps it as it is). `committed`: as committed, from outside the
        engine's lock (what a write embeds ahead; inside it, it asks again)."""
        words = words_of(texts)
        if self.off:
            return words
        held = {w for (w,) in self._held(words, committed=committed)}
        return [w for w in words if w not in held]

    def vectors(self, words: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those `words` the vocabulary holds, as committed: a query term
        the memory already uses needs no model call (each word was embedded alone, as a query
        term is)."""
        if self.off or not words:
            return {}
        found = dict(self._held(list(dict.fromkeys(words)), "word, embedding", committed=True))
        return {w: np.frombuffer(found[w], dtype="<f4") for w in words if w in found}

    def add(self, words: list[str], vectors: np.ndarray) -> None:
        """Store words inside the caller's write transaction (a word already there is kept)."""
        self.db.executemany("INSERT OR IGNORE INTO words (word, model, embedding) VALUES (?, ?, ?)",
                            [(w, self.model, v.astype("<f4").tobytes()) for w, v in zip(words, vectors)])

    def drop(self, words: list[str]) -> None:
        """Take words out of the table (inside the caller's write; `reload` once it commits)."""
        self.db.executemany("DELETE FROM words WHERE word = ?", [(w,) for w in words])
        self._new_epoch()

    def clear(self) -> None:
        """Forget every word (inside a write: a reindex under another model writes them again)."""
        self.db.execute("DELETE FROM words")
        self._new_epoch()
        self._reset()

    def closest(self, term_vectors: np.ndarray) -> list[list[tuple[str, float]]]:
        """For each term vector, its CANDIDATES closest words with their exact cosines, ties by id:
        the best CANDIDATES + RESCORE on the codes are rescored, and so is any other word whose
        code is within its bound of the last of the exact top (exact_top.py)."""
        if not len(self) or not len(term_vectors):
            return [[] for _ in term_vectors]
        held = (self.epoch(), self.last, self.rows.n)  # (reading the words anew forgets them: `_reset`)
        if held != self._kept_for:
            self._kept.clear()  # (a dropped word must not outlive its drop here either)
            self._kept_bytes = 0
            self._kept_for = held
        out = []
        for q in term_vectors:
            key = hashlib.blake2b(np.asarray(q, dtype=np.float32).tobytes(), digest_size=16).digest()
            if key in self._kept:
                self._kept.move_to_end(key)
                out.append(list(self._kept[key]))
                continue
            words: dict[int, str] = {}

            def rescore(ids: np.ndarray, q=q, words=words) -> tuple[np.ndarray, np.ndarray]:
                found, held, cosines = self._exact(ids, q)
                words.update(zip(found.tolist(), held))
                return found, cosines

            ids, cosines = exact_top([(self.rows, self.rows.scores(q))], q, CANDIDATES, RESCORE, rescore)
            out.append([(str(words[i]), float(c)) for i, c in zip(ids.tolist(), cosines)])
            self._kept[key] = list(out[-1])
            self._kept_bytes += kept_size(out[-1])
            if len(self._kept) > KEPT:
                self._kept_bytes -= kept_size(self._kept.popitem(last=False)[1])
        return out

    def _exact(self, ids: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(ids, words, exact cosines with `q`) of the words with these table ids."""
        found = []
        for part in chunks(ids.tolist()):
            with self.lock:
                found += self.db.execute(f"SELECT id, word, embedding FROM words WHERE id IN ({','.join('?' * len(part))})",
                                         part).fetchall()
        vectors = np.frombuffer(b"".join(r[2] for r in found), dtype="<f4").reshape(len(found), self.dims)
        return (np.array([r[0] for r in found], dtype=np.int64), np.array([r[1] for r in found], dtype=object),
                exact(vectors, q) if found else np.zeros(0, np.float32))
