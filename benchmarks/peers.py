"""Memory Desk beside two peers on the same facts and query vectors, compared at equal recall.

    .venv/bin/python benchmarks/peers.py [--facts 100000] [--queries 200] [--vectors FILE]

Every system runs the same hybrid pipeline: a vector top 30, a keyword top 30, fused by RRF
(k 60), the best 15 kept. Each line says how much of the exact vector top 30 its own vector list
holds (recall@30: a fact counts when its exact cosine reaches the 30th's, so a tie at the 30th
is one answer), beside its p50 and p95:

- ours: exact by construction, and checked against every stored vector (ids, order, cosines).
- sqlite-vec + FTS5 in one SQLite file: a vec0 KNN (exact, a scan) and an FTS5 BM25 list.
- LanceDB's flat search (no vector index: exact) and its IVF-PQ index with `nprobes` and
  `refine_factor` tuned on the run's queries until its vector top 30 holds >= 95% of the exact
  (the quickest setting that does: the settings are printed); its own hybrid query and RRF, with
  its full-text index.

The floor line: ours >= 3x quicker at p50 than every peer line that ran, PASS or FAIL with the
ratios. The peers are not project dependencies: `pip install sqlite-vec lancedb` (and
`sqlean.py` when this Python's sqlite3 cannot load extensions) to compare; a line says
"skipped" and why when one is absent. All take the same facts, the same query vectors (embedded
once, beforehand) and the same keyword query text, so the times compare ranking alone, without
the model. Our engine is also timed with the model (every text its recall embeds inside the
timing), and its keyword list and vector search are timed alone, each as recall runs it (the two
run beside each other inside a recall). The peers hold every fact offered; our engine keeps what
its dedup keeps, so each recall@30 is against the exact top 30 of its own facts.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402

from memories.cli import IMPORT_BATCH  # noqa: E402
from memories.model.embeddings import MiniLM  # noqa: E402
from memories.recall.ranking import DEFAULT  # noqa: E402
from memories.store import Memory  # noqa: E402


class Fixed:
    """The model's vectors, computed once: every system ranks the same query vectors."""

    def __init__(self, model: MiniLM, table: dict[str, np.ndarray]):
        self.model_id, self.dims, self.model, self.table = model.model_id, model.dims, model, table

    def embed(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.table]
        if missing:
            for i in range(0, len(missing), 256):
                self.table.update(zip(missing[i : i + 256], self.model.embed(missing[i : i + 256])))
        return np.stack([self.table[t] for t in texts])


DEPTH = 30  # each list's depth: our fusion's, and the peers' vector and keyword lists
SHOWN = 15  # the fused answers kept
FLOOR = 3.0  # ours at least this much quicker at p50 than every peer line
RECALL = 0.95  # LanceDB's index tuned until its vector top 30 holds this much of the exact
TIE = 1e-6  # a fact within this of the 30th exact cosine is as good as the 30th
WARM = 5  # a peer's first questions, asked untimed before its timing
NPROBES = (20, 40, 80, 160, 320)  # LanceDB's probes tried, fewest first (at most every partition)
REFINE = (None, 2, 5, 10, 20, 50)  # its refine factors tried (None: no refine), smallest first


@dataclass
class Line:
    """A row of the table: p50 and p95 in ms, and how much of the exact vector top 30 the
    system's own vector list holds."""

    name: str
    recall: str
    p50: float
    p95: float


def row(line: Line, ours_p50: float | None = None) -> None:
    ratio = f"{line.p50 / ours_p50:.1f}x" if ours_p50 else ""
    print(f"| {line.name} | {line.recall} | {line.p50:.1f} | {line.p95:.1f} | {ratio} |", flush=True)


def skipped(name: str, why: str) -> None:
    print(f"| {name} | skipped: {why} | | | |", flush=True)


def percentiles(samples: list[float]) -> tuple[float, float]:
    ms = np.array(samples) * 1000
    return float(np.percentile(ms, 50)), float(np.percentile(ms, 95))


def timings(fn, args: list[tuple]) -> tuple[float, float]:
    """p50 and p95 ms of `fn` over every `args`, the first WARM asked once untimed before."""
    for a in args[:WARM]:
        fn(*a)
    return percentiles([timed(fn, *a) for a in args])


