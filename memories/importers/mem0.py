"""mem0's memories, in the shapes its users have them:

- JSON, as `get_all` (v1: a list; v2 and the open-source Memory: `{"results": [...]}`, a page of
  them with `count` and `next`) or its export gives them: each `{"id", "memory", "hash",
  "metadata", "created_at", "updated_at", "expiration_date"?, "user_id", ...}`, times ISO-8601 with
  an offset ("2024-07-25T23:57:00.108367-07:00");
- CSV, as users dump them (`id,memory,metadata[,created_at,...]`): the metadata a Python dict
  printed with single quotes, some rows with an empty `memory` and the text in
  `metadata['data']`, cells over several lines;
- Markdown, as its plugin's export writes it: a block of front matter then the text, for each
  memory (mem0_markdown.py).

The text is `memory` (else the metadata's `data`); `metadata.type`, when it is fact, skill or log,
the type; `expiration_date` when the fact stops being true (`valid_until`); the source
`import:mem0`."""

from __future__ import annotations

import ast
import csv
import io
import json

from . import Malformed, Parsed, json_list, mem0_markdown
from .facts import candidate


def read(text: str, mapping: dict) -> Parsed:
    if text.lstrip().startswith("---"):
        return mem0_markdown.read(text)
    if text.lstrip()[:1] not in ("[", "{"):
        return read_csv(text)
    data = json_list(text, ("results", "memories"), "mem0's memories")
    parsed = Parsed(columns=["memory", "created_at", "metadata", "expiration_date"])
    for i, m in enumerate(data, start=1):
        if not isinstance(m, dict):
            parsed.refused.append((i, "not a memory object"))
            continue
        memory(parsed, i, m, m.get("metadata") if isinstance(m.get("metadata"), dict) else {})
    return parsed


def memory(parsed: Parsed, line: int, m: dict, meta: dict) -> None:
    kind = meta.get("type") if meta.get("type") in ("fact", "skill", "log") else None
    text = m.get("memory") or meta.get("data")
    candidate(parsed, line, text, "import:mem0", kind, m.get("created_at") or meta.get("created_at"),
              m.get("expiration_date"))


def read_csv(text: str) -> Parsed:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        rows = [(reader.line_num, dict(r)) for r in reader]
    except csv.Error as e:
        raise Malformed(f"line {reader.line_num}: {e}") from None
    if "memory" not in (reader.fieldnames or []):
        raise Malformed(f"line 1: not mem0's memories: no memory column (columns: {', '.join(reader.fieldnames or [])})")
    parsed = Parsed(columns=list(reader.fieldnames or []))
    for line, row in rows:
        memory(parsed, line, row, printed_dict(row.get("metadata")))
    return parsed


def printed_dict(value: object) -> dict:
    """The metadata cell: a Python dict as printed ("{'data': 'Likes tea', 'category': None}"), or
    JSON; anything else is no metadata. literal_eval reads literals only, never code."""
    if not isinstance(value, str) or not value.strip().startswith("{"):
        return {}
    try:
        found = ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        try:
            found = json.loads(value)
        except (ValueError, RecursionError):
            return {}
    return found if isinstance(found, dict) else {}
