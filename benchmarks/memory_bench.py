"""Memory service benchmark: recall, writes, /duplicates, import rate and memory at 1k-100k facts.

    .venv/bin/python benchmarks/memory_bench.py [--sizes 1000,10000,100000] [--queries 200] [--million]

Builds one memory up through the sizes with the real model, and at each size measures:
recall p50/p95 engine-only and through HTTP (both embed the query; what HTTP adds is read off each
request's Server-Timing: its round trip less the engine's time in it), the floor (a bare FTS5
top 30 + the index's vector top 30 + one query embedding), write p50, /duplicates, import rate (while
growing to the size, and of 1,024 more facts at the size, beside the model alone embedding
those 1,024 texts) and peak RSS (this process and the service's), /duplicates at 0.97 and 0.85 (the pairs kept
on write) and 0.80, the nearest-neighbour histogram, and start time (open + first recall).

--million then grows the memory to 1,000,000 facts for start time and recall only: synthetic
text, and vectors beyond the real ones are the real embeddings tiled with small noise (written
straight to the tables, not embedded; the pairs kept on write are not extended for them).
"""

from __future__ import annotations

import argparse
import platform
import re
import resource
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import memories  # noqa: E402, F401  (first: it sets OpenBLAS's idle-thread timeout before numpy loads)

import numpy as np  # noqa: E402
import synthetic  # noqa: E402

from memories.cli import IMPORT_BATCH  # noqa: E402
from memories.model.embeddings import MiniLM  # noqa: E402
from memories.store import Memory  # noqa: E402
from tests.memory_service import Service  # noqa: E402


def pct(samples: list[float], p: float) -> float:
    return float(np.percentile(samples, p)) * 1000


def timed(fn, *args, **kwargs) -> float:
    t = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - t


def server_timing(response) -> tuple[float, float]:
    """The service's Server-Timing (seconds): its engine's time and its app's, in that request."""
    found = dict(re.findall(r"(\w+);dur=([\d.]+)", response.headers["server-timing"]))
    return float(found["engine"]) / 1000, float(found["app"]) / 1000


def rss_mb(pid: int | None = None) -> float:
    if pid is None:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def floor_query(memory: Memory, embedder: MiniLM, query: str, match: str, rerank: list[str] = ()) -> None:
    """The least any hybrid recall must do: embed the query (and, in the same call, the terms it
    expands that the memory's words do not already hold), a bare FTS5 top 30 of the same MATCH recall
    runs (`match`, expansions included), a bare vector top 30, and for a recall that reranks, the
    rerank's own model call (`rerank`: the texts it embeds)."""
    asked = memory.fusion.expandable_terms(query)
    held = memory.vocab.vectors(asked)
    lacking = [t for t in asked if t not in held]
    q = embedder.embed([query, *lacking])[0]
    if rerank:
        embedder.embed(list(rerank))
    if match:
        memory.db.execute("SELECT rowid FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rank LIMIT 30", (match,)).fetchall()
    with memory.state.reading():  # the index's own top 30: a scan of the codes, the best rescored
        memory.vectors.search(q, None, 30)


