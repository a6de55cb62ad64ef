"""Work a memory does once, when it opens, to fill what writes then keep up: the near-duplicate
pairs at the review floor and the vocabulary that query terms expand to."""

from __future__ import annotations

import logging
import threading

import numpy as np

from .state import State
from .vectors import TYPES
from .vocabulary import words_of
from .reindexing import rebuild_pairs, rebuild_vocabulary, word_vectors

log = logging.getLogger(__name__)

VOCABULARY_BATCH = 1024  # words embedded at a time: `close` waits for one batch at most


class Background:
    def __init__(self, state: State):
        self.state = state
        self.builder: threading.Thread | None = None

    def build_pairs(self) -> None:
        """All pairs at the floor, when the table was built at another floor or not yet (a memory
        from before the table, or a new floor setting): one all-pairs pass, then kept on write.
        Pairs of the one-row-a-pair table (migration 3) move over without that pass."""
        state, db = self.state, self.state.db
        with state.lock:
            old = "SELECT 1 FROM sqlite_master WHERE name = 'pairs_old'"
            if db.execute(old).fetchone():
                with state.writing():
                    # Asked again inside the write: another process may have moved them over in between.
                    rows = db.execute("SELECT type, score, a, b FROM pairs_old").fetchall() if db.execute(old).fetchone() else None
                    for t in TYPES if rows is not None else ():
                        mine = [r[1:] for r in rows if r[0] == t]
                        if mine:
                            s, a, b = zip(*mine)
                            state.pairs.put_all(t, np.array(s, np.float32), np.array(a, np.int64), np.array(b, np.int64))
                    if rows is not None:
                        db.execute("DROP TABLE pairs_old")
            # Not without the vectors (a memory past its budget): the pass would find no pair and call it done.
            if not state.embedder or state.full or state.pairs_built(state.floor_setting):
                return
            with state.writing():  # this process's floor becomes the file's, for every process on it
                state.floor = state.floor_setting
                rebuild_pairs(state, state.vectors)

    def build_vocabulary(self) -> None:
        """Every word of the facts into the vocabulary, when it was built by another model or not
        yet (a memory from before it): one pass, then kept on write. An empty memory needs no
        model; otherwise the pass runs in a thread of its own, as the Worker's does, so a big old
        memory opens at once and serves reads and writes meanwhile. A recall that expands waits
        for it (`state.vocabulary_ready`): it ranks as it will once the words are in."""
        state = self.state
        if not state.embedder:
            state.vocabulary_ready.set()
            return
        with state.reading():
            if state.vocabulary_built() or state.full:  # (a memory past its budget holds no word)
                state.vocabulary_ready.set()
                return
            empty = state.db.execute("SELECT NOT EXISTS (SELECT 1 FROM facts)").fetchone()[0]
        if empty:
            with state.writing():
                rebuild_vocabulary(state, [], np.zeros((0, state.dims), np.float32))
            state.vocabulary_ready.set()
            return
        self.builder = threading.Thread(target=self._vocabulary_pass, name="vocabulary", daemon=True)
        self.builder.start()

    def _vocabulary_pass(self) -> None:
        state = self.state
        try:
            with state.reading():
                words = words_of([r[0] for r in state.db.execute("SELECT text FROM facts")])
            vectors: dict[str, np.ndarray] = {}
            for i in range(0, len(words), VOCABULARY_BATCH):  # the model, outside the lock
                if state.closing:
                    return
                batch = words[i : i + VOCABULARY_BATCH]
                vectors.update(zip(batch, state.embed(batch)))
            with state.writing():
                if state.closing or state.vocabulary_built():  # another process built it meanwhile
                    return
                # Writes went on meanwhile: the words now, and vectors for the new ones.
                words = words_of([r[0] for r in state.db.execute("SELECT text FROM facts")])
                vectors = word_vectors(state, words, vectors)
                rebuild_vocabulary(state, words, np.array([vectors[w] for w in words]).reshape(len(words), -1))
        except Exception:
            # Recall goes on with the words writes have added; the next open tries again.
            log.exception("could not build the vocabulary of %s", state.path)
        finally:
            state.vocabulary_ready.set()

    def stop(self) -> None:
        """Stop a vocabulary build at its next batch of words, and wait for it."""
        self.state.closing = True
        if self.builder:
            self.builder.join()
