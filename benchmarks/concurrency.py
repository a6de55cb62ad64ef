"""Many agents at once (issue 49 §2): recalls, small writes and the dashboard while an import runs.

    .venv/bin/python benchmarks/concurrency.py [--big] [--agents 8] [--import-facts 2000] [--keep DIR] [--no-dashboard]

One `python -m memories serve --dir` (real HTTP, the X-Memory-Secret header) on a memory of
10,000 synthetic facts (100,000 with --big) built with the real model, then, in this order:

1. alone: one agent recalls, one question at a time (each question asked once in the whole run);
2. the agents alone: `--agents` agents recall back to back, each its own questions, no import:
   what sharing the machine's cores costs a recall, with no write in the way;
3. under load: the same agents, while one import runs (`POST /facts/batch` of 100 facts, as
   `python -m memories import --url` sends them), one agent writes a fact (`POST /facts`) every
   quarter second, and one signed-in dashboard tab loads the facts list, a fact and the recall
   debugger (under gunicorn, as `make serve` runs it). Recalls and writes count only while the
   import runs.

Prints recall p50 alone, p50/p99 in 2 and 3, p99 under load / p50 alone against the floor of
3x, recalls a second, the longest a small write took (floor 1 s) and the dashboard's p95 (floor
300 ms). `--keep DIR` keeps the built memory there and reuses it (each run serves a copy).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import memories  # noqa: E402, F401  (first: it sets OpenBLAS's idle-thread timeout before numpy loads)

import httpx  # noqa: E402
import synthetic  # noqa: E402

from memories.cli import URL_BATCH  # noqa: E402
from tests.memory_folder import FolderService  # noqa: E402
from tests.memory_service import free_port, wait_for  # noqa: E402

FLOOR_RATIO = 3.0  # recall p99 under load / recall p50 alone
FLOOR_WRITE = 1.0  # seconds a small write may take while an import runs
FLOOR_PAGE = 0.300  # seconds, the dashboard's p95 while all of it runs
WRITE_EVERY = 0.25  # seconds between an agent's small writes
SOLO = 100  # recalls alone
WARM = 10  # recalls before any is timed (the model's first runs, connections)


def pct(samples: list[float], p: float) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[p - 1] * 1000 if len(samples) > 1 else samples[0] * 1000


def build(path: Path, n: int) -> None:
    """A memory of `n` synthetic facts, embedded by the real model (the engine's import, batches of 256)."""
    from memories.cli import IMPORT_BATCH
    from memories.model.embeddings import MiniLM
    from memories.store import Memory

    memory = Memory(path, MiniLM())
    started = time.perf_counter()
    for _ in memory.import_batches(synthetic.facts(n), IMPORT_BATCH, client="benchmark"):
        pass
    memory.close()
    print(f"built {path.name}: {n:,} facts offered in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def memory_files(path: Path) -> list[Path]:
    return [p for p in path.parent.iterdir() if p.name.startswith(path.name)]


def questions(agents: int, each: int) -> tuple[list[str], list[list[str]]]:
    """Questions never asked twice in a run: the solo agent's, then each agent's own."""
    need = SOLO + WARM + agents * each
    base = list(dict.fromkeys(synthetic.questions(20 * need, seed=49)))  # (about 1,700 distinct)
    pool = [lead + q for lead in ("", "Remind me: ", "Quick question: ", "Do you know: ") for q in base]
    if len(pool) < need:
        raise SystemExit(f"only {len(pool)} distinct questions for {need}")
    solo, rest = pool[: SOLO + WARM], pool[SOLO + WARM :]
    return solo, [rest[i * each : (i + 1) * each] for i in range(agents)]


def recaller(url: str, secret: str, name: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=120, headers={"X-Memory-Secret": secret, "X-Memory-Client": name})


def recall(client: httpx.Client, query: str) -> float:
    started = time.perf_counter()
    r = client.post("/recall", json={"query": query, "limit": 10})
    took = time.perf_counter() - started
    assert r.status_code == 200, (r.status_code, r.text[:300])
    return took


def agent(client: httpx.Client, queue: list[str], stop: threading.Event, out: list[tuple[float, float]]) -> None:
    """Recall back to back until `stop`: (when it started, how long it took) each."""
    for q in queue:
        if stop.is_set():
            return
        started = time.monotonic()
        out.append((started, recall(client, q)))
    print("an agent ran out of questions: raise `each`", file=sys.stderr)


def agents_for(url: str, secret: str, queues: list[list[str]], stop: threading.Event) -> tuple[list[threading.Thread], list]:
    timings: list[list[tuple[float, float]]] = [[] for _ in queues]
    threads = [threading.Thread(target=agent, args=(recaller(url, secret, f"agent-{i}"), q, stop, timings[i]), daemon=True)
               for i, q in enumerate(queues)]
    return threads, timings


def importer(url: str, secret: str, facts: list[dict], size: int, spans: dict) -> None:
    """`import --url`'s requests: POST /facts/batch, `size` facts at a time, one after the other."""
    with httpx.Client(base_url=url, timeout=300, headers={"X-Memory-Secret": secret, "X-Memory-Client": "cli"}) as client:
        spans["start"] = time.monotonic()
        for i in range(0, len(facts), size):
            started = time.perf_counter()
            r = client.post("/facts/batch", json={"facts": facts[i : i + size]})
            assert r.status_code == 200, (r.status_code, r.text[:300])
            spans.setdefault("batches", []).append(time.perf_counter() - started)
        spans["end"] = time.monotonic()


def writer(url: str, secret: str, stop: threading.Event, out: list[tuple[float, float]]) -> None:
    """An agent's small writes, one a quarter second: each a new fact (POST /facts)."""
    with recaller(url, secret, "agent-writer") as client:
        n = 0
        while not stop.is_set():
            started = time.monotonic()
            t = time.perf_counter()
            r = client.post("/facts", json={"text": f"Agent note {n}: the parcel for flat {n % 97} came at {n % 24}h.",
                                             "type": "log", "source": "agent"})
            assert r.status_code in (200, 201), (r.status_code, r.text[:300])
            out.append((started, time.perf_counter() - t))
            n += 1
            stop.wait(WRITE_EVERY)


class Dashboard:
    """The dashboard under gunicorn (gthread, 1 process x 8 threads, as `make serve`), signed in once."""

    def __init__(self, tmp: Path, memory: FolderService):
        from serving import candidates, dashboard_env, prepare

        self.env = dashboard_env(tmp, memory)
        prepare(self.env)
        self.port = free_port()
        command = candidates(self.port)["gunicorn gthread, 1 process x 8 threads"]
        log = tmp / "dashboard.log"
        self.process = subprocess.Popen(command, cwd=Path(__file__).resolve().parent.parent, env=self.env,
                                        stdout=log.open("w"), stderr=subprocess.STDOUT)
        self.base = f"http://127.0.0.1:{self.port}"
        wait_for(self.base + "/login/", self.process, log, 60)

    def tab(self, fact_id: int, stop: threading.Event, out: list[tuple[float, str, float]], queries: list[str]) -> None:
        from serving import signed_in

        pages = [("facts list", "/"), ("fact page", f"/facts/{fact_id}/"), ("debugger", "/recall/?q=")]
        tab = signed_in(self.base)  # (already open: signing in used it)
        try:
            for name, path in pages:  # templates and connections first
                assert tab.get(path + ("warm" if name == "debugger" else "")).status_code == 200
            n = 0
            while not stop.is_set():
                name, path = pages[n % len(pages)]
                if name == "debugger":
                    path += queries[n // len(pages)]
                started = time.monotonic()
                t = time.perf_counter()
                r = tab.get(path)
                assert r.status_code == 200, (path, r.status_code)
                out.append((started, name, time.perf_counter() - t))
                n += 1
        finally:
            tab.close()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)


def during(samples: list, start: float, end: float) -> list:
    return [s for s in samples if start <= s[0] <= end]


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--big", action="store_true", help="100,000 facts (building it takes about 5 minutes)")
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--import-facts", type=int, default=2000)
    parser.add_argument("--batch", type=int, default=URL_BATCH, help="facts a POST /facts/batch (import --url's)")
    parser.add_argument("--alone-seconds", type=float, default=10, help="the agents without the import")
    parser.add_argument("--keep", type=Path, help="build the memory here once and reuse it")
    parser.add_argument("--no-dashboard", action="store_true")
    args = parser.parse_args()
    n = 100_000 if args.big else 10_000

    tmp = Path(tempfile.mkdtemp(prefix="concurrency-bench-"))
    built = (args.keep or tmp) / f"concurrency-{n}.db"
    built.parent.mkdir(parents=True, exist_ok=True)
    if not built.exists():
        build(built, n)
    folder = tmp / "memories"
    folder.mkdir()
    for f in memory_files(built):
        shutil.copy(f, folder / f.name.replace(built.name, "default.db"))

    stored = {f["text"] for f in synthetic.facts(n)}
    new = [f | {"source": "import"} for f in synthetic.facts(n + args.import_facts * 2, seed=4949) if f["text"] not in stored]
    new = new[: args.import_facts]
    solo_q, queues = questions(args.agents, each=400)

    memory = FolderService(folder).start(timeout=300, memories=())
    dashboard = None
    try:
        with memory.client() as api:
            fact_id = api.get("/facts", params={"limit": 1}).json()["facts"][0]["id"]
            held = api.get("/stats").json()["facts"]
        if not args.no_dashboard:
            dashboard = Dashboard(tmp, memory)

        # 1. Alone.
        with recaller(memory.url, memory.secret, "agent-solo") as client:
            for q in solo_q[:WARM]:
                recall(client, q)
            solo = [recall(client, q) for q in solo_q[WARM:]]

        # 2. The agents alone, no import.
        stop = threading.Event()
        threads, timings = agents_for(memory.url, memory.secret, [q[:200] for q in queues], stop)
        for t in threads:
            t.start()
        time.sleep(args.alone_seconds)
        stop.set()
        for t in threads:
            t.join()
        crowd = [took for agent_timings in timings for _, took in agent_timings[2:]]  # (each agent's first: warm)

        # 3. Under load: the import, the agents, a writer and the dashboard tab.
        stop = threading.Event()
        threads, timings = agents_for(memory.url, memory.secret, [q[200:] for q in queues], stop)
        writes: list[tuple[float, float]] = []
        pages: list[tuple[float, str, float]] = []
        spans: dict = {}
        others = [threading.Thread(target=writer, args=(memory.url, memory.secret, stop, writes), daemon=True)]
        if dashboard:
            page_queries = [q + " today" for q in solo_q]
            others.append(threading.Thread(target=dashboard.tab, args=(fact_id, stop, pages, page_queries), daemon=True))
        for t in threads + others:
            t.start()
        time.sleep(1)  # every agent and the tab under way
        importing = threading.Thread(target=importer, args=(memory.url, memory.secret, new, args.batch, spans))
        importing.start()
        importing.join()
        stop.set()
        for t in threads + others:
            t.join()
        start, end = spans["start"], spans["end"]
        loaded = [took for agent_timings in timings for _, took in during(agent_timings, start, end)]
        wrote = [took for _, took in during(writes, start, end)]
        shown = [took for _, _, took in during(pages, start, end)]
        load = os.getloadavg()
    finally:
        if dashboard:
            dashboard.stop()
        memory.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    window = end - start
    solo50 = pct(solo, 50)
    p50, p99 = pct(loaded, 50), pct(loaded, 99)
    ratio = p99 / solo50
    print(f"# {datetime.now():%Y-%m-%d %H:%M}, {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"# {held:,} facts held; {args.agents} agents; an import of {len(new):,} facts in batches of {args.batch} took "
          f"{window:.1f} s ({len(new) / window:.0f} facts/s; batch p50 {pct(spans['batches'], 50):.0f} ms, "
          f"longest {max(spans['batches']) * 1000:.0f} ms)")
    print(f"recall alone: p50 {solo50:.1f} ms, p99 {pct(solo, 99):.1f} ms ({len(solo)} recalls)")
    print(f"{args.agents} agents, no import: p50 {pct(crowd, 50):.1f} ms, p99 {pct(crowd, 99):.1f} ms, "
          f"{len(crowd) / args.alone_seconds:.1f} recalls/s")
    print(f"{args.agents} agents during the import: p50 {p50:.1f} ms, p99 {p99:.1f} ms, {len(loaded) / window:.1f} recalls/s "
          f"({len(loaded)} recalls)")
    print(f"{verdict(ratio <= FLOOR_RATIO)} recall p99 under load / p50 alone: {ratio:.1f}x (floor {FLOOR_RATIO:.0f}x)")
    if wrote:
        print(f"{verdict(max(wrote) <= FLOOR_WRITE)} longest small write during the import: {max(wrote) * 1000:.0f} ms "
              f"(p50 {pct(wrote, 50):.0f} ms, {len(wrote)} writes; floor {FLOOR_WRITE * 1000:.0f} ms)")
    if shown:
        by = {name: [took for _, page, took in during(pages, start, end) if page == name]
              for name in ("facts list", "fact page", "debugger")}
        parts = ", ".join(f"{name} {pct(v, 50):.0f}/{pct(v, 95):.0f}" for name, v in by.items() if v)
        print(f"{verdict(pct(shown, 95) <= FLOOR_PAGE * 1000)} dashboard p95 during the import: {pct(shown, 95):.0f} ms "
              f"({len(shown)} pages; p50/p95 ms: {parts}; floor {FLOOR_PAGE * 1000:.0f} ms)")
    elif not args.no_dashboard:
        print("dashboard: no page finished during the import")


if __name__ == "__main__":
    main()
