"""Whether a new fact answers an older one's question (memories/writes/same_question.py): the issue's
own examples, and tests/golden/same_question.json, which the Worker's same_question.ts answers too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memories.writes.same_question import answers

GOLDEN = json.loads((Path(__file__).parent / "golden" / "same_question.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("old", "new", "reason", "was", "now"), [
    ("The standup is at 9:30.", "The standup is at 10:00 now.", "value", ["9:30"], ["10:00"]),
    ("The owner's dentist is Dr. Alvarez.", "The owner's dentist is Dr. Chen.", "value", ["Alvarez"], ["Chen"]),
    ("The owner drinks coffee every morning.", "The owner no longer drinks coffee.", "retraction", None, None),
    ("Priya lives in Lisbon.", "Priya moved to Porto.", "value", ["Lisbon"], ["Porto"]),
    ("The side project is named TaskBoard.", "TaskBoard is now called Tallyo.", "rename", None, ["Tallyo"]),
    ("The Friday yoga class is at the community hall.", "The Friday yoga class was cancelled.", "retraction", None, None),
    # A name with digits in it is one word: its "9" is not the new answer's 9.
    ("Wenceslasefb9's birthday is on 3 May.", "Wenceslasefb9's birthday is on 9 May.", "value", ["3"], ["9"]),
    ("The owner's laptop is a ThinkPad X1.", "The owner's laptop is a ThinkPad T14 now.", "value", ["X1"], ["T14"]),
])
def test_two_answers_to_one_question_are_a_proposal(old, new, reason, was, now):
    found = answers(old, new, 0.7)
    assert found is not None and found.reason == reason
    if was is not None:
        assert found.old == was
    if now is not None:
        assert found.new == now


@pytest.mark.parametrize(("old", "new"), [
    ("Umar's sister is Ingrid.", "Umar's wife is Elena."),  # the same subject's other attribute
    ("Umar's sister is Ingrid.", "Paul's sister is Nora."),  # another subject's same attribute
    ("The owner uses Java and Python for work.", "The owner uses Python."),  # the same topic
    ("The owner likes jazz.", "The owner likes hiking."),  # both true at once
    ("Cosima reports to Ulla.", "Ulla reports to Ivo."),  # the same words in another frame
    ("Marisol Arrieta was born in 1987.", "Marisol Arrieta is based in Bergen."),  # only the subject shared
    ("Leo's swimming lesson is at 4pm.", "Leo's piano lesson is at 5pm."),  # the attribute and the value differ
])
def test_another_question_is_not_a_proposal(old, new):
    assert answers(old, new, 0.7) is None


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: f"{c['old'][:25]}|{c['new'][:25]}")
def test_answers_as_the_golden_file_says(case):
    found = answers(case["old"], case["new"], case["cosine"])
    got = None if found is None else {"reason": found.reason, "old": found.old, "new": found.new}
    assert got == case["answer"]


def test_a_word_put_inside_the_frame_asks_another_question():
    # "the flight back" is not "the flight to": both flights are true at once.
    assert answers("The flight to Vilnius is BT 136 on 21 May 2027 at 18:50.",
                   "The flight back from Vilnius is BT 139 on 22 May 2027 at 07:05.", 0.9) is None
    assert answers("The gym opens at 6:00 on weekdays.", "The gym opens at 7:00 on weekdays.", 0.95).reason == "value"


def test_two_owners_of_one_relation_are_two_subjects():
    # Kerensa is the mother of both: another subject's same attribute, not a second answer.
    assert answers("Kerensa Aldous is Fitzroy Aldous's mother.", "Kerensa Aldous is Hamish Aldous's mother.", 0.92) is None
    assert answers("The owner's dentist is Dr Alvarez.", "The owner's dentist is Dr Okafor.", 0.9).reason == "value"


def test_things_said_about_one_labelled_or_named_subject_are_not_two_answers():
    # An MCP memory graph's observations and relations: each a fact about its entity.
    assert answers("D3.js: Библиотека визуализации данных, v7.8.5", "D3.js: Основа для визуализации графов в браузере", 0.85) is None
    assert answers("mcp-server-memory developed by Anthropic", "mcp-server-memory integrates with Claude Desktop", 0.71) is None
    assert answers("issue-8-entity-types enhances server-memory-editor",
                   "issue-9-relation-types enhances server-memory-editor", 0.8) is None
    # A short answer after a label is still an answer.
    assert answers("Tech stack: Python and Django.", "Tech stack: Go.", 0.6).reason == "value"
