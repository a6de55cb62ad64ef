"""The pure parts of recall: the FTS5 query builder, dedup normalisation and fusion."""

import sqlite3

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memories.recall.ranking import (DEFAULT, SEED, Fused, Fusion, expand, fuse, idf, information, match_expression, phrases, rerank,
                             rerank_plan, terms, via, vocabulary_words, without)
from memories.facts import text_key

NASTY = ['"', '*', 'NEAR', 'NEAR(a b)', ':', 'text:foo', '-', 'a - b', '(', ')', 'AND', 'OR', 'NOT', '^', '{a b}',
         '🙂', "O'Brien", "''", '""', 'a"b', '\x00', '\\']


@pytest.fixture(scope="module")
def fts():
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    db.executemany("INSERT INTO t (text) VALUES (?)", [("near the star",), ("Anna's brother Tom",), ("o brien",)])
    return db


def test_it_drops_stop_words_and_quotes_terms():
    assert match_expression("Who is Priya's sister?") == '"priya" OR "sister"'


def test_it_keeps_each_term_once():
    assert terms("Tom Tom tom") == ["tom"]


def test_a_query_of_only_stop_words_matches_nothing():
    assert match_expression("who is it?") == ""


def test_a_huge_query_is_capped():
    assert len(terms(" ".join(f"w{i}" for i in range(5000)))) == 64


@pytest.mark.parametrize("text", NASTY)
def test_fts5_syntax_in_user_text_is_only_text(fts, text):
    match = match_expression(text)
    if match:
        fts.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()


def test_near_and_star_are_searched_as_words(fts):
    rows = fts.execute("SELECT text FROM t WHERE t MATCH ?", (match_expression("NEAR *"),)).fetchall()
    assert rows == [("near the star",)]


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_makes_a_valid_match(text):
    db = sqlite3.connect(":memory:")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize='porter unicode61')")
    db.execute("INSERT INTO t (text) VALUES (?)", (text,))
    match = match_expression(text)
    if match:
        db.execute("SELECT rowid FROM t WHERE t MATCH ?", (match,)).fetchall()


@given(st.text(alphabet=st.characters(codec="ascii", categories=["L", "N", "P", "Zs"]), max_size=100))
def test_dedup_key_ignores_case(text):
    assert text_key(text.upper()) == text_key(text.lower()) == text_key(text.swapcase())


def test_dedup_key_folds_unicode_case():
    assert text_key("STRASSE") == text_key("straße")


@given(st.text(min_size=1, max_size=50), st.sampled_from([" ", "\t", "\n", "  \r\n"]))
def test_dedup_key_is_stable_under_padding(text, pad):
    assert text_key(pad + text + pad) == text_key(text)


def ranked(*ids):
    """A list of (id, score) best first, scores falling by one."""
    return [(fid, float(len(ids) - i)) for i, fid in enumerate(ids)]


def test_rrf_scores_by_hand():
    # a: kw 1, vec 3 -> 1/61 + 1/63; b: kw 2 -> 1/62; c: vec 1 -> 1/61; d: vec 2 -> 1/62
    fused = fuse(ranked("a", "b"), ranked("c", "d", "a"), SEED)
    assert [f.id for f in fused] == ["a", "c", "d", "b"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 63)
    assert (fused[0].kw_rank, fused[0].vec_rank) == (1, 3)
    assert fused[1].score == pytest.approx(1 / 61)
    # d and b tie on 1/62; d wins the tie because the vector list ranked it.
    assert fused[2].score == pytest.approx(fused[3].score)


def test_rrf_respects_k_and_weights():
    fused = fuse([(1, 9.0)], [(2, 0.5)], Fusion(k=0, kw_weight=2.0, vec_weight=1.0))
    assert [(f.id, f.score, f.kw_rank, f.vec_rank) for f in fused] == [(1, 2.0, 1, None), (2, 1.0, None, 1)]


def test_ratio_fusion_keeps_a_decisive_lead_by_hand():
    # Keyword: a far ahead (10 vs 4). Vector: b a little ahead (0.80 vs 0.76).
    kw, vec = [("a", 10.0), ("b", 4.0)], [("b", 0.80), ("a", 0.76)]
    fused = fuse(kw, vec, Fusion(method="ratio"))
    assert [f.id for f in fused] == ["a", "b"]
    assert fused[0].score == pytest.approx(1 + 0.76 / 0.80)
    assert fused[1].score == pytest.approx(4 / 10 + 1)
    # Rank fusion cannot see the lead: it ties them and lets the vector list decide.
    assert [f.id for f in fuse(kw, vec, SEED)] == ["b", "a"]


def test_relative_fusion_scales_each_list_from_its_last_to_its_first():
    fused = fuse([("a", 10.0), ("b", 6.0), ("c", 2.0)], [], Fusion(method="relative"))
    assert [round(f.score, 3) for f in fused] == [1.0, 0.5, 0.0]


def test_phrases_keep_word_order_and_skip_one_stop_word():
    assert phrases("Who is Anna's brother?") == ["anna s brother"]
    assert phrases("What is my spouse called?") == ["spouse called"]
    assert phrases("Who is my sister?", alias_self=True) == ["owner s sister"]
    assert match_expression("Anna's brother", with_phrases=True) == '"anna" OR "brother" OR "anna s brother"'


def test_first_person_reads_as_the_owner():
    assert terms("When was I born?", alias_self=True) == ["owner", "born"]
    assert terms("When was I born?") == ["born"]


