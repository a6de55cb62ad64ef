"""What the fact lifecycle costs the memory on Cloudflare (workerd under `wrangler dev --local`),
each measure against the path without it, as benchmarks/lifecycle_cost.py measures the engine:

    .venv/bin/python benchmarks/worker_lifecycle_cost.py [--sizes 1000,10000] [--queries 200] [--writes 200]

- recall: `include_stale: true` (no filter: the v3 path) against the default current-only filter,
  with no fact replaced, then with 10% of the facts replaced (`PATCH superseded_by`, each by the
  next fact, as the contract replaces one). The two are interleaved query by query on one memory.
  `rank` is the object's own `timing.rank_ms` (the lists, the filter, fusing and reading the rows,
  without the model), `HTTP` the whole request from here, both model calls (embed-server) included.
- a write of one fact (`POST /facts`, over HTTP, its embedding included): with proposals against
  without them. Without them is what lifecycle_cost.py measures by setting `writing.PROPOSE` above
  any cosine; the Worker's PROPOSE is a constant of its bundle (worker/src/writes/lifecycle.ts), so this
  script runs a second wrangler from a copy of worker/ whose only change is that constant set to
  2.0: its near search stops at the floor (or the threshold) as before v4 (the band below it that
  a write's proposals take, from PROPOSE up, is empty), and it stores no proposal. The second one
  serves a copy of the first one's storage, taken after the import with both stopped, so the two
  write into the same memory; their writes are interleaved one by one, and each fact written is
  deleted again on both before the next measure.

Synthetic facts (benchmarks/synthetic.py, seed 7) imported with `python -m memories import --url`
(as worker_bench.py: after its first batch it deduplicates, and proposes, so a memory holds a few
facts fewer than asked), questions of seed 11, the real model through embed-server, on this
machine's cores shared by the two wranglers and the embed server. workerd's clock moves in whole
milliseconds: the means resolve what the p50s cannot. Rows read per recall are counted in
worker/test/recall_rows.test.ts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import synthetic  # noqa: E402

from tests import worker_service  # noqa: E402
from tests.worker_service import WorkerHost, WorkerMemory  # noqa: E402

PROPOSE_LINE = "export const PROPOSE = 0.4;"


def without_proposals(beside: Path) -> Path:
    """A copy of worker/ whose PROPOSE is out of reach, its packages linked, not copied, under
    `beside` with the docs/openapi.json it bundles."""
    into = beside / "worker"
    into.mkdir(parents=True)
    (beside / "docs").mkdir()
    shutil.copy(ROOT / "docs" / "openapi.json", beside / "docs" / "openapi.json")
    shutil.copytree(worker_service.WORKER / "src", into / "src")
    for name in ("wrangler.jsonc", "package.json", "tsconfig.json"):
        shutil.copy(worker_service.WORKER / name, into / name)
    for name in ("node_modules", "node22"):
        if (worker_service.WORKER / name).exists():
            (into / name).symlink_to(worker_service.WORKER / name)
    lifecycle = into / "src" / "lifecycle.ts"
    text = lifecycle.read_text()
    assert text.count(PROPOSE_LINE) == 1, "worker/src/writes/lifecycle.ts no longer says " + PROPOSE_LINE
    lifecycle.write_text(text.replace(PROPOSE_LINE, "export const PROPOSE = 2.0;  // worker_lifecycle_cost.py: no proposals"))
    return into


@contextmanager
def worker_dir(path: Path):
    """wrangler runs in worker_service.WORKER: `path` for what starts inside."""
    kept = worker_service.WORKER
    worker_service.WORKER = path
    try:
        yield
    finally:
        worker_service.WORKER = kept


def ms(samples: list[float], q: float) -> float:
    return float(np.percentile(samples, q))


def line(label: str, base: list[float], other: list[float]) -> str:
    b50, o50, bm, om = ms(base, 50), ms(other, 50), float(np.mean(base)), float(np.mean(other))
    return (f"  {label}: p50 {b50:.1f} -> {o50:.1f} ms ({o50 - b50:+.1f}), p95 {ms(base, 95):.1f} -> {ms(other, 95):.1f} ms,"
            f" mean {bm:.2f} -> {om:.2f} ms ({om - bm:+.2f})")


def recalls(api: httpx.Client, queries: list[str]) -> dict[str, list[float]]:
    """Each query without the filter then with it: rank_ms and the request's time, each way."""
    out: dict[str, list[float]] = {"rank stale": [], "rank current": [], "http stale": [], "http current": []}
    for q in queries:
        for way, body in (("stale", {"include_stale": True}), ("current", {})):
            t = time.perf_counter()
            r = api.post("/recall", json={"query": q, "debug": True, "log": False, **body})
            out[f"http {way}"].append((time.perf_counter() - t) * 1000)
            r.raise_for_status()
            out[f"rank {way}"].append(r.json()["timing"]["rank_ms"])
    return out


