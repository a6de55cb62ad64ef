"""Vectors held as int8 codes, and the exact cosines every answer is made of.

A row x is held as c, one int8 a dimension, with its own mid and step: x ≈ mid + step·c, c in
-127..127 (the row's range in 255 levels), and err, the norm of what that leaves out. A scan
reads a quarter of the bytes a float32 row takes, and a code's score q·x̂ is never further than
err·|q| from q·x (Cauchy–Schwarz on the residual) plus the float32 rounding of the scan itself
(`bound`). A scan for one query takes the query as integers too (`query_code`: 15 bits a
dimension), and the bound adds what that leaves out. So a threshold query that rescores every row within its bound of the threshold misses
none, and a k-nearest search rescores the best k + RESCORE on the codes.

The exact cosine is the float32 nearest q·x of the stored float32 vectors: products and sum in
float64, as the Worker sums, row by row, so a fact has the same cosine wherever its row sits.
(numpy's float32 matrix product could differ in the last bit with a row's place in the matrix
and the BLAS thread split.)
"""

from __future__ import annotations

import numpy as np

ROWS = 4096  # rows a block of codes: what one scan step converts at once (6 MiB of float32 at 384 dims)
FIRST = 64  # rows the first block of a type holds; the last block doubles up to ROWS
PARAMS = 3  # mid, step, err: float32 each
LEVELS = 127
# Rows rescored past the k asked for. Each costs a row read from SQLite (about 4 µs at 10k);
# the bound's second pass costs another statement. At 100k (200 questions, 30 asked) 30 read
# 62 rows a query on average (28 with a second pass), 50 read 80 (8), 100 read 130 (none):
# the same answers, fewest rows at 30 (docs/performance.md, "Ranking alone").
RESCORE = 30
SLACK = 1e-6  # past float32's rounding of an exact cosine (half an ulp at 1 is 6e-8)
# A query's code for a scan: hi·128 + lo a dimension, hi in -127..127 and lo in -64..64, two int8
# rows whose products with a row's codes are exact integers (numkong's int8 kernel).
QUERY_LEVELS = LEVELS * 128
U = 2.0**-24  # float32's unit roundoff


def block_sizes(n: int) -> list[int]:
    """The blocks that hold `n` rows: full ones of ROWS, and a last one doubled from FIRST."""
    full, rest = divmod(n, ROWS)
    sizes = [ROWS] * full
    if rest:
        size = FIRST
        while size < rest:
            size *= 2
        sizes.append(min(size, ROWS))
    return sizes


def encode(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows `x` (float32) as (codes, params): err is the norm of x - mid - step·c computed with
    mid and step as stored, rounded up past float32's rounding."""
    x64 = np.asarray(x, dtype=np.float64).reshape(len(x), -1)
    lo, hi = x64.min(axis=1), x64.max(axis=1)
    mid = ((lo + hi) / 2).astype(np.float32)
    step = np.where(hi > lo, (hi - lo) / (2 * LEVELS), 1.0).astype(np.float32)
    c = np.clip(np.rint((x64 - mid[:, None]) / step[:, None]), -LEVELS, LEVELS)
    residual = x64 - (mid[:, None].astype(np.float64) + step[:, None].astype(np.float64) * c)
    err = np.sqrt(np.einsum("ij,ij->i", residual, residual)) * (1 + 1e-6) + 1e-9
    params = np.stack([mid, step, err.astype(np.float32)], axis=1)
    return c.astype(np.int8), params


def decode(codes: np.ndarray, params: np.ndarray, out: np.ndarray) -> np.ndarray:
    """x̂ = mid + step·c into `out` (float32)."""
    np.copyto(out, codes, casting="unsafe")
    out *= params[:, 1:2]
    out += params[:, 0:1]
    return out


def gamma(k: int) -> float:
    """The most k float32 additions and products can add, relative to the sum of |terms|."""
    return k * U / (1 - k * U)


def query_code(query: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A query (or each row of `queries`) as (codes, scale, r1): codes (..., 2, dims) int8, hi and
    lo, with q ≈ scale·(128·hi + lo), and r1 at least |q - scale·(128·hi + lo)|₁, what the code
    leaves out."""
    q = np.asarray(query, dtype=np.float64)
    top = np.abs(q).max(axis=-1, keepdims=True)
    scale = np.where(top > 0, top / QUERY_LEVELS, 1.0)
    n = np.rint(q / scale)
    hi = np.rint(n / 128)
    r1 = np.abs(q - scale * n).sum(axis=-1) * (1 + 1e-9) + 1e-12
    return np.stack([hi, n - 128 * hi], axis=-2).astype(np.int8), scale[..., 0], r1


def norms(queries: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`bound`'s q1, q2 and r1 for a query (or each row of `queries`), in float64: its L1 and L2
    norms, and what its code leaves out (`query_code`, which a scan for one query multiplies by;
    a batch's scan multiplies floats, so there it only widens the bound a little)."""
    q = queries.astype(np.float64)
    return np.abs(q).sum(axis=-1), np.linalg.norm(q, axis=-1), query_code(q)[2]


def bound(params: np.ndarray, q1, q2, dims: int, r1) -> np.ndarray:
    """How far a code's score may be from the exact cosine, for rows `params` (..., PARAMS) and
    queries of L1 norm `q1` and L2 norm `q2` (broadcast against the rows): err·|q| for the code,
    127·step·r1 for the query's code (|c| <= 127 a dimension), the scan's float32 rounding (each
    of its terms is at most max|x̂|·|q|₁, max|x̂| = 127·step + |mid|; a scan of integers rounds
    less) and SLACK for the exact cosine's own rounding."""
    p = np.asarray(params, dtype=np.float64)
    peak = LEVELS * p[..., 1] + np.abs(p[..., 0])
    return p[..., 2] * q2 + LEVELS * p[..., 1] * r1 + 2 * gamma(dims + 4) * peak * q1 + SLACK


def exact(vectors: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Each row of `vectors` with the matching row of `queries` (or with one query): the exact
    cosine, the float32 products summed in float64 (widened as they are read, not copied)."""
    return np.einsum("ij,j->i" if queries.ndim == 1 else "ij,ij->i", vectors, queries, dtype=np.float64).astype(np.float32)


def exact_all(a: np.ndarray) -> np.ndarray:
    """Every row of `a` with every other (a batch against itself): exact cosines, (len(a), len(a))."""
    return np.stack([exact(a, row) for row in a]) if len(a) else np.zeros((0, 0), np.float32)