def test_info_fusion_weighs_a_keyword_lead_by_the_information_it_matched():
    # Keyword: a ahead (2 vs 1) but both far below what matching the query's terms would score (10).
    kw, vec = [("a", 2.0), ("b", 1.0)], [("b", 0.8), ("a", 0.6)]
    ratio = fuse(kw, vec, Fusion(method="ratio"))
    assert [f.id for f in ratio] == ["a", "b"]  # ratio trusts the lead: a gets the full 1.0
    info = fuse(kw, vec, Fusion(method="info"), info=10.0)
    assert [f.id for f in info] == ["b", "a"]
    assert info[0].kw_part == pytest.approx(0.1) and info[1].score == pytest.approx(0.2 + 0.6 / 0.8)
    # Without the figure (no terms) it divides by the best hit, as ratio does.
    assert [f.score for f in fuse(kw, vec, Fusion(method="info"))] == [f.score for f in ratio]


def test_idf_is_fts5s_and_a_common_term_carries_almost_nothing():
    assert idf(1000, 1) == pytest.approx(math.log(999.5 / 1.5))
    assert idf(1000, 900) == 1e-6  # FTS5 floors a term in more than half the rows here
    assert information(1000, [1, 900]) == pytest.approx(idf(1000, 1) + 1e-6)
    assert information(1000, []) == 0


def test_presets():
    assert SEED == Fusion() and SEED.method == "rrf" and SEED.k == 60 and SEED.depth == 30
    assert DEFAULT == Fusion(method="info", expand=0.65, rerank=5) and not DEFAULT.phrases and not DEFAULT.alias_self
    assert DEFAULT.terms("Who is my sister?") == ["sister"] and SEED.terms("Who is my sister?") == []
    assert DEFAULT.terms("Who is my sister?", ["sibling"]) == ["sister", "sibling"]
    assert DEFAULT.expandable_terms("Is Jo's GP in 2026 my sister?") == ["sister"] and SEED.expandable_terms("my sister") == []


def test_expansion_takes_each_terms_closest_words_over_the_bar_once():
    closest = [[("manager", 0.7), ("boss", 1.0), ("employer", 0.7), ("zebra", 0.2)],  # boss
               [("manager", 0.9), ("husband", 0.66), ("wife", 0.64)]]  # spouse
    found = expand(["boss", "spouse"], closest, 0.65)
    # boss: itself, then a tie at 0.7 that goes to "employer" before "manager" (both kept, 3 closest);
    # spouse: "manager" already came from boss, "wife" is under the bar.
    assert found == [("employer", "boss", 0.7), ("manager", "boss", 0.7), ("husband", "spouse", 0.66)]
    assert expand(["boss"], [[("a", 0.9), ("b", 0.9), ("c", 0.9), ("d", 0.95)]], 0.65) == [("d", "boss", 0.95), ("a", "boss", 0.9), ("b", "boss", 0.9)]
    assert expand(["gp", "42", "boss"], [[("manager", 0.9)]], 0.65) == [("manager", "boss", 0.9)]  # only expandable terms have rows
    assert vocabulary_words("The GP's 2 dogs: Rex and rex, at 9.") == ["dogs", "rex"]


@pytest.mark.parametrize("kw,vec,expected", [(1, 2, "both"), (1, None, "kw"), (None, 4, "vec")])
def test_via(kw, vec, expected):
    assert via(kw, vec) == expected


COSIMA = ["Cosima Jaramillo works as a glazier.", "Cosima Jaramillo is Freya Jaramillo's sister.",
          "Cosima Jaramillo reports to Ulla Pereira."]


def test_the_rerank_takes_out_the_query_words_the_top_shares():
    plan = rerank_plan("who is Cosima JARAMILLO's boss", COSIMA)
    assert plan.shared == ["cosima", "jaramillo"]  # both in all three; "boss" in none
    assert plan.query == "who is  's boss"
    assert plan.facts == ["works as a glazier.", "is Freya 's sister.", "reports to Ulla Pereira."]
    # A word one fact holds is not shared; nor is a stop word or a word of two letters.
    assert rerank_plan("who is freya", COSIMA) is None
    assert without("Jo's JO-jo", {"jo"}) == "'s -"


@pytest.mark.parametrize("query,texts", [
    ("who is cosima's boss", COSIMA[:1]),  # one fact: nothing to tell apart
    ("cosima jaramillo", COSIMA),  # nothing left of the query
    ("what does the glazier do", COSIMA),  # no shared word
])
def test_the_rerank_does_nothing_when_there_is_nothing_to_compare(query, texts):
    assert rerank_plan(query, texts) is None


def test_the_rerank_adds_half_each_facts_cosine_over_the_best_and_sorts_the_top_again():
    head = [Fused(1, 1, 1, 0.9, 1.0), Fused(2, 2, 2, 0.8, 0.95), Fused(3, 3, 3, 0.7, 0.9)]
    done = rerank(head, [0.2, 0.3, 0.6])
    assert [h.id for h in done] == [3, 1, 2]
    assert [round(h.rerank_part, 6) for h in done] == [0.5, round(0.5 * 0.2 / 0.6, 6), 0.25]
    assert done[0].score == pytest.approx(0.7 + 0.9 + 0.5)
    # No cosine above 0: nothing to share out, the order stands.
    assert [h.id for h in rerank([Fused(1, 1, 1, 1.0, 1.0), Fused(2, 2, 2, 0.0, 0.5)], [-0.1, 0.0])] == [1, 2]
