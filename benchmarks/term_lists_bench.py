"""The keyword list from the engine's own term lists (memories/storage/term_lists.py) against FTS5's
bm25() on the same memory: how fast, whether identical, what it holds, what keeping it costs.

    .venv/bin/python benchmarks/term_lists_bench.py [--facts 100000] [--queries 200] [--vectors FILE]

The memory is peers.py's (the same synthetic facts and questions, the model's vectors computed
once; --vectors keeps them for a rerun). Each recall's MATCH (its terms and expansions, as recall
builds it) is answered both ways, interleaved, in one read; the script counts the lists that come
out identical, ids and bm25 to the bit. Then what the lists cost: reading them all (the second
time each term is asked), and patching them after a write of one fact and of an import batch.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import prepared  # noqa: E402

from memories.cli import IMPORT_BATCH  # noqa: E402
from memories.store import Memory  # noqa: E402
from synthetic import facts as synthetic_facts  # noqa: E402

FTS5 = "SELECT rowid, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ? ORDER BY s, rowid LIMIT ?"


def p50(times: list[float]) -> str:
    ms = np.array(times) * 1000
    return f"{np.percentile(ms, 50):.2f} | {np.percentile(ms, 95):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--vectors", type=Path, help="the .npz peers.py keeps for the same --facts and --queries")
    args = parser.parse_args()
    facts, queries, embedder = prepared(args.facts, args.queries, args.vectors)
    memory = Memory(Path(tempfile.mkdtemp(prefix="term-lists-")) / "m.db", embedder)
    for _ in memory.import_batches(facts, IMPORT_BATCH):
        pass
    memory.wait_for_vocabulary()
    if args.vectors and not args.vectors.exists():
        np.savez(args.vectors, facts=embedder.embed([f["text"] for f in facts]), queries=embedder.embed(queries))
    matches = [memory.recall(q, debug=True)["match"] for q in queries]  # with its expansions
    state, lists = memory.state, memory.state.term_lists
    lists.clear()
    with state.reading():
        for m in matches:
            lists.top(m, 30, state.seq)  # asked once: nothing read
        started = time.perf_counter()
        for m in matches:
            lists.top(m, 30, state.seq)  # asked again: read
        read = time.perf_counter() - started
        postings = sum(len(i) for i, _ in lists._lists.values())
        fts, ours, same, answered = [], [], 0, 0
        for _ in range(args.rounds):
            for m in matches:
                t = time.perf_counter()
                expected = state.db.execute(FTS5, (m, 30)).fetchall()
                fts.append(time.perf_counter() - t)
                t = time.perf_counter()
                got = lists.top(m, 30, state.seq)
                ours.append(time.perf_counter() - t)
                answered += got is not None
                same += [tuple(r) for r in expected] == got
    print(f"# {memory.count()} facts: {len(lists)} lists, {postings} postings read in {read:.2f} s "
          f"(the second ask of {len(matches)} queries), {lists.nbytes() / 2**20:.1f} MiB held with the lengths\n")
    print("| keyword list, top 30 | p50 ms | p95 ms |\n|---|---|---|")
    print(f"| FTS5 bm25(), ORDER BY | {p50(fts)} |")
    print(f"| term lists (numpy) | {p50(ours)} |")
    print(f"\nanswered by the lists: {answered} / {len(fts)}; identical (ids and bm25 to the bit): {same} / {len(fts)}")

    # Keeping them in step: the first keyword list after a write patches them.
    extra = ({"text": f["text"].replace(".", f" (note {i}).")} for i, f in enumerate(synthetic_facts(2 * IMPORT_BATCH + 50, seed=11)))
    one, batch = [], []
    for _ in range(50):
        memory.add(next(extra)["text"])
        with state.reading():
            t = time.perf_counter()
            lists.top(matches[0], 30, state.seq)
            one.append(time.perf_counter() - t)
    for _ in range(2):
        memory.add_many([next(extra) for _ in range(IMPORT_BATCH)])
        with state.reading():
            t = time.perf_counter()
            lists.top(matches[0], 30, state.seq)
            batch.append(time.perf_counter() - t)
    with state.reading():
        t = time.perf_counter()
        lists.top(matches[0], 30, state.seq)
        steady = time.perf_counter() - t
    print(f"\nthe first keyword list after a write (patching {len(lists)} lists), p50 | p95 ms: one fact {p50(one)}; "
          f"an import batch of {IMPORT_BATCH}: {np.mean(batch) * 1000:.1f} ms; with nothing to patch: {steady * 1000:.2f} ms")
    memory.close()


if __name__ == "__main__":
    main()
