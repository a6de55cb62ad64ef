"""A Claude.ai data export's memories imported (issue 47), on a copy of a real export's structure
(tests/fixtures/imports/README.md): each line of its Markdown a fact, its headings the source's
section, front matter, bullets, tags and link markup out, a memory file's `updated_at` its time
unless the line has a date of its own; never "{" or "}"; the memory the files were backfilled
from counted, not imported twice. The legacy list and today's single object read alike; a JSON
without memories is refused saying so. Then the CLI's dry run and import
on both memories store what the dry run said, and few of the facts are proposed as replacing
another."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memories import importers
from memories.importers import Malformed, claude_ai
from tests.cli_import import imported_as_its_dry_run_said

ROOT = Path(__file__).resolve().parent.parent
EXPORT = ROOT / "tests" / "fixtures" / "imports" / "claude-ai-memories.json"
PROJECT = "import:claude-ai:project/0198c2d4-5e6f-7a8b-9c0d-1e2f3a4b5c6d"


def test_each_line_of_the_memory_is_a_fact_under_its_section():
    record = json.loads(EXPORT.read_text(encoding="utf-8"))[0]
    del record["memory_files"]  # an export from before the memory files: the memory as one Markdown text
    parsed = claude_ai.read(json.dumps([record]), {})
    said = [(i["source"], i["text"]) for i in parsed.items if i["source"].startswith("import:claude-ai#")]
    assert [source for source, _ in said] == [
        "import:claude-ai#Work context", "import:claude-ai#Personal context", "import:claude-ai#Top of mind",
        "import:claude-ai#Brief history / Recent months", "import:claude-ai#Brief history / Earlier context",
        "import:claude-ai#Brief history / Long-term background"]
    assert said[-1][1] == "Ines did her doctorate on eelgrass wasting disease."
    assert [i["line"] for i in parsed.items][:6] == [3, 7, 11, 17, 21, 25]
    assert parsed.refused == parsed.not_memories == [] and len(parsed.items) == 11
    assert not [i for i in parsed.items if "created_at" in i]  # the memory's text keeps no times


def test_the_memory_the_files_were_backfilled_from_is_counted_not_imported_again():
    parsed = importers.read("claude-ai", EXPORT)
    assert parsed.refused == [] and len(parsed.items) == 20
    assert parsed.not_memories == [(n, "conversations_memory: the memory files were backfilled from it, and are imported")
                                   for n in (3, 7, 11, 17, 21, 25)]
    texts = [i["text"] for i in parsed.items]
    assert "Field ecologist at a coastal research station in Galicia" in texts  # /profile.md says it again
    assert not [t for t in texts if t in ("{", "}") or t.startswith(("**", "-", "[", "name:", "---", "Ines is"))]


def test_a_projects_memory_keeps_its_project_and_numbered_lines_lose_their_numbers():
    parsed = importers.read("claude-ai", EXPORT)
    project = [(i["source"].removeprefix(PROJECT), i["text"]) for i in parsed.items if i["source"].startswith(PROJECT)]
    assert project == [
        ("#Purpose & context", "The project holds the seagrass monitoring protocol and the scripts that turn quadrat "
                               "photos into cover estimates."),
        ("#Current state", "The 2026 field season ends on 15 October"),
        ("#Current state", "The classifier is the main open piece of work"),
        ("#Key learnings & principles", "Quadrat photos are taken at low tide only, to keep the water surface out of the frame"),
        ("#Key learnings & principles", "Cover is reported per transect, never per photo")]


def test_memory_files_are_dated_by_their_update_unless_a_line_has_its_own_date():
    parsed = importers.read("claude-ai", EXPORT)
    recent = [(i["text"], i["created_at"]) for i in parsed.items if i["source"] == "import:claude-ai:topics/recent-work.md"]
    assert recent == [("Rewrote the quadrat-photo classifier in Python with scikit-image", "2026-07-09T16:27:31.040583+00:00"),
                      ("submitted the mid-season data to the regional observatory", "2026-06-30T00:00:00Z"),
                      ("Is weighing a multispectral camera for the drone surveys", "2026-07-09T16:27:31.040583+00:00")]
    area = [i["text"] for i in parsed.items if i["source"] == "import:claude-ai:areas/seagrass-monitoring.md"]
    assert area[-1] == "Works with tomas on the drone flights"  # "[stated] Works with [[tomas]] ...": tag and link off
    assert [i["line"] for i in parsed.items if i["source"] == "import:claude-ai:profile.md"] == [7, 8, 9]  # after the front matter
    assert len({i["source"] for i in parsed.items if i["source"].endswith(".md")}) == 5


def test_todays_single_object_reads_as_the_legacy_list_does():
    record = json.loads(EXPORT.read_text(encoding="utf-8"))[0]
    one = claude_ai.read(json.dumps(record), {})
    assert one.items == importers.read("claude-ai", EXPORT).items


@pytest.mark.parametrize("document,why", [
    ({"conversations": []}, "not a Claude.ai export's memories"),
    ([{"uuid": "x", "name": "a project"}], "not a Claude.ai export's memories"),
    ([], "not a Claude.ai export's memories"),
    ("a string", "not a Claude.ai export's memories"),
])
def test_a_json_without_memories_is_refused_saying_so(document, why):
    with pytest.raises(Malformed, match=why):
        claude_ai.read(json.dumps(document), {})


def test_what_cannot_be_a_fact_is_refused_with_where_it_is():
    parsed = claude_ai.read(json.dumps({
        "conversations_memory": 7, "project_memories": {"p1": "**Goals**\n\n- Ship it\n\n{\n}\n"},
        "memory_files": [{"path": "/a.md"}, {"path": "/b.md", "content": "- Likes figs", "updated_at": "last week"}]}), {})
    assert [(i["source"], i["text"]) for i in parsed.items] == [("import:claude-ai:project/p1#Goals", "Ship it")]
    assert parsed.refused == [(1, "conversations_memory: not text"), (1, "memory_files /a.md: not text"),
                              (1, "memory_files /b.md: its time is not an ISO-8601 time with a zone")]


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_the_cli_stores_exactly_what_its_dry_run_said_on_both_memories(service, api):
    (store, merged, proposed, _), said = imported_as_its_dry_run_said(service, api, EXPORT, "claude-ai", "import:claude-ai")
    assert ", 6 read as not memories" in said and "line 3: not a memory: conversations_memory: the memory files" in said
    # A real memory must not fill the queue: at most one pair per 20 facts.
    assert proposed <= api.get("/conflicts").json()["total"] <= (store + merged) / 20
