"""The MCP memory server's knowledge graph (`memory.jsonl`) imported (issue 47): on a real file
(tests/fixtures/imports/README.md says whose), each observation a fact about its entity, each
relation a fact, an entity repeated under another type and relations to entities never declared
kept; the variants real files hold; what cannot be a fact refused with its line. Then the CLI's
dry run and import of the real file on both memories: it stores exactly what the dry run said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memories import importers
from memories.importers import mcp_memory
from tests.cli_import import dry_run_then_import

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "fixtures" / "imports" / "mcp-memory-editor.jsonl"


def records() -> list[dict]:
    return [json.loads(line) for line in REAL.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_real_graph_gives_a_fact_for_each_observation_and_each_relation():
    parsed = importers.read("mcp-memory", REAL)
    entities = [r for r in records() if r["type"] == "entity"]
    relations = [r for r in records() if r["type"] == "relation"]
    said = {(e["name"], o) for e in entities for o in e["observations"]}
    assert parsed.refused == []
    assert len(parsed.items) == len(said) + len(relations)
    texts = {i["text"] for i in parsed.items}
    assert all(f"{name}: {o}" in texts for name, o in said)
    # "D3.js" is declared three times, as technology and as library: every observation of each is kept.
    d3 = [i for i in parsed.items if i["source"] == "import:mcp-memory#D3.js"]
    assert len(d3) == sum(len(e["observations"]) for e in entities if e["name"] == "D3.js") > 3
    # A relation to an entity the file never declares ("Mike Bostock") is a fact all the same.
    assert "D3.js created by Mike Bostock" in texts
    assert {i["source"] for i in parsed.items if " created by " in i["text"]} == {"import:mcp-memory#relation"}
    assert all("created_at" not in i for i in parsed.items)  # the graph keeps no times


def test_the_variants_real_files_hold_and_what_cannot_be_a_fact():
    text = "\n".join([
        '{"type":"entity","name":"Bob","entityType":"person","observations":["Allergic to penicillin",null,"Lives in Haifa"]}',
        '{"type":"relation","from_entity":"Bob","to_entity":"Haifa","relation_type":"lives_in","weight":0.9}',
        '{"type":"entity","name":"Bob","entityType":"patient","observations":["Allergic to penicillin"]}',
        'not json at all',
        '{"type":"codegraph","name":"X"}',
        '{"type":"relation","from":"Bob","to":"Ann"}',
        '',
        '{"type":"entity","entityType":"person","observations":["nameless"]}',
    ])
    parsed = mcp_memory.read(text, {})
    assert [(i["line"], i["text"]) for i in parsed.items] == [
        (1, "Bob: Allergic to penicillin"), (1, "Bob: Lives in Haifa"), (2, "Bob lives_in Haifa")]
    assert [line for line, _ in parsed.refused] == [1, 3, 4, 5, 6, 8]
    why = dict(parsed.refused)
    assert "not text" in why[1] and "said already" in why[3] and "not a JSON object" in why[4]
    assert "neither" in why[5] and "relationType" in why[6] and "without a name" in why[8]


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_the_cli_stores_exactly_what_its_dry_run_said_on_both_memories(service, api):
    store, merged, proposed, refused = dry_run_then_import(service, REAL, "mcp-memory")
    assert store + merged == len(importers.read("mcp-memory", REAL).items) and refused == 0
    assert proposed <= (store + merged) // 20 + 1  # an import of a real graph must not fill the queue
    stored = api.get("/facts", params={"source_prefix": "import:mcp-memory", "limit": 100}).json()
    assert stored["total"] == store
    assert api.get("/conflicts").json()["total"] == proposed
