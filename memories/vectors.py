"""The in-memory vectors that exact cosine search runs over, one matrix per fact type.

Rows are L2-normalised, so cosine is a dot product. Each type has its own matrix: dedup and
the pairs kept on write compare a fact only with its own type, so they read only those rows.
A matrix grows by doubling and a deleted row is filled by the last one, so a write costs
O(dims), never a copy. The engine changes them only under its lock, right after the matching
database commit.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator

import numpy as np

TYPES = ("fact", "skill", "log")
TYPE_CODE = {t: i for i, t in enumerate(TYPES)}
BLOCK = 2048  # rows per tile in all-pairs products: a 2048 x 2048 float32 tile is 16 MiB
INT_BYTES = 36  # at most what an int object (a dict's key or value) takes below 2^63
DICT_ENTRY = 80  # at most what a new entry adds to a dict's table, counting the resize that doubles it


def dict_bytes(d: dict, objects: int = 2) -> int:
    """An upper bound on a dict of ints: its table as Python counts it, and `objects` int objects
    an entry (its key and its value)."""
    return sys.getsizeof(d) + len(d) * objects * INT_BYTES


def grown(capacity: int, n: int) -> int:
    """The capacity a doubling buffer of `capacity` rows reaches to hold `n` (Rows._grow)."""
    while capacity < n:
        capacity = max(1024, 2 * capacity)
    return capacity


class Rows:
    """One type's vectors and the fact ids of its rows."""

    def __init__(self, dims: int, capacity: int = 0):  # the first put makes room for 1024
        self.n = 0
        self.matrix = np.zeros((capacity, dims), dtype=np.float32)
        self.ids = np.zeros(capacity, dtype=np.int64)
        self.row: dict[int, int] = {}

    @classmethod
    def of(cls, ids: np.ndarray, matrix: np.ndarray) -> Rows:
        rows = cls(matrix.shape[1], capacity=max(1024, len(ids)) if len(ids) else 0)
        rows.n = len(ids)
        rows.ids[: rows.n] = ids
        rows.matrix[: rows.n] = matrix
        rows.row = {fid: i for i, fid in enumerate(ids.tolist())}
        return rows

    @property
    def m(self) -> np.ndarray:
        return self.matrix[: self.n]

    @property
    def fact_ids(self) -> np.ndarray:
        return self.ids[: self.n]

    def put(self, fact_id: int, vector: np.ndarray) -> None:
        i = self.row.get(fact_id)
        if i is None:
            if self.n == len(self.ids):
                self._grow()
            i = self.n
            self.n += 1
            self.row[fact_id] = i
            self.ids[i] = fact_id
        self.matrix[i] = vector

    def remove(self, fact_id: int) -> None:
        i = self.row.pop(fact_id, None)
        if i is None:
            return
        last = self.n - 1
        if i != last:
            moved = int(self.ids[last])
            self.matrix[i], self.ids[i] = self.matrix[last], moved
            self.row[moved] = i
        self.n = last

    def nbytes(self) -> int:
        """The bytes these rows hold: the arrays exactly, the row map as an upper bound."""
        return self.matrix.nbytes + self.ids.nbytes + dict_bytes(self.row)

    def nbytes_with(self, more: int) -> int:
        """The most they would hold with `more` new rows: a grow has the old arrays and the new
        alive at once while it copies."""
        row = self.matrix.shape[1] * 4 + 8
        capacity = grown(len(self.ids), self.n + more)
        copying = len(self.ids) * row if capacity > len(self.ids) else 0
        return capacity * row + copying + dict_bytes(self.row) + more * (2 * INT_BYTES + DICT_ENTRY)

    def _grow(self) -> None:
        capacity = max(1024, 2 * len(self.ids))
        for name in ("matrix", "ids"):
            old = getattr(self, name)
            new = np.zeros((capacity, *old.shape[1:]), dtype=old.dtype)
            new[: self.n] = old[: self.n]
            setattr(self, name, new)


