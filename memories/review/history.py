"""What was done to the memory, by which client: one entry a write, written inside the write's
own transaction (so a write and its entry commit together or not at all), and the newest
`keep` entries kept. The write path (writing.py) records; the undo of an entry is a write too,
and lives there."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from ..facts import AlreadyUndone, Fact, InvalidInput, NotFound, now, stamp

if TYPE_CHECKING:  # (state.py reads the settings' defaults through reviewing.py, which imports this)
    from ..storage.state import State

OPS = ("add", "edit", "delete", "restore", "settings", "resolve", "review")
DEFAULT_KEEP = 10_000
# The trash is the history's deletes: other writes never push them out. A delete stays undoable
# for DELETES_DAYS and while it is among the last DELETES_KEPT, whichever is longer.
DELETES_DAYS = 30
DELETES_KEPT = 1_000
MAX_CLIENT = 64
MAX_NOTE = 200


def clean_client(value: object) -> str:
    """X-Memory-Client: 1 to 64 printable ASCII characters, or none ("")."""
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or len(value) > MAX_CLIENT or not all(" " <= c <= "~" for c in value):
        raise InvalidInput(f"X-Memory-Client must be 1 to {MAX_CLIENT} printable ASCII characters")
    return value


def client_matches(name: str) -> tuple[str, list]:
    """SQL for "entries of this client": the name as given, or followed by a space and a version
    ("walk-agent" finds "walk-agent 0.1", the MCP server's "name version"), as the Worker's does."""
    name = clean_client(name)
    if not name:
        return "client = ?", [""]
    return "(client = ? OR substr(client, 1, ?) = ?)", [name, len(name) + 1, name + " "]


def clean_page_cursor(cursor: str | None) -> int | None:
    """The history's and the recall log's cursor: the last id of the previous page."""
    if not cursor:
        return None
    if cursor.isascii() and cursor.isdigit() and len(cursor) <= 16 and 1 <= int(cursor) < 2**53:
        return int(cursor)
    raise InvalidInput("cursor is not one this service gave out")


def as_json(value: Fact | dict | None) -> str | None:
    if value is None:
        return None
    return json.dumps(asdict(value) if isinstance(value, Fact) else value, ensure_ascii=False)


@dataclass(frozen=True)
class Entry:
    id: int
    at: str
    client: str
    op: str
    fact_id: int | None
    before: dict | None
    after: dict | None
    note: str
    undone_by: int | None

    @classmethod
    def of(cls, row: tuple) -> Entry:
        id, at, client, op, fact_id, before, after, note, undone_by = row
        return cls(id, at, client, op, fact_id, json.loads(before) if before else None,
                   json.loads(after) if after else None, note, undone_by)

    def to_dict(self) -> dict:
        return asdict(self)


COLUMNS = "id, at, client, op, fact_id, before, after, note, undone_by"
# Past `keep`: every entry but the deletes, found by history_op (op, id) without passing the
# deletes kept; and, every PRUNE_DELETES_EVERY entries, the deletes past both their time and the
# newest DELETES_KEPT (the subquery is NULL with fewer deletes than that: then every delete stays).
PRUNE = f"DELETE FROM history WHERE op IN ({', '.join(repr(o) for o in OPS if o != 'delete')}) AND id <= ?"
PRUNE_DELETES = """DELETE FROM history WHERE op = 'delete' AND id <= ? AND at < ? AND id < (
    SELECT id FROM history WHERE op = 'delete' ORDER BY id DESC LIMIT 1 OFFSET ?)"""
PRUNE_DELETES_EVERY = 100


class History:
    def __init__(self, state: State, keep: int = DEFAULT_KEEP):
        self.state = state
        self.keep = keep

    def record(self, client: str, op: str, fact_id: int | None, before: Fact | dict | None = None,
               after: Fact | dict | None = None, note: str = "", undoes: int | None = None) -> int:
        """One entry, inside the caller's write transaction; the oldest past `keep` go in it too.
        `undoes`: the entry this write undoes, marked in the same transaction (once only: a
        second undo of it fails, and its write with it)."""
        db = self.state.db
        entry = db.execute(
            "INSERT INTO history (at, client, op, fact_id, before, after, note) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (now(), client, op, fact_id, as_json(before), as_json(after), note)).lastrowid
        if undoes is not None and not db.execute(
                "UPDATE history SET undone_by = ? WHERE id = ? AND undone_by IS NULL", (entry, undoes)).rowcount:
            raise AlreadyUndone(f"history entry {undoes} was undone already")
        db.execute(PRUNE, (entry - self.keep,))
        if entry % PRUNE_DELETES_EVERY == 0:
            month = stamp(datetime.now(UTC) - timedelta(days=DELETES_DAYS))
            db.execute(PRUNE_DELETES, (entry - self.keep, month, DELETES_KEPT - 1))
        return entry

    def status(self) -> dict:
        """How much the history holds and keeps, for /stats (an import says first what it would push out)."""
        with self.state.reading():
            entries, deletes = self.state.db.execute(
                "SELECT count(*), count(*) FILTER (WHERE op = 'delete' AND undone_by IS NULL) FROM history").fetchone()
        return {"entries": entries, "keep": self.keep, "deletes": deletes, "deletes_days": DELETES_DAYS,
                "deletes_kept": DELETES_KEPT}

    def entry(self, entry_id: int) -> Entry:
        """Inside a read or write the caller holds, or alone."""
        with self.state.reading():
            row = self.state.db.execute(f"SELECT {COLUMNS} FROM history WHERE id = ?", (entry_id,)).fetchone()
        if row is None:
            raise NotFound(f"no history entry with id {entry_id}")
        return Entry.of(row)

    def entries(self, limit: int = 50, cursor: str | None = None, op: str | None = None, client: str | None = None,
                fact_id: int | None = None) -> tuple[list[Entry], str | None]:
        """Newest first: (entries, next cursor or None)."""
        where, args = [], []
        if op:
            if op not in OPS:
                raise InvalidInput(f"op must be one of {', '.join(OPS)}")
            where.append("op = ?")
            args.append(op)
        if client is not None:
            sql, client_args = client_matches(client)
            where.append(sql)
            args.extend(client_args)
        if fact_id is not None:
            where.append("fact_id = ?")
            args.append(fact_id)
        before = clean_page_cursor(cursor)
        if before is not None:
            where.append("id < ?")
            args.append(before)
        with self.state.reading():
            rows = self.state.db.execute(
                f"SELECT {COLUMNS} FROM history WHERE {' AND '.join(where) or '1'} ORDER BY id DESC LIMIT ?",
                [*args, limit + 1]).fetchall()
        entries = [Entry.of(r) for r in rows[:limit]]
        return entries, str(entries[-1].id) if len(rows) > limit else None


def edited_after(db, ids: list[int], at: str) -> set[int]:
    """Of `ids`, the facts whose text an edit changed after `at` (inside a read): recall `as_of`
    answers a fact's text as it is now, and says so (`edited_since`)."""
    if not ids:
        return set()
    rows = db.execute(
        f"SELECT DISTINCT fact_id FROM history WHERE op = 'edit' AND at > ? AND fact_id IN ({','.join('?' * len(ids))})"
        " AND json_extract(before, '$.text') IS NOT json_extract(after, '$.text')", [at, *ids])
    return {r[0] for r in rows}
