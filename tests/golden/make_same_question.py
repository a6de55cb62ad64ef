"""Write tests/golden/same_question.json from memories/writes/same_question.py: the pairs the Worker's
same_question.ts must answer the same way (worker/test/same_question.test.ts reads them;
tests/test_same_question.py checks this file still says what same_question.py says). Run it
after a deliberate change to same_question.py:

    .venv/bin/python -m tests.golden.make_same_question

The pairs: every seen update (benchmarks/updates, benchmarks/lifecycle.py's SEEN_UPDATES) and the
neighbours a seen memory of distinct facts finds (benchmarks/distinct, SEEN_DISTINCT), with the
model's cosines, and edge texts. Never the unseen sets: they are run once, by benchmarks/lifecycle.py."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from benchmarks.lifecycle import SEEN_DISTINCT, SEEN_UPDATES
from memories.model.embeddings import MiniLM
from memories.writes.same_question import answers

ROOT = Path(__file__).resolve().parents[2]
EDGES = [
    ("", ""), ("The owner drinks coffee.", ""), ("🙂", "🙂 now"), ('"NEAR" * :', "NEAR(a b) now"),
    ("Ünsal's Straße is in München.", "Ünsal's Straße is in Köln now."), ("İstanbul office is on floor 3.", "İstanbul office moved to floor 4."),
    ("The owner can’t swim.", "The owner can swim now."), ("O'Brien's dog is Rex.", "O'Brien's dog is now called Max."),
    ("The owner doesn't drink coffee.", "The owner drinks coffee again."), ("Meets on Saturdays at 9.", "Meets on Sundays at 9 now."),
    ("The rent is 1,200 euros.", "The rent went up to 1,350 euros."), ("Jo gave up chess.", "Jo stepped down as chair."),
    ("The trip is on 2027-05-21.", "The trip was called off."), ("x" * 300, "x" * 299 + "y now"),
    ("The owner's cat is called Whiskers.", "The kids renamed the cat Pumpkin."),
    ("The flight to Vilnius is BT 136 on 21 May 2027 at 18:50.", "The flight back from Vilnius is BT 139 on 22 May 2027 at 07:05."),
    ("Kerensa Aldous is Fitzroy Aldous's mother.", "Kerensa Aldous is Hamish Aldous's mother."),
    ("The gym opens at 6:00.", "The new gym opens at 7:00."), ("Ana's school is Oakfield.", "Ana's school is St Anne's."),
    ("D3.js: Библиотека визуализации данных, v7.8.5", "D3.js: Основа для визуализации графов в браузере"),
    ("Tech stack: Python and Django.", "Tech stack: Go."), ("mcp-server-memory developed by Anthropic", "mcp-server-memory integrates with Claude Desktop"),
    ("issue-8-entity-types enhances server-memory-editor", "issue-9-relation-types enhances server-memory-editor"),
    ("İ-1: x", "İ-1: y z w v u"), ("a_b-c: one two three four five", "a_b-c: six"), ("١٢٣ is the code.", "٤٥٦ is the code now."),
    ("ǅemal is the owner's dentist.", "ǅemal is no longer the owner's dentist."), ("Leo's lesson is at 4pm.", "Leo's lesson is at 5pm."),
    ("Rent is £1,150 a month.", "The landlord put the rent up to £1,240."), ("Rent is ¥90000.", "Rent is up to ¥95000 now."),
    ("Dana does the school drop-off.", "Dana takes pottery on Tuesdays."), ("The trip is off.", "The trip İs off."),
    ("Sınce the move, the owner lives in Leeds.", "Since the move, the owner lives in York."),
    ("ſince March, Ana's school is Oakfield.", "AFTER the summer, Ana's school is St Anne's."),
    ("The landlord is Mr. Haddad.", "The flat was sold; the new landlord is Ms. Kowalczyk."),
    ("Ben lives in Denver.", "The owner's brother Ben lives in Austin."), ("The owner's brother Ben lives in Denver.", "Ben lives in Austin."),
    ("The office is at 22 King Street.", "The office moved to 5 Harbour Road."), ("Ingrid is a biologist.", "Ingrid moved to Oslo."),
    ("The owner drinks coffee.", "The owner gave up coffee; tea now."), ("The HelloFresh box comes weekly.", "The HelloFresh box is cancelled."),
    ("Jo uses LastPass.", "Jo moved from LastPass to Bitwarden."), ("12 kg", "up 14 kg"), ("Biscuit weighs 12 kg.", "Biscuit is up to 14 kg."),
    ("A; b. c", "x;  y.\n z; "), ("Mia's pocket money is £5.", "Zara's pocket money is up to £7 now."),
    ("The 3fa9c1 bins go out on Tuesdays.", "The 3fa9c1 recycling goes out on Fridays."),
    ("Is registered for the race.", "DROPPED OUT of the race."), ("Jo pulled out.", "Jo puLLed ouT of the race."),
    ("The newsletter is called Small Batch.", "Newsletter was renamed to Pipeline Notes."),
    ("Leo is allergic to peanuts.", "Leo moves to year 4."), ("The plan is called Flex 20.", "The carrier renamed the owner's Flex 20 plan."),
    ("The band is called The Late Trains.", "The Late Trains now GO BY Night Service."), ("Smokes a pack a day.", "Quit smoking."),
    ("Ben is the owner's godson.", "Ben's party is cancelled."), ("The box comes weekly.", "Box subscription cancelled"),
    ("The bikes are stored in the basement.", "Bikes are now kept in the shed."), ("'s", "renamed 's"),
    ("Wenceslasefb9's birthday is on 3 May.", "Wenceslasefb9's birthday is on 9 May."), ("R2D2 is in bay 2.", "R2D2 is in bay 4 now."),
]


def pairs(model) -> list[tuple[str, str, float]]:
    out = []
    for path in [ROOT / "benchmarks" / "updates" / f"{name}.json" for name in SEEN_UPDATES]:
        data = json.loads(path.read_text(encoding="utf-8"))
        vectors = model.embed([t for u in data["updates"] for t in (u["old"], u["new"])])
        out += [(u["old"], u["new"], float(vectors[2 * i] @ vectors[2 * i + 1])) for i, u in enumerate(data["updates"])]
    for path in sorted(p for prefix in SEEN_DISTINCT for p in (ROOT / "benchmarks" / "distinct").glob(prefix + "*.json")):
        texts = json.loads(path.read_text(encoding="utf-8"))["facts"]
        vectors = model.embed(texts)
        for i in range(1, len(texts)):
            s = vectors[:i] @ vectors[i]
            out += [(texts[j], texts[i], float(s[j])) for j in np.argsort(-s)[:3] if s[j] >= 0.4]
    return out + [(a, b, 0.5) for a, b in EDGES]


def main() -> None:
    cases = []
    for old, new, cosine in pairs(MiniLM()):
        cosine = round(cosine, 4)
        found = answers(old, new, cosine)
        cases.append({"old": old, "new": new, "cosine": cosine,
                      "answer": None if found is None else {"reason": found.reason, "old": found.old, "new": found.new}})
    about = ("Whether a new fact answers an older one's question (memories/writes/same_question.py): seen updates, seen "
             "neighbours and edge texts, with the model's cosines. Written by tests/golden/make_same_question.py.")
    path = Path(__file__).parent / "same_question.json"
    path.write_text(json.dumps({"about": about, "cases": cases}, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(cases)} cases, {sum(c['answer'] is not None for c in cases)} answered")


if __name__ == "__main__":
    main()
