"""The MCP reference memory server's knowledge graph (`memory.jsonl`, the file the server-memory
package keeps for Claude Desktop, Claude Code and other MCP hosts): one JSON object a line,
`{"type": "entity", "name", "entityType", "observations": [...]}` or `{"type": "relation",
"from", "to", "relationType"}`. Real files also hold `from_entity` / `to_entity` (and a `weight`),
an entity repeated with another type, and relations to entities never declared.

Each observation is a fact about its entity, said with its name ("D3.js: Лицензия: ISC"), its
source `import:mcp-memory#<entity>`; each relation a fact ("server-memory-editor uses D3.js"),
`import:mcp-memory#relation`. The graph keeps no times. A line that is not an entity or a
relation, an observation that is not text, and an observation said twice are refused with the
line and why."""

from __future__ import annotations

import json

from . import Parsed, lines
from .facts import candidate

SOURCE = "import:mcp-memory"


def read(text: str, mapping: dict) -> Parsed:
    parsed = Parsed(columns=["entity", "observation", "relation"])
    seen: set[tuple[str, str]] = set()
    for n, line in enumerate(lines(text), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            parsed.refused.append((n, "not a JSON object"))
            continue
        kind = record.get("type") if isinstance(record, dict) else None
        if kind == "entity":
            entity(parsed, n, record, seen)
        elif kind == "relation":
            relation(parsed, n, record)
        else:
            parsed.refused.append((n, 'not an entity or a relation ("type" is neither)'))
    return parsed


def entity(parsed: Parsed, n: int, record: dict, seen: set[tuple[str, str]]) -> None:
    name, observations = record.get("name"), record.get("observations")
    if not isinstance(name, str) or not name.strip():
        parsed.refused.append((n, "an entity without a name"))
        return
    if not isinstance(observations, list):
        parsed.refused.append((n, f"entity {name}: observations is not a list"))
        return
    for observation in observations:
        if not isinstance(observation, str) or not observation.strip():
            parsed.refused.append((n, f"entity {name}: an observation that is not text"))
        elif (name, observation.strip()) in seen:  # (the server's own writes repeat one at times)
            parsed.refused.append((n, f"entity {name}: said already: {observation.strip()[:60]}"))
        else:
            seen.add((name, observation.strip()))
            candidate(parsed, n, f"{name.strip()}: {observation.strip()}", f"{SOURCE}#{name.strip()}"[:200])


def relation(parsed: Parsed, n: int, record: dict) -> None:
    parts = [record.get(a) if record.get(a) is not None else record.get(b)
             for a, b in (("from", "from_entity"), ("relationType", "relation_type"), ("to", "to_entity"))]
    if not all(isinstance(p, str) and p.strip() for p in parts):
        parsed.refused.append((n, "a relation without from, relationType and to"))
        return
    candidate(parsed, n, " ".join(p.strip() for p in parts), f"{SOURCE}#relation")
