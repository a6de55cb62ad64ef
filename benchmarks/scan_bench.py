"""The vector pass over the codes at 1M rows, with the second core free and with it busy (issue 31 §3).

    .venv/bin/python benchmarks/scan_bench.py [--rows 1000000] [--queries 100]

One fact type's rows (`memories.storage.rows.Rows`), unit vectors in 20 clusters encoded as the index
encodes them. For each query: `Rows.scores` (numkong's exact int8 products) through the pool and
on one thread, and the kernel it replaced (numpy's cast to float32 and dot, 512 rows at a time)
for reference, interleaved query by query; then the same with another process spinning on a core.
Each score is checked against the decoded codes' products within `codes.bound`'s query term.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import memories  # noqa: E402, F401  (first: it sets OpenBLAS's idle-thread timeout before numpy loads)

import numpy as np  # noqa: E402

from memories.storage import rows as rows_module  # noqa: E402
from memories.storage.codes import LEVELS, encode, query_code  # noqa: E402
from memories.storage.rows import Rows  # noqa: E402

CHUNK = 512  # the replaced kernel's rows a step


def unit(m: np.ndarray) -> np.ndarray:
    return (m / np.linalg.norm(m, axis=-1, keepdims=True)).astype(np.float32)


def build(n: int, dims: int = 384) -> Rows:
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((20, dims))
    rows = Rows(dims)
    for start in range(0, n, 100_000):
        k = min(100_000, n - start)
        m = unit(centres[rng.integers(0, 20, k)] + 0.5 * rng.standard_normal((k, dims)))
        rows.extend(np.arange(start, start + k, dtype=np.int64), *encode(m))
    return rows


def numpy_scores(rows: Rows, q: np.ndarray) -> np.ndarray:
    """The kernel before numkong: each chunk cast to float32, then its rows' dots, one thread."""
    out = np.empty(rows.n, dtype=np.float32)
    buffer = np.empty((CHUNK, rows.dims), dtype=np.float32)
    total = np.float32(q.astype(np.float64).sum())
    for start, codes, params in rows.blocks():
        for at in range(0, len(codes), CHUNK):
            c = codes[at : at + CHUNK]
            np.copyto(buffer[: len(c)], c, casting="unsafe")
            np.vecdot(buffer[: len(c)], q, out=out[start + at : start + at + len(c)])
        s = out[start : start + len(codes)]
        s *= params[:, 1]
        s += params[:, 0] * total
    return out


def one_thread(rows: Rows, q: np.ndarray) -> np.ndarray:
    pool_blocks = rows_module.POOL_BLOCKS
    rows_module.POOL_BLOCKS = 10**9
    try:
        return rows.scores(q)
    finally:
        rows_module.POOL_BLOCKS = pool_blocks


def measure(rows: Rows, queries: np.ndarray) -> dict[str, list[float]]:
    kernels = {"scores, the pool": rows.scores, "scores, one thread": lambda q: one_thread(rows, q),
               "numpy cast and dot, one thread (before)": lambda q: numpy_scores(rows, q)}
    times: dict[str, list[float]] = {k: [] for k in kernels}
    for q in queries:
        for name, kernel in kernels.items():
            t = time.perf_counter()
            kernel(q)
            times[name].append((time.perf_counter() - t) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    print(f"# scan benchmark, {date.today()}, {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    rows = build(args.rows)
    queries = unit(np.random.default_rng(1).standard_normal((args.queries, rows.dims)))

    # The scores are the decoded codes' products, within the query term of the bound.
    step = np.concatenate([p[:, 1] for _, _, p in rows.blocks()]).astype(np.float64)
    for q in queries[:3]:
        gap = np.abs(rows.scores(q).astype(np.float64) - numpy_scores(rows, q))
        assert (gap <= LEVELS * step * query_code(q)[2] + 1e-5).all(), "a score outside its bound"

    measure(rows, queries[:5])  # warm
    print(f"\n{rows.n:,} rows, {args.queries} queries, p50 / p95 ms\n")
    print("| kernel | second core free | second core busy | busy / free p50 |")
    print("|---|---|---|---|")
    free = measure(rows, queries)
    spin = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.5)
        busy = measure(rows, queries)
    finally:
        spin.kill()
    for name in free:
        f50, f95 = np.percentile(free[name], [50, 95])
        b50, b95 = np.percentile(busy[name], [50, 95])
        print(f"| {name} | {f50:.1f} / {f95:.1f} | {b50:.1f} / {b95:.1f} | {b50 / f50:.2f} |")


if __name__ == "__main__":
    main()
