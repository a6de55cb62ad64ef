"""Letta agent files (`.af`) imported (issue 47), on real files from Letta's agent-file repository
(tests/fixtures/imports/README.md): the old schema (`core_memory`), today's (`agents` and
`blocks` with `block_ids`) saved as a JSON string of the JSON, and a many-block agent. Each line
of a memory block is a fact with its block in the source; headings and fields left empty are
not facts. Then the CLI's dry run and import of the many-block agent on both memories store the
same, and few of its lines are proposed as replacing another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memories import importers
from memories.importers import Malformed, letta
from tests.cli_import import dry_run_then_import

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "imports"
OLD, NEW, EVIE = (FIXTURES / f for f in ("letta-memgpt-agent-2025-03.af", "letta-memgpt-agent-2025-11.af", "letta-evie.af"))


def document(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    return json.loads(data) if isinstance(data, str) else data


def test_both_schemas_give_the_same_facts_of_the_same_blocks():
    old, new = importers.read("letta", OLD), importers.read("letta", NEW)
    assert old.refused == new.refused == []
    assert sorted((i["source"], i["text"]) for i in old.items) == sorted((i["source"], i["text"]) for i in new.items)
    human = [i["text"] for i in new.items if i["source"] == "import:letta:memgpt_agent#human"]
    assert "First name: Chad" in human and "Occupation: Computer science PhD student at UC Berkeley" in human
    assert not [t for t in human if t.endswith("?")]  # "Last name: ?": a field left empty
    # The old schema dates each block; today's file, the file.
    blocks = {b["label"]: b["created_at"] for b in document(OLD)["core_memory"]}
    assert {i["created_at"] for i in old.items if i["source"].endswith("#human")} == {blocks["human"]}
    assert {i["created_at"] for i in new.items} == {document(NEW)["created_at"]}


def test_an_agent_with_many_blocks_gives_its_own_blocks_lines_without_headings():
    parsed = importers.read("letta", EVIE)
    data = document(EVIE)
    agent = data["agents"][0]
    labels = {b["id"]: b["label"] for b in data["blocks"]}
    mine = {f"import:letta:{agent['name']}#{labels[i]}" for i in agent["block_ids"]}
    assert parsed.refused == [] and {i["source"] for i in parsed.items} <= mine
    assert len({i["source"] for i in parsed.items}) > 5
    texts = {i["text"] for i in parsed.items}
    assert "My name is Evie" in texts  # "- My name is Evie": the bullet off
    assert not [t for t in texts if t.startswith("#") or "**" in t or t in ("Admins", "Moderators")]
    lines = sum(1 for i in agent["block_ids"] for b in data["blocks"] if b["id"] == i for line in b["value"].split("\n") if line.strip())
    assert len(parsed.items) < lines  # headings and blank lines skipped, not imported


def test_a_file_that_is_neither_passages_nor_an_agent_says_so():
    with pytest.raises(Malformed, match="agent file"):
        letta.read(json.dumps({"agents": "none"}), {})
    with pytest.raises(Malformed, match="without memory blocks"):
        letta.read(json.dumps({"agents": [{"name": "x"}], "blocks": None}), {})
    parsed = letta.read(json.dumps(json.dumps({"core_memory": [{"label": "human", "value": None},
                                                               {"label": "human", "value": "- Likes tea\n\nName: ?"}]})), {})
    assert [i["text"] for i in parsed.items] == ["Likes tea"] and len(parsed.refused) == 1


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_the_cli_stores_exactly_what_its_dry_run_said_on_both_memories(service, api):
    store, merged, proposed, refused = dry_run_then_import(service, EVIE, "letta")
    assert store + merged == len(importers.read("letta", EVIE).items) and refused == 0
    stored = api.get("/facts", params={"source_prefix": "import:letta:Evie#", "limit": 100}).json()
    assert stored["total"] == store
    # An agent's blocks must not fill the queue: at most one pair per 20 facts. (The dry run checks
    # 100 facts at a time, each batch rolled back, so it cannot see a pair across two batches: the
    # queue may hold more than it said, never fewer.)
    queue = api.get("/conflicts").json()["total"]
    assert proposed <= queue <= (store + merged) / 20


def test_passages_from_the_archival_memory_api_keep_their_time_written_with_a_space(service, api, tmp_path):
    # Issue 47: the archival-memory API writes created_at with a space ("2025-11-06 01:30:07.520938+00:00").
    passages = tmp_path / "passages.json"
    passages.write_text(json.dumps([
        {"id": "passage-1", "text": "Chad prefers the window seat on long flights.", "created_at": "2025-11-06 01:30:07.520938+00:00",
         "tags": ["travel"]},
        {"id": "passage-2", "text": "Chad's sister Dana lives in Tucson.", "created_at": "2025-11-07 09:00:00+00:00", "tags": []},
    ]))
    store, merged, _, refused = dry_run_then_import(service, passages, "auto")
    assert (store + merged, refused) == (2, 0)
    facts = {f["text"]: f for f in api.get("/facts", params={"q": "Chad", "limit": 100}).json()["facts"]}  # (beside Evie's)
    seat = facts["Chad prefers the window seat on long flights."]
    assert seat["source"] == "import:letta:travel" and seat["created_at"].startswith("2025-11-06T01:30:07.520938")
    assert facts["Chad's sister Dana lives in Tucson."]["created_at"].startswith("2025-11-07T09:00:00")
