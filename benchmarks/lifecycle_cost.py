"""What the fact lifecycle costs the local memory at 10k and 100k facts, each against the path
without it, in one process on one memory, so the machine's noise is shared:

    .venv/bin/python benchmarks/lifecycle_cost.py [--sizes 10000,100000] [--queries 200] [--writes 200]

- recall p50/p95 (engine, the query embedded; and the ranking alone, timing.rank_ms):
  `include_stale` (no filter: the v3 path) against the default current-only filter, with no fact
  replaced, then with 10% of the facts replaced;
- write p50/p95 of one fact: without proposals (the bar raised out of reach) against with them
  (its closest 5 current facts down to cosine 0.4 asked whether they answer its question, and the
  proposals' rows).

Synthetic facts (benchmarks/synthetic.py), the real model. Every fact written is deleted again
before the next, so each write sees the same memory; each query and each write is measured both
ways in turn, so the load of other work on the machine weighs on both alike.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import memories  # noqa: E402, F401  (first: it sets OpenBLAS's idle-thread timeout before numpy loads)

import numpy as np  # noqa: E402
import synthetic  # noqa: E402

from memories.writes import writing  # noqa: E402
from memories.model.embeddings import MiniLM  # noqa: E402
from memories.store import Memory  # noqa: E402


def pct(samples: list[float], p: float) -> float:
    return float(np.percentile(samples, p)) * 1000


def paired(queries: list[str], base, other) -> tuple[list[float], list[float]]:
    """Each query timed both ways in turn (`base(q)`, then `other(q)`), so the machine's load,
    shared with other work here, weighs on both alike."""
    a, b = [], []
    for q in queries:
        a.append(base(q))
        b.append(other(q))
    return a, b


def recall_time(memory: Memory, **kw):
    def timed(q: str) -> float:
        t = time.perf_counter()
        memory.recall(q, **kw)
        return time.perf_counter() - t
    return timed


def rank_time(memory: Memory, **kw):
    """The ranking alone (timing.rank_ms: the lists, the filter, fusing, reading the rows), without
    the model: a filtered recall may rerank other facts, and the model's time would hide the filter's."""
    return lambda q: memory.recall(q, debug=True, **kw)["timing"]["rank_ms"] / 1000


def write_times(memory: Memory, texts: list[str]) -> tuple[list[float], list[float]]:
    """Each text written without proposals, deleted, then with them, deleted: in turn."""
    without, with_them = [], []
    propose = writing.PROPOSE
    for text in texts:
        for out, bar in ((without, 2.0), (with_them, propose)):  # 2.0: above any cosine, no proposals
            writing.PROPOSE = bar
            try:
                t = time.perf_counter()
                r = memory.add(text)
                out.append(time.perf_counter() - t)
            finally:
                writing.PROPOSE = propose
            if r.created:
                memory.delete(r.fact.id)
    return without, with_them


def line(label: str, base: list[float], other: list[float]) -> str:
    return (f"  {label}: p50 {pct(base, 50):.2f} -> {pct(other, 50):.2f} ms ({pct(other, 50) - pct(base, 50):+.2f}), "
            f"p95 {pct(base, 95):.2f} -> {pct(other, 95):.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"# {date.today()} on {platform.machine()}, {platform.processor() or 'cpu'}, Python {platform.python_version()}")
    model = MiniLM()
    facts = synthetic.facts(max(sizes) + args.writes, seed=7)
    queries = synthetic.questions(args.queries, seed=11)
    extra = [f["text"] for f in facts[max(sizes):]]
    with tempfile.TemporaryDirectory() as tmp:
        memory = Memory(Path(tmp) / "cost.db", model)
        have = 0
        for size in sizes:
            for i in range(have, size, 256):
                memory.add_many([{"text": f["text"], "type": f.get("type", "fact")} for f in facts[i : min(size, i + 256)]])
            have = size
            memory.recall(queries[0])  # warm
            print(f"{size} facts:")
            print(line("recall, no filter -> current only (none replaced)",
                       *paired(queries, recall_time(memory, include_stale=True), recall_time(memory))))
            print(line("ranking alone, no filter -> current only (none replaced)",
                       *paired(queries, rank_time(memory, include_stale=True), rank_time(memory))))
            # 10% replaced, each by the next fact, as a client replaces one (PATCH superseded_by)
            ids = [r[0] for r in memory.db.execute("SELECT id FROM facts ORDER BY id")]
            pairs = list(zip(ids[9::10], ids[10::10]))  # (a fact, the next one, which replaces it)
            for old, new in pairs:
                memory.edit(old, superseded_by=new)
            print(line("recall, no filter -> current only (10% replaced)",
                       *paired(queries, recall_time(memory, include_stale=True), recall_time(memory))))
            print(line("ranking alone, no filter -> current only (10% replaced)",
                       *paired(queries, rank_time(memory, include_stale=True), rank_time(memory))))
            for old, _ in pairs:
                memory.edit(old, superseded_by=None)
            print(line("write, without proposals -> with them", *write_times(memory, extra)))
        memory.close()


if __name__ == "__main__":
    main()