class VectorIndex:
    def __init__(self, dims: int):
        self.dims = dims
        self.parts = {t: Rows(dims) for t in TYPES}
        self.type_of: dict[int, str] = {}

    @classmethod
    def of(cls, dims: int, rows: list[tuple[int, str, bytes]]) -> VectorIndex:
        """An index of (id, type, little-endian float32 blob) rows, built in one go."""
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        types = np.array([TYPE_CODE[r[1]] for r in rows], dtype=np.int8)
        blobs = b"".join(r[2] for r in rows)
        matrix = np.frombuffer(blobs, dtype="<f4").reshape(len(rows), dims) if rows else np.zeros((0, dims), np.float32)
        return cls.from_arrays(dims, ids, types, matrix)

    @classmethod
    def from_arrays(cls, dims: int, ids: np.ndarray, types: np.ndarray, matrix: np.ndarray) -> VectorIndex:
        index = cls(dims)
        ordered = bool(np.all(types[1:] >= types[:-1]))  # a snapshot is: each type is a slice
        for t, code in TYPE_CODE.items():
            if ordered:
                lo, hi = np.searchsorted(types, code), np.searchsorted(types, code, side="right")
                mask = slice(lo, hi)
            else:
                mask = types == code
            index.parts[t] = Rows.of(ids[mask], matrix[mask])
            index.type_of.update(dict.fromkeys(ids[mask].tolist(), t))
        return index

    def __len__(self) -> int:
        return len(self.type_of)

    def nbytes(self) -> int:
        """The bytes the index holds: its matrices exactly, its maps as an upper bound (the types
        are shared strings: a key an entry)."""
        return sum(p.nbytes() for p in self.parts.values()) + dict_bytes(self.type_of, 1)

    def nbytes_with(self, more: dict[str, int]) -> int:
        """The most it would hold with `more[type]` new facts of each type."""
        return (sum(p.nbytes_with(more.get(t, 0)) for t, p in self.parts.items()) + dict_bytes(self.type_of, 1)
                + sum(more.values()) * (INT_BYTES + DICT_ENTRY))

    def __contains__(self, fact_id: int) -> bool:
        return fact_id in self.type_of

    def ids(self) -> set[int]:
        return set(self.type_of)

    def put(self, fact_id: int, type: str, vector: np.ndarray) -> None:
        old = self.type_of.get(fact_id)
        if old is not None and old != type:
            vector = np.array(vector)  # it may be a view of the row that removing overwrites
            self.parts[old].remove(fact_id)
        self.parts[type].put(fact_id, vector)
        self.type_of[fact_id] = type

    def remove(self, fact_id: int) -> None:
        type = self.type_of.pop(fact_id, None)
        if type is not None:
            self.parts[type].remove(fact_id)

    def clear(self) -> None:
        self.parts = {t: Rows(self.dims) for t in TYPES}
        self.type_of.clear()

    def vector(self, fact_id: int) -> np.ndarray | None:
        type = self.type_of.get(fact_id)
        if type is None:
            return None
        part = self.parts[type]
        return part.matrix[part.row[fact_id]]

    def _scored(self, query: np.ndarray, type: str | None,
                exclude: int | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(ids, cosines) of each type's rows that the query looks at; `exclude` gets -inf."""
        for t in [type] if type else TYPES:
            part = self.parts[t]
            if part.n:
                s = part.m @ query
                if exclude in part.row:
                    s[part.row[exclude]] = -np.inf
                yield part.fact_ids, s

    def search(self, query: np.ndarray, type: str | None = None, k: int = 30,
               exclude: int | None = None) -> list[tuple[int, float]]:
        """The k nearest facts as (id, cosine), best first, ties by id: stable output."""
        ids_all, s_all = [], []
        for ids, s in self._scored(query, type, exclude):
            kk = min(k, len(s))
            top = np.argpartition(-s, kk - 1)[:kk]
            ids_all.append(ids[top])
            s_all.append(s[top])
        if not ids_all:
            return []
        ids, s = np.concatenate(ids_all), np.concatenate(s_all)
        order = np.lexsort((ids, -s))[:k]
        return [(int(ids[i]), float(s[i])) for i in order if s[i] != -np.inf]

    def rank_of(self, query: np.ndarray, fact_id: int, type: str | None = None) -> tuple[int | None, float | None]:
        """Where one fact stands for a query: (1-based rank or None, cosine)."""
        mine = self.vector(fact_id)
        if mine is None:
            return None, None
        cosine = float(mine @ query)
        if type is not None and self.type_of[fact_id] != type:
            return None, cosine
        part = self.parts[self.type_of[fact_id]]
        own = float((part.m @ query)[part.row[fact_id]])  # as search computes it, bit for bit
        return sum(int((s > own).sum()) for _, s in self._scored(query, type)) + 1, own

    def pairs(self, type: str, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every same-type pair at or above `threshold` as (cosines, smaller ids, larger ids).

        Rows are sorted by their coordinate on the first principal component. Two unit vectors
        with cosine >= T are at most sqrt(2 - 2T) apart, and so are their coordinates on any
        unit direction: a tile whose coordinate ranges are further apart than that holds no
        pair, and nor does any tile further along the row. Exact, and much faster at high T.
        One output buffer serves every tile, so memory stays flat however many facts there are.
        """
        part = self.parts[type]
        n = part.n
        empty = np.zeros(0, np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64)
        if n < 2:
            return empty
        m = part.m
        sample = m[:: max(1, n // 4096)]
        centred = sample - sample.mean(axis=0)
        direction = np.linalg.eigh(centred.T @ centred)[1][:, -1].astype(np.float32)
        coord = m @ direction
        order = np.argsort(coord, kind="stable")
        m, ids, coord = m[order], part.fact_ids[order], coord[order]
        reach = math.sqrt(max(0.0, 2 - 2 * threshold)) + 1e-4  # float32 rounding cannot lose a pair
        buffer = np.empty((BLOCK, BLOCK), dtype=np.float32)
        found_s, found_i, found_j = [], [], []
        for r0 in range(0, n, BLOCK):
            rows = m[r0 : r0 + BLOCK]
            top = coord[min(n, r0 + BLOCK) - 1]
            for c0 in range(r0, n, BLOCK):
                if coord[c0] - top > reach:
                    break  # sorted: every later tile is further still
                cols = m[c0 : c0 + BLOCK]
                tile = buffer[: len(rows), : len(cols)]
                np.matmul(rows, cols.T, out=tile)
                if c0 == r0:
                    tile[np.tri(*tile.shape, dtype=bool)] = -np.inf
                i, j = np.nonzero(tile >= threshold)
                if len(i):
                    found_s.append(tile[i, j].copy())
                    found_i.append(ids[r0 + i])
                    found_j.append(ids[c0 + j])
        if not found_s:
            return empty
        s, a, b = np.concatenate(found_s), np.concatenate(found_i), np.concatenate(found_j)
        return s, np.minimum(a, b), np.maximum(a, b)
