"""The dedup guard (memories/writes/dedup.py): a near match never merges facts that differ in a number, a
date or time, a weekday or month, a name or a negation."""

from pathlib import Path

import pytest

from memories.writes.dedup import distinct


@pytest.mark.parametrize("a,b,reason", [
    ("Noor's birthday is on 5 March.", "Noor's birthday is on 6 March.", "number"),
    ("Deploys run at 02:00 UTC.", "Deploys run at 03:00 UTC.", "number"),
    ("Call Jo at 02:00.", "Call Jo at 2:00.", None),  # one hour, written two ways
    ("The owner has two cats.", "The owner has three cats.", "number"),
    ("The meeting is on Monday.", "The meeting is on Tuesday.", "day"),
    ("Tennis on Saturdays.", "Tennis every Saturday.", None),
    ("The owner likes olives.", "The owner does not like olives.", "not"),
    ("The owner likes olives.", "The owner doesn’t like olives.", "not"),
    ("The owner does not eat pork.", "The owner doesn't eat pork.", None),
    ("Priya is the owner's sister.", "Lena is the owner's sister.", "name"),
    ("Priya is the owner's sister.", "The owner's sister is Priya.", None),  # the same name, moved
    ("The owner likes black coffee.", "The owner likes the black coffee.", None),
    ("0" * 8000, "0" * 7999 + "1", "number"),  # past int()'s 4,300-digit limit: a fuzzed edit once 500ed here
])
def test_distinct_says_why_or_nothing(a, b, reason):
    got = distinct(a, b)
    assert (got is None) if reason is None else (reason in got)
    assert distinct(b, a) == got  # the order of the two facts does not matter


@pytest.mark.slow
def test_with_the_real_model_no_look_alike_merges_and_most_rewordings_do(minilm):
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from dedup_quality import measure

    m = measure(minilm, 0.97)
    assert m["distinct"]["guarded"] == 0 and m["distinct"]["cosine"] >= 10  # cosine alone would merge them
    assert m["same"]["guarded"] >= m["same"]["cosine"] - 1  # the guard costs at most one rewording here
