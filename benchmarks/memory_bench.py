"""Memory service benchmark: recall, writes, /duplicates, import rate and memory at 1k-100k facts.

    .venv/bin/python benchmarks/memory_bench.py [--sizes 1000,10000,100000] [--queries 200]

Builds one memory up through the sizes with the real model, and at each size measures:
recall p50/p95 engine-only and through HTTP (both embed the query), the floor (a bare FTS5
top 30 + a bare numpy top 30 + one query embedding), write p50, /duplicates, import rate
and peak RSS (this process and the service's).
"""

from __future__ import annotations

import argparse
import platform
import resource
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402

from memories.embeddings import MiniLM  # noqa: E402
from memories.store import Memory  # noqa: E402
from tests.memory_service import Service  # noqa: E402


def pct(samples: list[float], p: float) -> float:
    return float(np.percentile(samples, p)) * 1000


def timed(fn, *args, **kwargs) -> float:
    t = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - t


def rss_mb(pid: int | None = None) -> float:
    if pid is None:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def floor_query(memory: Memory, embedder: MiniLM, query: str) -> None:
    """The least any hybrid recall must do: embed, a bare FTS5 top 30, a bare matrix top 30."""
    q = embedder.embed([query])[0]
    match = memory.fusion.match(query)  # the same MATCH recall runs
    if match:
        memory.db.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rank LIMIT 30", (match,)).fetchall()
    m = memory.vectors.matrix[: memory.vectors.n]
    s = m @ q
    np.argpartition(-s, 29)[:30]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    print(f"# memory benchmark, {date.today()}, {platform.machine()} {platform.processor() or ''}, "
          f"{__import__('os').cpu_count()} cores, Python {platform.python_version()}")
    embedder = MiniLM()
    # Some synthetic facts are near-duplicates of others (dates a day apart): feed until the
    # memory holds each size.
    corpus = synthetic.facts(int(max(sizes) * 1.4) + 500)
    extra = corpus[-100:]
    queries = synthetic.questions(args.queries)
    tmp = Path(tempfile.mkdtemp(prefix="memory-bench-"))
    memory = Memory(tmp / "bench.db", embedder)
    rows = []
    loaded = 0
    for size in sizes:
        t = time.perf_counter()
        offered = 0
        while memory.count() < size and loaded < len(corpus) - 100:
            batch = corpus[loaded : min(loaded + 64, len(corpus) - 100)]
            memory.add_many(batch)
            loaded += len(batch)
            offered += len(batch)
        import_rate = offered / (time.perf_counter() - t)
        stored = memory.count()

        for q in queries[:10]:  # warm caches
            memory.recall(q)
        # Interleaved, so a change in the machine's load touches both alike.
        engine, floor = [], []
        for q in queries:
            engine.append(timed(memory.recall, q))
            floor.append(timed(floor_query, memory, embedder, q))
        writes = [timed(memory.add, f["text"], f["type"], f["source"]) for f in extra[:100]]
        for f in extra[:100]:  # keep the size steady for the next step
            found = memory.list(q=f["text"], limit=1)[0]
            if found:
                memory.delete(found[0].id)
        dup_time = timed(memory.duplicates, 0.97)
        engine_rss = rss_mb()

        memory.close()
        service = Service(tmp / "bench.db").start(timeout=600)
        with service.client() as api:
            for q in queries[:10]:
                api.post("/recall", json={"query": q})
            http = [timed(api.post, "/recall", json={"query": q}) for q in queries]
            t = time.perf_counter()
            api.get("/duplicates", params={"threshold": 0.97})
            http_dup = time.perf_counter() - t
        service_rss = rss_mb(service.process.pid)
        service.stop()
        memory = Memory(tmp / "bench.db", embedder)

        row = {
            "facts": stored,
            "import facts/s (offered)": import_rate,
            "engine recall p50 ms": pct(engine, 50), "engine recall p95 ms": pct(engine, 95),
            "floor p50 ms": pct(floor, 50),
            "engine/floor p50": statistics.median(engine) / statistics.median(floor),
            "http recall p50 ms": pct(http, 50), "http recall p95 ms": pct(http, 95),
            "write p50 ms": pct(writes, 50),
            "duplicates s": dup_time, "http duplicates s": http_dup,
            "bench RSS MB": engine_rss, "service RSS MB": service_rss,
        }
        rows.append(row)
        print(" | ".join(f"{k}: {v:.2f}" if isinstance(v, float) else f"{k}: {v}" for k, v in row.items()), flush=True)

    keys = list(rows[0])
    print("\n| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(f"{row[k]:.2f}" if isinstance(row[k], float) else str(row[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
