"""The memory engine's one door: `Memory`, which opens a memory file and hands each verb to the
module that answers it.

    facts.py       the Fact type, the errors, the limits and the input checks
    state.py       the connection, the lock, the matrix and vocabulary in step with the file
                   (other processes' writes, the snapshot), and the consistency check
    writing.py     the write path: add, import, edit, delete, reindex, with dedup
    reading.py     rows, and the reads ranking needs (the keyword list, term counts)
    searching.py   recall and explain, one pipeline each; recall.py holds the ranking itself
    review.py      near-duplicate pairs and neighbours
    background.py  the pairs and vocabulary a memory fills once when it opens

The Worker (worker/src/) has the same files in TypeScript, so a change in one shows where it
goes in the other.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from .background import Background
from .embeddings import Embedder
from .facts import DEFAULT_FLOOR, DEFAULT_THRESHOLD, AddResult, Fact
from .reading import Reader
from .recall import DEFAULT, Fusion
from .review import Review
from .searching import Searcher
from .state import State
from .writing import Writer


class Memory:
    def __init__(self, path: str | Path, embedder: Embedder | None, fusion: Fusion | None = None,
                 threshold: float = DEFAULT_THRESHOLD, floor: float = DEFAULT_FLOOR):
        self.state = State(path, embedder, fusion or DEFAULT, threshold, floor)
        self.reader = Reader(self.state)
        self.writer = Writer(self.state, self.reader)
        self.searcher = Searcher(self.state, self.reader)
        self.review = Review(self.state, self.reader)
        self.background = Background(self.state)
        with self.state.reading():  # loads the matrix
            pass
        if self.state.reread > 1000:  # the next open reads a snapshot instead (after a kill -9, say)
            self.state.save_snapshot()
        self.background.build_pairs()
        self.reader.open()
        self.background.build_vocabulary()  # last: it may start a thread that shares the connection

    def close(self) -> None:
        self.background.stop()
        with self.state.lock:
            self.state.save_snapshot()
            self.state.db.close()

    # What the engine holds, for the service, the CLI and tests.
    path = property(lambda self: self.state.path)
    db = property(lambda self: self.state.db)
    embedder = property(lambda self: self.state.embedder, lambda self, e: setattr(self.state, "embedder", e))
    model = property(lambda self: self.state.model)
    fusion = property(lambda self: self.state.fusion)
    threshold = property(lambda self: self.state.threshold)
    floor = property(lambda self: self.state.floor)
    vectors = property(lambda self: self.state.vectors)
    vocab = property(lambda self: self.state.vocab)
    pairs = property(lambda self: self.state.pairs)

    # -- writes (writing.py) -----------------------------------------------------------

    def add(self, text: str, type: str = "fact", source: str = "", **restore) -> AddResult:
        """Store a fact. `restore` (id, created_at, updated_at) puts back one that was deleted
        or exported, under its old id and times."""
        return self.writer.add_many([{"text": text, "type": type, "source": source, **restore}])[0]

    def add_many(self, items: list[dict]) -> list[AddResult]:
        return self.writer.add_many(items)

    def import_batches(self, items: list[dict], size: int = 64) -> Iterator[list[AddResult]]:
        return self.writer.import_batches(items, size)

    def edit(self, fact_id: int, text: str | None = None, type: str | None = None, source: str | None = None) -> Fact:
        return self.writer.edit(fact_id, text, type, source)

    def delete(self, fact_id: int) -> Fact:
        return self.writer.delete(fact_id)

    def reindex(self) -> dict:
        return self.writer.reindex()

    # -- reads (reading.py, searching.py, review.py) -------------------------------------

    def get(self, fact_id: int) -> Fact:
        return self.reader.get(fact_id)

    def count(self) -> int:
        return self.reader.count()

    def list(self, type: str | None = None, source: str | None = None, q: str | None = None, limit: int = 50,
             cursor: str | None = None) -> tuple[list[Fact], str | None, int]:
        return self.reader.list(type, source, q, limit, cursor)

    def sources(self) -> list[tuple[str, int]]:
        return self.reader.sources()

    def tokens(self, text: str) -> list[str]:
        return self.reader.tokens(text)

    def recall(self, query: str, type: str | None = None, limit: int = 15, debug: bool = False,
               fusion: Fusion | None = None, mode: str = "hybrid") -> dict:
        return self.searcher.recall(query, type, limit, debug, fusion, mode)

    def explain(self, query: str, fact_id: int, type: str | None = None, fusion: Fusion | None = None) -> dict:
        return self.searcher.explain(query, fact_id, type, fusion)

    def duplicates(self, threshold: float = DEFAULT_THRESHOLD, type: str | None = None,
                   limit: int = 1000) -> tuple[list[dict], int]:
        return self.review.duplicates(threshold, type, limit)

    def nearest(self, type: str | None = None) -> list[tuple[int, float]]:
        return self.review.nearest(type)

    def neighbours(self, fact_id: int, limit: int = 10) -> list[tuple[Fact, float]]:
        return self.review.neighbours(fact_id, limit)

    # -- the file (state.py, background.py) -------------------------------------------

    def stats(self) -> dict:
        return self.state.stats()

    def integrity(self) -> str:
        return self.state.integrity()

    def save_snapshot(self) -> bool:
        return self.state.save_snapshot()

    def wait_for_vocabulary(self, timeout: float | None = None) -> bool:
        """Whether the vocabulary holds every fact's words, waiting up to `timeout` seconds."""
        return self.state.vocabulary_ready.wait(timeout)
