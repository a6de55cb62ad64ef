"""The memory's own words, each embedded alone: what a query term expands to (recall.expand).

A word joins in the transaction of the first fact that holds it and stays (a word no fact holds
any more matches nothing, and recall drops it). The table is the truth; this process's matrix
reads the rows it lacks before each recall, so another process's words arrive too.
"""

from __future__ import annotations

import sqlite3
import sys

import numpy as np

from .recall import vocabulary_words
from .vectors import DICT_ENTRY, INT_BYTES

CANDIDATES = 8  # closest words per query term handed to recall.expand, which keeps at most 3


def words_of(texts: list[str]) -> list[str]:
    """The vocabulary words of `texts`, each once, in order."""
    return list(dict.fromkeys(w for t in texts for w in vocabulary_words(t)))


class Vocabulary:
    def __init__(self, db: sqlite3.Connection, model: str | None, dims: int):
        self.db, self.model, self.dims = db, model, dims
        self._reset()

    def _reset(self) -> None:
        self.words: list[str] = []
        self.known: dict[str, int] = {}  # word -> its row
        # Rows live in a buffer that doubles when full: a write that brings one new word copies
        # nothing (a copy of the whole matrix each time took 28 ms at 50,000 words).
        self._rows = np.zeros((0, self.dims), dtype=np.float32)
        self.matrix = self._rows[:0]
        # (known, matrix) as one snapshot: recall reads it outside the lock (vectors()). Rows
        # below len(matrix) never change; a word added since has a row past it.
        self.table: tuple[dict[str, int], np.ndarray] = (self.known, self.matrix)
        self.last = 0  # the highest row id read
        self.chars = 0  # the words' characters, for `nbytes_with`
        self.off = False  # True: holding no word (a memory past its budget: state.py)

    def load(self) -> None:
        """Read the words written since the last call (by this process or another)."""
        if self.off:
            return
        rows = self.db.execute("SELECT id, word, embedding FROM words WHERE id > ? AND model IS ? ORDER BY id",
                               (self.last, self.model)).fetchall()
        if not rows:
            return
        self.last = rows[-1][0]
        fresh = [(w, blob) for _, w, blob in rows if w not in self.known]
        if not fresh:
            return
        n, k = len(self.words), len(fresh)
        if n + k > len(self._rows):
            grown = np.zeros((max(2 * len(self._rows), n + k, 1024), self.dims), dtype=np.float32)
            grown[:n] = self._rows[:n]
            self._rows = grown
        self._rows[n : n + k] = np.frombuffer(b"".join(blob for _, blob in fresh), dtype="<f4").reshape(k, self.dims)
        self.words += [w for w, _ in fresh]
        self.chars += sum(len(w) for w, _ in fresh)
        self.matrix = self._rows[: n + k]
        self.known.update((w, n + i) for i, (w, _) in enumerate(fresh))
        self.table = (self.known, self.matrix)

    def empty(self) -> None:
        """Hold no word until the next `reload` (a memory past its budget)."""
        self._reset()
        self.off = True

    def reload(self) -> None:
        """Read every word again."""
        self._reset()
        self.load()

    def nbytes(self) -> int:
        """The bytes the vocabulary holds: its matrix exactly; its words, their list and map as
        Python counts them, with an int object a row."""
        return (self._rows.nbytes + sys.getsizeof(self.words) + sum(sys.getsizeof(w) for w in self.words)
                + sys.getsizeof(self.known) + len(self.known) * INT_BYTES)

    def nbytes_with(self, more: int, chars: int) -> int:
        """The most it would hold with `more` new words of `chars` characters in all (non-ASCII
        ones take up to 4 bytes), counting a grow's copy."""
        n, held = len(self.words), len(self._rows)
        capacity = max(held, n + more) if n + more <= held else max(2 * held, n + more, 1024)
        copying = held * self.dims * 4 if capacity > held else 0
        return (self.nbytes() + (capacity - held) * self.dims * 4 + copying
                + more * (sys.getsizeof("") + 8 + INT_BYTES + DICT_ENTRY) + 4 * chars)

    def missing(self, texts: list[str]) -> list[str]:
        """The words of `texts` the vocabulary lacks (as this process last saw it), each once."""
        return [w for w in words_of(texts) if w not in self.known]

    def vectors(self, words: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those `words` the vocabulary holds: a query term the memory
        already uses needs no model call (each word was embedded alone, as a query term is)."""
        known, matrix = self.table
        rows = {w: known.get(w, len(matrix)) for w in words}
        return {w: matrix[i] for w, i in rows.items() if i < len(matrix)}

    def add(self, words: list[str], vectors: np.ndarray) -> None:
        """Store words inside the caller's write transaction (a word already there is kept)."""
        self.db.executemany("INSERT OR IGNORE INTO words (word, model, embedding) VALUES (?, ?, ?)",
                            [(w, self.model, v.astype("<f4").tobytes()) for w, v in zip(words, vectors)])

    def clear(self) -> None:
        """Forget every word (inside a write: a reindex under another model writes them again)."""
        self.db.execute("DELETE FROM words")
        self._reset()

    def closest(self, term_vectors: np.ndarray) -> list[list[tuple[str, float]]]:
        """For each term vector, its CANDIDATES closest words with their cosines."""
        if not len(self.words) or not len(term_vectors):
            return [[] for _ in term_vectors]
        sims = term_vectors @ self.matrix.T
        k = min(CANDIDATES, len(self.words))
        out = []
        for row in sims:
            idx = np.argpartition(-row, k - 1)[:k]
            out.append([(self.words[j], float(row[j])) for j in idx])
        return out
