"""The trash is the history's deletes: ordinary writes never push them out. A delete stays
undoable for 30 days and while it is among the last 1,000, whichever is longer."""

from memories.review import history
from memories.store import Memory
from tests.fakes import HashEmbedder


def test_other_writes_do_not_push_deletes_out_of_the_trash(tmp_path):
    m = Memory(tmp_path / "m.db", HashEmbedder(32), history=5)
    doomed = [m.add(f"Doomed fact {i} about the attic {i * 17}.").fact.id for i in range(3)]
    for fid in doomed:
        m.delete(fid)
    m.add_many([{"text": f"Imported note {i}: shelf {i * 31} holds jars."} for i in range(40)])
    entries, _ = m.history.entries(limit=100)
    assert sorted(e.fact_id for e in entries if e.op == "delete") == doomed
    assert len([e for e in entries if e.op != "delete"]) == 5  # the rest are kept as before
    fact = m.undo([e for e in entries if e.op == "delete"][0].id)[1]
    assert m.get(fact.id).text == fact.text
    assert m.stats()["history"] == {"entries": 8, "keep": 5, "deletes": 2, "deletes_days": 30, "deletes_kept": 1000}
    m.close()


def test_deletes_past_both_their_time_and_their_count_go(tmp_path, monkeypatch):
    monkeypatch.setattr(history, "DELETES_KEPT", 2)
    monkeypatch.setattr(history, "PRUNE_DELETES_EVERY", 1)
    m = Memory(tmp_path / "m.db", HashEmbedder(32), history=3)
    ids = [m.add(f"Old fact {i} about crate {i * 19}.").fact.id for i in range(4)]
    for fid in ids:
        m.delete(fid)
    # The first two deletes are 40 days old; the last two are among the newest DELETES_KEPT anyway.
    m.db.execute("UPDATE history SET at = '2000-01-01T00:00:00.000000Z' WHERE op = 'delete' AND fact_id IN (?, ?, ?)",
                 (ids[0], ids[1], ids[2]))
    m.add("A fresh write that prunes.")
    kept = sorted(e.fact_id for e in m.history.entries(limit=100)[0] if e.op == "delete")
    assert kept == ids[2:]  # old and past the newest two: gone; old but among the newest two: kept
    m.close()
