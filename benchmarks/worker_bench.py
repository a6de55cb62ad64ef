"""The memory on Cloudflare next to the Python engine, in one run on this machine.

    .venv/bin/python benchmarks/worker_bench.py [--sizes 1000,10000] [--queries 200]

At each size both memories hold the same synthetic facts (benchmarks/synthetic.py) with the
same model. Recall is timed without the embedding on both sides: the Worker's debug
`timing.rank_ms` (ranking plus reading the rows, inside the Durable Object on workerd, before
the rerank's model call) and the Python engine's recall with the query vectors (and the texts
its rerank embeds) embedded beforehand (the same work, in process).
Import is `python -m memories import --url` into the Worker: batches of 100 over HTTP,
embedded by embed-server. The floor from the issue: Worker recall within 2x of the engine's at 10k.
Start: workerd is killed and started again on the same storage, and the first recall over HTTP
(with its model calls) is timed: the object starts for it, reading its codes (worker/src/storage/code_blocks.ts).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import synthetic  # noqa: E402

from memories.model.embeddings import MiniLM  # noqa: E402
from memories.recall.ranking import DEFAULT  # noqa: E402
from memories.store import Memory  # noqa: E402
from tests.worker_service import WorkerHost  # noqa: E402


class Precomputed:
    """The real model's vectors for the benchmark's queries and the terms they expand (each
    embedded alone, as recall does), looked up instead of computed; anything else (the texts a
    rerank embeds) is computed once and looked up after."""

    def __init__(self, model: MiniLM, queries: list[str]):
        self.model_id, self.dims, self.model = model.model_id, model.dims, model
        self.cache = dict(zip(queries, model.embed(queries)))
        words = list(dict.fromkeys(t for q in queries for t in DEFAULT.expandable_terms(q)))
        self.cache |= {w: model.embed([w])[0] for w in words}

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache |= dict(zip(missing, self.model.embed(missing)))
        return np.stack([self.cache[t] for t in texts])


def p(samples: list[float], q: float) -> float:
    return float(np.percentile(samples, q))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    queries = synthetic.questions(args.queries)
    model = MiniLM()
    embedder = Precomputed(model, queries)
    all_facts = synthetic.facts(max(sizes))
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, {date.today()}")
    print("| facts | engine recall p50 / p95 (ms) | Worker recall p50 / p95 (ms) | ratio p50 | Worker HTTP p50 (ms), logged / not"
          " | import --url (facts/s) | first recall after a restart (ms) |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        host = WorkerHost(Path(tmp) / "worker").start()
        try:
            for n in sizes:
                facts = all_facts[:n]
                src = Path(tmp) / f"facts-{n}.jsonl"
                src.write_text("".join(json.dumps(f) + "\n" for f in facts))
                worker = host.memory(f"bench-{n}")
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "memories", "import", str(src), "--url", worker.url, "--quiet"],
                               cwd=ROOT, env={**os.environ, "MEMORY_SECRET": host.secret}, check=True)
                rate = n / (time.perf_counter() - t)

                engine = Memory(Path(tmp) / f"engine-{n}.db", embedder)
                for start in range(0, n, 256):
                    engine.add_many(facts[start : start + 256])
                for q in queries:  # warm both; the engine's rerank texts are embedded here, not timed
                    engine.recall(q, debug=True)
                engine_ms, worker_ms, http_ms, quiet_ms = [], [], [], []
                with worker.client() as api:
                    for q in queries[:10]:
                        api.post("/recall", json={"query": q, "debug": True})
                    for q in queries:  # interleaved, so load on the machine touches both alike
                        t = time.perf_counter()
                        engine.recall(q, debug=True)
                        engine_ms.append((time.perf_counter() - t) * 1000)
                        t = time.perf_counter()
                        body = api.post("/recall", json={"query": q, "debug": True}).json()
                        http_ms.append((time.perf_counter() - t) * 1000)
                        worker_ms.append(body["timing"]["rank_ms"])
                        t = time.perf_counter()  # the same recall kept out of the recall log: what a logged row costs
                        api.post("/recall", json={"query": q, "debug": True, "log": False})
                        quiet_ms.append((time.perf_counter() - t) * 1000)
                engine.close()
                host.restart()  # the object leaves memory; its next request starts it again
                with worker.client() as api:
                    t = time.perf_counter()
                    api.post("/recall", json={"query": queries[0], "log": False}).raise_for_status()
                    start_ms = (time.perf_counter() - t) * 1000
                print(f"| {n:,} | {p(engine_ms, 50):.1f} / {p(engine_ms, 95):.1f} | {p(worker_ms, 50):.1f} / {p(worker_ms, 95):.1f}"
                      f" | {p(worker_ms, 50) / p(engine_ms, 50):.2f} | {p(http_ms, 50):.1f} / {p(quiet_ms, 50):.1f} | {rate:.0f}"
                      f" | {start_ms:.0f} |", flush=True)
        finally:
            host.stop()


if __name__ == "__main__":
    main()
