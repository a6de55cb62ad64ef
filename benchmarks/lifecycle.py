"""Facts that replace facts, measured on benchmarks/updates/ (seen and unseen) with the real model.

    .venv/bin/python benchmarks/lifecycle.py

Each set goes into a fresh memory of its own in a temporary folder (never the owner's): its
unrelated facts, then each update's old fact, then each new fact, as an agent writes them. Prints,
for each set apart, how many updates were stored rather than refused as duplicates (a distinct
fact is never refused), and with today's ranking, before anything is replaced: how often the new
fact ranks above the old one for the update's question, how often the old one is the top result,
and how often both are in the top 15 (an agent that injects them gets both, with nothing saying
which is current).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memories.embeddings import MiniLM  # noqa: E402
from memories.store import Memory  # noqa: E402

SETS = ROOT / "benchmarks" / "updates"
TOP = 15


def place(results: list[dict], fact_id: int) -> int | None:
    return next((i + 1 for i, r in enumerate(results) if r["fact"]["id"] == fact_id), None)


def measure(path: Path, model, folder: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    memory = Memory(folder / f"{path.stem}.db", model)
    try:
        memory.add_many([{"text": t, "source": "unrelated"} for t in data["unrelated"]])
        olds = memory.add_many([{"text": u["old"], "source": "old"} for u in data["updates"]])
        news = memory.add_many([{"text": u["new"], "source": "new"} for u in data["updates"]])
        stored = sum(r.created for r in news)
        newer_first = old_first = both = 0
        for update, old, new in zip(data["updates"], olds, news):
            results = memory.recall(update["question"], limit=TOP)["results"]
            o, n = place(results, old.fact.id), place(results, new.fact.id)
            newer_first += n is not None and (o is None or n < o)
            old_first += o == 1
            both += o is not None and n is not None
        return {"set": data["name"], "updates": len(data["updates"]), "stored": stored,
                "new above old": newer_first, "old is the top result": old_first, f"both in the top {TOP}": both}
    finally:
        memory.close()


def main() -> None:
    model = MiniLM()
    with tempfile.TemporaryDirectory() as tmp:
        for name, kind in (("seen", "seen"), ("unseen", "unseen")):
            row = measure(SETS / f"{name}.json", model, Path(tmp))
            print(f"{row.pop('set')} ({kind}, {row['updates']} updates): "
                  + ", ".join(f"{k} {v}" for k, v in row.items() if k != "updates"))


if __name__ == "__main__":
    main()
