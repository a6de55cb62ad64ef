"""`python -m memories import | export | serve` as scripts call them."""

import json
import subprocess
import sys

import pytest

from memories.backup import read
from memories.cli import main
from tests.memory_service import ROOT


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "memories", *args], cwd=ROOT, capture_output=True, text=True, **kw)


def test_import_then_export_round_trips(tmp_path):
    source = tmp_path / "in.jsonl"
    rows = [{"text": "Priya is the owner's sister.", "type": "fact", "source": "chat"},
            {"text": "Convert temperatures to Celsius.", "type": "skill", "source": "owner"},
            {"text": "priya is the OWNER's sister.", "type": "fact"}]
    source.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    db = tmp_path / "m.db"
    result = run("import", str(source), "--db", str(db))
    assert result.returncode == 0, result.stderr
    assert "imported 2 facts" in result.stderr and "1 were already there" in result.stderr
    assert "fact/s" in result.stderr  # the progress bar
    out = tmp_path / "out.jsonl"
    assert run("export", "--db", str(db), "-o", str(out)).returncode == 0
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["text"], e["type"], e["source"]) for e in exported] == [(r["text"], r["type"], r["source"]) for r in rows[:2]]
    assert all(e["created_at"].endswith("Z") for e in exported)

    # Re-importing an export keeps the timestamps.
    db2 = tmp_path / "m2.db"
    assert run("import", str(out), "--db", str(db2)).returncode == 0
    again = run("export", "--db", str(db2)).stdout.splitlines()
    assert [json.loads(x)["created_at"] for x in again] == [e["created_at"] for e in exported]


def test_a_bad_file_imports_nothing_and_names_every_bad_line(tmp_path):
    source = tmp_path / "bad.jsonl"
    source.write_text('{"text": "good"}\nnot json\n{"text": ""}\n{"text": "x", "type": "opinion"}\n[1]\n')
    db = tmp_path / "m.db"
    assert main(["import", str(source), "--db", str(db), "--quiet"]) == 1
    problems = read(source).problems
    assert [p.split(":")[1] for p in problems] == ["2", "3", "4", "5"]
    assert not db.exists()


def test_a_bad_pair_in_a_backup_imports_nothing_and_names_its_line(tmp_path):
    source = tmp_path / "backup.jsonl"
    good = {"id": 1, "old": 1, "new": 2, "score": 0.8, "differs": {"kinds": ["number"], "old": ["9:30"], "new": ["9:00"]},
            "resolution": None}
    source.write_text("".join(json.dumps(line) + "\n" for line in (
        {"id": 1, "text": "The standup is at 9:30."}, {"id": 2, "text": "The standup is at 9:00."},
        {"conflict": good}, {"conflict": {**good, "resolution": "maybe"}})))
    db = tmp_path / "m.db"
    assert main(["import", str(source), "--db", str(db), "--quiet"]) == 1
    [problem] = read(source).problems
    assert problem.endswith(":4: conflicts[1].resolution must be null (proposed), keep_both or replace (replaced at once)"), problem
    assert not db.exists()
    assert read(source).conflicts == [good]  # the good line, as POST /conflicts/restore takes it


def test_serve_refuses_to_start_without_a_secret(tmp_path):
    import os

    env = {**os.environ, "MEMORY_SECRET": ""}
    result = run("serve", "--db", str(tmp_path / "m.db"), env=env, timeout=60)
    assert result.returncode == 2 and "MEMORY_SECRET" in result.stderr


@pytest.mark.parametrize("args", [["--help"], ["serve", "--help"], ["import", "--help"], ["export", "--help"]])
def test_help(args):
    assert run(*args).returncode == 0


def test_import_into_a_file_closes_the_memory_as_serve_does(tmp_path, monkeypatch):
    # The snapshot is written and the change log pruned to it: the next open reads one file,
    # and a later database at this path cannot mistake the log for its own.
    from memories.storage import snapshot

    monkeypatch.setattr(snapshot, "MIN_FACTS", 1)
    monkeypatch.setenv("MEMORY_EMBEDDER", "tests.fakes:hash_embedder")
    source, db = tmp_path / "in.jsonl", tmp_path / "m.db"
    source.write_text("".join(json.dumps({"text": f"Shelf {i} holds box {i * 7}."}) + "\n" for i in range(30)))
    assert main(["import", str(source), "--db", str(db), "--quiet"]) == 0
    assert snapshot.load(str(db), "test-hash-64", 64) is not None
    import sqlite3

    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM vector_changes").fetchone()[0] == 1


def test_an_import_that_would_push_undo_entries_out_says_so_first(tmp_path):
    import os

    db, first, second = tmp_path / "m.db", tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("".join(json.dumps({"text": f"Jar {i} is on shelf {i * 3}."}) + "\n" for i in range(4)))
    second.write_text("".join(json.dumps({"text": f"Box {i} holds {i * 7} screws."}) + "\n" for i in range(5)))
    env = {**os.environ, "MEMORY_HISTORY": "6", "MEMORY_EMBEDDER": "tests.fakes:hash_embedder"}
    assert "note:" not in run("import", str(first), "--db", str(db), "--quiet", env=env).stderr
    said = run("import", str(second), "--db", str(db), "--quiet", env=env).stderr
    assert "note: this import writes up to 5 history entries: the oldest 3 entries" in said, said
    assert said.index("note:") < said.index("imported 5 facts")  # before, not after
