"""What a keyword list from postings of our own would cost, against FTS5's bm25() on the same
memory: the evidence for (or against) replacing FTS5's scoring of every match (issue 31 §3).

    .venv/bin/python benchmarks/keyword_postings.py [--facts 100000] [--queries 200] [--vectors FILE]

The memory is peers.py's (the same synthetic facts and questions, the model's vectors computed
once; --vectors keeps them for a rerun). The postings (each index term's fact ids and counts,
each fact's length in tokens) are read from FTS5's own tables, and a recall's MATCH (its terms
and expansions, as recall builds it) is scored over them with numpy in FTS5's arithmetic, term by
term in order, so the lists come out identical to the bit: the script counts the lists that are.
Not used by the engine: this measures what a change would gain before it is made.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import prepared  # noqa: E402

from memories.cli import IMPORT_BATCH  # noqa: E402
from memories.reading import match_terms  # noqa: E402
from memories.store import Memory  # noqa: E402

K1, B = 1.2, 0.75  # FTS5's bm25() constants


def varints(data: bytes) -> list[int]:
    """Every SQLite varint in `data`, in order (FTS5's averages record and its docsize rows)."""
    out, value = [], 0
    for byte in data:
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            out.append(value)
            value = 0
    return out


class Postings:
    """Each index term's fact ids (int32, ascending) and counts (uint16), and each fact's length
    in tokens, read from FTS5's tables in the caller's read."""

    def __init__(self, db):
        averages = varints(db.execute("SELECT block FROM facts_fts_data WHERE id = 1").fetchone()[0])
        self.rows, self.tokens = averages[0], averages[1]  # what bm25() takes N and avgdl from
        top = db.execute("SELECT max(id) FROM facts_fts_docsize").fetchone()[0] or 0
        self.length = np.zeros(top + 1, np.float32)
        for fid, size in db.execute("SELECT id, sz FROM facts_fts_docsize"):
            self.length[fid] = varints(size)[0]
        counts: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        for term, doc in db.execute("SELECT term, doc FROM temp.fts_terms"):
            counts[term][doc] += 1
        self.terms = {}
        for term, docs in counts.items():
            ids = np.fromiter(docs, np.int64, len(docs))
            order = np.argsort(ids)
            self.terms[term] = (ids[order].astype(np.int32), np.fromiter(docs.values(), np.uint16, len(docs))[order])
        self.scores = np.zeros(top + 1, np.float64)  # scratch, zero between calls

    def nbytes(self) -> int:
        return self.length.nbytes + self.scores.nbytes + sum(i.nbytes + c.nbytes for i, c in self.terms.values())

    def count(self) -> int:
        return sum(len(i) for i, _ in self.terms.values())

    def top(self, stems: list[str], depth: int) -> list[tuple[int, float]]:
        """The best `depth` as (id, bm25), as `ORDER BY bm25(facts_fts), rowid` gives them: each
        phrase (a stem) adds idf * (tf (k1 + 1)) / (tf + k1 (1 - b + b D / avgdl)), in order,
        exactly the doubles fts5Bm25Function adds."""
        avgdl = float(self.tokens) / float(self.rows)
        touched = []
        for stem in stems:
            if stem not in self.terms:
                continue
            ids, tf = self.terms[stem]
            idf = math.log((self.rows - len(ids) + 0.5) / (len(ids) + 0.5))
            idf = idf if idf > 0 else 1e-6
            f = tf.astype(np.float64)
            d = self.length[ids].astype(np.float64)
            self.scores[ids] += idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / avgdl)))
            touched.append(ids)
        if not touched:
            return []
        ids = np.unique(np.concatenate(touched))
        scores = self.scores[ids]
        self.scores[ids] = 0
        if len(ids) > depth:  # every fact scoring at least the depth-th, ties included
            keep = np.flatnonzero(scores >= np.partition(scores, len(scores) - depth)[len(scores) - depth])
            ids, scores = ids[keep], scores[keep]
        order = np.lexsort((ids, -scores))[:depth]
        return [(int(i), float(-s)) for i, s in zip(ids[order], scores[order])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--vectors", type=Path, help="the .npz peers.py keeps for the same --facts and --queries")
    args = parser.parse_args()
    facts, queries, embedder = prepared(args.facts, args.queries, args.vectors)
    memory = Memory(Path(tempfile.mkdtemp(prefix="postings-")) / "m.db", embedder)
    for _ in memory.import_batches(facts, IMPORT_BATCH):
        pass
    memory.wait_for_vocabulary()
    if args.vectors and not args.vectors.exists():
        np.savez(args.vectors, facts=embedder.embed([f["text"] for f in facts]), queries=embedder.embed(queries))
    matches = [memory.recall(q, debug=True)["match"] for q in queries]  # with its expansions
    reader = memory.reader
    stems = {t: reader.tokens(t) for m in matches for t in match_terms(m)}  # a term's stem never changes
    assert all(len(s) == 1 for s in stems.values()), "a quoted term that is not one token"
    with memory.state.reading():
        started = time.perf_counter()
        postings = Postings(memory.state.db)
        built = time.perf_counter() - started
        fts, ours, same = [], [], 0
        for _ in range(args.rounds):
            for m in matches:
                t = time.perf_counter()
                expected = reader.keyword(m, None, 30)
                fts.append(time.perf_counter() - t)
                t = time.perf_counter()
                got = postings.top([stems[w][0] for w in match_terms(m)], 30)
                ours.append(time.perf_counter() - t)
                same += [tuple(r) for r in expected] == got
    print(f"# {memory.count()} facts, {len(postings.terms)} terms, {postings.count()} postings: read from FTS5 in "
          f"{built:.1f} s, {postings.nbytes() / 2**20:.1f} MiB held\n")
    print("| keyword list, top 30 | p50 ms | p95 ms |\n|---|---|---|")
    for name, times in (("FTS5 bm25(), ORDER BY", fts), ("our own postings (numpy)", ours)):
        ms = np.array(times) * 1000
        print(f"| {name} | {np.percentile(ms, 50):.2f} | {np.percentile(ms, 95):.2f} |")
    print(f"\nidentical lists (ids and bm25 to the bit): {same} / {len(fts)}")
    memory.close()


if __name__ == "__main__":
    main()
