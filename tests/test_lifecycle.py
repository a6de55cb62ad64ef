"""The local engine's lifecycle (memories/writes/lifecycle.py, the write and read paths that use it):
the golden `differs` cases both memories share, and what the HTTP contract suite cannot reach
as directly: a batch, an old memory migrating, the chain check, the as-of boundaries."""

import json
import sqlite3
from pathlib import Path

import pytest

from memories.facts import InvalidInput
from memories.writes.lifecycle import PROPOSE_MOST, differences, proposals
from memories.store import Memory

GOLDEN = json.loads((Path(__file__).parent / "golden" / "lifecycle.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["new"][:40])
def test_differences_answer_as_the_golden_file_says(case):
    assert differences(case["old"], case["new"]) == case["differs"]


def test_proposals_ask_the_closest_candidates_over_the_bar_and_keep_those_that_answer_the_question():
    texts = {1: "The standup is at 9:30.", 2: "The standup's host is Maria.", 3: "The standup is at 9:15.", 4: "The standup is at 8:45.",
             5: "The standup is at 8:30.", 6: "The standup is at 11:00.", 7: "The standup is at 7:00.", 9: "The standup is at 6:00."}
    near = [(2, 0.95), (5, 0.7), (3, 0.7), (9, 0.39), (1, 0.9), (4, 0.6), (6, 0.5), (7, 0.45)]
    got = proposals(near, texts, "The standup is at 10:00 now.")
    # The closest PROPOSE_CANDIDATES at or above PROPOSE (2, 1, 3, 5, 4: ties to the smaller id);
    # 2 answers another question (who hosts it); at most PROPOSE_MOST kept.
    assert [fid for fid, _, _, _ in got] == [1, 3, 5][:PROPOSE_MOST]
    assert got[0][2] == {"kinds": ["number"], "old": ["9:30"], "new": ["10:00"]} and not got[0][3]
    assert proposals([(9, 0.39)], texts, "The standup is at 10:00 now.") == []
    # A neighbour newer than the new fact (an import's older one) is the pair's new fact.
    [(fid, _, differs, reverse)] = proposals([(1, 0.9)], {1: "The standup is at 10:00 now."}, "The standup is at 9:30.", frozenset({1}))
    assert fid == 1 and reverse and differs["old"] == ["9:30"] and differs["new"] == ["10:00"]


@pytest.fixture
def memory(tmp_path, minilm):
    m = Memory(tmp_path / "m.db", minilm)
    yield m
    m.close()


def test_a_batch_replaces_and_proposes_within_itself_in_one_commit(memory):
    [old] = memory.add_many([{"text": "The owner's locker code is 1234."}])
    results = memory.add_many([
        {"text": "The owner's locker code is 5678.", "supersedes": [old.fact.id]},
        {"text": "The owner's bicycle code is 5678."},
    ])
    assert all(r.created for r in results)
    assert memory.get(old.fact.id).superseded_by == results[0].fact.id
    # Replacing the same fact twice in a batch is refused whole: nothing of it is stored.
    before = memory.count()
    with pytest.raises(InvalidInput, match=str(results[0].fact.id)):
        memory.add_many([{"text": "The owner's locker code is 9999.", "supersedes": [results[0].fact.id]},
                         {"text": "The owner's locker code is 0000.", "supersedes": [results[0].fact.id]}])
    assert memory.count() == before and memory.get(results[0].fact.id).superseded_by is None


def test_a_loop_is_refused_however_long_the_chain(memory):
    a, b, c = (memory.add(t).fact.id for t in ("The owner's tutor is Ana.", "The owner's tutor is Ben.", "The owner's tutor is Cy."))
    memory.edit(a, superseded_by=b)
    memory.edit(b, superseded_by=None)  # (b was never replaced: this changes nothing)
    memory.edit(b, superseded_by=c)
    memory.edit(a, superseded_by=None)  # a current again, so it could replace c...
    with pytest.raises(InvalidInput, match="not current"):
        memory.edit(c, superseded_by=b)  # ...but b is not current
    # A chain written by hand (an import) that would loop is still caught.
    memory.db.execute("UPDATE facts SET superseded_by = ?, valid_until = NULL WHERE id = ?", (a, c))
    memory.db.commit()
    with pytest.raises(InvalidInput, match="loop"):
        memory.edit(a, superseded_by=c)


def test_as_of_is_inclusive_of_creation_and_exclusive_of_the_end(memory):
    old = memory.add("The owner's flat is on Elm Road.").fact
    new = memory.add_many([{"text": "The owner's flat is on Oak Lane.", "supersedes": [old.id]}])[0].fact
    at = lambda t: [h["fact"]["id"] for h in memory.recall("Where is the owner's flat?", as_of=t)["results"]]  # noqa: E731
    assert old.id in at(old.created_at) and new.id not in at(old.created_at)
    assert new.id in at(new.created_at) and old.id not in at(new.created_at)  # valid_until is the new fact's creation
    facts, _, _ = memory.list(as_of=old.created_at)
    assert [f.id for f in facts] == [old.id]


def test_a_memory_from_before_the_lifecycle_migrates_with_every_fact_current(tmp_path, minilm):
    path = tmp_path / "old.db"
    m = Memory(path, minilm)
    fid = m.add("The owner's passport expires in 2031.").fact.id
    m.close()
    conn = sqlite3.connect(path)  # back to before migration 9, as a v3 memory was
    conn.executescript("""DROP INDEX facts_valid; DROP INDEX facts_superseded_by; DROP TABLE conflicts;
        ALTER TABLE facts DROP COLUMN valid_until; ALTER TABLE facts DROP COLUMN superseded_by;
        ALTER TABLE facts DROP COLUMN own_valid_until; DELETE FROM schema_migrations WHERE version IN (9, 11);""")
    conn.close()
    m = Memory(path, minilm)
    try:
        fact = m.get(fid)
        assert fact.valid_until is None and fact.superseded_by is None
        assert [h["fact"]["id"] for h in m.recall("passport")["results"]] == [fid]
        assert m.conflicts() == ([], None, 0)
    finally:
        m.close()


def test_deleting_a_fact_nobody_reviewed_leaves_none_of_its_words(memory):
    """A wrong fact an agent wrote and the owner deleted from the inbox leaves no word of its own
    in the vocabulary (words another fact holds stay); a reviewed fact's delete keeps them, for its undo."""
    words = lambda: {r[0] for r in memory.db.execute("SELECT word FROM words")}  # noqa: E731
    memory.add("The owner's cat is called Qwzlorp.", client="dashboard")
    wrong = memory.add("Vexmantine qwzlorp secrets live here.", client="agent").fact
    assert {"vexmantine", "qwzlorp", "secrets"} <= words()
    memory.delete(wrong.id)
    assert "vexmantine" not in words() and "secrets" not in words() and "qwzlorp" in words()
    kept = memory.add("The owner's zarquon is blue.", client="dashboard").fact
    memory.delete(kept.id)
    assert "zarquon" in words()
