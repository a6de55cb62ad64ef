"""The memory's own words, each embedded alone: what a query term expands to (recall.expand).

A word joins in the transaction of the first fact that holds it and stays (a word no fact holds
any more matches nothing, and recall drops it). The table is the truth; this process's matrix
reads the rows it lacks before each recall, so another process's words arrive too.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from .recall import vocabulary_words

CANDIDATES = 8  # closest words per query term handed to recall.expand, which keeps at most 3


def words_of(texts: list[str]) -> list[str]:
    """The vocabulary words of `texts`, each once, in order."""
    return list(dict.fromkeys(w for t in texts for w in vocabulary_words(t)))


class Vocabulary:
    def __init__(self, db: sqlite3.Connection, model: str | None, dims: int):
        self.db, self.model, self.dims = db, model, dims
        self.words: list[str] = []
        self.known: set[str] = set()
        self.matrix = np.zeros((0, dims), dtype=np.float32)
        # (word -> row, matrix), swapped whole: recall reads it outside the lock (vectors()).
        self.table: tuple[dict[str, int], np.ndarray] = ({}, self.matrix)
        self.last = 0  # the highest row id read

    def load(self) -> None:
        """Read the words written since the last call (by this process or another)."""
        rows = self.db.execute("SELECT id, word, embedding FROM words WHERE id > ? AND model IS ? ORDER BY id",
                               (self.last, self.model)).fetchall()
        if not rows:
            return
        self.last = rows[-1][0]
        fresh = [(w, blob) for _, w, blob in rows if w not in self.known]
        if fresh:
            self.words += [w for w, _ in fresh]
            self.known.update(w for w, _ in fresh)
            added = np.frombuffer(b"".join(blob for _, blob in fresh), dtype="<f4").reshape(len(fresh), self.dims)
            self.matrix = np.concatenate([self.matrix, added])
            self.table = ({w: i for i, w in enumerate(self.words)}, self.matrix)

    def missing(self, texts: list[str]) -> list[str]:
        """The words of `texts` the vocabulary lacks (as this process last saw it), each once."""
        return [w for w in words_of(texts) if w not in self.known]

    def vectors(self, words: list[str]) -> dict[str, np.ndarray]:
        """The stored vectors of those `words` the vocabulary holds: a query term the memory
        already uses needs no model call (each word was embedded alone, as a query term is)."""
        index, matrix = self.table
        return {w: matrix[index[w]] for w in words if w in index}

    def add(self, words: list[str], vectors: np.ndarray) -> None:
        """Store words inside the caller's write transaction (a word already there is kept)."""
        self.db.executemany("INSERT OR IGNORE INTO words (word, model, embedding) VALUES (?, ?, ?)",
                            [(w, self.model, v.astype("<f4").tobytes()) for w, v in zip(words, vectors)])

    def clear(self) -> None:
        """Forget every word (inside a write: a reindex under another model writes them again)."""
        self.db.execute("DELETE FROM words")
        self.words, self.known, self.last = [], set(), 0
        self.matrix = np.zeros((0, self.dims), dtype=np.float32)
        self.table = ({}, self.matrix)

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