def plans(memory: Memory, queries: list[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Each query's MATCH and the texts its rerank embeds (none when it does not rerank)."""
    debug = {q: memory.recall(q, debug=True) for q in queries}
    rerank = {q: [d["rerank"]["query"], *(f["text"] for f in d["rerank"]["facts"])] if d["rerank"] else [] for q, d in debug.items()}
    return {q: d["match"] for q, d in debug.items()}, rerank


def start_time(db: Path, embedder: MiniLM, query: str) -> float:
    """Open the memory and answer one recall (the model is already loaded). The open before it
    writes the snapshot if the memory has none yet; this one is the start a restart sees."""
    Memory(db, embedder).close()
    t = time.perf_counter()
    memory = Memory(db, embedder)
    memory.recall(query)
    took = time.perf_counter() - t
    memory.close()
    return took


def million(db: Path, embedder: MiniLM, queries: list[str], total: int = 1_000_000) -> dict:
    """Grow to `total` facts with tiled vectors, then time start and recall."""
    import sqlite3

    conn = sqlite3.connect(db)
    have = conn.execute("SELECT count(*) FROM facts").fetchone()[0]
    real = conn.execute("SELECT v.embedding, f.type FROM vectors v JOIN facts f ON f.id = v.fact_id").fetchall()
    base = np.frombuffer(b"".join(r[0] for r in real), "<f4").reshape(len(real), -1)
    texts = synthetic.facts(total + 200_000, seed=23)
    rng = np.random.default_rng(5)
    print(f"# 1M: {total - have} facts beyond the {have} real ones: synthetic text, real vectors tiled with "
          "noise (sigma 0.02, renormalised), written straight to the tables", flush=True)
    t = time.perf_counter()
    conn.execute("BEGIN")
    now = "2026-11-30T00:00:00.000000Z"
    for start in range(0, total - have, 10_000):
        chunk = texts[start : start + min(10_000, total - have - start)]
        pick = rng.integers(0, len(base), len(chunk))
        vecs = base[pick] + rng.normal(0, 0.02, (len(chunk), base.shape[1])).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        cur = conn.execute("SELECT coalesce(max(id), 0) FROM facts").fetchone()[0]
        ids = range(cur + 1, cur + 1 + len(chunk))
        types = [real[i][1] for i in pick]
        conn.executemany("INSERT INTO facts (id, text, text_key, type, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [(i, f["text"], f["text"].lower(), ty, "bench", now, now) for i, f, ty in zip(ids, chunk, types)])
        conn.executemany("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", [(i, f["text"]) for i, f in zip(ids, chunk)])
        conn.executemany("INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
                         [(i, embedder.model_id, base.shape[1], v.astype("<f4").tobytes()) for i, v in zip(ids, vecs)])
    conn.execute("COMMIT")
    conn.close()
    print(f"# 1M: written in {time.perf_counter() - t:.0f} s", flush=True)
    t = time.perf_counter()
    Memory(db, embedder).close()  # the first open reads the table and writes the snapshot
    first_open = time.perf_counter() - t
    start = start_time(db, embedder, queries[0])
    memory = Memory(db, embedder)
    for q in queries[:10]:
        memory.recall(q)
    matches, reranks = plans(memory, queries)
    engine, floor = [], []
    for q in queries:
        engine.append(timed(memory.recall, q))
        floor.append(timed(floor_query, memory, embedder, q, matches[q], reranks[q]))
    row = {
        "facts": memory.count(),
        "engine recall p50 ms": pct(engine, 50), "engine recall p95 ms": pct(engine, 95),
        "floor p50 ms": pct(floor, 50),
        "engine/floor p50": statistics.median(engine) / statistics.median(floor),
        "start s": start, "first open (table) s": first_open,
        "bench RSS MB": rss_mb(),
    }
    memory.close()
    print(" | ".join(f"{k}: {v:.2f}" if isinstance(v, float) else f"{k}: {v}" for k, v in row.items()), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--million", action="store_true", help="then 1M facts: start time and recall")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]

    print(f"# memory benchmark, {date.today()}, {platform.machine()} {platform.processor() or ''}, "
          f"{__import__('os').cpu_count()} cores, Python {platform.python_version()}")
    embedder = MiniLM()
    # Some synthetic facts are near-duplicates of others (dates a day apart): feed until the
    # memory holds each size.
    corpus = synthetic.facts(int(max(sizes) * 1.4) + 1600)
    extra = corpus[-100:]
    more = corpus[-1124:-100]  # 1,024 facts imported at each size, then deleted again
    queries = synthetic.questions(args.queries)
    tmp = Path(tempfile.mkdtemp(prefix="memory-bench-"))
    memory = Memory(tmp / "bench.db", embedder)
    rows = []
    loaded = 0
    for size in sizes:
        t = time.perf_counter()
        offered = 0
        while memory.count() < size and loaded < len(corpus) - 1124:
            step = min(1024, max(64, size - memory.count()))
            batch = corpus[loaded : min(loaded + step, len(corpus) - 1124)]
            for _ in memory.import_batches(batch, IMPORT_BATCH):
                pass
            loaded += len(batch)
            offered += len(batch)
        import_rate = offered / (time.perf_counter() - t)
        stored = memory.count()

        for q in queries[:10]:  # warm caches
            memory.recall(q)
        matches, reranks = plans(memory, queries)
        kept = memory.state.text_vectors  # emptied before each cold recall: none of its texts kept

        def cold(*args, **kwargs) -> float:
            kept.clear()
            memory.vocab.forget_closest()  # nor the closest words of its terms
            memory.state.term_lists.clear()  # nor its terms' lists: FTS5 scores the keyword list
            return timed(memory.recall, *args, **kwargs)

        # Interleaved, so a change in the machine's load touches both alike.
        engine, floor, unranked, logged, embed_only = [], [], [], [], []
        for q in queries:
            engine.append(cold(q))
            floor.append(timed(floor_query, memory, embedder, q, matches[q], reranks[q]))
            unranked.append(cold(q, fusion=replace(memory.fusion, rerank=0)))
            logged.append(cold(q, log=True, client="bench"))  # as the service does by default
            embed_only.append(timed(embedder.embed, [q]))
        # Kept between recalls, as a memory runs: each question once (what repeats is the rerank's
        # texts and terms across questions), then each asked again.
        kept.clear()
        kept.hits = kept.misses = 0
        memory.vocab.forget_closest()
        memory.state.term_lists.clear()
        as_asked = [timed(memory.recall, q) for q in queries]
        repeat_rate = kept.hits / max(kept.hits + kept.misses, 1)
        again = [timed(memory.recall, q) for q in queries]
        kept_bytes = kept.nbytes()
        writes = [timed(memory.add, f["text"], f["type"], f["source"]) for f in extra[:100]]
        for f in extra[:100]:  # keep the size steady for the next step
            found = memory.list(q=f["text"], limit=1)[0]
            if found:
                memory.delete(found[0].id)
        # Import at this size: 1,024 more facts as `import` writes them (IMPORT_BATCH a batch,
        # the next batch embedded while one is written).
        t = time.perf_counter()
        added = [r.fact.id for batch in memory.import_batches(more, IMPORT_BATCH) for r in batch if r.created]
        import_at = len(more) / (time.perf_counter() - t)
        # The model alone on the same texts, in the same minute: this machine's speed drifts by a
        # quarter from hour to hour, and import can go no faster than the model.
        t = time.perf_counter()
        embedder.embed([f["text"] for f in more])
        model_rate = len(more) / (time.perf_counter() - t)
        for fid in added:
            memory.delete(fid)
        dup_time = timed(memory.duplicates, 0.97)
        dup85 = timed(memory.duplicates, 0.85)
        dup80 = timed(memory.duplicates, 0.80)
        near_time = timed(memory.nearest)
        engine_rss = rss_mb()

        memory.close()
        start = start_time(tmp / "bench.db", embedder, queries[0])
        # Nothing kept between recalls: each query below is asked twice (logged and not), and the
        # comparison with the engine's is of cold recalls.
        service = Service(tmp / "bench.db", env={"MEMORY_TEXT_VECTORS_BYTES": "0"}).start(timeout=600)
        with service.client() as api:
            for q in queries[:10]:
                api.post("/recall", json={"query": q})
            http, quiet = [], []  # logged (the default) and not, interleaved
            added, transport = [], []  # what HTTP adds to the engine's time, read off the same requests
            for q in queries:
                t = time.perf_counter()
                r = api.post("/recall", json={"query": q})
                http.append(time.perf_counter() - t)
                engine_s, app_s = server_timing(r)
                added.append(http[-1] - engine_s)
                transport.append(http[-1] - app_s)
                quiet.append(timed(api.post, "/recall", json={"query": q, "log": False}))
            t = time.perf_counter()
            api.get("/duplicates", params={"threshold": 0.97})
            http_dup = time.perf_counter() - t
        service_rss = rss_mb(service.process.pid)
        service.stop()
        memory = Memory(tmp / "bench.db", embedder)

        row = {
            "facts": stored,
            "import facts/s (offered)": import_rate,
            "import at size facts/s": import_at,
            "model alone facts/s": model_rate,
            "engine recall p50 ms": pct(engine, 50), "engine recall p95 ms": pct(engine, 95),
            "floor p50 ms": pct(floor, 50),
            "engine/floor p50": statistics.median(engine) / statistics.median(floor),
            "query embedding p50 ms": pct(embed_only, 50),
            "engine/embedding p50 (floor 2)": statistics.median(engine) / statistics.median(embed_only),
            "texts kept: recall p50 ms": pct(as_asked, 50), "texts kept: repeat rate": repeat_rate,
            "texts kept: asked again p50 ms": pct(again, 50),
            "kept/embedding p50": statistics.median(as_asked) / statistics.median(embed_only),
            "texts kept KiB": kept_bytes / 1024,
            "engine recall without rerank p50 ms": pct(unranked, 50),
            "engine recall logged p50 ms": pct(logged, 50),
            "http recall p50 ms": pct(http, 50), "http recall p95 ms": pct(http, 95),
            "http - engine p50 ms (floor 1)": pct(added, 50),
            "of it transport p50 ms": pct(transport, 50),
            "http p50 - engine p50 ms (apart)": pct(http, 50) - pct(logged, 50),
            "http recall not logged p50 ms": pct(quiet, 50),
            "write p50 ms": pct(writes, 50),
            "duplicates s": dup_time, "http duplicates s": http_dup,
            "duplicates 0.85 s": dup85, "duplicates 0.80 s": dup80, "nearest s": near_time,
            "start s": start,
            "bench RSS MB": engine_rss, "service RSS MB": service_rss,
        }
        rows.append(row)
        print(" | ".join(f"{k}: {v:.2f}" if isinstance(v, float) else f"{k}: {v}" for k, v in row.items()), flush=True)

    if args.million:
        memory.close()
        rows.append(million(tmp / "bench.db", embedder, queries))
    keys = list(rows[0])
    print("\n| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(f"{row.get(k, float('nan')):.2f}" if isinstance(row.get(k, 0.0), float) else str(row[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
