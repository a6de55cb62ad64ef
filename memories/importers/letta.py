"""Letta's memories: an agent file (`.af`, letta_agent.py reads its memory blocks), or its archival memory: passages as its API lists them (`GET /v1/agents/{id}/archival-memory`,
`/v1/archives/{id}/passages`): each `{"id", "text", "created_at", "tags", "metadata", ...}`, as a
list or under "passages". The text is `text`; the source `import:letta`, and `import:letta:<tag>` when a
passage has exactly one tag (a tag says what kind of memory it is)."""

from __future__ import annotations

from . import Parsed, json_list, letta_agent, load_json
from .facts import candidate


def read(text: str, mapping: dict) -> Parsed:
    document = letta_agent.unwrapped(load_json(text))
    if letta_agent.is_agent_file(document):
        return letta_agent.read(document)
    data = json_list(text, ("passages", "data"), "Letta's passages or an agent file (.af)")
    parsed = Parsed(columns=["text", "created_at", "tags"])
    for i, p in enumerate(data, start=1):
        if not isinstance(p, dict):
            parsed.refused.append((i, "not a passage object"))
            continue
        tags = p.get("tags") if isinstance(p.get("tags"), list) else []
        source = f"import:letta:{tags[0]}" if len(tags) == 1 and isinstance(tags[0], str) and tags[0] else "import:letta"
        candidate(parsed, i, p.get("text"), source[:200], None, p.get("created_at"))
    return parsed
