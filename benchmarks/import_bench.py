"""Imports from other tools against the JSONL import, 10,000 facts each into a fresh memory, the
real model, this process (no service):

    .venv/bin/python benchmarks/import_bench.py [--facts 10000]

Prints facts a second for: the JSONL import (`memories import FILE.jsonl`: the engine's
import_batches); the same facts as a ChatGPT-style list, its dry run (every fact embedded and
checked, rolled back) and its import (exactly what the dry run showed); and the list read alone.
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

import synthetic  # noqa: E402

from memories import importers  # noqa: E402
from memories.cli import IMPORT_BATCH, LocalWrites  # noqa: E402
from memories.model.embeddings import MiniLM  # noqa: E402
from memories.importers import plan as planning  # noqa: E402
from memories.store import Memory  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=10_000)
    args = parser.parse_args()
    print(f"# {date.today()} on {platform.machine()}, Python {platform.python_version()}, {args.facts} synthetic facts")
    model = MiniLM()
    facts = synthetic.facts(args.facts, seed=31)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        listing = folder / "memories.txt"
        listing.write_text("Saved memories:\n" + "".join(f"- {f['text']}\n" for f in facts))
        memory = Memory(folder / "jsonl.db", model)
        t = time.perf_counter()
        for _ in memory.import_batches([{"text": f["text"], "type": "fact"} for f in facts], IMPORT_BATCH, client="cli"):
            pass
        jsonl = time.perf_counter() - t
        memory.close()
        print(f"JSONL import: {args.facts / jsonl:,.0f} facts/s ({jsonl:.1f} s)")
        t = time.perf_counter()
        parsed = importers.read("chatgpt-list", listing)
        read = time.perf_counter() - t
        memory = Memory(folder / "list.db", model)
        writes = LocalWrites(memory)
        t = time.perf_counter()
        plan = planning.dry_run(writes, parsed.items, parsed.refused)
        dry = time.perf_counter() - t
        t = time.perf_counter()
        results = planning.run(writes, plan, "import of memories.txt")
        stored = time.perf_counter() - t
        memory.close()
        print(f"list read: {len(parsed.items) / read:,.0f} lines/s; dry run: {len(parsed.items) / dry:,.0f} facts/s ({dry:.1f} s, "
              f"{plan.counts()}); import after it: {len(plan.store) / stored:,.0f} facts/s ({stored:.1f} s, "
              f"{sum(r.created for r in results)} stored); the import's rate is {jsonl / stored * len(plan.store) / args.facts:.2f}x "
              "the JSONL import's")


if __name__ == "__main__":
    main()
