"""Facts that replace facts, measured on benchmarks/updates/ (seen and unseen) with the real model.

    .venv/bin/python benchmarks/lifecycle.py

Each set goes into fresh memories of their own in a temporary folder (never the owner's), written
as an agent writes them: each update's old fact, then the unrelated facts, then each new fact.
Prints, for each set apart:

- proposals: the share of updates whose new fact proposes its old one (`conflicts`), and how many
  facts an unrelated write proposes on average (floors on unseen sets: 90%, under 0.3);
- before anything is replaced, with today's ranking: how often the new fact ranks above the old
  one for the update's question, the old one is the top result, and both are in the top 15; and
  the same with the candidate rule "between two current facts of an open proposal, the newer
  first" (`newer_first`);
- after replacement (the new fact written with supersedes=[old]): the share of questions whose
  top 5 holds the new fact (floor 100%), whose top result is the new fact, and whose top 15 still
  holds the old one (floor 0%).

Then the candidate rule on the 16 evaluation sets (dashboard/evalsets, seen and unseen apart as
benchmarks/ablation.py splits them): hit@1 and hit@5 with and without it. The rule is adopted
only if it loses no question on any of them.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.ablation import SEEN, UNSEEN, load  # noqa: E402
from memories.embeddings import MiniLM  # noqa: E402
from memories.store import Memory  # noqa: E402

SETS = ROOT / "benchmarks" / "updates"
TOP = 15


def place(ids: list[int], fact_id: int) -> int | None:
    return next((i + 1 for i, f in enumerate(ids) if f == fact_id), None)


def open_pairs(memory: Memory) -> list[tuple[int, int]]:
    """Every open proposal as (old, new)."""
    out, cursor = [], None
    while True:
        page, cursor, _ = memory.conflicts(100, cursor)
        out += [(c["old"]["id"], c["new"]["id"]) for c in page]
        if not cursor:
            return out


def newer_first(ids: list[int], pairs: list[tuple[int, int]]) -> list[int]:
    """The candidate rule: of each open pair in the results, the newer just above the older when
    it was below it."""
    order = list(ids)
    for old, new in sorted(pairs):
        if old in order and new in order and order.index(old) < order.index(new):
            order.remove(new)
            order.insert(order.index(old), new)
    return order


def ids_of(memory: Memory, question: str, type: str | None = None) -> list[int]:
    return [r["fact"]["id"] for r in memory.recall(question, type=type, limit=TOP)["results"]]


def write(memory: Memory, data: dict, supersede: bool):
    olds = memory.add_many([{"text": u["old"], "source": "old"} for u in data["updates"]])
    unrelated = [memory.add_many([{"text": t, "source": "unrelated"}])[0] for t in data["unrelated"]]
    news = [memory.add_many([{"text": u["new"], "source": "new", **({"supersedes": [o.fact.id]} if supersede else {})}])[0]
            for u, o in zip(data["updates"], olds)]
    return olds, unrelated, news


def measure(path: Path, model, folder: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    n = len(data["updates"])
    row: dict = {"set": data["name"], "updates": n}
    memory = Memory(folder / f"{path.stem}-proposed.db", model)
    try:
        olds, unrelated, news = write(memory, data, supersede=False)
        row["stored"] = sum(r.created for r in news)
        row["old proposed"] = sum(o.fact.id in {c["id"] for c in r.conflicts} for o, r in zip(olds, news))
        row["proposals per unrelated write"] = sum(len(r.conflicts) for r in unrelated) / len(unrelated)
        pairs = open_pairs(memory)
        for label, rule in (("today", lambda ids: ids), ("newer first", lambda ids: newer_first(ids, pairs))):
            above = top_old = both = 0
            for update, old, new in zip(data["updates"], olds, news):
                ids = rule(ids_of(memory, update["question"]))
                o, w = place(ids, old.fact.id), place(ids, new.fact.id)
                above += w is not None and (o is None or w < o)
                top_old += o == 1
                both += o is not None and w is not None
            row[f"before, {label}"] = (above, top_old, both)
    finally:
        memory.close()
    memory = Memory(folder / f"{path.stem}-replaced.db", model)
    try:
        olds, _, news = write(memory, data, supersede=True)
        top5 = top1 = old15 = 0
        for update, old, new in zip(data["updates"], olds, news):
            ids = ids_of(memory, update["question"])
            w = place(ids, new.fact.id)
            top5 += w is not None and w <= 5
            top1 += w == 1
            old15 += old.fact.id in ids
        row["after"] = (top5, top1, old15)
    finally:
        memory.close()
    return row


def rule_on_evaluation_sets(model) -> None:
    print("\nThe candidate rule on the evaluation sets (hit@1, hit@5; today -> newer first):")
    print("| set | seen? | open proposals | hit@1 | hit@5 | questions lost at 1 | gained at 1 |\n|---|---|---|---|---|---|---|")
    for name in SEEN + UNSEEN:
        memory, cases = load(model, name)
        try:
            pairs = open_pairs(memory)
            h1 = [0, 0]
            h5 = [0, 0]
            lost = gained = 0
            for question, expected, type in cases:
                ids = ids_of(memory, question, type)
                after = newer_first(ids, pairs)
                for k, order in enumerate((ids, after)):
                    h1[k] += bool(order) and order[0] in expected
                    h5[k] += any(f in expected for f in order[:5])
                before_hit, after_hit = bool(ids) and ids[0] in expected, bool(after) and after[0] in expected
                lost += before_hit and not after_hit
                gained += after_hit and not before_hit
            n = len(cases)
            print(f"| {name} | {'seen' if name in SEEN else 'unseen'} | {len(pairs)} | {h1[0]}/{n} -> {h1[1]}/{n} | "
                  f"{h5[0]}/{n} -> {h5[1]}/{n} | {lost} | {gained} |")
        finally:
            memory.close()


def main() -> None:
    model = MiniLM()
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("seen", "unseen"):
            row = measure(SETS / f"{name}.json", model, Path(tmp))
            n = row["updates"]
            print(f"{row['set']} ({name}, {n} updates, {len(json.loads((SETS / f'{name}.json').read_text())['unrelated'])} unrelated facts):")
            print(f"  stored (not refused as duplicates): {row['stored']}/{n}")
            print(f"  proposals: old fact proposed {row['old proposed']}/{n} ({row['old proposed'] / n:.0%}); "
                  f"{row['proposals per unrelated write']:.2f} proposals per unrelated write")
            for label in ("today", "newer first"):
                above, top_old, both = row[f"before, {label}"]
                print(f"  before replacement, {label}: new above old {above}/{n}, old is the top result {top_old}/{n}, "
                      f"both in the top {TOP} {both}/{n}")
            top5, top1, old15 = row["after"]
            print(f"  after replacement: new in the top 5 {top5}/{n} ({top5 / n:.0%}), new is the top result {top1}/{n}, "
                  f"old in the top {TOP} {old15}/{n} ({old15 / n:.0%})")
    rule_on_evaluation_sets(model)


if __name__ == "__main__":
    main()
