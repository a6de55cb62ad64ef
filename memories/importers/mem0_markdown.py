"""mem0's own Markdown export: what its plugin's `/mem0:export` writes (`mem0-export-<project>-<date>.md`,
integrations/mem0-plugin/skills/export/SKILL.md in mem0ai/mem0), and its `/mem0:import` reads back.
Each memory is a block of front matter between `---` lines, then its text:

    ---
    id: 3f2a...
    created_at: 2026-05-14T09:12:44.118204-07:00
    type: user_preference
    confidence: 0.9
    branch: main
    files: src/app.py, src/db.py
    categories: user_preferences, coding
    ---
    Prefers pytest over unittest.

A field may be empty. The text is the fact (all its lines, as mem0 keeps one memory); `created_at`
its time; `expiration_date`, which the export does not write but a block may hold, when it stops
being true (`valid_until`); `type` the fact's type when it is fact, skill or log, else kept in the
source (`import:mem0#user_preference`). The id is not kept: the memory gives its own.

A `---` line starts the next memory only when key: value lines and a closing `---` follow it: a
rule inside a memory's text stays in the text. Read a line at a time, never as YAML."""

from __future__ import annotations

import re

from . import Malformed, Parsed, lines
from .facts import TYPES, candidate

KEY = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*:(.*)")
COLUMNS = ["created_at", "type", "expiration_date", "text"]


def front_matter(rows: list[str], at: int) -> tuple[dict, int] | None:
    """The fields of the front matter opening on rows[at] and the index of its closing `---`; None
    when rows[at] opens none. Each call stops at the first line that is no field."""
    if rows[at].strip() != "---":
        return None
    fields: dict[str, str] = {}
    for n in range(at + 1, len(rows)):
        if rows[n].strip() == "---":
            return (fields, n) if fields else None
        key = KEY.fullmatch(rows[n])
        if not key:
            return None
        fields.setdefault(key.group(1), key.group(2).strip().strip("\"'"))
    return None


def first_block(rows: list[str]) -> int | None:
    """The index of the first memory's front matter, when the text opens with one holding an id."""
    start = next((n for n, row in enumerate(rows) if row.strip()), None)
    found = front_matter(rows, start) if start is not None else None
    return start if found and "id" in found[0] else None


def is_export(text: str) -> bool:
    return first_block(lines(text)) is not None


def read(text: str) -> Parsed:
    rows = lines(text)
    at = first_block(rows)
    if at is None:
        raise Malformed("line 1: not mem0's Markdown export: it does not open with a memory's front matter "
                        "(---, id: ..., ---)")
    parsed = Parsed(columns=COLUMNS)
    while at is not None:
        fields, close = front_matter(rows, at)  # type: ignore[misc]
        end = next((n for n in range(close + 1, len(rows)) if front_matter(rows, n)), len(rows))
        kind = fields.get("type") or None
        candidate(parsed, at + 1, "\n".join(rows[close + 1 : end]).strip(),
                  "import:mem0" if kind in TYPES or not kind else f"import:mem0#{kind}"[:200],
                  kind if kind in TYPES else None, fields.get("created_at") or None, fields.get("expiration_date") or None)
        at = end if end < len(rows) else None
    return parsed
