"""Dashboard server time at 10k facts: the facts page and the recall debugger, service call included.

    .venv/bin/python benchmarks/dashboard_bench.py [--facts 10000] [--requests 100]

Loads the synthetic facts into a fresh memory, starts the real service on loopback, and times
Django's handling of each page in-process (the test client: no browser, no network to the
dashboard, but real HTTP from the dashboard to the memory service).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

import synthetic  # noqa: E402

from memories.model.embeddings import MiniLM  # noqa: E402
from memories.store import Memory  # noqa: E402
from tests.memory_service import Service  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=100)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="dashboard-bench-"))
    db = tmp / "memory.db"
    memory = Memory(db, MiniLM())
    corpus = synthetic.facts(int(args.facts * 1.3))  # some are near-duplicates: feed until there are enough
    start = 0
    while memory.count() < args.facts:
        memory.add_many(corpus[start : start + 64])
        start += 64
    stored = memory.count()
    memory.close()

    service = Service(db).start(timeout=300)
    os.environ["MEMORY_URL"], os.environ["MEMORY_SECRET"] = service.url, service.secret
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_superuser("bench", password="bench-password-1", email="")
    client = Client()
    client.force_login(user)

    pages = {
        "facts page": lambda i: client.get("/"),
        "facts search": lambda i: client.get("/", {"q": synthetic.NAMES[i % len(synthetic.NAMES)]}),
        "recall debugger": lambda i: client.get("/recall/", {"q": synthetic.questions(args.requests)[i]}),
        "debugger + pin": lambda i: client.get("/recall/", {"q": synthetic.questions(args.requests)[i], "pin": 1 + i}),
    }
    print(f"# dashboard benchmark, {date.today()}, {os.cpu_count()} cores, {stored} facts, {args.requests} requests each")
    print("| page | p50 ms | p95 ms |\n|---|---|---|")
    try:
        for name, get in pages.items():
            for i in range(5):
                assert get(i).status_code == 200
            times = []
            for i in range(args.requests):
                t = time.perf_counter()
                response = get(i)
                times.append(time.perf_counter() - t)
                assert response.status_code == 200, response.status_code
            print(f"| {name} | {np.percentile(times, 50) * 1000:.1f} | {np.percentile(times, 95) * 1000:.1f} |", flush=True)
    finally:
        service.stop()


if __name__ == "__main__":
    main()
