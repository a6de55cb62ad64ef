"""Does a question about the owner want the owner's own facts first? (issue 51 §5) After "moved
to Porto" replaced Utrecht, "Where does the owner live?" ranked the owner's fact 7th, behind the
homes of the owner's mother, brother and mother-in-law: facts about the owner's people match
"owner" and "lives" better than the owner's own. The candidate rule: when a question is about
the owner (the owner, the user, I, me; not "my sister", "the owner's sister"), a fact whose
subject is one of the owner's people ("The owner's mother ...", "Priya is the owner's sister")
loses PENALTY from its score. Measured on the evaluation sets, seen and unseen apart, on the
engine in process with the real model, before any of it goes into the ranking.

    .venv/bin/python benchmarks/subject_rule.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ablation import SEEN, UNSEEN, load, rank, score  # noqa: E402

from memories.model.embeddings import MiniLM  # noqa: E402
from memories.store import Memory  # noqa: E402

PENALTIES = (0.25, 0.5, 1.0, 1.5)
PEOPLE = ("mother|father|mum|mom|dad|parents?|sister|brother|siblings?|wife|husband|partner|spouse|son|daughter|"
          "kids?|children|child|baby|friend|best friend|boss|manager|colleague|coworker|cousin|aunt|uncle|niece|nephew|"
          "grandmother|grandfather|grandma|grandpa|grandparents?|in-laws?|mother-in-law|father-in-law|sister-in-law|"
          "brother-in-law|neighbou?r|flatmate|roommate|girlfriend|boyfriend|fiancée?|stepson|stepdaughter|mentor|"
          "assistant|team|family")
OWNER = r"(?:the owner|owner|the user|user)"
OTHERS = re.compile(rf"\b(?:{OWNER}'s|my)\s+(?:\w+\s+)?(?:{PEOPLE})\b", re.I)
ABOUT_OWNER = re.compile(rf"\b(?:{OWNER}|i|me)\b(?!'s)", re.I)
POSSESSED = re.compile(rf"\b(?:{OWNER}'s|my)\s+\w", re.I)


def about_the_owner(question: str) -> bool:
    return bool(ABOUT_OWNER.search(question)) and not POSSESSED.search(question)


def about_the_owners_people(text: str) -> bool:
    return bool(OTHERS.search(text))


def ranked(results: list[dict], question: str, penalty: float) -> list[int]:
    if not about_the_owner(question):
        return [h["fact"]["id"] for h in results]
    scored = [(h["score"] - (penalty if about_the_owners_people(h["fact"]["text"]) else 0.0), i, h["fact"]["id"])
              for i, h in enumerate(results)]
    return [fid for _, _, fid in sorted(scored, key=lambda s: (-s[0], s[1]))]


def porto(model) -> None:
    """The walk's memory: where the owner's own fact ranks, without the rule and with it."""
    import tempfile

    memory = Memory(Path(tempfile.mkdtemp()) / "porto.db", model)
    for text in ("The owner's mother lives in Braga.", "The owner's brother Tiago lives in Lisbon.",
                 "The owner's mother-in-law lives in Coimbra.", "Priya is the owner's sister; she lives in Porto's old town.",
                 "The owner's best friend lives in Amsterdam.", "The owner works at Fintrail."):
        memory.add(text, client="bench")
    old = memory.add("The owner lives in Utrecht.", client="bench").fact.id
    new = memory.add("The owner and family moved to Porto.", client="bench", supersedes=[old]).fact.id
    for question in ("Where does the owner live?", "Where do I live?"):
        results = memory.recall(question, limit=30, debug=True)["results"]
        print(f"{question!r}: the owner's fact at " + ", ".join(
            f"{rank(ranked(results, question, p), {new})} ({'without' if p == 0 else f'-{p}'})" for p in (0.0, *PENALTIES)))
    memory.close()


def main() -> None:
    model = MiniLM()
    porto(model)
    print("\n| set | seen? | questions about the owner | ranking | hit@1 | hit@5 | hit@15 |\n|---|---|---|---|---|---|---|")
    for name in SEEN + UNSEEN:
        memory, cases = load(model, name)
        rows = {p: [] for p in (0.0, *PENALTIES)}
        asked = 0
        for question, expected, type in cases:
            results = memory.recall(question, type=type, limit=30, debug=True)["results"]
            asked += about_the_owner(question)
            for p in rows:
                rows[p].append(rank(ranked(results, question, p), expected))
        for p, ranks in rows.items():
            label = "default" if p == 0 else f"default, people -{p}"
            print(f"| {name} ({len(cases)}) | {'seen' if name in SEEN else 'unseen'} | {asked} | {label} | {score(ranks)} |",
                  flush=True)
        memory.close()


if __name__ == "__main__":
    main()
