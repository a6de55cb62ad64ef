"""The pure parts of recall: the FTS5 query builder, dedup normalisation and fusion."""

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memories.recall import Fusion, fuse, match_expression, terms, via
from memories.store import text_key

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


def test_fusion_scores_by_hand():
    # a: kw 1, vec 3 -> 1/61 + 1/63; b: kw 2 -> 1/62; c: vec 1 -> 1/61; d: vec 2 -> 1/62
    fused = fuse(["a", "b"], ["c", "d", "a"], Fusion())
    assert [f[0] for f in fused] == ["a", "c", "d", "b"]
    assert fused[0][1] == pytest.approx(1 / 61 + 1 / 63)
    assert fused[0][2:] == (1, 3)
    # c and d tie with b on score only by rank: c (1/61) > d = b (1/62); d wins the tie on vec rank.
    assert fused[1][1] == pytest.approx(1 / 61)
    assert fused[2][1] == pytest.approx(fused[3][1])


def test_fusion_respects_its_settings():
    fused = fuse([1], [2], Fusion(k=0, kw_weight=2.0, vec_weight=1.0))
    assert fused == [(1, 2.0, 1, None), (2, 1.0, None, 1)]


@pytest.mark.parametrize("kw,vec,expected", [(1, 2, "both"), (1, None, "kw"), (None, 4, "vec")])
def test_via(kw, vec, expected):
    assert via(kw, vec) == expected