class Exact:
    """The peers' facts' cosines with each query (float32 vectors summed in float64), to tell how
    much of the exact top 30 a vector list holds."""

    def __init__(self, vectors: np.ndarray, qvecs: np.ndarray):
        q = qvecs.astype(np.float64).T
        self.cosines = np.concatenate([vectors[i : i + 8192].astype(np.float64) @ q for i in range(0, len(vectors), 8192)])
        self.cut = -np.sort(-self.cosines, axis=0)[DEPTH - 1]  # each query's 30th best cosine

    def recall(self, lists: list[list[int]]) -> float:
        """The mean share of each query's exact top 30 its list of fact ids (1-based) holds: a fact
        counts when its exact cosine reaches the 30th's, so a tie at the 30th is one answer."""
        found = [min(int((self.cosines[np.unique(ids) - 1, i] >= self.cut[i] - TIE).sum()), DEPTH) if ids else 0
                 for i, ids in enumerate(lists)]
        return float(np.mean(found)) / DEPTH


def ours(tmp: Path, embedder: Fixed, facts: list[dict], queries: list[str]) -> float:
    """Our rows; returns ranking alone's p50, which the peers' rows are divided by."""
    memory = Memory(tmp / "ours.db", embedder)
    for _ in memory.import_batches(facts, IMPORT_BATCH):  # as `import` writes (add_many of 1,000 a call took 32 min to 100k)
        pass
    memory.wait_for_vocabulary()
    for q in queries:  # every text a recall embeds is now in the table: the timed ones call no model
        memory.recall(q)
    p50, p95 = percentiles([timed(memory.recall, q) for q in queries])
    same = exact_lists(memory, embedder, queries)
    row(Line(f"Memory Desk engine, ranking alone ({memory.count()} facts)",
             f"exact: 100% (ids, order and cosines in {same} of {len(queries)} questions)", p50, p95))
    lists_alone(memory, embedder, queries)
    memory.state.embedder = embedder.model  # the model itself, as the service runs it
    memory.recall(queries[0])
    kept = memory.state.text_vectors  # emptied before each: every text embedded, none kept from before

    def cold(query: str) -> None:
        kept.clear()
        memory.vocab.forget_closest()  # nor the closest words of its terms, nor their lists
        memory.state.term_lists.clear()
        memory.recall(query)

    row(Line("Memory Desk engine, full recall with the model", "exact", *percentiles([timed(cold, q) for q in queries])))
    memory.close()
    return p50


def exact_lists(memory: Memory, embedder: Fixed, queries: list[str]) -> int:
    """In how many questions our vector list is exact search's: the top 30 (ids, order and
    cosines, ties by id) against every stored vector's float32 cosine summed in float64."""
    rows = memory.db.execute("SELECT fact_id, embedding FROM vectors ORDER BY fact_id").fetchall()
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), "<f4").reshape(len(rows), -1).astype(np.float64)
    same = 0
    for query in queries:
        qvec = embedder.embed([query])[0]
        cosines = (matrix @ qvec.astype(np.float64)).astype(np.float32)
        best = np.lexsort((ids, -cosines))[: memory.fusion.depth]
        got = [(h["fact"]["id"], h["cosine"]) for h in memory.recall(query, debug=True, limit=1)["vec"]]
        same += got == [(int(ids[i]), float(cosines[i])) for i in best]
    return same


def lists_alone(memory: Memory, embedder: Fixed, queries: list[str]) -> None:
    """Our two candidate lists, each timed alone as recall asks for it (the same FTS5 query with
    its expansions, the same hidden facts); inside a recall they run beside each other."""
    depth, vectors, state = memory.fusion.depth, memory.state.vectors, memory.state
    matches = [memory.recall(q, debug=True, limit=1)["match"] for q in queries]

    def keyword(match: str) -> None:
        with state.reading():
            memory.reader.keyword(match, None, depth, state.stale())

    def vector(qvec: np.ndarray) -> None:
        with state.reading():
            vectors.top(vectors.scan(qvec, None, None, state.stale()), qvec, depth)

    row(Line("- of which its keyword list alone (term lists, else FTS5)", "", *timings(keyword, [(m,) for m in matches])))
    row(Line("- of which its vector search alone (the codes' scan and the rescoring)", "exact",
             *timings(vector, [(embedder.embed([q])[0],) for q in queries])))


