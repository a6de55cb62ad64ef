"""Recall quality per evaluation set, per candidate ranking, with each part of the default switched
off in turn (the ablation), on the engine in process with the real model.

    .venv/bin/python benchmarks/ablation.py [--sets work,skills_logs] [--candidates default,seed] [--model FILE]

Prints hit@1, hit@5 and hit@15 (the seed's criterion: the answer inside the 15 the agent
injects) for vector-only, keyword-only and each candidate. Seen sets (read while choosing the
default) and unseen sets are printed apart; run an unseen set once per candidate.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memories.model.embeddings import MiniLM  # noqa: E402
from memories.recall.ranking import DEFAULT, SEED  # noqa: E402
from memories.store import Memory  # noqa: E402

SETS = ROOT / "dashboard" / "evalsets"
# Seen: read while choosing this default or an earlier one (the last four were its unseen sets).
SEEN = ["personal", "lookalikes", "holdout", "holdout2", "holdout3", "work", "skills_logs",
        "household4", "relations", "travel_health", "confirm"]
# Unseen: committed before the work they judge, each run once per candidate.
UNSEEN = ["relations2", "agentlog", "homefinance", "friends", "neighbours"]
CANDIDATES = {
    "seed": SEED,
    "default": DEFAULT,
    "default + phrases": replace(DEFAULT, phrases=True),
    "default + alias_self": replace(DEFAULT, alias_self=True),
    "default - expansion": replace(DEFAULT, expand=0.0),
    "default - rerank": replace(DEFAULT, rerank=0),
    "default - info (ratio)": replace(DEFAULT, method="ratio"),
    "default - info (rrf)": replace(DEFAULT, method="rrf"),
    # A smaller rerank window: fewer texts in its model call (issue 31 §1, 2026-12-02).
    "rerank 3": replace(DEFAULT, rerank=3),
    "rerank 4": replace(DEFAULT, rerank=4),
}


def load(model, name: str) -> tuple[Memory, list[tuple[str, set[int], str | None]]]:
    data = json.loads((SETS / f"{name}.json").read_text(encoding="utf-8"))
    memory = Memory(Path(tempfile.mkdtemp()) / f"{name}.db", model)
    results = memory.add_many([{"text": f["text"].strip(), "type": f.get("type", "fact"), "source": f.get("source", "")}
                               for f in data["facts"]])
    ids = {f["text"].strip(): r.fact.id for f, r in zip(data["facts"], results)}
    cases = [(c["question"], {ids[e.strip()] for e in c["expected"]}, c.get("type") or None) for c in data["cases"]]
    return memory, cases


def rank(ids: list[int], expected: set[int]) -> int | None:
    return next((i for i, fid in enumerate(ids, 1) if fid in expected), None)


def score(ranks: list[int | None]) -> str:
    n = len(ranks)
    hit = lambda k: sum(1 for r in ranks if r is not None and r <= k)  # noqa: E731
    return f"{hit(1)}/{n} | {hit(5)}/{n} | {hit(15)}/{n}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default=",".join(SEEN + UNSEEN))
    parser.add_argument("--candidates", default=",".join(CANDIDATES))
    parser.add_argument("--model", help="an ONNX file of MiniLM in place of the shipped one (its vectors, its ranking)")
    args = parser.parse_args()
    model = MiniLM(args.model)
    print("| set | seen? | ranking | hit@1 | hit@5 | hit@15 |\n|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        memory, cases = load(model, name)
        seen = "seen" if name in SEEN else "unseen"
        first = memory.recall(cases[0][0], debug=True, limit=30)  # warm
        del first
        rows = {"vector only": [], "keyword only": []}
        for label in args.candidates.split(","):
            rows[label] = []
        for question, expected, type in cases:
            for label in args.candidates.split(","):
                r = memory.recall(question, type=type, limit=30, debug=True, fusion=CANDIDATES[label])
                rows[label].append(rank([h["fact"]["id"] for h in r["results"]], expected))
                if label == "seed":
                    rows["vector only"].append(rank([h["fact"]["id"] for h in r["vec"]], expected))
                    rows["keyword only"].append(rank([h["fact"]["id"] for h in r["kw"]], expected))
        for label, ranks in rows.items():
            if ranks:
                print(f"| {name} ({len(cases)}) | {seen} | {label} | {score(ranks)} |", flush=True)
        memory.close()


if __name__ == "__main__":
    main()
