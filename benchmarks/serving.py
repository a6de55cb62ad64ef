"""Which server `make serve` runs the dashboard under: page loads at 4 of the owner's tabs at once.

    .venv/bin/python benchmarks/serving.py [--seconds 20] [--rounds 3] [--tabs 4] [--only NAME]

A real memory service (`serve --dir`, the demo memory), the dashboard in its production settings
(DEBUG off, static files collected), and each candidate server in turn on loopback. Each tab signs
in with its own session and loads, over and over, the facts list, a fact's page and the recall
debugger (a query never asked before: the memory embeds it). Prints p50/p95 per page and pages
a second for each candidate. Every process shares the machine's cores with the tabs.

The dashboard must run as one process: an import's upload, dry run and progress live in it
(dashboard/import_jobs.py). "gunicorn sync x4" is measured only to show what that rule costs.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.memory_folder import FolderService  # noqa: E402
from tests.memory_service import free_port, wait_for  # noqa: E402

BIN = Path(sys.executable).parent
PASSWORD = "benchmark owner password"
QUERIES = ["Who is my boss?", "Where does my sister live?", "What do I drink in the morning?", "When is the dentist?",
           "Which languages do I speak?", "What car do I drive?", "Who are my neighbours?", "What am I allergic to?"]


def candidates(port: int) -> dict[str, list[str]]:
    bind = f"127.0.0.1:{port}"
    gunicorn = [str(BIN / "gunicorn"), "dashboard.wsgi:application", "--bind", bind, "--access-logfile", "/dev/null",
                "--no-control-socket"]
    uvicorn = [str(BIN / "uvicorn"), "dashboard.asgi:application", "--host", "127.0.0.1", "--port", str(port),
               "--no-access-log", "--log-level", "warning"]
    fast_parts = all(importlib.util.find_spec(m) for m in ("httptools", "uvloop"))  # uvicorn[standard]'s, not ours
    return {
        "gunicorn gthread, 1 process x 8 threads": [*gunicorn, "--workers", "1", "--worker-class", "gthread", "--threads", "8"],
        "gunicorn sync, 1 process": [*gunicorn, "--workers", "1"],
        "uvicorn (ASGI), 1 process, h11 + asyncio": [*uvicorn, "--http", "h11", "--loop", "asyncio"],
        **({"uvicorn (ASGI), 1 process, httptools + uvloop": [*uvicorn, "--http", "httptools", "--loop", "uvloop"]}
           if fast_parts else {}),
        "gunicorn sync x4 (not eligible: import jobs live in one process)": [*gunicorn, "--workers", "4"],
    }


def dashboard_env(tmp: Path, memory: FolderService) -> dict:
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "dashboard.settings", "DASHBOARD_ENV_FILE": str(tmp / "none.env"),
            "SECRET_KEY": secrets.token_urlsafe(50), "MEMORY_URL": memory.url, "MEMORY_SECRET": memory.secret,
            "DASHBOARD_DB": str(tmp / "dashboard.db"), "STATIC_ROOT": str(tmp / "static"), "DEBUG": "false",
            "ALLOWED_HOSTS": "127.0.0.1", "REQUEST_LOG": "true"}  # as `make serve` runs it


def prepare(env: dict) -> None:
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "collectstatic", "--noinput", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
    subprocess.run([*manage, "createsuperuser", "--noinput", "--username", "owner", "--email", ""], cwd=ROOT, check=True,
                   env={**env, "DJANGO_SUPERUSER_PASSWORD": PASSWORD}, stdout=subprocess.DEVNULL)


def signed_in(base: str) -> httpx.Client:
    tab = httpx.Client(base_url=base, timeout=60)
    page = tab.get("/login/").text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)[1]
    r = tab.post("/login/", data={"username": "owner", "password": PASSWORD, "csrfmiddlewaretoken": token})
    assert r.status_code == 302, f"sign-in failed: {r.status_code}"
    return tab


def run_tab(tab: httpx.Client, pages: list[tuple[str, str]], until: float, warm: float, timings: dict) -> None:
    n = 0
    while time.monotonic() < until:
        name, path = pages[n % len(pages)]
        if name == "debugger":
            path += f"{QUERIES[(n // len(pages)) % len(QUERIES)]} {n}"  # never one the memory embedded before
        start = time.monotonic()
        r = tab.get(path)
        took = time.monotonic() - start
        assert r.status_code == 200, f"{path}: {r.status_code}"
        if start >= warm:
            timings.setdefault(name, []).append(took)
        n += 1


def measure(base: str, fact_id: int, tabs: int, seconds: float) -> dict:
    pages = [("facts list", "/"), ("fact page", f"/facts/{fact_id}/"), ("debugger", "/recall/?q=")]
    clients = [signed_in(base) for _ in range(tabs)]
    warm = time.monotonic() + 3  # the first loads of each page (templates, connections) are not what we compare
    until = warm + seconds
    per_tab = [{} for _ in clients]
    threads = [threading.Thread(target=run_tab, args=(c, pages, until, warm, t)) for c, t in zip(clients, per_tab)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for c in clients:
        c.close()
    timings = {name: [x for t in per_tab for x in t.get(name, [])] for name, _ in pages}
    return {"pages": timings, "per_second": sum(map(len, timings.values())) / seconds}


def percentile(values: list[float], p: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[p - 1] * 1000


def serve_and_measure(command: list[str], env: dict, tmp: Path, fact_id: int, tabs: int, seconds: float) -> dict:
    port = command[command.index("--port") + 1] if "--port" in command else command[command.index("--bind") + 1].rsplit(":", 1)[1]
    base = f"http://127.0.0.1:{port}"
    log = tmp / "server.log"
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        wait_for(base + "/login/", server, log, 60)
        return measure(base, fact_id, tabs, seconds)
    finally:
        server.terminate()
        server.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=20, help="per candidate and round")
    parser.add_argument("--rounds", type=int, default=3, help="the candidates take turns, so a busy minute hits them all")
    parser.add_argument("--tabs", type=int, default=4)
    parser.add_argument("--only", help="run the candidates whose name contains this")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="serving-bench-"))
    folder = tmp / "memories"
    folder.mkdir()
    subprocess.run([sys.executable, "-m", "memories", "import", str(ROOT / "memories" / "data" / "demo.jsonl"),
                    "--db", str(folder / "default.db"), "--quiet"], cwd=ROOT, check=True)
    memory = FolderService(folder).start(timeout=300, memories=())
    with memory.client() as api:
        fact_id = api.get("/facts", params={"limit": 1}).json()["facts"][0]["id"]
    env = dashboard_env(tmp, memory)
    prepare(env)
    chosen = {k: v for k, v in candidates(free_port()).items() if not args.only or args.only in k}
    results: dict[str, list[dict]] = {name: [] for name in chosen}
    try:
        for r in range(args.rounds):
            names = list(chosen)
            for name in names[r % len(names):] + names[:r % len(names)]:
                results[name].append(serve_and_measure(chosen[name], env, tmp, fact_id, args.tabs, args.seconds))
                print(f"round {r + 1}, {name}: {results[name][-1]['per_second']:.1f} pages/s", file=sys.stderr)
    finally:
        memory.stop()
    print(f"\n{args.tabs} tabs; {args.rounds} rounds of {args.seconds:.0f} s a candidate, taking turns; the demo memory; "
          f"{os.cpu_count()} cores shared by the tabs, the dashboard and the memory\n")
    print(f"{'server':<66} {'page':<11} {'p50 ms':>7} {'p95 ms':>7}   pages/s (rounds)")
    for name, rounds in results.items():
        rates = [x["per_second"] for x in rounds]
        for i, page in enumerate(rounds[0]["pages"]):
            values = [v for x in rounds for v in x["pages"][page]]
            rate = f"{statistics.mean(rates):8.1f} ({min(rates):.0f}-{max(rates):.0f})" if i == 0 else ""
            print(f"{name if i == 0 else '':<66} {page:<11} {percentile(values, 50):7.1f} {percentile(values, 95):7.1f}   {rate}")


if __name__ == "__main__":
    main()
