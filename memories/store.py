"""The memory engine's one door: `Memory`, which opens a memory file and hands each verb to the
module that answers it.

    facts.py       the Fact type, the errors, the limits and the input checks
    state.py       the connection, the lock, the index and vocabulary in step with the file
                   (other processes' writes, the snapshot), and the consistency check
    writing.py     the write path: add, import, edit, delete, reindex, with dedup
    reading.py     rows, and the reads ranking needs (the keyword list, term counts)
    searching.py   recall and explain, one pipeline each; recall.py holds the ranking itself
    review.py      near-duplicate pairs and neighbours
    background.py  the pairs and vocabulary a memory fills once when it opens
    lifecycle.py   what is true now: current facts, what a new fact may replace, what differs
    conflicts.py   the contradictions queue, and resolving it
    history.py     what was done to the memory, by which client (undo is a write: writing.py)
    recall_log.py  what each client recalled, and what it got

The Worker (worker/src/) has the same files in TypeScript, so a change in one shows where it
goes in the other.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

from .storage.background import Background
from .writes import replace_at_once
from .review import reviewing
from .review.conflicts import Conflicts, pairs_of
from .model.embeddings import Embedder
from .facts import AddResult, Fact
from .review.forgetting import forget
from .review.history import DEFAULT_KEEP as HISTORY_KEEP
from .review.history import Entry, History
from .recall.reading import Reader
from .recall.ranking import DEFAULT, Fusion
from .recall.recall_log import DEFAULT_KEEP as RECALL_LOG_KEEP
from .recall.recall_log import RecallEntry, RecallLog
from .review.near_duplicates import Review
from .recall.searching import Searcher
from .storage.state import State
from .storage.reindexing import reindex
from .review.undo import Undo
from .writes.writing import Writer


class Memory:
    def __init__(self, path: str | Path, embedder: Embedder | None, fusion: Fusion | None = None,
                 threshold: float | None = None, floor: float | None = None,
                 history: int = HISTORY_KEEP, recall_log: int = RECALL_LOG_KEEP, budget: int | None = None,
                 expand: float | None = None):
        """`threshold`, `floor`, `expand`: this process's (the environment's); None: the model's (models.py)."""
        self.state = State(path, embedder, fusion or DEFAULT, threshold, floor, budget, expand)
        self.reader = Reader(self.state)
        self.history = History(self.state, history)
        self.recall_log = RecallLog(self.state, recall_log)
        self.writer = Writer(self.state, self.reader, self.history)
        self.searcher = Searcher(self.state, self.reader)
        self.conflicts_queue = Conflicts(self.state, self.writer)
        self.undoing = Undo(self.state, self.writer, self.conflicts_queue)
        self.review = Review(self.state, self.reader)
        self.background = Background(self.state)
        with self.state.reading():  # loads the index
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
            self.state.vocab.close()
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

    # Every write names its client (X-Memory-Client), for the history.

    def add(self, text: str, type: str = "fact", source: str = "", client: str = "", **restore) -> AddResult:
        """Store a fact. `restore` (id, created_at, updated_at) puts back one that was deleted
        or exported, under its old id and times."""
        return self.writer.add_many([{"text": text, "type": type, "source": source, **restore}], client, alone=True)[0]

    def add_many(self, items: list[dict], client: str = "", restore: bool = False, dry_run: bool = False,
                 note: str = "") -> list[AddResult]:
        """`restore`: each fact as given, no dedup (a backup into an empty memory). `dry_run`:
        what would be stored, merged and proposed, and nothing kept. `note`: each entry's."""
        return self.writer.add_many(items, client, restore, dry_run, note)

    def import_batches(self, items: list[dict], size: int = 64, client: str = "", restore: bool = False,
                       note: str = "") -> Iterator[list[AddResult]]:
        return self.writer.import_batches(items, size, client, restore, note)

    def edit(self, fact_id: int, text: str | None = None, type: str | None = None, source: str | None = None,
             client: str = "", note: str = "", **validity) -> Fact:
        """`validity`: valid_until and/or superseded_by (None clears either; see lifecycle.py)."""
        return self.writer.edit(fact_id, text, type, source, client, note, **validity)

    def supersede(self, old: int, new: int, client: str = "", note: str = "") -> Fact:
        """Fact `new` replaces fact `old` (a replacement decided after both were written)."""
        return self.writer.edit(old, superseded_by=new, client=client, note=note)

    def delete(self, fact_id: int, client: str = "", note: str = "") -> Fact:
        return self.writer.delete(fact_id, client, note)

    def undo(self, entry_id: int, client: str = "", force: bool = False) -> tuple[Entry, Fact | None, bool]:
        """`force`: even over what was written since (otherwise a 409 changed_since)."""
        return self.undoing.undo(entry_id, client, force)

    def set_settings(self, fusion: Fusion | None = None, client: str = "", threshold: float | None | bool = False,
                     review: dict | None = None, proposals: str | None = None) -> dict:
        """The memory's own settings: `fusion` (None: as they are), its own duplicate threshold
        (`threshold`: a number, None to use the process's again, False: as it is), `review`
        (reviewing.clean_review's, None: as it is) and `proposals` (replace_at_once.py's mode,
        None: as it is)."""
        def changed(before: dict) -> dict:
            settings = ({k: v for k, v in before.items() if k not in ("threshold", "review", "proposals")}
                        if fusion is None else asdict(fusion))
            own = before.get("threshold") if threshold is False else threshold
            mine = before.get("review") if review is None else review
            mine = None if mine in (None, reviewing.DEFAULT) else mine
            mode = before.get("proposals") if proposals is None else proposals
            mode = None if mode in (None, replace_at_once.DEFAULT) else mode
            return (settings | ({} if own is None else {"threshold": own}) | ({} if mine is None else {"review": mine})
                    | ({} if mode is None else {"proposals": mode}))

        return self.writer.set_settings(changed, client)

    def reindex(self) -> dict:
        return reindex(self.state)

    # -- reads (reading.py, searching.py, review.py) -------------------------------------

    def get(self, fact_id: int) -> Fact:
        return self.reader.get(fact_id)

    def count(self) -> int:
        return self.reader.count()

    def list(self, type: str | None = None, source: str | None = None, q: str | None = None, limit: int = 50,
             cursor: str | None = None, ids: list[int] | None = None,
             order: str | None = None, status: str | None = None, as_of: str | None = None,
             reviewed: bool | None = None, client: str | None = None,
             source_prefix: str | None = None) -> tuple[list[Fact], str | None, int]:
        return self.reader.list(type, source, q, limit, cursor, ids, order, status, as_of, reviewed, client, source_prefix)

    def sources(self) -> list[tuple[str, int]]:
        return self.reader.sources()

    def tokens(self, text: str) -> list[str]:
        return self.reader.tokens(text)

    def recall(self, query: str, type: str | None = None, limit: int = 15, debug: bool = False,
               fusion: Fusion | None = None, mode: str = "hybrid", log: bool = False, client: str = "",
               as_of: str | None = None, include_stale: bool = False) -> dict:
        """`log`: keep it in the recall log (the service logs unless the request says not to).
        From the facts current now, or `as_of` then; `include_stale`: from all."""
        started = time.perf_counter()
        fusion = fusion or self.state.fusion
        answer = self.searcher.recall(query, type, limit, debug, fusion, mode, as_of, include_stale)
        if log:
            self.recall_log.add(client, query, type, limit, asdict(fusion), answer, (time.perf_counter() - started) * 1000)
        return answer

    def explain(self, query: str, fact_id: int, type: str | None = None, fusion: Fusion | None = None,
                as_of: str | None = None, include_stale: bool = False) -> dict:
        return self.searcher.explain(query, fact_id, type, fusion, as_of, include_stale)

    # -- the contradictions queue (conflicts.py) ----------------------------------------

    def conflicts(self, limit: int = 50, cursor: str | None = None, every: bool = False,
                  done: bool = False) -> tuple[list[dict], str | None, int]:
        return self.conflicts_queue.open(limit, cursor, every, done)

    def kept_pairs(self) -> list[dict]:
        """Every pair kept, oldest first, as a backup's lines hold them (backup.py)."""
        return pairs_of(self.state.db)

    def restore_conflicts(self, pairs: list[dict], client: str = "") -> tuple[int, int]:
        return self.conflicts_queue.restore(pairs, client)

    def resolve(self, old: int, new: int, resolution: str, client: str = "") -> dict:
        return self.conflicts_queue.resolve(old, new, resolution, client)

    # -- the owner's review (reviewing.py) -------------------------------------------------

    def mark_reviewed(self, ids: list[int], client: str = "") -> tuple[list[int], int | None]:
        """Mark these facts reviewed: (the ids it reviewed, the history entry or None)."""
        return self.writer.review(ids, client)

    def duplicates(self, threshold: float | None = None, type: str | None = None,
                   limit: int = 1000) -> tuple[list[dict], int]:
        return self.review.duplicates(threshold, type, limit)

    def nearest(self, type: str | None = None) -> list[tuple[int, float]]:
        return self.review.nearest(type)

    def neighbours(self, fact_id: int, limit: int = 10) -> list[tuple[Fact, float]]:
        return self.review.neighbours(fact_id, limit)

    # -- what was done (history.py, recall_log.py) ------------------------------------

    def history_entries(self, limit: int = 50, cursor: str | None = None, op: str | None = None,
                        client: str | None = None, fact_id: int | None = None) -> tuple[list[Entry], str | None]:
        return self.history.entries(limit, cursor, op, client, fact_id)

    def history_entry(self, entry_id: int) -> Entry:
        return self.history.entry(entry_id)

    def forget(self, fact_id: int) -> int:
        """Forget for good (forgetting.py): the history entries removed."""
        return forget(self.state, self.recall_log, fact_id)

    def recalls(self, limit: int = 50, cursor: str | None = None, client: str | None = None, q: str | None = None,
                empty: bool = False, fact_id: int | None = None) -> tuple[list[RecallEntry], str | None, int]:
        return self.recall_log.entries(limit, cursor, client, q, empty, fact_id)

    def recall_entry(self, entry_id: int) -> RecallEntry:
        return self.recall_log.entry(entry_id)

    def clear_recalls(self) -> int:
        return self.recall_log.clear()

    def settings(self) -> dict:
        """The memory's own recall settings, the shipped ones, and which differ; the duplicate
        threshold, review floor and expansion cut-off in use, each with where it comes from
        (`model`: the model's row in models.py, `environment`, `memory`: its own settings, or
        for the floor `file`: the one another process rebuilt the pairs at)."""
        state = self.state
        with state.reading():  # (another process may have changed them)
            mine, shipped = asdict(state.fusion), asdict(state.shipped)
            own, floor = state.own_threshold, state.floor
        numbers = state.numbers
        expand_from = "memory" if mine["expand"] != shipped["expand"] else state.sources["expand"]
        return {
            "fusion": mine, "shipped": shipped, "changed": [k for k in mine if mine[k] != shipped[k]],
            "review": dict(state.review), "proposals": state.proposals,
            "model": {"id": state.model, "measured": numbers.measured},
            "thresholds": {
                "duplicate": {"value": state.threshold, "from": "memory" if own is not None else state.sources["duplicate"],
                              "model": numbers.threshold},
                "review_floor": {"value": floor, "from": "file" if floor != state.floor_setting else state.sources["review_floor"],
                                 "model": numbers.floor},
                "expand": {"value": mine["expand"], "from": expand_from, "model": numbers.expand},
            },
        }

    # -- the file (state.py, background.py) -------------------------------------------

    def stats(self) -> dict:
        return self.state.stats() | {"history": self.history.status()}

    def integrity(self) -> str:
        return self.state.integrity()

    def save_snapshot(self) -> bool:
        return self.state.save_snapshot()

    def wait_for_vocabulary(self, timeout: float | None = None) -> bool:
        """Whether the vocabulary holds every fact's words, waiting up to `timeout` seconds."""
        return self.state.vocabulary_ready.wait(timeout)