def writes(real: httpx.Client, patched: httpx.Client, texts: list[str]) -> tuple[list[float], list[float], int, int]:
    """Each text written to both memories in turn (the one with proposals first, then the other
    first, alternately), then every fact written deleted again. The times with and without
    proposals, how many were stored and the proposals answered."""
    with_them, without, stored, proposed = [], [], 0, 0
    written: list[tuple[httpx.Client, int]] = []
    for n, text in enumerate(texts):
        order = [(real, with_them), (patched, without)]
        for api, times in order if n % 2 == 0 else order[::-1]:
            t = time.perf_counter()
            r = api.post("/facts", json={"text": text})
            times.append((time.perf_counter() - t) * 1000)
            r.raise_for_status()
            body = r.json()
            if body["created"]:
                written.append((api, body["id"]))
                if api is real:
                    stored += 1
                    proposed += len(body["conflicts"])
                else:
                    assert body["conflicts"] == [], "the copy without proposals proposed"
    for api, fid in written:
        api.delete(f"/facts/{fid}").raise_for_status()
    return with_them, without, stored, proposed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--writes", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    started = time.perf_counter()
    print(f"# {datetime.now():%Y-%m-%d %H:%M} on {platform.machine()}, {platform.processor() or 'cpu'}, {os.cpu_count()} cores,"
          f" load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, Python {platform.python_version()}", flush=True)
    facts = synthetic.facts(max(sizes) + args.writes, seed=7)
    queries = synthetic.questions(args.queries, seed=11)
    extra = [f["text"] for f in facts[max(sizes):]]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        real = WorkerHost(tmp / "real").start()  # its embed server serves both
        patched = WorkerHost(tmp / "patched", secret=real.secret, embed_port=real.embed_port, variables=dict(real.variables))
        patched.state.mkdir()
        copy = without_proposals(tmp / "without-proposals")
        try:
            for n in sizes:
                src = tmp / f"facts-{n}.jsonl"
                src.write_text("".join(json.dumps({"text": f["text"], "type": f.get("type", "fact")}) + "\n" for f in facts[:n]))
                memory = real.memory(f"cost-{n}")
                t = time.perf_counter()
                subprocess.run([sys.executable, "-m", "memories", "import", str(src), "--url", memory.url, "--quiet"],
                               cwd=ROOT, env={**os.environ, "MEMORY_SECRET": real.secret}, check=True, stdout=subprocess.DEVNULL)
                imported = time.perf_counter() - t
                # The same storage under both: each stopped while it is copied.
                worker_service.stop(real.wrangler)
                worker_service.stop(patched.wrangler)
                shutil.rmtree(patched.state / "do", ignore_errors=True)
                shutil.copytree(real.state / "do", patched.state / "do")
                real.start_wrangler()
                with worker_dir(copy):
                    patched.start_wrangler()
                twin = WorkerMemory(patched, memory.name)
                with memory.client() as api, twin.client() as other:
                    facts_held = api.get("/health").json()["facts"]
                    assert other.get("/health").json()["facts"] == facts_held
                    print(f"{facts_held:,} facts (imported in {imported:.0f} s):", flush=True)
                    for q in queries[:10]:  # warm both objects and the model
                        api.post("/recall", json={"query": q, "log": False})
                        other.post("/recall", json={"query": q, "log": False})
                    with_them, without, stored, proposed = writes(api, other, extra)
                    print(line("write, without proposals -> with them (HTTP)", without, with_them)
                          + f"; {stored} of {len(extra)} stored, {proposed / max(stored, 1):.2f} proposals each", flush=True)
                    none = recalls(api, queries)
                    print(line("recall rank, no filter -> current only (none replaced)", none["rank stale"], none["rank current"]))
                    print(line("recall HTTP, no filter -> current only (none replaced)", none["http stale"], none["http current"]), flush=True)
                    t = time.perf_counter()
                    ids = range(10, facts_held, 10)  # each replaced by the next: 10%
                    for fid in ids:
                        api.patch(f"/facts/{fid}", json={"superseded_by": fid + 1}).raise_for_status()
                    print(f"  ({len(ids):,} facts replaced by PATCH in {time.perf_counter() - t:.0f} s)", flush=True)
                    tenth = recalls(api, queries)
                    print(line("recall rank, no filter -> current only (10% replaced)", tenth["rank stale"], tenth["rank current"]))
                    print(line("recall HTTP, no filter -> current only (10% replaced)", tenth["http stale"], tenth["http current"]), flush=True)
        finally:
            patched.stop()
            real.stop()
    print(f"# {time.perf_counter() - started:.0f} s in all")


if __name__ == "__main__":
    main()
