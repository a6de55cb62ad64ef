"""Reindex: the FTS index, every vector, the pairs and the vocabulary rebuilt from the rows
(after a model change, say), and the rebuilds a memory's first open shares (background.py)."""

from __future__ import annotations

from collections import Counter
from functools import partial

import numpy as np

from .codes import encode
from .state import State, to_blob
from .vectors import LOAD_BATCH, TYPE_CODE, TYPES, VectorIndex
from .vocabulary import words_of

REINDEX_BATCH = 256  # facts embedded at a time by reindex


def reindex(state: State) -> dict:
    """Rebuild the FTS index and every vector from the rows (after a model change, say)."""
    db = state.db
    select = "SELECT id, text, type FROM facts ORDER BY id"
    with state.reading():
        rows = db.execute(select).fetchall()
    state.ensure_room_anew(dict(Counter(r[2] for r in rows)), words_of([r[1] for r in rows]))
    # The model outside the lock, a batch at a time: reads and other writes go on meanwhile,
    # and a fact written meanwhile is embedded below, under the lock.
    embedded: dict[tuple[int, str], np.ndarray] = {}
    for i in range(0, len(rows), REINDEX_BATCH):
        part = rows[i : i + REINDEX_BATCH]
        embedded.update(zip(((r[0], r[1]) for r in part), state.embed([r[1] for r in part])))
    vocabulary = word_vectors(state, words_of([r[1] for r in rows]), {})
    with state.writing() as after:
        rows = db.execute(select).fetchall()  # it may have written meanwhile
        missing = [r for r in rows if (r[0], r[1]) not in embedded]
        if missing:
            embedded.update(zip(((r[0], r[1]) for r in missing), state.embed([r[1] for r in missing])))
        vectors = [embedded[r[0], r[1]] for r in rows]
        db.execute("DELETE FROM facts_fts")
        db.execute("DELETE FROM vectors")
        db.executemany("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", [(r[0], r[1]) for r in rows])
        db.executemany(
            "INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
            [(r[0], state.model, len(v), to_blob(v)) for r, v in zip(rows, vectors)],
        )
        index = VectorIndex(state.dims, state.read_vectors)
        for i in range(0, len(rows), LOAD_BATCH):
            part = rows[i : i + LOAD_BATCH]
            index.extend(np.array([r[0] for r in part], dtype=np.int64), np.array([TYPE_CODE[r[2]] for r in part], dtype=np.int8),
                         *encode(np.array(vectors[i : i + LOAD_BATCH])))
        rebuild_pairs(state, index)
        words = words_of([r[1] for r in rows])
        vocabulary = word_vectors(state, words, vocabulary)
        rebuild_vocabulary(state, words, np.array([vocabulary[w] for w in words]).reshape(len(words), -1))
        after.append(partial(setattr, state, "vectors", index))
        after.append(partial(setattr, state, "full", None))  # it fits: ensure_room_anew said so
    return {"facts": len(rows), "fts": len(rows), "vectors": len(rows), "model": state.model}


def word_vectors(state: State, words: list[str], have: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`have`, and vectors for those `words` it lacks (each word embedded alone, as a query term is)."""
    lacking = [w for w in words if w not in have]
    return have | dict(zip(lacking, state.embed(lacking))) if lacking else have


def rebuild_pairs(state: State, index: VectorIndex) -> None:
    """Every pair at the floor from `index` (inside a write)."""
    state.pairs.clear()
    for t in TYPES:
        state.pairs.put_all(t, *index.pairs(t, state.floor))
    state.set_meta("pairs_floor", state.floor)
    state.set_meta("pairs_model", state.model)


def rebuild_vocabulary(state: State, words: list[str], vectors: np.ndarray) -> None:
    """The vocabulary as exactly `words` (inside a write)."""
    state.vocab.clear()
    state.vocab.add(words, vectors)
    state.set_meta("words_model", state.model)
