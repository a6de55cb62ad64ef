"""How many facts the memory on Cloudflare holds, and whether its compact codes rank exactly.

    .venv/bin/python benchmarks/worker_capacity.py [--facts 100000] [--queries 1000] [--dims 384,768] [--random]

The Worker's own index (worker/src/storage/vectors.ts, bundled by esbuild and run by worker/'s node 22)
holds `--facts` vectors with as many words (one new word a fact: varied text; the vocabulary
holds only their codes, the words themselves stay in SQLite) and answers `--queries` queries for their 30 nearest. For each query the script takes the
rows the index rescored (the ids it read from its "table") and checks that the exact top 30,
computed here with numpy over the float32 vectors, is inside them, and that the index answered
exactly that top 30. It prints, per width: that share, how many rows a search rescored (the best
30 + RESCORE on the codes, and every other row its bound let reach the 30th exact cosine: what
exactness costs), the bytes a fact takes by the index's own accounting (`bytes()`, with its
words), the capacity in MEMORY_BUDGET_BYTES (default 100 MiB) and in the 128 MB isolate, and the
time of a search (the vector side of a recall, with the table a Map here: SQLite in the object).

At 384 dims the facts and queries are benchmarks/synthetic.py's, embedded by MiniLM (the model
the suite runs; cached in --cache); other widths, or --random, use random unit vectors with
queries near a fact (capacity and the codes' error do not depend on the text). The words are
random unit vectors in both: only their bytes are counted.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
WORKER = ROOT / "worker"
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import synthetic  # noqa: E402

K = 30
BUDGET = 100 * 2**20
ISOLATE = 128 * 10**6

DRIVER = r"""
import { readFileSync } from "node:fs";
import { VectorIndex, FACT_BITS, RESCORE } from "%(src)s/vectors.ts";
import { WORD_BITS, WORD_RESCORE } from "%(src)s/vocabulary.ts";

const [dir, n, q, dims, k] = process.argv.slice(2).map((a, i) => (i ? Number(a) : a));
const floats = (name) => { const b = readFileSync(`${dir}/${name}`); return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4); };
const facts = floats("facts.f32"), queries = floats("queries.f32"), words = floats("words.f32");
const row = (m, i) => m.subarray(i * dims, (i + 1) * dims);
let read = [];
const reader = (ids) => { read.push(...ids); return new Map(ids.map((id) => [id, row(facts, id - 1)])); };
const index = new VectorIndex(dims, reader, FACT_BITS);
let t = performance.now();
for (let i = 0; i < n; i++) index.put(i + 1, "fact", row(facts, i));
const loadMs = performance.now() - t;
const vocab = new VectorIndex(dims, () => new Map(), WORD_BITS, undefined, WORD_RESCORE);
vocab.appendOnly = true;  // as vocabulary.ts holds it: no map, no strings
for (let i = 0; i < n; i++) vocab.put(i + 1, "fact", row(words, i));
const out = { n, dims, fact_bits: FACT_BITS, rescore: RESCORE, word_bits: WORD_BITS, word_rescore: WORD_RESCORE,
  fact_bytes: index.bytes(), fact_arrays: index.arrayBytes(), word_bytes: vocab.bytes(), load_ms: loadMs,
  candidates: [], answers: [], ms: [] };
for (let j = 0; j < q; j++) {
  read = [];
  t = performance.now();
  const hits = index.search(row(queries, j), null, k);
  out.ms.push(performance.now() - t);
  out.candidates.push([...read]);
  out.answers.push(hits.map(([id]) => id));
}
process.stdout.write(JSON.stringify(out));
"""


def embedded(n: int, queries: int, cache: Path) -> tuple[np.ndarray, np.ndarray]:
    """Synthetic facts and questions, embedded by MiniLM (cached)."""
    path = cache / f"minilm-{n}-{queries}.npz"
    if path.exists():
        data = np.load(path)
        return data["facts"], data["queries"]
    from memories.model.embeddings import MiniLM

    model = MiniLM()
    texts = [f["text"] for f in synthetic.facts(n)]
    started = time.perf_counter()
    facts = np.concatenate([model.embed(texts[i:i + 512]) for i in range(0, n, 512)]).astype(np.float32)
    print(f"embedded {n} facts in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    qs = model.embed(synthetic.questions(queries)).astype(np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, facts=facts, queries=qs)
    return facts, qs


def unit(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def random_memory(n: int, queries: int, dims: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random unit facts; each query a fact moved a little (about cosine 0.8), so it has true neighbours."""
    facts = unit(rng.standard_normal((n, dims), dtype=np.float32))
    near = facts[rng.integers(0, n, queries)]
    return facts, unit(near + 0.75 * unit(rng.standard_normal((queries, dims), dtype=np.float32)))


