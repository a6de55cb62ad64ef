"""The engine: writes keep row, FTS entry and vector together; dedup; recall; curation."""

import os
import subprocess
import sys
import sqlite3
from dataclasses import replace

import numpy as np
import pytest

from memories.recall.ranking import DEFAULT, SEED
from memories.facts import Conflict, InvalidInput, NotFound, TooLarge, Unavailable
from memories.store import Memory
from tests.fakes import BrokenEmbedder, HashEmbedder


def fts_ids(memory, word):
    return [r[0] for r in memory.db.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH ?", (f'"{word}"',))]


def test_add_stores_row_fts_entry_and_vector(fake_memory):
    result = fake_memory.add("Priya is the owner's sister.", "fact", "chat")
    assert result.created
    fid = result.fact.id
    assert fake_memory.get(fid).text == "Priya is the owner's sister."
    assert fts_ids(fake_memory, "priya") == [fid]
    assert fid in fake_memory.vectors
    stats = fake_memory.stats()
    assert (stats["facts"], stats["fts"], stats["vectors"], stats["consistent"]) == (1, 1, 1, True)


def test_text_is_stripped_and_validated(fake_memory):
    assert fake_memory.add("  padded  ").fact.text == "padded"
    with pytest.raises(InvalidInput):
        fake_memory.add("   ")
    with pytest.raises(TooLarge):
        fake_memory.add("x" * 8001)
    with pytest.raises(InvalidInput):
        fake_memory.add("ok", type="opinion")
    assert fake_memory.count() == 1


def test_exact_duplicate_ignores_case_and_space_within_a_type(fake_memory):
    first = fake_memory.add("The owner prefers metric units.")
    again = fake_memory.add("  the OWNER prefers metric units.  ")
    assert (again.created, again.fact.id, again.match, again.score) == (False, first.fact.id, "exact", 1.0)
    other_type = fake_memory.add("The owner prefers metric units.", type="skill")
    assert other_type.created


def test_near_duplicate_returns_the_existing_fact_with_its_score(memory):
    first = memory.add("The owner prefers metric units.")
    near = memory.add("The owner prefers the metric units.")
    assert not near.created and near.fact.id == first.fact.id and near.match == "near"
    assert near.score >= 0.97
    different = memory.add("The owner prefers imperial units.")
    assert different.created


def test_the_near_threshold_is_a_setting(tmp_path, minilm):
    strict = Memory(tmp_path / "strict.db", minilm, threshold=0.999)
    strict.add("The owner prefers metric units.")
    assert strict.add("The owner prefers the metric units.").created


def test_a_batch_dedups_against_itself(fake_memory):
    results = fake_memory.add_many([{"text": "Tom is tall."}, {"text": "tom is tall."}])
    assert [r.created for r in results] == [True, False]
    assert fake_memory.count() == 1


def test_an_import_embeds_ahead_and_still_dedups_across_batches(fake_memory):
    items = [{"text": f"Import line {i} of the file."} for i in range(10)] + [{"text": "IMPORT LINE 3 OF THE FILE."}]
    batches = list(fake_memory.import_batches(items, size=4))
    assert [len(b) for b in batches] == [4, 4, 3]
    results = [r for b in batches for r in b]
    assert sum(r.created for r in results) == 10 and fake_memory.count() == 10
    assert (results[-1].created, results[-1].fact.id) == (False, results[3].fact.id)  # batch 3 saw batch 1
    assert fake_memory.stats()["consistent"]


def test_an_import_with_a_bad_line_writes_nothing(fake_memory):
    items = [{"text": f"Import line {i} of the file."} for i in range(10)] + [{"text": "ok", "type": "opinion"}]
    with pytest.raises(InvalidInput):
        next(fake_memory.import_batches(items, size=4))
    assert fake_memory.count() == 0


def test_idle_blas_threads_sleep_instead_of_spinning(tmp_path):
    """The engine's package sets OpenBLAS's idle-thread timeout before numpy loads (memories/__init__):
    spinning threads took a core from the embedding model during an import."""
    script = (
        "import memories.store, numpy as np, resource, time\n"
        "a = np.ones((64, 384), np.float32); b = np.ones((50_000, 384), np.float32)\n"
        "for _ in range(3): a @ b.T\n"
        "cpu = lambda: sum(resource.getrusage(resource.RUSAGE_SELF)[:2])\n"
        "before = cpu(); time.sleep(0.3); print(cpu() - before)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert float(out.stdout) < 0.03  # spinning burned about 0.1 s of CPU in that sleep


def test_a_failed_batch_leaves_nothing_behind(fake_memory, monkeypatch):
    fake_memory.add("Existing fact.")
    original = fake_memory.db.execute

    def fail_on_third_vector(sql, *args):
        if sql.startswith("INSERT INTO vectors") and fake_memory.db.total_changes > 6:
            raise RuntimeError("disk on fire")
        return original(sql, *args)

    class Proxy:
        def __getattr__(self, name):
            return getattr(original.__self__, name)

        execute = staticmethod(fail_on_third_vector)

    monkeypatch.setattr(fake_memory.state, "db", Proxy())
    with pytest.raises(RuntimeError):
        fake_memory.add_many([{"text": f"New fact number {i}."} for i in range(5)])
    monkeypatch.undo()
    stats = fake_memory.stats()
    assert (stats["facts"], stats["fts"], stats["vectors"], stats["vectors_in_memory"]) == (1, 1, 1, 1)
    assert stats["consistent"]


def test_edit_changes_row_fts_and_vector_together(fake_memory):
    fid = fake_memory.add("Leo swims on Wednesday.").fact.id
    before = fake_memory.vectors.vector(fid).copy()
    fact = fake_memory.edit(fid, text="Leo plays football on Friday.", source="calendar")
    assert (fact.text, fact.source) == ("Leo plays football on Friday.", "calendar")
    assert fact.updated_at > fact.created_at
    assert fts_ids(fake_memory, "swims") == [] and fts_ids(fake_memory, "football") == [fid]
    assert not np.allclose(before, fake_memory.vectors.vector(fid))
    assert fake_memory.stats()["consistent"]


def test_an_edit_that_would_duplicate_another_fact_is_refused(fake_memory):
    a = fake_memory.add("Tom is tall.").fact
    b = fake_memory.add("Anna is short.").fact
    with pytest.raises(Conflict) as e:
        fake_memory.edit(b.id, text="TOM is tall.")
    assert e.value.existing.id == a.id and e.value.match == "exact"
    assert fake_memory.get(b.id).text == "Anna is short."
    # Editing a fact to its own text in another case is not a duplicate of itself.
    assert fake_memory.edit(a.id, text="Tom is TALL.").text == "Tom is TALL."


def test_changing_type_checks_duplicates_in_the_new_type(fake_memory):
    fake_memory.add("Use the train.", type="skill")
    fid = fake_memory.add("Use the train.", type="fact").fact.id
    with pytest.raises(Conflict):
        fake_memory.edit(fid, type="skill")


def test_delete_removes_row_fts_entry_and_vector(fake_memory):
    fid = fake_memory.add("Pixel is a cat.").fact.id
    keep = fake_memory.add("Rex is a dog.").fact.id
    assert fake_memory.delete(fid).id == fid
    with pytest.raises(NotFound):
        fake_memory.get(fid)
    assert fts_ids(fake_memory, "pixel") == []
    assert fid not in fake_memory.vectors and keep in fake_memory.vectors
    assert fake_memory.db.execute("SELECT count(*) FROM vectors WHERE fact_id = ?", (fid,)).fetchone()[0] == 0
    with pytest.raises(NotFound):
        fake_memory.delete(fid)
    assert fake_memory.stats()["consistent"]


def test_stats_find_orphans_in_every_direction(fake_memory):
    a = fake_memory.add("Alpha fact.").fact.id
    b = fake_memory.add("Beta fact.").fact.id
    c = fake_memory.add("Gamma fact.").fact.id
    db = fake_memory.db
    db.execute("DELETE FROM facts_fts WHERE rowid = ?", (a,))
    db.execute("DELETE FROM vectors WHERE fact_id = ?", (b,))
    db.execute("DELETE FROM facts WHERE id = ?", (c,))
    orphans = fake_memory.stats()["orphans"]
    assert orphans == {
        "fts_without_fact": [c], "vectors_without_fact": [c], "facts_without_fts": [a], "facts_without_vector": [b],
        "vectors_out_of_step": [],  # each vector the matrix holds is its table row's
    }
    assert not fake_memory.stats()["consistent"]


def test_reindex_heals_a_broken_index(fake_memory):
    a = fake_memory.add("Alpha fact.").fact.id
    fake_memory.db.execute("DELETE FROM facts_fts WHERE rowid = ?", (a,))
    fake_memory.db.execute("DELETE FROM vectors WHERE fact_id = ?", (a,))
    assert fake_memory.reindex()["vectors"] == 1
    assert fake_memory.stats()["consistent"] and fts_ids(fake_memory, "alpha") == [a]


def test_vectors_survive_a_restart(tmp_path):
    m = Memory(tmp_path / "m.db", HashEmbedder())
    fid = m.add("Persisted fact.").fact.id
    m.close()
    again = Memory(tmp_path / "m.db", HashEmbedder())
    assert fid in again.vectors and again.recall("persisted")["results"][0]["via"] == "both"


def test_list_is_newest_first_with_a_cursor_and_filters(fake_memory):
    for i in range(7):
        fake_memory.add(f"Fact number {i}.", type="log" if i % 2 else "fact", source="a" if i < 3 else "b")
    page, cursor, total = fake_memory.list(limit=3)
    assert total == 7 and [f.text for f in page] == ["Fact number 6.", "Fact number 5.", "Fact number 4."]
    seen = [f.id for f in page]
    while cursor:
        page, cursor, _ = fake_memory.list(limit=3, cursor=cursor)
        seen += [f.id for f in page]
    assert seen == sorted(seen, reverse=True) and len(seen) == 7
    assert fake_memory.list(type="log")[2] == 3
    assert fake_memory.list(source="a")[2] == 3
    assert [f.text for f in fake_memory.list(q="number 3")[0]] == ["Fact number 3."]
    assert fake_memory.list(q="%")[2] == 0  # LIKE wildcards are plain text
    with pytest.raises(InvalidInput):
        fake_memory.list(cursor="garbage!")


def test_recall_fuses_keyword_and_vector_lists(memory):
    sister = memory.add("Priya is the owner's sister.").fact.id
    memory.add("The owner prefers metric units.")
    memory.add("The owner's wife is called Mara.")
    result = memory.recall("Who is Priya?", debug=True, fusion=SEED)
    top = result["results"][0]
    assert top["fact"]["id"] == sister and top["via"] == "both" and top["kw_rank"] == 1 and top["vec_rank"] == 1
    assert top["score"] == pytest.approx(2 / 61)
    assert result["match"] == '"priya"'
    assert [h["rank"] for h in result["vec"]] == [1, 2, 3]
    assert result["kw"][0]["bm25"] < 0
    assert all(h["via"] == "vec" for h in result["results"][1:])


def test_recall_filters_both_lists_by_type(memory):
    memory.add("Use the train to Amsterdam.", type="skill")
    fact = memory.add("The train to Amsterdam takes 30 minutes.", type="fact").fact.id
    result = memory.recall("train Amsterdam", type="fact", debug=True)
    assert {h["fact"]["id"] for h in result["results"]} == {fact}
    assert all(h["fact"]["type"] == "fact" for h in result["kw"] + result["vec"])


def test_recall_respects_depth_and_limit(fake_memory):
    fake_memory.add_many([{"text": f"Apple fact {i}."} for i in range(40)])
    result = fake_memory.recall("apple", limit=100, debug=True)
    assert len(result["kw"]) == 30 and len(result["vec"]) == 30
    assert len(fake_memory.recall("apple", limit=5)["results"]) == 5


@pytest.mark.parametrize("query", ['"', "*", "NEAR", ":", "-", "()", "🙂", "text:foo AND (bar OR", "x" * 10_000])
def test_any_query_text_recalls_without_error(memory, query):
    memory.add("The owner prefers metric units.")
    assert "results" in memory.recall(query)


def test_recall_without_a_model_is_keyword_only(tmp_path):
    m = Memory(tmp_path / "m.db", HashEmbedder())
    m.add("Priya is the owner's sister.")
    m.close()
    keyword_only = Memory(tmp_path / "m.db", None)
    result = keyword_only.recall("Priya")
    assert result["mode"] == "keyword-only" and "warning" in result
    assert [h["via"] for h in result["results"]] == ["kw"]
    with pytest.raises(Unavailable):
        keyword_only.add("A new fact.")


def test_a_model_that_breaks_at_run_time_fails_writes_and_keeps_keyword_recall(tmp_path):
    m = Memory(tmp_path / "m.db", HashEmbedder())
    m.add("Priya is the owner's sister.")
    m.embedder = BrokenEmbedder()
    assert m.recall("Priya")["mode"] == "keyword-only"
    with pytest.raises(Unavailable):
        m.add("Another fact.")
    assert m.count() == 1 and m.stats()["consistent"]


def test_duplicates_lists_same_type_pairs_highest_first(memory):
    a = memory.add("The owner prefers metric units.").fact.id
    b = memory.add("The owner likes metric units.").fact.id
    memory.add("The owner likes metric units.", type="skill")
    memory.add("Leo goes to school.")
    pairs, total = memory.duplicates(threshold=0.8)
    assert total == 1 and {pairs[0]["a"]["id"], pairs[0]["b"]["id"]} == {a, b}
    assert 0.8 <= pairs[0]["score"] < 0.97
    assert memory.duplicates(threshold=0.99)[1] == 0


def test_duplicates_agree_with_a_brute_force_count(fake_memory):
    fake_memory.add_many([{"text": f"word{i % 7} word{i % 5} extra{i % 3}", "type": "fact"} for i in range(60)])
    fake_memory.add_many([{"text": f"word{i % 7} other{i}", "type": "log"} for i in range(30)])
    pairs, total = fake_memory.duplicates(threshold=0.6, limit=100_000)
    expected = 0
    for t in ("fact", "log"):
        rows = [fid for fid in fake_memory.vectors.ids() if fake_memory.get(fid).type == t]
        vecs = np.array([fake_memory.vectors.vector(fid) for fid in rows])
        sims = vecs @ vecs.T
        expected += int((np.triu(sims, 1) >= 0.6).sum())
    assert total == expected and len(pairs) == expected
    assert [p["score"] for p in pairs] == sorted((p["score"] for p in pairs), reverse=True)
    # The histogram lists the facts whose nearest neighbour is at or above the floor.
    nearest = dict(fake_memory.nearest())
    at_floor = {fid for p in fake_memory.duplicates(threshold=fake_memory.floor, limit=100_000)[0] for fid in (p["a"]["id"], p["b"]["id"])}
    assert set(nearest) == at_floor


def test_neighbours_and_explain(memory):
    sister = memory.add("Priya is the owner's sister.").fact.id
    lives = memory.add("Priya lives in Lisbon.").fact.id
    memory.add("The car is grey.")
    near = memory.neighbours(sister)
    assert near[0][0].id == lives and len(near) == 2
    why = memory.explain("Who is Priya's sister?", sister, fusion=SEED)
    assert why["matched_terms"] == ["priya", "sister"] and why["kw_rank"] == 1 and why["vec_rank"] == 1
    assert "owner" in why["fact_terms"] and why["score"] == pytest.approx(2 / 61)
    other = memory.explain("Who is Priya's sister?", lives, fusion=SEED)
    assert other["matched_terms"] == ["priya"] and other["kw_rank"] == 2
    assert memory.tokens("Running quickly") == ["run", "quickli"]


def test_phrases_put_the_fact_with_the_asked_word_order_first(memory):
    memory.add_many([{"text": t} for t in ("Anna's brother is Max.", "Anna's sister is Lena.", "Tom's brother is Anna.",
                                           "Max's brother is Tom.", "Lena's brother is Anna.")])
    top = memory.recall("Who is Anna's brother?", fusion=replace(DEFAULT, phrases=True))["results"][0]
    assert top["fact"]["text"] == "Anna's brother is Max."
    assert top["parts"]["kw"] > 1  # the phrase "anna s brother" scored on top of its words


def test_a_terms_information_is_what_bm25_gives_a_fact_of_average_length(memory):
    memory.add_many([{"text": f"plain filler {w}."} for w in ("apple", "pear", "plum", "fig", "zebra", "lime")])
    hit = memory.recall("zebra", mode="keyword", debug=True)
    assert -hit["results"][0]["bm25"] == pytest.approx(hit["information"])  # tf 1, every fact 3 tokens


def test_the_row_count_for_the_idfs_is_the_one_bm25_uses_past_one_varint_byte(fake_memory):
    assert fake_memory.reader.indexed_rows() == 0
    added = [r.fact.id for r in fake_memory.add_many([{"text": f"entry {i} note"} for i in range(100)])]
    added += [r.fact.id for r in fake_memory.add_many([{"text": f"entry {i} note"} for i in range(100, 300)])]
    for fid in added[:20]:
        fake_memory.delete(fid)
    assert fake_memory.reader.indexed_rows() == fake_memory.count() == 280  # two varint bytes from 128 on
    hit = fake_memory.recall("299", mode="keyword", debug=True)
    assert -hit["results"][0]["bm25"] == pytest.approx(hit["information"])  # tf 1, every fact 3 tokens


def test_a_keyword_lead_on_a_word_most_facts_share_counts_for_little(memory):
    memory.add_many([{"text": t} for t in (
        "The owner's GP is Dr. Hale.", "The owner's sister is Priya.", "The owner's car is a green Skoda.",
        "The owner's landlord is Mr. Osei.", "The owner's favourite colour is teal.", "The owner's dog is Biscuit.",
        "The owner's gym is on Kade Street.", "The owner's bank is Triodos.", "Rain is forecast for Friday.")])
    query = "which doctor does the owner see"  # "owner" is in 8 of 9 facts, "doctor" in none
    info = memory.recall(query, debug=True)
    assert [(t["term"], t["facts"]) for t in info["terms"]] == [("doctor", 0), ("owner", 8), ("see", 0)]
    assert info["information"] == pytest.approx(sum(t["idf"] for t in info["terms"]))
    assert info["results"] and all(h["parts"]["kw"] < 0.05 for h in info["results"])
    assert info["results"][0]["fact"]["id"] == info["vec"][0]["fact"]["id"]  # the vector list decides
    ratio = memory.recall(query, debug=True, fusion=replace(DEFAULT, method="ratio"))
    assert max(h["parts"]["kw"] for h in ratio["results"]) == 1.0  # ratio gave the best "owner" match full weight
    why = memory.explain(query, info["results"][0]["fact"]["id"])
    assert why["information"] == pytest.approx(info["information"]) and why["score"] == pytest.approx(info["results"][0]["score"])


def test_pairs_and_nearest_are_the_same_across_many_tiles(fake_memory, monkeypatch):
    fake_memory.add_many([{"text": f"word{i % 7} word{i % 5} extra{i % 3}"} for i in range(60)])
    def pairs():
        found, total = fake_memory.duplicates(threshold=0.6, limit=100_000)
        return total, sorted((p["a"]["id"], p["b"]["id"], round(p["score"], 5)) for p in found)

    whole_pairs, whole_nearest = pairs(), fake_memory.nearest()
    monkeypatch.setattr("memories.storage.allpairs.BLOCK", 7)  # many tiles, ragged edges
    assert pairs() == whole_pairs and whole_pairs[0] > 50
    tiled = dict(fake_memory.nearest())
    assert tiled.keys() == dict(whole_nearest).keys()
    assert all(abs(tiled[k] - v) < 1e-6 for k, v in whole_nearest)


def test_recall_reranks_the_top_in_one_more_model_call_and_keeps_the_order_if_the_model_fails(tmp_path, caplog):
    class Recording(HashEmbedder):
        fail = False

        def embed(self, texts):
            self.seen = [*getattr(self, "seen", []), list(texts)]
            if self.fail and "reports to Ulla Pereira." in texts:
                raise RuntimeError("model exploded")
            return super().embed(texts)

    m = Memory(tmp_path / "m.db", Recording())
    m.add_many([{"text": t} for t in ("Cosima Jaramillo works as a glazier.", "Cosima Jaramillo reports to Ulla Pereira.",
                                      "Cosima Jaramillo is Freya Jaramillo's sister.")])
    m.embedder.seen = []
    body = m.recall("who is cosima jaramillo's boss", debug=True, limit=1)
    assert len(body["results"]) == 1  # the top 5 reranked, then cut to the limit
    assert body["rerank"]["shared"] == ["cosima", "jaramillo"] and body["rerank"]["query"] == "who is  's boss"
    assert m.embedder.seen[-1] == ["who is  's boss", *[f["text"] for f in body["rerank"]["facts"]]]
    assert len(m.embedder.seen) == 2  # the query's call, then the rerank's
    hit = body["results"][0]
    assert hit["score"] == pytest.approx(sum(hit["parts"].values())) and hit["parts"]["rerank"] > 0
    why = m.explain("who is cosima jaramillo's boss", hit["fact"]["id"])
    assert why["fused_rank"] == 1 and why["rerank_contribution"] == pytest.approx(hit["parts"]["rerank"])

    off = m.recall("who is cosima jaramillo's boss", debug=True, fusion=replace(DEFAULT, rerank=0))
    assert off["rerank"] is None and all(h["parts"]["rerank"] == 0 for h in off["results"])
    m.embedder.fail = True
    m.state.text_vectors.clear()  # else the texts embedded above are kept and the model is not called
    failed = m.recall("who is cosima jaramillo's boss", debug=True)
    assert failed["rerank"] is None and [h["fact"]["id"] for h in failed["results"]] == [h["fact"]["id"] for h in off["results"]]
    assert "reranking failed" in caplog.text
    m.close()


def test_the_rerank_sends_no_fact_with_nothing_left_and_gives_it_cosine_0(tmp_path):
    """Workers AI refuses an empty text: a fact that is only the shared words is not embedded
    again, on both memories alike (worker/src/recall/searching.ts)."""
    class Recording(HashEmbedder):
        def embed(self, texts):
            self.seen = [*getattr(self, "seen", []), list(texts)]
            return super().embed(texts)

    m = Memory(tmp_path / "m.db", Recording())
    m.add_many([{"text": t} for t in ("Cosima Jaramillo.", "Cosima Jaramillo works as a glazier.",
                                      "Cosima Jaramillo reports to Ulla Pereira.")])
    m.embedder.seen = []
    body = m.recall("who is cosima jaramillo's boss", debug=True)
    bare = next(f for f in body["rerank"]["facts"] if f["text"] == ".")
    assert bare["cosine"] == 0.0
    assert m.embedder.seen[-1] == ["who is  's boss", *[f["text"] for f in body["rerank"]["facts"] if f["text"] != "."]]
    assert all(t.strip() for call in m.embedder.seen for t in call)
    m.close()


def test_a_small_memory_prunes_its_change_log_when_it_closes(tmp_path):
    db = tmp_path / "m.db"
    m = Memory(db, HashEmbedder())
    for n in range(5):
        ids = [r.fact.id for r in m.add_many([{"text": f"Round {n}, fact {i} about tea."} for i in range(20)])]
        m.delete(ids[0])
    m.close()
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM vector_changes").fetchone()[0] == 1  # the last entry only
    again = Memory(db, HashEmbedder())
    assert len(again.vectors) == again.count() > 0 and again.stats()["consistent"]
    again.close()


def test_a_failing_keyword_search_is_logged_and_counted_and_recall_goes_on(fake_memory, monkeypatch, caplog):
    fid = fake_memory.add("Priya is the owner's sister.").fact.id
    original = fake_memory.db.execute

    class BrokenIndex:
        def __getattr__(self, name):
            return getattr(original.__self__, name)

        @staticmethod
        def execute(sql, *args):
            if "facts_fts MATCH" in sql and "bm25" in sql:
                raise sqlite3.OperationalError("database disk image is malformed")
            return original(sql, *args)

    monkeypatch.setattr(fake_memory.state, "db", BrokenIndex())
    hits = fake_memory.recall("Priya sister")["results"]
    monkeypatch.undo()
    assert [h["fact"]["id"] for h in hits] == [fid] and hits[0]["via"] == "vec"
    assert "keyword search failed" in caplog.text
    assert fake_memory.stats()["keyword_errors"] == 1


def test_the_history_and_the_recall_log_keep_only_their_newest_rows(tmp_path):
    m = Memory(tmp_path / "m.db", HashEmbedder(), history=5, recall_log=3)
    for i in range(8):
        m.add(f"Fact number {i} about tea.", client="agent")
        m.recall(f"tea {i}", log=True, client="agent")
    m.recall("not logged", log=False)
    entries, _ = m.history_entries(limit=100)
    assert [e.after["text"] for e in entries] == [f"Fact number {i} about tea." for i in range(7, 2, -1)]
    recalls, _, total = m.recalls(limit=100)
    assert total == 3 and [r.query for r in recalls] == ["tea 7", "tea 6", "tea 5"]
    m.close()


def test_a_recall_log_of_zero_logs_nothing_and_a_failed_log_write_never_fails_the_recall(tmp_path):
    m = Memory(tmp_path / "m.db", HashEmbedder(), recall_log=0)
    m.add("Priya is the owner's sister.")
    assert m.recall("Priya", log=True)["results"] and m.recalls()[2] == 0
    m.close()
    m = Memory(tmp_path / "m.db", HashEmbedder())
    m.db.execute("DROP TABLE recalls")  # as a full disk or a damaged table would fail the insert
    assert m.recall("Priya", log=True)["results"][0]["fact"]["text"] == "Priya is the owner's sister."
    m.close()
