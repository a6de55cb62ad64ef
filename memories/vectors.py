"""The in-memory vector matrix that exact cosine search runs over.

Rows are L2-normalised, so cosine is a dot product. The matrix grows by doubling and a
deleted row is filled by the last one, so a write costs O(dims), never a copy of the matrix.
The engine changes it only under its lock, right after the matching database commit.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

TYPES = ("fact", "skill", "log")
TYPE_CODE = {t: i for i, t in enumerate(TYPES)}
BLOCK = 2048  # rows per block in all-pairs products: a 2048 x 2048 float32 block is 16 MiB


class VectorIndex:
    def __init__(self, dims: int, capacity: int = 1024):
        self.dims = dims
        self.n = 0
        self.matrix = np.zeros((capacity, dims), dtype=np.float32)
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.types = np.zeros(capacity, dtype=np.int8)
        self.row: dict[int, int] = {}

    @classmethod
    def of(cls, dims: int, rows: list[tuple[int, str, bytes]]) -> VectorIndex:
        """An index of (id, type, little-endian float32 blob) rows, built in one go."""
        index = cls(dims, capacity=max(1024, len(rows)))
        n = index.n = len(rows)
        if n:
            index.ids[:n] = [r[0] for r in rows]
            index.types[:n] = [TYPE_CODE[r[1]] for r in rows]
            index.matrix[:n] = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(n, dims)
            index.row = {fid: i for i, fid in enumerate(index.ids[:n].tolist())}
        return index

    def __len__(self) -> int:
        return self.n

    def __contains__(self, fact_id: int) -> bool:
        return fact_id in self.row

    def put(self, fact_id: int, type: str, vector: np.ndarray) -> None:
        i = self.row.get(fact_id)
        if i is None:
            if self.n == len(self.ids):
                self._grow()
            i = self.n
            self.n += 1
            self.row[fact_id] = i
            self.ids[i] = fact_id
        self.matrix[i] = vector
        self.types[i] = TYPE_CODE[type]

    def remove(self, fact_id: int) -> None:
        i = self.row.pop(fact_id, None)
        if i is None:
            return
        last = self.n - 1
        if i != last:
            moved = int(self.ids[last])
            self.matrix[i], self.ids[i], self.types[i] = self.matrix[last], moved, self.types[last]
            self.row[moved] = i
        self.n = last

    def clear(self) -> None:
        self.n = 0
        self.row.clear()

    def vector(self, fact_id: int) -> np.ndarray | None:
        i = self.row.get(fact_id)
        return None if i is None else self.matrix[i]

    def scores(self, query: np.ndarray, type: str | None = None) -> np.ndarray:
        """Cosine of every row with the query; rows of another type get -inf."""
        s = self.matrix[: self.n] @ query
        if type is not None:
            s[self.types[: self.n] != TYPE_CODE[type]] = -np.inf
        return s

    def search(self, query: np.ndarray, type: str | None = None, k: int = 30, exclude: int | None = None) -> list[tuple[int, float]]:
        """The k nearest facts as (id, cosine), best first."""
        s = self.scores(query, type)
        if exclude is not None and exclude in self.row:
            s[self.row[exclude]] = -np.inf
        k = min(k, len(s))
        if k == 0:
            return []
        top = np.argpartition(-s, k - 1)[:k]
        top = top[np.lexsort((self.ids[top], -s[top]))]  # by score, then id: stable output
        return [(int(self.ids[i]), float(s[i])) for i in top if s[i] != -np.inf]

    def nearest_each(self, queries: np.ndarray, types: list[str]) -> list[tuple[int, float] | None]:
        """Each query's nearest row of its own type, in one matrix product (a batch's dedup)."""
        if self.n == 0 or len(queries) == 0:
            return [None] * len(queries)
        s = queries @ self.matrix[: self.n].T
        codes = np.array([TYPE_CODE[t] for t in types], dtype=np.int8)
        s[codes[:, None] != self.types[None, : self.n]] = -np.inf
        best = s.argmax(axis=1)
        return [None if s[i, j] == -np.inf else (int(self.ids[j]), float(s[i, j])) for i, j in enumerate(best)]

    def rank_of(self, query: np.ndarray, fact_id: int, type: str | None = None) -> tuple[int | None, float | None]:
        """Where one fact stands for a query: (1-based rank or None, cosine)."""
        i = self.row.get(fact_id)
        if i is None:
            return None, None
        s = self.scores(query, type)
        if s[i] == -np.inf:
            return None, float(self.matrix[i] @ query)
        return int((s > s[i]).sum()) + 1, float(s[i])

    def pair_blocks(self, type: str) -> Iterator[tuple[np.ndarray, int, int, np.ndarray]]:
        """All same-type pairs, one BLOCK x BLOCK tile at a time: (ids, row0, col0, cosines).

        Only tiles on or above the diagonal are computed, and on the diagonal only j > i: each
        pair once, never a fact with itself (the rest of a tile is -inf). Tiles keep memory flat
        however many facts there are. ids maps a tile's row and column numbers (offset by row0
        and col0) back to fact ids.
        """
        rows = np.flatnonzero(self.types[: self.n] == TYPE_CODE[type])
        m = self.matrix[rows]
        ids = self.ids[rows]
        for r0 in range(0, len(rows), BLOCK):
            for c0 in range(r0, len(rows), BLOCK):
                tile = m[r0 : r0 + BLOCK] @ m[c0 : c0 + BLOCK].T
                if c0 == r0:
                    tile[np.tri(*tile.shape, dtype=bool)] = -np.inf
                yield ids, r0, c0, tile

    def _grow(self) -> None:
        capacity = max(1024, 2 * len(self.ids))
        for name in ("matrix", "ids", "types"):
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)