def sqlite_vec(tmp: Path, vectors: np.ndarray, facts: list[dict], queries: list[str], qvecs: np.ndarray,
               exact: Exact, ours_p50: float) -> list[Line]:
    name = "sqlite-vec + FTS5, RRF"
    if importlib.util.find_spec("sqlite_vec") is None:
        skipped(name, "sqlite-vec is not installed (pip install sqlite-vec)")
        return []
    import sqlite3

    import sqlite_vec as sv

    if not hasattr(sqlite3.Connection, "enable_load_extension"):  # a Python built without it (pyenv's default)
        if importlib.util.find_spec("sqlean") is None:
            skipped(name, "this Python's sqlite3 cannot load extensions (pip install sqlean.py)")
            return []
        import sqlean as sqlite3
    db = sqlite3.connect(tmp / "vec.db")
    db.enable_load_extension(True)
    sv.load(db)
    db.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{vectors.shape[1]}] distance_metric=cosine)")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61')")
    db.executemany("INSERT INTO v (rowid, embedding) VALUES (?, ?)", ((i + 1, v.astype("<f4").tobytes()) for i, v in enumerate(vectors)))
    db.executemany("INSERT INTO t (rowid, text) VALUES (?, ?)", ((i + 1, f["text"]) for i, f in enumerate(facts)))
    db.commit()

    def knn(qvec: np.ndarray) -> list[int]:
        sql = f"SELECT rowid FROM v WHERE embedding MATCH ? AND k = {DEPTH} ORDER BY distance"
        return [rid for (rid,) in db.execute(sql, (qvec.astype("<f4").tobytes(),))]

    def hybrid(query: str, qvec: np.ndarray) -> None:
        match = DEFAULT.match(query)  # our default's FTS5 query before expansion (ours also expands: more work)
        kw = db.execute(f"SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT {DEPTH}", (match,)).fetchall() if match else []
        scores: dict[int, float] = {}
        for hits in (knn(qvec), [rid for (rid,) in kw]):
            for rank, rid in enumerate(hits, 1):
                scores[rid] = scores.get(rid, 0) + 1 / (60 + rank)
        sorted(scores, key=scores.get, reverse=True)[:SHOWN]

    found = exact.recall([knn(v) for v in qvecs])
    line = Line(f"{name} (sqlite-vec {sv.__version__}, vec0 KNN: a scan)", f"{100 * found:.1f}%", *timings(hybrid, list(zip(queries, qvecs))))
    row(line, ours_p50)
    return [line]


def lancedb(tmp: Path, vectors: np.ndarray, facts: list[dict], queries: list[str], qvecs: np.ndarray,
            exact: Exact, ours_p50: float) -> list[Line]:
    if importlib.util.find_spec("lancedb") is None:
        skipped("LanceDB hybrid, RRF", "lancedb is not installed (pip install lancedb)")
        return []
    os.environ.setdefault("LANCEDB_LOG", "error")  # else a deprecation warning a query about its score columns
    import lancedb as ldb
    import pyarrow as pa
    from lancedb.index import FTS, IvfPq

    db = ldb.connect(tmp / "lance")
    table = db.create_table("facts", pa.table({
        "id": np.arange(1, len(facts) + 1), "text": [f["text"] for f in facts],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1]),
    }))
    table.create_index("text", config=FTS())

    def ann(qvec: np.ndarray, nprobes: int | None, refine: int | None) -> list[int]:
        """Its vector top 30 alone: with no index (flat, exact), or the index at these settings."""
        search = table.search(qvec).distance_type("cosine").select(["id", "_distance"]).limit(DEPTH)
        search = search.nprobes(nprobes) if nprobes else search
        search = search.refine_factor(refine) if refine else search
        return [r["id"] for r in search.to_list()]

    def hybrid(query: str, qvec: np.ndarray, nprobes: int | None, refine: int | None) -> None:
        """Its own hybrid query: the vector top 30 and its full-text top 30 (each sub-query takes
        the limit), its RRF (k 60), the best 15 of the fused."""
        search = table.search(query_type="hybrid").vector(qvec).text(query).distance_type("cosine")
        search = search.nprobes(nprobes) if nprobes else search
        search = search.refine_factor(refine) if refine else search
        search.select(["id", "text"]).limit(DEPTH).to_list()[:SHOWN]

    def line(name: str, nprobes: int | None, refine: int | None, found: float) -> Line:
        done = Line(name, f"{100 * found:.1f}%", *timings(hybrid, [(q, v, nprobes, refine) for q, v in zip(queries, qvecs)]))
        row(done, ours_p50)
        return done

    version = f"LanceDB {ldb.__version__}"
    lines = [line(f"{version} hybrid, RRF, flat vector search (no index: exact)", None, None,
                  exact.recall([ann(v, None, None) for v in qvecs]))]
    if len(facts) < 10_000:
        skipped(f"{version} hybrid, RRF, IVF-PQ index", "under 10,000 facts no vector index is built (the flat line is its search)")
        return lines
    partitions = round(len(facts) ** 0.5)  # LanceDB's own default, named so the probes can reach every one
    table.create_index("vector", config=IvfPq(distance_type="cosine", num_partitions=partitions))
    nprobes, refine, found, tried = tuned(ann, qvecs, exact, partitions)
    print(f"({version}'s IVF-PQ index: {partitions} partitions, {vectors.shape[1] // 16} sub-vectors; tried, as "
          f"(nprobes, refine_factor): recall@30: {'; '.join(f'({n}, {r}): {100 * f:.1f}%' for n, r, f in tried)})", flush=True)
    reached = "" if found >= RECALL else f", short of {100 * RECALL:.0f}%"
    lines.append(line(f"{version} hybrid, RRF, IVF-PQ at nprobes {nprobes}, refine_factor {refine}{reached}", nprobes, refine, found))
    return lines


