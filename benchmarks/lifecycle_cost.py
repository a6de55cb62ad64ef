"""What the fact lifecycle costs the local memory at 10k and 100k facts, each against the path
without it, in one process on one memory, so the machine's noise is shared:

    .venv/bin/python benchmarks/lifecycle_cost.py [--sizes 10000,100000] [--queries 200] [--writes 200]

- recall p50/p95 (engine, the query embedded; and the ranking alone, timing.rank_ms): `include_stale` (no filter: the v3 path) against the
  default current-only filter with no fact replaced, then with 10% of the facts replaced;
- write p50/p95 of one fact: without proposals (their search bound and rows left out) against
  with them (the near search down to cosine 0.5, and the proposals' rows).

Synthetic facts (benchmarks/synthetic.py), the real model. Every fact written is deleted again
before the next measure, so each measure sees the same memory.
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

from memories import writing  # noqa: E402
from memories.embeddings import MiniLM  # noqa: E402
from memories.store import Memory  # noqa: E402


def pct(samples: list[float], p: float) -> float:
    return float(np.percentile(samples, p)) * 1000


def recall_times(memory: Memory, queries: list[str], **kw) -> list[float]:
    out = []
    for q in queries:
        t = time.perf_counter()
        memory.recall(q, **kw)
        out.append(time.perf_counter() - t)
    return out


def rank_times(memory: Memory, queries: list[str], **kw) -> list[float]:
    """The ranking alone (timing.rank_ms: the lists, the filter, fusing, reading the rows), without
    the model: a filtered recall may rerank other facts, and the model's time would hide the filter's."""
    return [memory.recall(q, debug=True, **kw)["timing"]["rank_ms"] / 1000 for q in queries]


def write_times(memory: Memory, texts: list[str]) -> list[float]:
    out, ids = [], []
    for text in texts:
        t = time.perf_counter()
        r = memory.add(text)
        out.append(time.perf_counter() - t)
        if r.created:
            ids.append(r.fact.id)
    for fid in ids:
        memory.delete(fid)
    return out


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
            stale = recall_times(memory, queries, include_stale=True)
            current = recall_times(memory, queries)
            print(line("recall, no filter -> current only (none replaced)", stale, current))
            stale_rank = rank_times(memory, queries, include_stale=True)
            print(line("ranking alone, no filter -> current only (none replaced)", stale_rank, rank_times(memory, queries)))
            # 10% replaced, each by the next fact, as a client replaces one (PATCH superseded_by)
            for fid in range(10, size, 10):
                memory.edit(fid, superseded_by=fid + 1)
            replaced = recall_times(memory, queries)
            print(line("recall, no filter -> current only (10% replaced)", stale, replaced))
            print(line("ranking alone, no filter -> current only (10% replaced)", stale_rank, rank_times(memory, queries)))
            for fid in range(10, size, 10):
                memory.edit(fid, superseded_by=None)
            propose = writing.PROPOSE
            writing.PROPOSE = 2.0  # above any cosine: no proposals, and the near search at the floor as before
            try:
                without = write_times(memory, extra)
            finally:
                writing.PROPOSE = propose
            with_them = write_times(memory, extra)
            print(line("write, without proposals -> with them", without, with_them))
        memory.close()


if __name__ == "__main__":
    main()
