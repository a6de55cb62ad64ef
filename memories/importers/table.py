"""Rows as people keep them elsewhere: CSV with a header row, a JSON array of objects, or JSON
Lines, with a column mapping (`text`, `type`, `source`, `time`: which column holds each; `text`
defaults to a column named text, memory, content or fact). A row whose text column is empty, or
too long, is refused with its line; a file that does not parse is refused whole, with the line."""

from __future__ import annotations

import csv
import io
import json

from . import DEEP, MAX_BYTES, Malformed, Parsed, lines, load_json
from .facts import candidate

# csv refuses a field over 128 KB (field_size_limit) as an error that stops the reader, which
# would refuse the whole file at the wrong line. A field as big as the file may be instead: the
# row is then refused for its text's length, with its line (the limit is process-wide; the file
# is in memory already, so a field costs at most as much again).
csv.field_size_limit(max(csv.field_size_limit(), MAX_BYTES))

TEXT_COLUMNS = ("text", "memory", "content", "fact")
# The other roles' columns found by their names: a dated row keeps its date without a mapping (an
# import dated "now" would be newer than, and propose replacing, what the memory learnt since).
NAMED = {"type": ("type",), "source": ("source",),
         "time": ("time", "created_at", "created", "date", "timestamp", "updated_at")}


class Unmapped(Malformed):
    """No column holds the text: the page's mapping, or the CLI's --map, names the one that does."""

ROLES = ("text", "type", "source", "time")


def mapped(columns: list[str], mapping: dict, format: str) -> dict:
    unknown = set(mapping) - set(ROLES)
    if unknown:
        raise Malformed(f"the mapping names {', '.join(sorted(unknown))}: it maps {', '.join(ROLES)} to columns")
    out = dict(mapping)
    if "text" not in out:
        out["text"] = next((c for c in columns if c.strip().lower() in TEXT_COLUMNS), None)
    for role, names in NAMED.items():  # a column named for its role is read as it, unless mapped
        if role not in mapping:
            found = next((c for c in columns if c.strip().lower() in names and c not in out.values()), None)
            if found:
                out[role] = found
    if not out["text"]:
        raise Unmapped(f"no column holds the text (columns: {', '.join(columns) or 'none'}): say which one does")
    missing = [c for c in out.values() if c not in columns]
    if missing and columns:
        raise Malformed(f"the mapping names columns the file lacks: {', '.join(missing)} (columns: {', '.join(columns)})")
    return out


def rows(parsed: Parsed, records: list[tuple[int, dict]], mapping: dict, format: str) -> Parsed:
    parsed.columns = list(dict.fromkeys(k for _, r in records for k in r))
    roles = mapped(parsed.columns, mapping, format)
    for line, record in records:
        source = record.get(roles["source"]) if roles.get("source") else None
        # The file's own source kept beside the import's provenance, so "any import" finds the row.
        candidate(parsed, line, record.get(roles["text"]), f"import:{format}:{source}" if source else f"import:{format}",
                  record.get(roles["type"]) if roles.get("type") else None,
                  record.get(roles["time"]) if roles.get("time") else None)
    return parsed


def csv_rows(text: str, mapping: dict) -> Parsed:
    reader = csv.DictReader(io.StringIO(text, newline=""), strict=True)
    try:
        records = [(reader.line_num, dict(r)) for r in reader]
    except csv.Error as e:
        raise Malformed(f"line {reader.line_num}: {e}") from None
    parsed = Parsed(columns=list(reader.fieldnames or []))
    if any(None in r for _, r in records):
        line = next(n for n, r in records if None in r)
        raise Malformed(f"line {line}: more values than the header has columns")
    return rows(parsed, records, mapping, "csv")


def objects(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise Malformed(f"{where}: not a JSON object")
    return value


WRAPPERS = ("memories", "facts", "items", "data", "results")  # {"memories": [...]}: the list inside


def json_array(text: str, mapping: dict) -> Parsed:
    data = load_json(text)
    if isinstance(data, dict):
        data = next((data[k] for k in WRAPPERS if isinstance(data.get(k), list)), data)
    if not isinstance(data, list):
        raise Malformed(f"line 1: not a JSON array of memories, nor an object holding one ({', '.join(WRAPPERS)})")
    # A list of strings is a list of memories; an array has no line per object: each is numbered
    # by its place in the array, from 1.
    parsed = Parsed(refused=[(i, "not a memory: a JSON string or object") for i, v in enumerate(data, start=1)
                             if not isinstance(v, (str, dict))])
    records = [(i, {"text": v} if isinstance(v, str) else v) for i, v in enumerate(data, start=1) if isinstance(v, (str, dict))]
    parsed = rows(parsed, records, mapping, "json")
    parsed.refused.sort(key=lambda refused: refused[0])
    return parsed


def json_lines(text: str, mapping: dict) -> Parsed:
    parsed, records = Parsed(), []
    for n, line in enumerate(lines(text), start=1):
        if not line.strip():
            continue
        try:
            records.append((n, objects(json.loads(line), f"line {n}")))
        except json.JSONDecodeError as e:
            raise Malformed(f"line {n}: not JSON ({e.msg})") from None
        except RecursionError:  # JSON all the same: this line is refused, the others read
            parsed.refused.append((n, DEEP))
    parsed = rows(parsed, records, mapping, "jsonl")
    parsed.refused.sort(key=lambda refused: refused[0])  # in the file's order, with the rows' own
    return parsed
