"""What a delete and a forget for good cost at 10k and 100k facts, now that forget merges the
keyword index (FTS5 'optimize') and checkpoints the WAL, and every delete zeroes what it frees
(secure_delete), so no byte of a forgotten text stays in the file (issue 45 §5):

    .venv/bin/python benchmarks/forget_cost.py [--sizes 10000,100000] [--forgets 5]

Synthetic facts (benchmarks/synthetic.py) stored with a hash embedder: the model plays no part in
either step. Each forget follows a delete of a fact written just before, as the dashboard does;
the merge is timed alone first, so the forget's own figure is the rest of its work.
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

from memories.store import Memory  # noqa: E402
from tests.fakes import HashEmbedder  # noqa: E402


def ms(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def run(size: int, forgets: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        memory = Memory(Path(folder) / "m.db", HashEmbedder())
        items = synthetic.facts(size)
        for batch in memory.import_batches(items, size=512):
            pass
        deletes, plain, merge, rest = [], [], [], []
        for n in range(forgets):
            # A delete as it was before (freed bytes left), beside one as it is now (zeroed).
            memory.state.db.execute("PRAGMA secure_delete=OFF")
            other = memory.add(f"The bike lock for locker {n} is zx{n}r{size}.").fact.id
            plain.append(ms(lambda: memory.delete(other)))
            memory.state.db.execute("PRAGMA secure_delete=ON")
            fid = memory.add(f"The vault code for locker {n} is zx{n}q{size}.").fact.id
            deletes.append(ms(lambda: memory.delete(fid)))
            # The merge as the forget runs it, timed alone: what the no-bytes guarantee adds. The
            # forget after it then finds the index merged: the rest of its work.
            merge.append(ms(lambda: memory.state.db.execute("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")))
            rest.append(ms(lambda: memory.forget(fid)))
        memory.close()
    mid = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
    print(f"{size:>7} facts: delete {mid(deletes):6.1f} ms (without secure_delete {mid(plain):6.1f}); forget {mid(merge) + mid(rest):7.1f} ms ="
          f" FTS5 merge {mid(merge):7.1f} + the rest {mid(rest):6.1f} (p50 of {forgets})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--forgets", type=int, default=5)
    args = parser.parse_args()
    print(f"forget_cost, {platform.processor() or platform.machine()}, Python {platform.python_version()}, {date.today()}")
    for size in map(int, args.sizes.split(",")):
        run(size, args.forgets)


if __name__ == "__main__":
    main()
