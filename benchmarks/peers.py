"""Memory Desk beside two peers on the same facts and query vectors: hybrid recall latency.

    .venv/bin/python benchmarks/peers.py [--facts 100000] [--queries 200] [--vectors FILE]

Peers (not project dependencies; `pip install sqlite-vec lancedb sqlean.py` to compare, sqlean
when this Python's sqlite3 cannot load extensions): sqlite-vec + FTS5 in one
SQLite file (a vec0 KNN top 30 and an FTS5 BM25 top 30, fused by RRF), and LanceDB's hybrid
search (its vector index + its full-text index, RRF). Each prints "skipped: X not installed"
when absent. All take the same facts, the same query vectors (embedded once, beforehand) and
the same FTS query text, so the times compare ranking alone, without the model. Our engine
is timed twice in the same run: ranking alone (every text its recall embeds, the query, its
expansion terms and the rerank's texts, embedded beforehand, as the peers' query vectors are)
and full recall with the model (those model calls inside the timing).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
import time
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


def report(name: str, samples: list[float]) -> None:
    ms = np.array(samples) * 1000
    print(f"| {name} | {np.percentile(ms, 50):.1f} | {np.percentile(ms, 95):.1f} |", flush=True)


def ours(tmp: Path, embedder: Fixed, facts: list[dict], queries: list[str]) -> None:
    memory = Memory(tmp / "ours.db", embedder)
    for _ in memory.import_batches(facts, IMPORT_BATCH):  # as `import` writes (add_many of 1,000 a call took 32 min to 100k)
        pass
    memory.wait_for_vocabulary()
    for q in queries:  # every text a recall embeds is now in the table: the timed ones call no model
        memory.recall(q)
    report(f"Memory Desk engine, ranking alone ({memory.count()} facts)", [timed(memory.recall, q) for q in queries])
    exact_lists(memory, embedder, queries)
    memory.state.embedder = embedder.model  # the model itself, as the service runs it
    memory.recall(queries[0])
    kept = memory.state.text_vectors  # emptied before each: every text embedded, none kept from before

    def cold(query: str) -> None:
        kept.clear()
        memory.vocab.forget_closest()  # nor the closest words of its terms, nor their lists
        memory.state.term_lists.clear()
        memory.recall(query)

    report("Memory Desk engine, full recall with the model", [timed(cold, q) for q in queries])
    memory.close()


def exact_lists(memory: Memory, embedder: Fixed, queries: list[str]) -> None:
    """That our vector list is exact search's: for each question, the top 30 (ids, order and
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
    print(f"| (ours: the vector top {memory.fusion.depth} is exact search's, ids, order and cosines, in {same} of {len(queries)} questions) | | |")


def sqlite_vec(tmp: Path, vectors: np.ndarray, facts: list[dict], queries: list[str], qvecs: np.ndarray) -> None:
    if importlib.util.find_spec("sqlite_vec") is None:
        print("| sqlite-vec + FTS5 | skipped: sqlite-vec not installed | |")
        return
    import sqlite3

    import sqlite_vec as sv

    if not hasattr(sqlite3.Connection, "enable_load_extension"):  # a Python built without it (pyenv's default)
        if importlib.util.find_spec("sqlean") is None:
            print("| sqlite-vec + FTS5 | skipped: this Python's sqlite3 cannot load extensions (pip install sqlean.py) | |")
            return
        import sqlean as sqlite3
    db = sqlite3.connect(tmp / "vec.db")
    db.enable_load_extension(True)
    sv.load(db)
    db.execute(f"CREATE VIRTUAL TABLE v USING vec0(embedding float[{vectors.shape[1]}] distance_metric=cosine)")
    db.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61')")
    db.executemany("INSERT INTO v (rowid, embedding) VALUES (?, ?)", ((i + 1, v.astype("<f4").tobytes()) for i, v in enumerate(vectors)))
    db.executemany("INSERT INTO t (rowid, text) VALUES (?, ?)", ((i + 1, f["text"]) for i, f in enumerate(facts)))
    db.commit()

    def hybrid(query: str, qvec: np.ndarray) -> None:
        vec = db.execute("SELECT rowid FROM v WHERE embedding MATCH ? AND k = 30 ORDER BY distance", (qvec.astype("<f4").tobytes(),)).fetchall()
        match = DEFAULT.match(query)  # our default's FTS5 query before expansion (ours also expands: more work)
        kw = db.execute("SELECT rowid FROM t WHERE t MATCH ? ORDER BY rank LIMIT 30", (match,)).fetchall() if match else []
        scores: dict[int, float] = {}
        for hits in (vec, kw):
            for rank, (rid,) in enumerate(hits, 1):
                scores[rid] = scores.get(rid, 0) + 1 / (60 + rank)
        sorted(scores, key=scores.get, reverse=True)[:15]

    report("sqlite-vec + FTS5, RRF", [timed(hybrid, q, v) for q, v in zip(queries, qvecs)])


def lancedb(tmp: Path, vectors: np.ndarray, facts: list[dict], queries: list[str], qvecs: np.ndarray) -> None:
    if importlib.util.find_spec("lancedb") is None:
        print("| LanceDB hybrid | skipped: lancedb not installed | |")
        return
    import lancedb as ldb
    import pyarrow as pa

    db = ldb.connect(tmp / "lance")
    table = db.create_table("facts", pa.table({
        "id": np.arange(1, len(facts) + 1), "text": [f["text"] for f in facts],
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), vectors.shape[1]),
    }))
    table.create_fts_index("text")
    if len(facts) >= 10_000:
        table.create_index(metric="cosine", vector_column_name="vector")

    def hybrid(query: str, qvec: np.ndarray) -> None:
        table.search(query_type="hybrid").vector(qvec).text(query).limit(15).to_list()

    report("LanceDB hybrid (RRF)", [timed(hybrid, q, v) for q, v in zip(queries, qvecs)])
    if len(facts) >= 10_000:
        # Its vector index is approximate (IVF-PQ): how much of the exact top 30 its vector search finds.
        found = []
        for qvec in qvecs:
            exact = set((np.argsort(-(vectors @ qvec))[:30] + 1).tolist())
            ann = {r["id"] for r in table.search(qvec).metric("cosine").limit(30).to_list()}
            found.append(len(exact & ann) / 30)
        print(f"| (LanceDB's vector top 30 holds {100 * np.mean(found):.0f}% of the exact top 30) | | |")


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
    print(f"# peers: {len(facts)} synthetic facts, {len(queries)} queries, query vectors computed beforehand\n")
    print("| system | recall p50 ms | p95 ms |\n|---|---|---|")
    ours(tmp, embedder, facts, queries)
    sqlite_vec(tmp, vectors, facts, queries, qvecs)
    lancedb(tmp, vectors, facts, queries, qvecs)


if __name__ == "__main__":
    main()
