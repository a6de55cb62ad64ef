"""The memory under concurrent readers and writers, in one process and across processes: an edit
never undoes another's, recall and explain read consistent rows while others write or delete."""

import base64
import sqlite3
import threading
import time

import pytest

from memories.facts import InvalidInput, NotFound
from memories.store import Memory
from tests.fakes import HashEmbedder
from tests.test_store import fts_ids


def test_an_edit_of_one_field_never_undoes_a_concurrent_edit_of_another(fake_memory, monkeypatch):
    fid = fake_memory.add("Leo swims on Wednesdays.", source="chat").fact.id
    real_get = fake_memory.reader.get
    raced = []

    def get_then_race(fact_id):
        fact = real_get(fact_id)
        if not raced:  # another writer changes the text after this edit has looked
            raced.append(True)
            fake_memory.edit(fact_id, text="Leo plays chess on Fridays.")
        return fact

    monkeypatch.setattr(fake_memory.reader, "get", get_then_race)
    result = fake_memory.edit(fid, source="calendar")
    monkeypatch.undo()
    assert (result.text, result.source) == ("Leo plays chess on Fridays.", "calendar")
    stored = fake_memory.get(fid)
    assert (stored.text, stored.source) == ("Leo plays chess on Fridays.", "calendar")
    assert fts_ids(fake_memory, "chess") == [fid] and fake_memory.stats()["consistent"]


def test_recall_reads_its_facts_before_a_concurrent_delete_can_land(fake_memory, monkeypatch):
    ids = [fake_memory.add(f"Parcel {n} waits at the depot.").fact.id for n in range(3)]
    real_get_many = fake_memory.reader.get_many
    deleter = threading.Thread(target=fake_memory.delete, args=(ids[0],))

    def delete_meanwhile(wanted):
        wanted = list(wanted)
        if len(wanted) > 1 and deleter.ident is None:  # once: the first read of the ranked rows
            deleter.start()  # another client deletes a ranked fact just as recall reads the rows
            deleter.join(timeout=0.5)  # it can only land if recall has let go of the lock
        return real_get_many(wanted)

    monkeypatch.setattr(fake_memory.reader, "get_many", delete_meanwhile)
    result = fake_memory.recall("parcel depot")
    monkeypatch.undo()
    deleter.join()
    assert sorted(r["fact"]["id"] for r in result["results"]) == ids  # ranked and read as one snapshot
    assert sorted(r["fact"]["id"] for r in fake_memory.recall("parcel depot")["results"]) == ids[1:]