def tuned(ann, qvecs: np.ndarray, exact: Exact, partitions: int) -> tuple[int, int | None, float, list]:
    """The quickest (nprobes, refine_factor, its recall@30, every setting tried) whose vector top 30
    holds >= 95% of the exact on these queries: for each refine factor the fewest probes that reach
    it (every partition at most); one that reaches it at the fewest probes ends the search, as a
    larger refine only costs more. When none reaches it, the setting that came closest."""
    ladder = [n for n in NPROBES if n < partitions] + [partitions]
    tried, reached = [], []
    for refine in REFINE:
        for nprobes in ladder:
            found = exact.recall([ann(v, nprobes, refine) for v in qvecs])
            tried.append((nprobes, refine, found))
            if found >= RECALL:
                reached.append((nprobes, refine, found))
                break
        if reached and reached[-1][:2] == (ladder[0], refine):
            break
    if not reached:
        return *max(tried, key=lambda t: t[2]), tried
    quickest = min(reached, key=lambda t: timings(ann, [(v, t[0], t[1]) for v in qvecs])[0])
    return *quickest, tried


def floor(ours_p50: float, lines: list[Line], facts: int) -> None:
    if not lines:
        print("\nfloor: not judged: no peer ran")
        return
    ratios = [(line.name, line.p50 / ours_p50) for line in lines]
    verdict = "PASS" if all(r >= FLOOR for _, r in ratios) else "FAIL"
    print(f"\nfloor, ours >= {FLOOR:g}x quicker at p50 than every peer, exact ours, {facts} facts offered: {verdict} "
          f"({'; '.join(f'{r:.1f}x against {name}' for name, r in ratios)})")


def timed(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def prepared(facts: int, queries: int, vectors: Path | None) -> tuple[list[dict], list[str], Fixed]:
    """The synthetic facts and questions, and the model's vectors for them: read from `vectors`
    (an .npz a run with the same counts kept) when it exists, else embedded as they are asked for."""
    facts, questions = synthetic.facts(facts), synthetic.questions(queries)
    embedder = Fixed(MiniLM(), {})
    if vectors and vectors.exists():
        kept = np.load(vectors)
        embedder.table.update(zip([f["text"] for f in facts], kept["facts"]))
        embedder.table.update(zip(questions, kept["queries"]))
    return facts, questions, embedder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--vectors", type=Path, help="keep the facts' and queries' vectors in this .npz for a rerun with the same --facts and --queries")
    args = parser.parse_args()
    facts, queries, embedder = prepared(args.facts, args.queries, args.vectors)
    vectors = embedder.embed([f["text"] for f in facts])
    qvecs = embedder.embed(queries)
    if args.vectors and not args.vectors.exists():
        np.savez(args.vectors, facts=vectors, queries=qvecs)
    tmp = Path(tempfile.mkdtemp(prefix="peers-"))
    print(f"# peers: {len(facts)} synthetic facts, {len(queries)} queries, query vectors computed beforehand; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores\n")
    print(f"| system | its vector top {DEPTH} against the exact (recall@{DEPTH}) | p50 ms | p95 ms | p50 against ours |\n|---|---|---|---|---|")
    ours_p50 = ours(tmp, embedder, facts, queries)
    exact = Exact(vectors, qvecs)
    peers = sqlite_vec(tmp, vectors, facts, queries, qvecs, exact, ours_p50)
    peers += lancedb(tmp, vectors, facts, queries, qvecs, exact, ours_p50)
    floor(ours_p50, peers, len(facts))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

if __name__ == "__main__":
    main()
