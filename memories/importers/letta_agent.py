"""A Letta agent file (`.af`, what Letta users share and keep: github.com/letta-ai/agent-file):
the agent's memory blocks, each a label ("human", "persona", ...) and a value of lines. Two
schemas are in use: the old one, one agent with `core_memory: [{label, value, created_at}]`, and
today's, `{"agents": [{name, block_ids}], "blocks": [{id, label, value}], "created_at"}`; files
saved by some versions hold the whole document again as one JSON string. An agent file holds no
archival passages (letta.py reads those).

Each line of a block's value is a fact (bullets, numbering and bold stars taken off); a heading
("# Admins", "**Roast Style:**", "Interests:"), a field left empty
("Last name: ?") and a blank line are not, and are counted as skipped. The source is
`import:letta:<agent>#<label>`; the time the block's `updated_at` or `created_at`, else the
file's."""

from __future__ import annotations

import re

from . import Malformed, Parsed, load_json
from .facts import candidate
from .plain_list import BULLET

HEADING = re.compile(r"#{1,6}\s.*|[^.!?:]{0,60}:|\*\*[^*]{1,80}\*\*:?")
EMPTY_FIELD = re.compile(r"[^:]{1,40}:\s*[?]*")


def unwrapped(document: object) -> object:
    """The document, decoded again when a Letta version saved it as a JSON string of the JSON."""
    if isinstance(document, str) and document.lstrip().startswith("{"):
        return load_json(document)
    return document


def is_agent_file(data: object) -> bool:
    return isinstance(data, dict) and ("core_memory" in data or ("agents" in data and "blocks" in data))


def read(data: dict) -> Parsed:
    """`data`: the agent file's document, decoded (and decoded again when it was a string)."""
    parsed = Parsed(columns=["block", "line"])
    if "core_memory" in data:  # the old schema: one agent
        agent, blocks = data.get("name"), data.get("core_memory")
    else:
        agents = data.get("agents") if isinstance(data.get("agents"), list) else []
        first = agents[0] if agents and isinstance(agents[0], dict) else {}
        agent, blocks = first.get("name"), data.get("blocks")
        wanted = first.get("block_ids")
        if isinstance(wanted, list) and isinstance(blocks, list):  # the first agent's blocks, in its order
            by_id = {b.get("id"): b for b in blocks if isinstance(b, dict)}
            blocks = [by_id[i] for i in wanted if i in by_id]
    if not isinstance(blocks, list):
        raise Malformed("line 1: a Letta agent file without memory blocks")
    agent = agent if isinstance(agent, str) and agent.strip() else "agent"
    at = 0
    for n, block in enumerate(blocks, start=1):
        if not isinstance(block, dict) or not isinstance(block.get("value"), str):
            parsed.refused.append((at + 1, f"memory block {n}: no value"))
            continue
        label = block.get("label") if isinstance(block.get("label"), str) else "block"
        when = block.get("updated_at") or block.get("created_at") or data.get("created_at")
        for line in block["value"].split("\n"):
            at += 1
            text = line.strip()
            bullet = BULLET.match(text)
            fact = text[bullet.end():].strip() if bullet else text
            if not fact or HEADING.fullmatch(text) or EMPTY_FIELD.fullmatch(fact):
                continue
            candidate(parsed, at, fact.replace("**", "").strip("* ").strip(), f"import:letta:{agent}#{label}"[:200], None, when)
    return parsed
