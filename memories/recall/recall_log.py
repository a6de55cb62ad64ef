"""The recall log: what each client asked, what it got back (ids, `via`, scores in order), under
which settings and model, and how long it took; the newest `keep` recalls, so the owner can
debug a bad recall after the fact. A row a recall, in a transaction of its own after the recall
has answered; a log write that fails is logged and never fails the recall."""

from __future__ import annotations

import json
import logging
import sqlite3
from dataclasses import asdict, dataclass

from ..facts import InvalidInput, NotFound, StoreError, now, valid_unicode
from ..review.history import clean_page_cursor, client_matches
from ..storage.migrations import transaction
from ..storage.state import State

log = logging.getLogger(__name__)

DEFAULT_KEEP = 2_000
MAX_FILTER = 1_000  # a `q` filter, in characters

COLUMNS = 'id, at, client, query, type, mode, "limit", settings, results, model, ms'


@dataclass(frozen=True)
class RecallEntry:
    id: int
    at: str
    client: str
    query: str
    type: str | None
    mode: str
    limit: int
    settings: dict
    results: list[dict]
    model: str | None
    ms: float

    @classmethod
    def of(cls, row: tuple) -> RecallEntry:
        id, at, client, query, type, mode, limit, settings, results, model, ms = row
        return cls(id, at, client, query, type, mode, limit, json.loads(settings), json.loads(results), model, ms)

    def to_dict(self) -> dict:
        return asdict(self)


class RecallLog:
    def __init__(self, state: State, keep: int = DEFAULT_KEEP):
        self.state = state
        self.keep = keep

    def add(self, client: str, query: str, type: str | None, limit: int, settings: dict, answer: dict, ms: float) -> None:
        """Log one recall as `Searcher.recall` answered it; never raises."""
        if self.keep <= 0:
            return
        # The text as given: what the agent got stays readable after an edit or a delete.
        results = [{"id": r["fact"]["id"], "via": r["via"], "score": r["score"], "text": r["fact"]["text"]}
                   for r in answer["results"]]
        row = (now(), client, query, type, answer["mode"], limit, json.dumps(settings),
               json.dumps(results), self.state.model, ms)
        db = self.state.db
        try:
            with self.state.lock, transaction(db):
                results = unforgotten(db, results)  # a fact forgotten while this recall ran keeps no text
                row = (*row[:7], json.dumps(results), *row[8:])
                entry = db.execute(f"INSERT INTO recalls ({COLUMNS.partition(', ')[2]}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                   row).lastrowid
                db.execute("DELETE FROM recalls WHERE id <= ?", (entry - self.keep,))
        except (sqlite3.Error, StoreError):
            log.exception("could not log a recall in %s; the recall itself was answered", self.state.path)

    def entry(self, entry_id: int) -> RecallEntry:
        with self.state.reading():
            row = self.state.db.execute(f"SELECT {COLUMNS} FROM recalls WHERE id = ?", (entry_id,)).fetchone()
        if row is None:
            raise NotFound(f"no logged recall with id {entry_id}")
        return RecallEntry.of(row)

    def entries(self, limit: int = 50, cursor: str | None = None, client: str | None = None, q: str | None = None,
                empty: bool = False, fact_id: int | None = None) -> tuple[list[RecallEntry], str | None, int]:
        """Newest first: (recalls, next cursor or None, total matching the filters)."""
        where, args = [], []
        if client is not None:
            sql, client_args = client_matches(client)
            where.append(sql)
            args.extend(client_args)
        if q:
            if len(q) > MAX_FILTER:
                raise InvalidInput(f"q is {len(q)} characters; the limit is {MAX_FILTER}")
            where.append("instr(lower(query), lower(?)) > 0")
            args.append(valid_unicode(q, "q"))
        if empty:
            where.append("results = '[]'")
        if fact_id is not None:
            where.append("EXISTS (SELECT 1 FROM json_each(recalls.results) WHERE json_extract(value, '$.id') = ?)")
            args.append(fact_id)
        filters = " AND ".join(where) or "1"
        before = clean_page_cursor(cursor)
        page, page_args = (filters + " AND id < ?", [*args, before]) if before is not None else (filters, args)
        db = self.state.db
        with self.state.reading():
            total = db.execute(f"SELECT count(*) FROM recalls WHERE {filters}", args).fetchone()[0]
            rows = db.execute(f"SELECT {COLUMNS} FROM recalls WHERE {page} ORDER BY id DESC LIMIT ?",
                              [*page_args, limit + 1]).fetchall()
        recalls = [RecallEntry.of(r) for r in rows[:limit]]
        return recalls, str(recalls[-1].id) if len(rows) > limit else None, total

    def forget(self, fact_id: int) -> int:
        """A fact forgotten for good leaves no text in the log: each row that returned it keeps the
        id, marked forgotten (inside the caller's write). The rows that hold it, found by json_each."""
        db = self.state.db
        rows = db.execute("SELECT id, results FROM recalls WHERE EXISTS (SELECT 1 FROM json_each(recalls.results)"
                          " WHERE json_extract(value, '$.id') = ?)", (fact_id,)).fetchall()
        for entry, results in rows:
            kept = [{k: v for k, v in r.items() if k != "text"} | {"forgotten": True} if r["id"] == fact_id else r
                    for r in json.loads(results)]
            db.execute("UPDATE recalls SET results = ? WHERE id = ?", (json.dumps(kept), entry))
        return len(rows)

    def clear(self) -> int:
        with self.state.lock, transaction(self.state.db):
            return self.state.db.execute("DELETE FROM recalls").rowcount


def unforgotten(db, results: list[dict]) -> list[dict]:
    """`results` with the text of each fact forgotten since it was read taken out, marked as
    `forget` marks it: a fact no longer here and with no history entry (forgetting.py removes them
    all; a fact deleted and not forgotten keeps its delete entry). Inside the log's write."""
    ids = [r["id"] for r in results]
    if not ids:
        return results
    marks = ",".join("?" * len(ids))
    here = {r[0] for r in db.execute(f"SELECT id FROM facts WHERE id IN ({marks}) UNION SELECT fact_id FROM history"
                                     f" WHERE fact_id IN ({marks})", [*ids, *ids])}
    return [r if r["id"] in here else {k: v for k, v in r.items() if k != "text"} | {"forgotten": True} for r in results]
