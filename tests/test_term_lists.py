"""The keyword list from our own term lists (term_lists.py) is FTS5's, ids and scores to the bit,
through writes of this process and of another, within its bound in bytes."""

from __future__ import annotations

import random

import pytest

from memories.recall.ranking import quote
from memories.store import Memory
from memories.storage.term_lists import TermLists, varints
from tests.fakes import HashEmbedder

WORDS = ("tea coffee jazz chess cycling sushi hiking opera tennis pottery sailing baking poetry yoga lisbon berlin "
         "porto osaka priya anna tom lena sister brother owner prefers metric units loves hates").split()


def texts(n: int, seed: int) -> list[str]:
    """Facts of 2 to 14 words, a word now and then twice or thrice (counts past one)."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 14))) + f" n{seed}x{i}." for i in range(n)]


def matches(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" OR ".join(quote(w) for w in rng.sample(WORDS, rng.randint(1, 6))) for _ in range(n)]


def fts5(memory: Memory, match: str, depth: int = 30) -> list[tuple[int, float]]:
    """The keyword list as FTS5 gives it."""
    with memory.state.reading():
        return memory.db.execute("SELECT rowid, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ?"
                                 " ORDER BY s, rowid LIMIT ?", (match, depth)).fetchall()


def ours(memory: Memory, match: str, depth: int = 30) -> list[tuple[int, float]] | None:
    with memory.state.reading():
        return memory.state.term_lists.top(match, depth, memory.state.seq)


def asked_twice(memory: Memory, queries: list[str]) -> None:
    for _ in range(2):
        for m in queries:
            ours(memory, m)


@pytest.fixture
def filled(tmp_path):
    m = Memory(tmp_path / "lists.db", HashEmbedder())
    m.add_many([{"text": t} for t in texts(400, 1)])
    yield m
    m.close()


def test_the_lists_give_fts5s_keyword_list_to_the_bit(filled):
    queries = matches(60, 2)
    assert all(ours(filled, m) is None for m in queries[:1])  # a word asked once reads no list
    asked_twice(filled, queries)
    for m in queries:
        got = ours(filled, m)
        assert got is not None and got == [tuple(r) for r in fts5(filled, m)], m
    assert len(filled.state.term_lists) == len({w for m in queries for w in m.split(" OR ")})
    asked_twice(filled, ['"zebra" OR "tea"'])  # a word no fact holds adds nothing
    assert ours(filled, '"zebra" OR "tea"') == [tuple(r) for r in fts5(filled, '"zebra" OR "tea"')]


def test_recall_ranks_from_the_lists_as_from_fts5(filled):
    """The engine's own path: keyword() answers from the lists once they hold the query's terms."""
    before = [filled.recall(q, mode="keyword", debug=True)["kw"] for q in ("priya sister tea", "the owner prefers")]
    for q in ("priya sister tea", "the owner prefers"):
        filled.recall(q, mode="keyword")
    hits = filled.state.term_lists.hits
    after = [filled.recall(q, mode="keyword", debug=True)["kw"] for q in ("priya sister tea", "the owner prefers")]
    assert filled.state.term_lists.hits == hits + 2
    assert after == before


def test_a_word_asked_once_reads_no_list(filled):
    assert ours(filled, '"opera"') is None
    assert len(filled.state.term_lists) == 0 and filled.state.term_lists.nbytes() == 0
    assert ours(filled, '"opera"') == [tuple(r) for r in fts5(filled, '"opera"')]
    assert len(filled.state.term_lists) == 1


def test_writes_are_patched_in_and_the_lists_stay_fts5s(filled):
    queries = matches(40, 3)
    asked_twice(filled, queries)
    held = len(filled.state.term_lists)
    rng = random.Random(4)
    ids = [f.id for f in filled.list(limit=500)[0]]
    added = [r.fact.id for r in filled.add_many([{"text": t} for t in texts(30, 5)])]
    for fid in rng.sample(ids, 20):
        filled.edit(fid, text=texts(1, fid)[0].replace(".", " tea tea."))
    deleted = rng.sample(ids, 15)
    for fid in deleted:
        filled.delete(fid)
    filled.undo(filled.history_entries(limit=1)[0][0].id)  # the last delete back
    filled.delete(added[0])
    for m in queries:
        assert ours(filled, m) == [tuple(r) for r in fts5(filled, m)], m
    assert len(filled.state.term_lists) == held  # patched, not dropped
    lengths = filled.state.term_lists.length
    with filled.state.reading():
        for fid, size in filled.db.execute("SELECT id, sz FROM facts_fts_docsize"):
            assert lengths[fid] == varints(size)[0]
    assert lengths[deleted[0]] == 0


def test_another_processs_writes_are_patched_in_too(filled, tmp_path):
    queries = matches(30, 6)
    asked_twice(filled, queries)
    other = Memory(filled.path, HashEmbedder())
    try:
        other.add_many([{"text": t} for t in texts(25, 7)])
        victim = other.list(limit=1)[0][0]
        other.edit(victim.id, text="tea tea tea sister of the owner")
        other.delete(other.list(limit=3)[0][2].id)
    finally:
        other.close()
    for m in queries:
        assert ours(filled, m) == [tuple(r) for r in fts5(filled, m)], m
    assert len(filled.state.term_lists) > 0


def test_a_log_that_no_longer_reaches_the_lists_drops_them(filled):
    queries = matches(10, 8)
    asked_twice(filled, queries)
    filled.add_many([{"text": t} for t in texts(3, 9)])
    with filled.state.writing():  # as another process's snapshot prunes it
        filled.db.execute("DELETE FROM vector_changes WHERE seq < (SELECT max(seq) FROM vector_changes)")
    lists, reads = filled.state.term_lists, filled.state.term_lists.reads
    assert ours(filled, queries[0]) == [tuple(r) for r in fts5(filled, queries[0])]
    assert len(lists) == lists.reads - reads == len(queries[0].split(" OR "))  # read anew: the others went
    for m in queries:
        assert ours(filled, m) == [tuple(r) for r in fts5(filled, m)]


def test_the_lists_hold_no_more_than_their_bound(filled):
    lists = filled.state.term_lists
    lists.limit = 6_000  # a few short lists
    queries = matches(40, 10)
    asked_twice(filled, queries)
    answered = 0
    for m in queries:
        got = ours(filled, m)
        assert lists.nbytes() <= lists.limit
        if got is not None:
            answered += 1
            assert got == [tuple(r) for r in fts5(filled, m)]
    assert 0 < answered < len(queries)  # those whose lists fit, from the lists; the rest by FTS5
    lists.limit = 0
    assert ours(filled, queries[0]) is None


def test_what_the_lists_cannot_answer_is_fts5s(filled):
    asked_twice(filled, ['"priya" OR "sister"'])
    assert ours(filled, '"priya sister" OR "tea"') is None  # a phrase
    assert ours(filled, '"priya\'s" OR "tea"') is None  # two tokens
    with filled.state.reading():
        typed = filled.reader.keyword('"priya" OR "sister"', "skill", 30)
    assert typed == []  # a type filter: FTS5's join (every fact here is a fact)
    assert filled.recall("priya sister", mode="keyword", type="fact", debug=True)["kw"]


def test_having_counts_from_a_held_list(filled):
    asked_twice(filled, ['"tea"'])
    with filled.state.reading():
        held = filled.state.term_lists.having("tea", filled.state.seq)
        counted = filled.db.execute("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH '\"tea\"'").fetchone()[0]
    assert held == counted > 0
    assert filled.reader.term_counts(["tea"])[0][0]["facts"] == counted


def test_forgetting_a_fact_for_good_empties_the_lists(filled):
    asked_twice(filled, ['"tea" OR "opera"'])
    assert len(filled.state.term_lists)
    fid = filled.list(limit=1)[0][0].id
    filled.delete(fid)
    filled.forget(fid)
    assert len(filled.state.term_lists) == 0 and filled.state.term_lists.nbytes() == 0
    assert ours(filled, '"tea" OR "opera"') is None  # asked anew


def test_their_bytes_are_counted_in_stats(filled):
    asked_twice(filled, ['"tea" OR "opera"'])
    parts = filled.stats()["memory_parts"]
    assert parts["term_lists"] == filled.state.term_lists.nbytes() > filled.state.term_lists.length.nbytes


def test_an_empty_memory_and_an_unknown_word(tmp_path):
    m = Memory(tmp_path / "empty.db", HashEmbedder())
    try:
        assert ours(m, '"tea"') is None and ours(m, '"tea"') is None  # nothing indexed: FTS5 answers []
        m.add("Priya is the owner's sister.")
        asked_twice(m, ['"zebra"'])
        assert ours(m, '"zebra"') == [] == fts5(m, '"zebra"')
    finally:
        m.close()


def test_the_lists_take_no_memory_of_their_own_without_a_memory(tmp_path):
    lists = TermLists(Memory(tmp_path / "m.db", HashEmbedder()).db, limit=0)
    assert lists.top('"tea"', 30, 1) is None and lists.nbytes() == 0


def test_the_facts_recall_leaves_out_are_left_out_as_fts5_leaves_them(filled):
    match = '"tea" OR "sister" OR "owner"'
    asked_twice(filled, [match])
    with filled.state.reading():
        hidden = tuple(fid for fid, _ in fts5(filled, match, 12)[::2])
        lists = filled.state.term_lists
        hits = lists.hits
        got = filled.reader.keyword(match, None, 10, hidden)
        assert lists.hits == hits + 1
        lists.limit, limit = 0, lists.limit
        try:
            expected = filled.reader.keyword(match, None, 10, hidden)
        finally:
            lists.limit = limit
    assert got == expected and len(got) == 10 and not set(hidden) & {fid for fid, _ in got}


def test_inside_a_write_fts5_answers_and_the_lists_take_nothing_uncommitted(filled):
    match = '"tea" OR "opera"'
    asked_twice(filled, [match])
    lists = filled.state.term_lists
    with pytest.raises(RuntimeError):
        with filled.state.writing():
            filled.db.execute("INSERT INTO facts_fts (rowid, text) VALUES (99999, 'tea tea opera')")
            with filled.state.reading():  # (a read inside the write joins it)
                assert filled.reader.keyword(match, None, 30)[0][0] == 99999  # FTS5's, uncommitted row and all
                assert filled.reader.having("tea") == fts5_count(filled, "tea")
            raise RuntimeError("the write fails: nothing of it stays")
    assert ours(filled, match) == [tuple(r) for r in fts5(filled, match)]
    assert all(99999 not in ids for ids, _ in lists._lists.values())


def fts5_count(memory: Memory, term: str) -> int:
    return memory.db.execute("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?", (quote(term),)).fetchone()[0]


def test_a_fact_longer_than_127_tokens_has_its_length_read_whole(filled):
    """FTS5 writes a length past 127 in two varint bytes: the first alone would be wrong."""
    long = filled.add(" ".join(["tea"] + [f"w{i}" for i in range(300)]) + ".").fact.id
    asked_twice(filled, ['"tea" OR "opera"'])
    assert filled.state.term_lists.length[long] == 301  # tea and w0 to w299
    assert ours(filled, '"tea" OR "opera"') == [tuple(r) for r in fts5(filled, '"tea" OR "opera"')]
    filled.add(" ".join(["opera"] * 3 + [f"v{i}" for i in range(200)]) + ".")  # patched in, as long
    assert ours(filled, '"tea" OR "opera"') == [tuple(r) for r in fts5(filled, '"tea" OR "opera"')]


def test_a_term_in_too_many_facts_is_left_to_fts5_and_never_read(filled, monkeypatch):
    from memories.storage import term_lists

    monkeypatch.setattr(term_lists, "MOST_POSTINGS", 60)  # "tea" is in far more of the 400
    lists = filled.state.term_lists
    for _ in range(3):
        assert ours(filled, '"tea" OR "opera"') is None
    assert lists.reads == 0 and len(lists) == 0 and lists.nbytes() == 0  # not even the lengths read
    with filled.state.reading():
        assert filled.reader.keyword('"tea" OR "opera"', None, 30) == fts5(filled, '"tea" OR "opera"')
    asked_twice(filled, ['"n1x7"'])  # a rare word still has its list
    assert ours(filled, '"n1x7"') == [tuple(r) for r in fts5(filled, '"n1x7"')] and lists.reads == 1
