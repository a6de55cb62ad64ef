"""Every same-type pair at or above a cosine, computed from one type's codes (review.py's
`/duplicates` below the review floor, and the pairs a memory builds when it opens).

Rows are sorted by their coordinate on the first principal component. Two unit vectors with
cosine >= T are at most sqrt(2 - 2T) apart, and so are their coordinates on any unit direction
(a code's coordinate adds its err, and what the direction as integers leaves out): a tile whose coordinate ranges are further apart than that
holds no pair, and nor does any tile further along the row. Exact, and much faster at high T.

A tile is the product of decoded codes, x̂·ŷ, which is within |x̂|·err_y + err_x·|ŷ| + err_x·err_y
(and the product's float32 rounding) of x·y: every pair within that of T is rescored with its
exact cosine, a row of tiles at a time. One buffer serves every tile, so memory stays flat
however many facts there are.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from .codes import LEVELS, SLACK, decode, gamma, query_code
from .rows import Rows

BLOCK = 2048  # rows per tile: a 2048 x 2048 float32 tile is 16 MiB

Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]  # (cosines, ids, ids)
# Of the pairs (a[i], b[i]) of fact ids, those at or above a cosine by their exact one.
Rescore = Callable[[np.ndarray, np.ndarray, float], Pairs]


def all_pairs(part: Rows, dims: int, rescore: Rescore, threshold: float) -> Pairs:
    """(exact cosines, smaller ids, larger ids) of every pair of `part` at or above `threshold`."""
    n = part.n
    empty = np.zeros(0, np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64)
    if n < 2:
        return empty
    every = max(1, n // 4096)
    sample = decode(*part.take(np.arange(0, n, every)), np.empty(((n - 1) // every + 1, dims), np.float32))
    centred = sample - sample.mean(axis=0)
    direction = np.linalg.eigh(centred.T @ centred)[1][:, -1].astype(np.float32)
    coord = part.scores(direction)
    order = np.argsort(coord, kind="stable")
    codes, params = part.take(order)
    ids, coord, err = part.fact_ids[order], coord[order], params[:, 2].astype(np.float64)
    # A coordinate is the code's, with the direction as integers (what that leaves out moves it
    # by at most 127·step·r1).
    moved = LEVELS * float(params[:, 1].max()) * float(query_code(direction)[2])
    reach = math.sqrt(max(0.0, 2 - 2 * (threshold - SLACK))) + 2 * (float(err.max()) + moved) + 1e-4
    buffers = np.empty((2, min(BLOCK, n), dims), dtype=np.float32)
    tile_buffer = np.empty((min(BLOCK, n), min(BLOCK, n)), dtype=np.float32)
    found = [empty]
    for r0 in range(0, n, BLOCK):
        rows = decode(codes[r0 : r0 + BLOCK], params[r0 : r0 + BLOCK], buffers[0][: min(BLOCK, n - r0)])
        row_norms = np.linalg.norm(rows.astype(np.float64), axis=1) * (1 + 1e-6)
        top = coord[min(n, r0 + BLOCK) - 1]
        near_i, near_j = [], []
        for c0 in range(r0, n, BLOCK):
            if coord[c0] - top > reach:
                break  # sorted: every later tile is further still
            if c0 == r0:
                cols, col_norms = rows, row_norms
            else:
                cols = decode(codes[c0 : c0 + BLOCK], params[c0 : c0 + BLOCK], buffers[1][: min(BLOCK, n - c0)])
                col_norms = np.linalg.norm(cols.astype(np.float64), axis=1) * (1 + 1e-6)
            tile = tile_buffer[: len(rows), : len(cols)]
            np.matmul(rows, cols.T, out=tile)
            if c0 == r0:
                tile[np.tri(*tile.shape, dtype=bool)] = -np.inf
            within = _Bound(row_norms, err[r0 : r0 + BLOCK], col_norms, err[c0 : c0 + BLOCK], dims)
            i, j = np.nonzero(tile >= threshold - within.widest())  # then each pair within its own
            close = tile[i, j] + within.of(i, j) >= threshold
            near_i.append(r0 + i[close])
            near_j.append(c0 + j[close])
        found.append(rescore(ids[np.concatenate(near_i)], ids[np.concatenate(near_j)], threshold))
    s, a, b = (np.concatenate([f[k] for f in found]) for k in range(3))
    return s, np.minimum(a, b), np.maximum(a, b)


class _Bound:
    """How far a tile's x̂·ŷ may be from x·y, for its rows (norms of x̂, errs) and columns."""

    def __init__(self, rn: np.ndarray, re: np.ndarray, cn: np.ndarray, ce: np.ndarray, dims: int):
        self.rn, self.re, self.cn, self.ce = rn, re, cn, ce
        self.rounding = gamma(dims + 4) * (1 + 1e-6)  # the decode's and the product's

    def _bound(self, rn, re, cn, ce):
        return rn * ce + re * cn + re * ce + self.rounding * rn * cn + SLACK

    def widest(self) -> float:
        return float(self._bound(self.rn.max(), self.re.max(), self.cn.max(), self.ce.max()))

    def of(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return self._bound(self.rn[i], self.re[i], self.cn[j], self.ce[j])
