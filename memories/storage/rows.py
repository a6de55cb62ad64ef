"""One fact type's rows of the in-memory index: codes (codes.py), their params and fact ids.

Rows sit in blocks of codes.ROWS: growing adds a block (the last one doubles from codes.FIRST up
to ROWS first), so a grow copies one block at most and the ids, never all the codes, and never
needs twice the memory. A deleted row is filled by the last one, so a write costs O(dims).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numkong
import numpy as np

from .codes import PARAMS, ROWS, block_sizes, decode, query_code

INT_BYTES = 36  # at most what an int object (a dict's key or value) takes below 2^63
DICT_ENTRY = 80  # at most what a new entry adds to a dict's table, counting the resize that doubles it
THREADS = min(4, os.cpu_count() or 1)  # threads a scan of the codes shares its blocks among
# Blocks below which `scores` scans on the caller's thread: handing two blocks to the pool cost
# about what it saved with the second core free, and more with it busy (benchmarks/peers.py at 10k).
POOL_BLOCKS = 3


@cache
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(THREADS, thread_name_prefix="scan")


def dict_bytes(d: dict, objects: int = 2) -> int:
    """An upper bound on a dict of ints: its table as Python counts it, and `objects` int objects
    an entry (its key and its value)."""
    return sys.getsizeof(d) + len(d) * objects * INT_BYTES


class Rows:
    def __init__(self, dims: int, keyed: bool = True):
        self.dims = dims
        self.n = 0
        self.codes: list[np.ndarray] = []  # int8, (block's rows, dims)
        self.params: list[np.ndarray] = []  # float32, (block's rows, PARAMS): mid, step, err
        self.ids = np.zeros(0, dtype=np.int64)  # as many as the blocks hold
        # id -> row, for put, remove and rows_of. Rows only ever appended to (the vocabulary's)
        # keep none: at a million rows the map would take more than their codes.
        self.keyed = keyed
        self.row: dict[int, int] = {}
        # The largest |mid|, step and err of any row it has held: a bound for all its rows at once.
        self.widest = np.zeros(PARAMS, dtype=np.float32)
        self.moves = 0  # rows added or moved: what `rows_of`'s memo is good for
        self._memo: tuple | None = None

    @classmethod
    def of(cls, dims: int, ids: np.ndarray, codes: list[np.ndarray], params: list[np.ndarray], keyed: bool = True) -> Rows:
        """Rows that take these blocks as they are (laid out as codes.block_sizes says)."""
        rows = cls(dims, keyed)
        rows.codes, rows.params = codes, params
        rows.ids = np.zeros(sum(len(c) for c in codes), dtype=np.int64)
        rows.n = len(ids)
        rows.ids[: rows.n] = ids
        if keyed:
            rows.row = dict(zip(ids.tolist(), range(rows.n)))
        for block in params:
            rows.widest = np.maximum(rows.widest, np.abs(block).max(axis=0, initial=0))
        return rows

    @property
    def fact_ids(self) -> np.ndarray:
        return self.ids[: self.n]

    def rows_of(self, ids) -> np.ndarray:
        """The rows of those of `ids` these rows hold. The same `ids` object (a recall's stale facts,
        kept between recalls) is looked up once while no row moves."""
        memo = self._memo
        if memo is not None and memo[0] is ids and memo[1] == self.moves:
            return memo[2]
        row = self.row
        rows = np.array([row[i] for i in ids if i in row], dtype=np.int64)
        self._memo = (ids, self.moves, rows)  # (holding `ids`: the identity stays its own)
        return rows

    def blocks(self) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(first row, codes, params) of each block, its rows in use."""
        for b, (codes, params) in enumerate(zip(self.codes, self.params)):
            start = b * ROWS
            if start >= self.n:
                return
            used = min(len(codes), self.n - start)
            yield start, codes[:used], params[:used]

    def extend(self, ids: np.ndarray, codes: np.ndarray, params: np.ndarray) -> None:
        """Rows of new fact ids at the end, in one go."""
        n = self.n + len(ids)
        self._grow(n)
        self.ids[self.n : n] = ids
        done = 0
        while done < len(ids):
            b, r = divmod(self.n + done, ROWS)
            k = min(len(self.codes[b]) - r, len(ids) - done)
            self.codes[b][r : r + k] = codes[done : done + k]
            self.params[b][r : r + k] = params[done : done + k]
            done += k
        if self.keyed:
            self.row.update(zip(ids.tolist(), range(self.n, n)))
        self.moves += 1
        self.widest = np.maximum(self.widest, np.abs(params).max(axis=0, initial=0))
        self.n = n

    def put(self, fact_id: int, code: np.ndarray, params: np.ndarray) -> None:
        i = self.row.get(fact_id)
        if i is None:
            self.extend(np.array([fact_id], dtype=np.int64), code[None], params[None])
            return
        b, r = divmod(i, ROWS)
        self.codes[b][r], self.params[b][r] = code, params
        self.widest = np.maximum(self.widest, np.abs(params))

    def remove(self, fact_id: int) -> None:
        i = self.row.pop(fact_id, None)
        if i is None:
            return
        last = self.n - 1
        self.moves += 1
        if i != last:
            (b, r), (lb, lr) = divmod(i, ROWS), divmod(last, ROWS)
            moved = int(self.ids[last])
            self.codes[b][r], self.params[b][r], self.ids[i] = self.codes[lb][lr], self.params[lb][lr], moved
            self.row[moved] = i
        self.n = last

    def take(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The codes and params of rows `rows`, gathered from their blocks."""
        codes = np.empty((len(rows), self.dims), dtype=np.int8)
        params = np.empty((len(rows), PARAMS), dtype=np.float32)
        block, at = np.divmod(rows, ROWS)
        for b in np.unique(block).tolist():
            mine = block == b
            codes[mine], params[mine] = self.codes[b][at[mine]], self.params[b][at[mine]]
        return codes, params

    def scan(self, queries: np.ndarray) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(first row, scores, params) a block at a time, the scores (rows x queries) of each code
        for a batch of queries (a batch's writes): each block decoded into one float32 buffer
        (mid + step·c), then one matrix product, where BLAS's own threads pay."""
        q = np.ascontiguousarray(queries, dtype=np.float32).T
        buffer = np.empty((min(ROWS, self.n), self.dims), dtype=np.float32)
        for start, codes, params in self.blocks():
            yield start, decode(codes, params, buffer[: len(codes)]) @ q, params

    def scores(self, query: np.ndarray, code: tuple | None = None) -> np.ndarray:
        """Each row's score on its code for one query (float32): mid·Σq + step·scale·(c·n), the
        query as integers n (codes.query_code) so that c·n is numkong's exact int8 product, one
        pass over the bytes (numpy has no int8 product: its cast and float dot took 4x as long).
        The blocks are shared among THREADS threads from POOL_BLOCKS blocks on (fewer are scanned
        on this thread), each taking the next block left, so a thread on a busy core takes fewer.
        `code`: the query's `query_code`, when a caller scanning several parts has it already."""
        out = np.empty(self.n, dtype=np.float32)
        code, scale, _ = code or query_code(query)
        total = float(np.asarray(query, dtype=np.float64).sum())
        dots = np.array([128.0, 1.0])
        blocks = iter(list(self.blocks()))  # shared: a list's iterator steps under the GIL

        def scan() -> None:
            products = np.empty((min(ROWS, self.n), 2), dtype=np.float64)
            for start, codes, params in blocks:
                p = products[: len(codes)]
                numkong.cdist(codes, code, metric="dot", out=p)
                s = (p @ dots) * scale
                s *= params[:, 1]
                s += params[:, 0] * total
                out[start : start + len(codes)] = s

        if self.pooled:
            list(_pool().map(lambda _: scan(), range(THREADS)))
        else:
            scan()
        return out

    @property
    def pooled(self) -> bool:
        """Whether a scan shares these rows' blocks among the pool's threads: they are that many."""
        return len(self.codes) >= POOL_BLOCKS

    def nbytes(self) -> int:
        """The bytes these rows hold: the arrays exactly, the row map as an upper bound."""
        return (sum(c.nbytes for c in self.codes) + sum(p.nbytes for p in self.params) + self.ids.nbytes
                + dict_bytes(self.row))

    def nbytes_with(self, more: int) -> int:
        """The most they would hold with `more` new rows: a grow has the old last block and the
        old ids alive beside the new ones while it copies them."""
        row = self.dims + PARAMS * 4
        sizes, copying = [len(c) for c in self.codes], 0
        if self.n + more > len(self.ids):
            sizes = block_sizes(self.n + more)
            copying = sizes[-1] // 2 * row + sum(sizes) * 8
        keys = more * (2 * INT_BYTES + DICT_ENTRY) if self.keyed else 0
        return sum(sizes) * (row + 8) + copying + dict_bytes(self.row) + keys

    def _grow(self, n: int) -> None:
        """Room for `n` rows: blocks added, the last one doubled (a copy of it alone), the ids copied."""
        if n <= len(self.ids):
            return
        for b, size in enumerate(block_sizes(n)):
            if b < len(self.codes) and len(self.codes[b]) == size:
                continue
            codes = np.zeros((size, self.dims), dtype=np.int8)
            params = np.zeros((size, PARAMS), dtype=np.float32)
            if b < len(self.codes):
                held = len(self.codes[b])
                codes[:held], params[:held] = self.codes[b], self.params[b]
                self.codes[b], self.params[b] = codes, params
            else:
                self.codes.append(codes)
                self.params.append(params)
        ids = np.zeros(sum(len(c) for c in self.codes), dtype=np.int64)
        ids[: self.n] = self.ids[: self.n]
        self.ids = ids
