"""A backup of a memory (the dashboard's Export, or `python -m memories export`): a fact a JSON
line with its id and times, the memory's settings first when it has its own, its pairs after
(memories/backup.py writes it, and reads it for the CLI with the engine's own checks; this reader
runs beside the dashboard, which never imports the engine, and the memory checks every line again).

A backup goes two ways. Into an empty memory it is restored as it was (`rows`, `settings`,
`pairs`: the Import page's "Restore"), ids, times, replaced facts and pairs kept. Into a memory
that holds facts, its current facts are imported as new ones (`items`, deduplicated there like any
import's): a fact the backup holds as replaced is no memory there, since it would come back as
current, and is counted as such with its line; its ids, pairs and settings are the backup's own
and stay out."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from . import Malformed, Parsed, lines
from .facts import Refused, candidate, checked_text, checked_time

FIELDS = ("id", "text", "type", "source", "created_at", "updated_at", "valid_until", "superseded_by", "reviewed_at")
TIMES = ("created_at", "updated_at", "valid_until", "reviewed_at")


@dataclass
class BackupFile(Parsed):
    rows: list[dict] = field(default_factory=list)  # every fact as the backup holds it, for a restore
    settings: dict | None = None  # as PUT /settings takes them
    pairs: list[dict] = field(default_factory=list)  # as POST /conflicts/restore takes them

    @property
    def replaced(self) -> int:
        return sum(1 for r in self.rows if r.get("superseded_by") is not None)


def is_backup(records: list[dict]) -> bool:
    """JSON Lines written by an export: a settings line first, or every line a fact with its id
    and time (or a pair)."""
    return bool(records) and ("settings" in records[0] or all(
        {"id", "text", "created_at"} <= set(r) or set(r) == {"conflict"} for r in records))


def read(text: str, mapping: dict) -> BackupFile:
    parsed = BackupFile(columns=list(FIELDS))
    for n, line in enumerate(lines(text), start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            parsed.refused.append((n, "not a JSON line"))
            continue
        if not isinstance(data, dict):
            parsed.refused.append((n, "not a JSON object"))
        elif set(data) == {"settings"}:
            if isinstance(data["settings"], dict) and parsed.settings is None:
                parsed.settings = data["settings"]
            else:
                parsed.refused.append((n, "the settings must be one JSON object, once"))
        elif set(data) == {"conflict"}:
            if isinstance(data["conflict"], dict):
                parsed.pairs.append(data["conflict"])
            else:
                parsed.refused.append((n, "a pair must be a JSON object"))
        else:
            fact(parsed, n, data)
    if not parsed.rows and not parsed.refused:
        raise Malformed("line 1: no fact in this backup")
    return parsed


def fact(parsed: BackupFile, n: int, data: dict) -> None:
    """The row as the backup holds it, checked as the memory will; and, when current, the fact as
    a new one for a memory that holds facts."""
    try:
        row = {k: data[k] for k in FIELDS if data.get(k) is not None or (k == "reviewed_at" and k in data)}
        row["text"] = checked_text(data.get("text"))
        if "id" in row and (not isinstance(row["id"], int) or isinstance(row["id"], bool) or row["id"] < 1):
            raise Refused("its id is not a positive whole number")
        for k in TIMES:
            if row.get(k) is not None:
                if not isinstance(row[k], str):
                    raise Refused(f"its {k} is not text")
                checked_time(row[k])
    except Refused as e:
        parsed.refused.append((n, str(e)))
        return
    if row.get("superseded_by") is not None:
        parsed.rows.append(row)
        parsed.not_memories.append((n, f"replaced by #{row['superseded_by']} in the backup: it would come back as "
                                       "current"))
        return
    before = len(parsed.items)
    candidate(parsed, n, row["text"], row.get("source", ""), row.get("type"), row.get("created_at"), row.get("valid_until"))
    if len(parsed.items) > before:  # (else refused, with its line: its type or source)
        parsed.rows.append(row)
