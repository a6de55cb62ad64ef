"""mem0's memories as its `get_all` (v1: a list; v2 and the open-source Memory: `{"results": [...]}`)
or its export gives them: each `{"id", "memory", "hash", "metadata", "created_at", "updated_at",
"user_id", ...}`, times ISO-8601 with an offset ("2024-07-25T23:57:00.108367-07:00"). The text is
`memory`; `metadata.type`, when it is fact, skill or log, the type; the source `import:mem0`."""

from __future__ import annotations

from . import Parsed, json_list
from .facts import candidate


def read(text: str, mapping: dict) -> Parsed:
    data = json_list(text, ("results", "memories"), "mem0's memories")
    parsed = Parsed(columns=["memory", "created_at", "metadata"])
    for i, m in enumerate(data, start=1):
        if not isinstance(m, dict):
            parsed.refused.append((i, "not a memory object"))
            continue
        meta = m.get("metadata") if isinstance(m.get("metadata"), dict) else {}
        kind = meta.get("type") if meta.get("type") in ("fact", "skill", "log") else None
        candidate(parsed, i, m.get("memory"), "import:mem0", kind, m.get("created_at"))
    return parsed
