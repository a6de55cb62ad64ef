"""Imports from other tools against the JSONL import, 10,000 facts each into a fresh memory, the
real model, this process (no service):

    .venv/bin/python benchmarks/import_bench.py [--facts 10000] [--url URL]

Prints facts a second for: the JSONL import (`memories import FILE.jsonl`: the engine's
import_batches); the same facts as a ChatGPT-style list, its dry run (every fact embedded and
checked, rolled back) and its import (exactly what the dry run showed); and the list read alone.
Each beside the model's own rate on the same texts in calls of the size the import makes (256 for
import_batches, 100 for a dry run's batch and any batch over HTTP), measured just before and just
after, and the import's share of it (issue 49's floor: 90%). With `--url` (MEMORY_SECRET), the
list's dry run and import go to that running memory as `import --from list --url` sends them, and
the model's rate is this process's copy of it on the same machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import memories  # noqa: E402, F401  (first: it sets OpenBLAS's idle-thread timeout before numpy loads)

import synthetic  # noqa: E402

from memories import importers  # noqa: E402
from memories.cli import IMPORT_BATCH, LocalWrites  # noqa: E402
from memories.client import MemoryClient  # noqa: E402
from memories.client.importing import Importing  # noqa: E402
from memories.model.embeddings import MiniLM  # noqa: E402
from memories.importers import plan as planning  # noqa: E402
from memories.store import Memory  # noqa: E402


def model_rate(model: MiniLM, texts: list[str], call: int) -> float:
    """texts/s of the model alone, `texts` in calls of `call`."""
    started = time.perf_counter()
    for i in range(0, len(texts), call):
        model.embed(texts[i : i + call])
    return len(texts) / (time.perf_counter() - started)


def beside(name: str, n: int, work, model: MiniLM, texts: list[str], call: int):
    """Run `work()` (n facts) between two measures of the model on `texts`; print both rates and the share."""
    before = model_rate(model, texts, call)
    started = time.perf_counter()
    answer = work()
    spent = time.perf_counter() - started
    after = model_rate(model, texts, call)
    alone = (before + after) / 2
    print(f"{name}: {n / spent:,.0f} facts/s ({spent:.1f} s); the model alone in calls of {call}: {before:,.0f} before, "
          f"{after:,.0f} after; the import at {n / spent / alone:.0%} of it")
    return answer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--url", help="a running memory (MEMORY_SECRET): the list's dry run and import go there")
    args = parser.parse_args()
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"# {datetime.now():%Y-%m-%d %H:%M} on {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load average {load}; {args.facts} synthetic facts" + (f", into {args.url}" if args.url else ""))
    model = MiniLM()
    facts = synthetic.facts(args.facts, seed=31)
    sample = [f["text"] for f in facts[: min(2048, args.facts)]]  # the model's rate, on the import's own texts
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        listing = folder / "memories.txt"
        listing.write_text("Saved memories:\n" + "".join(f"- {f['text']}\n" for f in facts))
        if not args.url:
            memory = Memory(folder / "jsonl.db", model)
            items = [{"text": f["text"], "type": "fact"} for f in facts]
            beside("JSONL import", args.facts, lambda: list(memory.import_batches(items, IMPORT_BATCH, client="cli")),
                   model, sample, IMPORT_BATCH)
            memory.close()
        t = time.perf_counter()
        parsed = importers.read("chatgpt-list", listing)
        print(f"list read: {len(parsed.items) / (time.perf_counter() - t):,.0f} lines/s")
        if args.url:
            memory = None
            writes = Importing(MemoryClient(args.url, os.environ["MEMORY_SECRET"], timeout=300, name="cli"))
        else:
            memory = Memory(folder / "list.db", model)
            writes = LocalWrites(memory)
        plan = beside("dry run", len(parsed.items), lambda: planning.dry_run(writes, parsed.items, parsed.refused),
                      model, sample, planning.BATCH)
        results = beside(f"import after it ({plan.counts()['store']} of {len(parsed.items)} stored)", len(plan.store),
                         lambda: planning.run(writes, plan, "import of memories.txt"), model, sample,
                         planning.BATCH if args.url else IMPORT_BATCH)
        assert sum(r.created for r in results) <= len(plan.store)
        if memory is not None:
            memory.close()
        else:
            writes.end()
    print(f"# load average after: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