def test_recall_waits_for_its_vector_scan_even_when_its_keyword_list_fails(fake_memory, monkeypatch):
    # The scan of the codes runs on another thread beside the keyword list, over rows a write may
    # change as soon as recall lets go of the lock: it must be over by then, whatever failed.
    fake_memory.add("The blue heron nests by the mill pond.")
    vectors, real_scan, scans = fake_memory.state.vectors, fake_memory.state.vectors.scan, []

    def slow_scan(*args):
        time.sleep(0.3)
        out = real_scan(*args)
        scans.append(threading.current_thread().name)
        return out

    monkeypatch.setattr(vectors, "scan", slow_scan)
    monkeypatch.setattr(vectors, "pooled", lambda type: True)  # as long as a big memory's
    monkeypatch.setattr(fake_memory.reader, "keyword", lambda *args: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        fake_memory.recall("heron pond")
    assert len(scans) == 1 and scans[0].startswith("recall")  # beside, on the recall thread, and over


def test_a_short_scan_runs_on_the_recalls_own_thread_and_a_long_one_beside(fake_memory, monkeypatch):
    # The hand-off to another thread costs more than a short scan saves beside the keyword list.
    fake_memory.add("The blue heron nests by the mill pond.")
    vectors, real_scan, scans = fake_memory.state.vectors, fake_memory.state.vectors.scan, []
    monkeypatch.setattr(vectors, "scan", lambda *args: scans.append(threading.current_thread().name) or real_scan(*args))
    alone = fake_memory.recall("heron pond")
    monkeypatch.setattr(vectors, "pooled", lambda type: True)
    beside = fake_memory.recall("heron pond")
    assert scans[0] == threading.current_thread().name and scans[1].startswith("recall")
    assert alone["results"] == beside["results"] and alone["results"]


def test_explain_reads_while_another_process_holds_the_write_lock(fake_memory):
    fid = fake_memory.add("Running dogs chase cats.").fact.id
    other = sqlite3.connect(fake_memory.path, isolation_level=None, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # e.g. `python -m memories import` in the middle of a batch
    try:
        fake_memory.db.execute("PRAGMA busy_timeout=0")  # fail at once instead of after 5 s
        why = fake_memory.explain("dog", fid)
    finally:
        other.execute("ROLLBACK")
    assert why["matched_terms"] == ["dog"] and fake_memory.tokens("Running dogs") == ["run", "dog"]


def test_list_filters_refuse_a_lone_surrogate_and_a_q_longer_than_any_fact(fake_memory):
    for filters in ({"q": "x\ud800"}, {"source": "\udc00"}):
        with pytest.raises(InvalidInput, match="lone surrogate"):
            fake_memory.list(**filters)
    with pytest.raises(InvalidInput, match="the limit is 8000"):
        fake_memory.list(q="a" * 8001)
    with pytest.raises(InvalidInput, match="cursor"):
        fake_memory.list(cursor=base64.urlsafe_b64encode(b"2026-01-01T00:00:00.000000Z|" + b"9" * 20).decode())


# -- another process writing the same file (a second Memory stands in for it) -------------------


def test_a_fact_another_process_adds_is_found_by_vector_and_deduplicates(tmp_path):
    ours, theirs = Memory(tmp_path / "m.db", HashEmbedder()), Memory(tmp_path / "m.db", HashEmbedder())
    fid = theirs.add("The blue heron nests by the mill pond.").fact.id
    assert [h["fact"]["id"] for h in ours.recall("heron pond", debug=True)["vec"]] == [fid]
    reworded = ours.add("By the mill pond the blue heron nests.")  # same words: cosine 1, not an exact match
    assert (reworded.created, reworded.fact.id, reworded.match) == (False, fid, "near")
    stats = ours.stats()
    assert stats["consistent"] and stats["vectors_in_memory"] == stats["vectors"] == 1


def test_edits_and_deletes_by_another_process_never_break_recall_or_explain(tmp_path):
    ours, theirs = Memory(tmp_path / "m.db", HashEmbedder()), Memory(tmp_path / "m.db", HashEmbedder())
    gone = ours.add("Parcel seven waits at the depot.").fact.id
    kept = ours.add("Parcel eight waits at the depot.").fact.id
    theirs.delete(gone)
    body = ours.recall("parcel depot", debug=True)
    assert {h["fact"]["id"] for h in body["results"] + body["kw"] + body["vec"]} == {kept}
    assert ours.explain("parcel depot", kept)["fused_rank"] == 1
    with pytest.raises(NotFound):
        ours.explain("parcel depot", gone)
    assert ours.neighbours(kept) == [] and ours.duplicates(0.5) == ([], 0)
    theirs.edit(kept, text="Crate nine sits in bay four.", type="log")
    assert [h["fact"]["id"] for h in ours.recall("crate bay", type="log", debug=True)["vec"]] == [kept]
    assert ours.stats()["consistent"]


def test_stats_never_call_a_matrix_out_of_step_with_the_table_consistent(fake_memory):
    a = fake_memory.add("Alpha fact.").fact.id
    b = fake_memory.add("Beta fact.").fact.id
    fake_memory.vectors.remove(a)  # as if a write were missed
    stats = fake_memory.stats()
    assert stats["vectors_in_memory"] == 1 and stats["vectors"] == 2 and not stats["consistent"]
    fake_memory.vectors.put(a + b + 1, "fact", fake_memory.vectors.vector(b).copy())  # as many, but not the same ids
    stats = fake_memory.stats()
    assert stats["vectors_in_memory"] == stats["vectors"] == 2 and not stats["consistent"]
