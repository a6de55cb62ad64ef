"""Imports from other tools (memories/importers/): each format's reader on a fixture written from
the format's public documentation (tests/fixtures/imports/), malformed files refused with the
line, and the CLI's dry run, whose counts the import then matches, with the real model."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memories import importers
from memories.importers import Malformed, table
from memories.importers import plan as planning
from memories.store import Memory

FIXTURES = Path(__file__).parent / "fixtures" / "imports"
ROOT = Path(__file__).resolve().parent.parent


def texts(parsed):
    return [i["text"] for i in parsed.items]


def test_a_plain_list_strips_bullets_and_numbers_and_skips_headings_and_blanks():
    parsed = importers.read("chatgpt-list", FIXTURES / "chatgpt.txt")
    assert texts(parsed)[:3] == ["Prefers metric units for all measurements.", "Has a sister called Priya who lives in Lisbon.",
                                 "Is allergic to penicillin."]
    assert "Has a dog named Biscuit." in texts(parsed) and "Prefers concise answers without emoji." in texts(parsed)
    assert len(parsed.items) == 8 and not parsed.refused  # "Saved memories:" and the empty bullet skipped
    assert {i["source"] for i in parsed.items} == {"import:chatgpt"} and parsed.items[0]["line"] == 3
    claude = importers.read("claude-list", FIXTURES / "claude.txt")
    assert texts(claude) == ["The owner is writing a book about river ecology.", "The owner's editor is Hana Mori.",
                             "The owner runs on Tuesday and Thursday mornings.", "The owner's sister Priya lives in Lisbon."]


def test_csv_maps_columns_and_refuses_rows_that_cannot_be_facts_with_their_line():
    parsed = importers.read("csv", FIXTURES / "memories.csv", {"text": "memory", "type": "kind", "time": "when", "source": "origin"})
    assert parsed.columns == ["memory", "kind", "when", "origin"]
    assert [i["type"] for i in parsed.items] == ["fact", "fact", "skill", "log"]
    assert parsed.items[0]["created_at"] == "2025-03-01T00:00:00Z" and parsed.items[0]["source"] == "import:csv:notes app"
    assert "2718, keep it private" in parsed.items[1]["text"]  # a quoted comma stays in the text
    assert [line for line, _ in parsed.refused] == [5, 7]
    assert "empty" in parsed.refused[0][1] and "type" in parsed.refused[1][1]


def test_json_and_jsonl_find_the_text_column_and_keep_times():
    parsed = importers.read("json", FIXTURES / "memories.json", {"time": "created"})
    assert parsed.items[0]["created_at"] == "2024-11-05T09:30:00+01:00" and len(parsed.items) == 3
    lines = importers.read("jsonl", FIXTURES / "memories.jsonl", {"time": "time"})
    assert [i["line"] for i in lines.items] == [1, 2, 4] and lines.items[1]["created_at"] == "2025-01-10T17:00:00Z"


def test_mem0_and_letta_exports():
    mem0 = importers.read("mem0", FIXTURES / "mem0.json")
    assert texts(mem0) == ["Is travelling to Paris in May", "Prefers vegetarian food"]
    assert mem0.items[0]["created_at"] == "2025-02-25T23:57:00.108347-07:00" and mem0.refused == [(3, "text is empty")]
    letta = importers.read("letta", FIXTURES / "letta.json")
    assert [i["source"] for i in letta.items] == ["import:letta:family", "import:letta"]


@pytest.mark.parametrize("format,content,where", [
    ("json", '[{"text": "a"},\n {"text": "b"\n]', "line 3"),
    ("jsonl", '{"text": "a"}\n{"text": \n', "line 2"),
    ("csv", 'text,type\n"unclosed,fact\n', "line"),
    ("csv", "text\nfine\ntoo,many\n", "line 3"),
    ("mem0", '{"memories": 3}', "line 1"),
    ("json", '[{"nothing": "here"}]', "no column holds the text"),
])
def test_a_malformed_file_is_refused_whole_with_its_line(tmp_path, format, content, where):
    path = tmp_path / "bad"
    path.write_text(content)
    with pytest.raises(importers.Malformed, match=where):
        importers.read(format, path)


@pytest.mark.parametrize("time,why", [("2024-02-30T10:00:00Z", "real date"), ("2024-03-01T10:00:00", "zone"), ("soon", "ISO-8601")])
def test_a_time_the_memory_would_refuse_is_refused_with_its_line(tmp_path, time, why):
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"text": "The owner's kite is red.", "time": time}) + "\n")
    parsed = importers.read("jsonl", path, {"time": "time"})
    assert parsed.items == [] and parsed.refused[0][0] == 1 and why in parsed.refused[0][1]


def test_a_file_over_the_limit_says_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(importers, "MAX_BYTES", 10)
    path = tmp_path / "big.txt"
    path.write_text("- The owner likes long files.\n")
    with pytest.raises(importers.Malformed, match="the limit is 10"):
        importers.read("chatgpt-list", path)


class Writes:
    def __init__(self, memory):
        self.memory = memory

    def add_many(self, items, dry_run=False, note=""):
        return self.memory.add_many(items, "cli", dry_run=dry_run, note=note)


def test_the_dry_run_stores_nothing_and_the_import_stores_exactly_what_it_showed(tmp_path, minilm):
    memory = Memory(tmp_path / "m.db", minilm)
    try:
        memory.add("The owner prefers metric units for all measurements.", client="dashboard")
        memory.add("Priya is the owner's sister; she lives in Porto.", client="dashboard")
        before = (memory.count(), memory.history_entries(limit=100)[0], memory.conflicts())
        parsed = importers.read("chatgpt-list", FIXTURES / "chatgpt.txt")
        plan = planning.dry_run(Writes(memory), parsed.items, parsed.refused)
        assert (memory.count(), memory.history_entries(limit=100)[0], memory.conflicts()) == before  # nothing kept
        counts = plan.counts()
        assert counts["store"] + counts["merged"] == len(parsed.items) and len(plan.repeated) == 1
        results = planning.run(Writes(memory), plan, "import of chatgpt.txt")
        assert sum(r.created for r in results) == counts["store"] == memory.count() - 2
        stored = memory.list(source="import:chatgpt", limit=100)[0]
        assert {f.text for f in stored} == {i["text"] for i in plan.store}
        assert all(f.reviewed_at is None for f in stored)  # into the inbox
        entry = memory.history_entries(limit=1)[0][0]
        assert entry.note == "import of chatgpt.txt" and entry.client == "cli"
    finally:
        memory.close()


def test_the_cli_says_the_dry_run_then_imports_its_counts(tmp_path):
    db = tmp_path / "cli.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = lambda *a: subprocess.run([sys.executable, "-m", "memories", "import", *a, "--db", str(db), "--quiet"],  # noqa: E731
                                    capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    dry = run(str(FIXTURES / "memories.csv"), "--from", "csv", "--map", "text=memory,type=kind,time=when", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "4 would be stored, 0 merged as duplicates" in dry.stderr and "2 refused" in dry.stderr
    assert "line 5: refused: text is empty" in dry.stderr
    done = run(str(FIXTURES / "memories.csv"), "--from", "csv", "--map", "text=memory,type=kind,time=when")
    assert done.returncode == 0, done.stderr
    assert "imported 4 facts from memories.csv" in done.stderr
    again = run(str(FIXTURES / "memories.csv"), "--from", "csv", "--map", "text=memory,type=kind,time=when", "--dry-run")
    assert "0 would be stored, 4 merged as duplicates" in again.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\nnot json\n')
    refused = run(str(bad), "--from", "jsonl")
    assert refused.returncode == 1 and "line 2" in refused.stderr and "nothing imported" in refused.stderr
    unmapped = tmp_path / "notes.csv"
    unmapped.write_text("note,when\nThe owner likes figs.,2026-01-01\n")
    said = run(str(unmapped), "--from", "csv").stderr  # the command line's words here, the page's on the page
    assert "no column holds the text (columns: note, when): say which one does with --map text=COLUMN" in said
    exported = subprocess.run([sys.executable, "-m", "memories", "export", "--db", str(db)], capture_output=True, text=True,
                              env=env, timeout=120, cwd=ROOT).stdout
    assert len([json.loads(line) for line in exported.splitlines()]) == 4


def test_json_as_people_keep_it_a_list_of_strings_or_a_wrapped_list():
    # Issue 47: both were refused ("item 1: not a JSON object", "not a JSON array of objects").
    bare = table.json_array(json.dumps(["The owner likes tea.", "The owner has a cat."]), {})
    assert [(i["line"], i["text"], i["source"]) for i in bare.items] == [
        (1, "The owner likes tea.", "import:json"), (2, "The owner has a cat.", "import:json")]
    wrapped = table.json_array(json.dumps({"memories": ["Likes tea.", {"text": "Has a cat."}, 7]}), {})
    assert [i["text"] for i in wrapped.items] == ["Likes tea.", "Has a cat."]
    assert wrapped.refused == [(3, "not a memory: a JSON string or object")]  # that item only
    with pytest.raises(Malformed, match="nor an object holding one"):
        table.json_array(json.dumps({"notes": "x"}), {})