def exact_top(facts: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Ids (1-based) of each query's exact top k, ties by id: float32 products summed in float64, as the Worker sums them."""
    out = []
    wide = facts.astype(np.float64)
    for i in range(0, len(queries), 100):
        s = queries[i:i + 100].astype(np.float64) @ wide.T
        part = np.argpartition(-s, k, axis=1)[:, :k + 1]
        for row, cand in zip(s, part):
            order = sorted(cand, key=lambda c: (-row[c], c))[:k]
            out.append([c + 1 for c in order])
    return np.array(out)


def run(facts: np.ndarray, queries: np.ndarray, words: np.ndarray) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        for name, m in (("facts", facts), ("queries", queries), ("words", words)):
            np.ascontiguousarray(m, dtype="<f4").tofile(f"{tmp}/{name}.f32")
        (Path(tmp) / "driver.ts").write_text(DRIVER % {"src": WORKER / "src"})
        subprocess.run([str(WORKER / "node_modules/.bin/esbuild"), f"{tmp}/driver.ts", "--bundle", "--platform=node",
                        "--format=esm", f"--outfile={tmp}/driver.mjs", "--log-level=warning"], check=True)
        node = WORKER / "node22/node_modules/.bin/node"
        done = subprocess.run([str(node), "--max-old-space-size=4096", f"{tmp}/driver.mjs", tmp, str(len(facts)), str(len(queries)),
                               str(facts.shape[1]), str(K)], check=True, capture_output=True, text=True)
        return json.loads(done.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--facts", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--dims", default="384,768")
    ap.add_argument("--random", action="store_true", help="random unit vectors at every width (no model)")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "memories-bench")
    args = ap.parse_args()
    rng = np.random.default_rng(7)
    print(f"# worker_capacity {date.today()}: {args.facts} facts, {args.queries} queries, top {K}")
    print("| dims | vectors | codes (bits) | rescored | rows rescored p50 / p90 / max | exact top 30 in candidates "
          "| answers exact | search p50 / p90 ms | bytes/fact (+ a word) | capacity in 100 MiB | in 128 MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for dims in [int(d) for d in args.dims.split(",")]:
        if dims == 384 and not args.random:
            facts, queries = embedded(args.facts, args.queries, args.cache)
            kind = "MiniLM, synthetic text"
        else:
            facts, queries = random_memory(args.facts, args.queries, dims, rng)
            kind = "random unit"
        words = unit(rng.standard_normal((args.facts, dims), dtype=np.float32))
        want = exact_top(facts, queries, K)
        got = run(facts, queries, words)
        inside = np.mean([set(w.tolist()) <= set(c) for w, c in zip(want, got["candidates"])])
        same = np.mean([w.tolist() == a for w, a in zip(want, got["answers"])])
        rescored = [len(c) for c in got["candidates"]]
        per = (got["fact_bytes"] + got["word_bytes"]) / got["n"]
        print(f"| {dims} | {kind} | {got['fact_bits']} (words {got['word_bits']}) | top {K} + {got['rescore']}, then by the bound "
              f"| {np.percentile(rescored, 50):,.0f} / {np.percentile(rescored, 90):,.0f} / {max(rescored):,} "
              f"| {inside:.2%} | {same:.2%} | {np.percentile(got['ms'], 50):.1f} / {np.percentile(got['ms'], 90):.1f} | {per:.0f} "
              f"| {int(BUDGET // per):,} | {int(ISOLATE // per):,} |")
        print(f"  (facts {got['fact_bytes'] / 2**20:.1f} MiB, of which arrays {got['fact_arrays'] / 2**20:.1f}; words "
              f"{got['word_bytes'] / 2**20:.1f} MiB; loading {got['n']} rows {got['load_ms'] / 1000:.1f} s)")


if __name__ == "__main__":
    main()
