"""The in-memory vectors search runs over, one set of rows per fact type, held as int8 codes.

Rows are L2-normalised, so cosine is a dot product. Each type has its own rows: dedup and the
pairs kept on write compare a fact only with its own type, so they read only those rows. The
codes (codes.py) find the candidates; their exact float32 vectors, read from the `vectors` table
(`read`), give every cosine answered, so every ranking is that of exact search:
- the k nearest: the best k + RESCORE rows on the codes are rescored (benchmarks/memory_bench.py
  measures how often the exact top k is inside them; a type of at most k + RESCORE rows is
  ranked exactly);
- every row at or above a cosine (dedup, pairs, a fact's place): each row whose code is within
  its bound of it is rescored, and the bound is exact, so none is missed.
Rows sit in blocks of codes.ROWS; growing adds a block (the last one doubles up to ROWS first),
so it never copies the others, and a deleted row is filled by the last one. The engine changes
them only under its lock, right after the matching database commit, and reads the table inside
the same transaction, so the codes and the vectors they are rescored with are one snapshot.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from .allpairs import all_pairs
from .codes import RESCORE, bound, encode, exact, norms, query_code
from .exact_top import exact_top
from .rows import DICT_ENTRY, INT_BYTES, Rows

__all__ = ["DICT_ENTRY", "INT_BYTES", "TYPES", "TYPE_CODE", "VectorIndex"]
RESCORE_TOP = 8  # rows rescored past the k a write's proposals ask for (`near`'s `top`)

TYPES = ("fact", "skill", "log")
TYPE_CODE = {t: i for i, t in enumerate(TYPES)}
LOAD_BATCH = 4096  # table rows encoded at a time when the index is built from the table
PAIRS_READ = 4096  # candidate pairs rescored at a time

# The exact float32 vectors of the asked fact ids: (the ids the table holds, their rows).
Reader = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def no_table(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    raise RuntimeError("this index has no table to read exact vectors from")


def k_best(ids: np.ndarray, cosines: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Of rows rescored, the k best by exact cosine and any tied with the k-th: which rows past
    the k-th were rescored depends on the codes' order (a batch's scan or one query's), so they
    are not answered, and a fact's neighbours are the same however it is written."""
    if len(cosines) <= k:
        return ids, cosines
    keep = cosines >= np.partition(cosines, len(cosines) - k)[len(cosines) - k]
    return ids[keep], cosines[keep]


class VectorIndex:
    def __init__(self, dims: int, read: Reader = no_table):
        self.dims = dims
        self.read = read
        # A fact's type is the part whose rows hold it: no map of its own (at 1M facts one took
        # about 100 MB, benchmarks/vocabulary_bench.py).
        self.parts = {t: Rows(dims) for t in TYPES}

    @classmethod
    def of(cls, dims: int, rows: Iterable[tuple[int, str, bytes]], read: Reader = no_table) -> VectorIndex:
        """An index of (id, type, little-endian float32 blob) rows (a cursor: read a batch at a time)."""
        index = cls(dims, read)
        rows = iter(rows)
        while batch := [r for _, r in zip(range(LOAD_BATCH), rows)]:
            ids = np.array([r[0] for r in batch], dtype=np.int64)
            types = np.array([TYPE_CODE[r[1]] for r in batch], dtype=np.int8)
            matrix = np.frombuffer(b"".join(r[2] for r in batch), dtype="<f4").reshape(len(batch), dims)
            index.extend(ids, types, *encode(matrix))
        return index

    @classmethod
    def of_blocks(cls, dims: int, ids: np.ndarray, types: np.ndarray, blocks: dict[str, tuple[list, list]],
                  read: Reader = no_table) -> VectorIndex:
        """An index that takes a snapshot's blocks as they are: `ids` and `types` ordered by type,
        and each type's (codes, params) blocks laid out as codes.block_sizes says."""
        index = cls(dims, read)
        start = 0
        for t, code in TYPE_CODE.items():
            n = int((types == code).sum())
            index.parts[t] = Rows.of(dims, ids[start : start + n], *blocks[t])
            start += n
        return index

    def __len__(self) -> int:
        return sum(p.n for p in self.parts.values())

    def type_of(self, fact_id: int) -> str | None:
        return next((t for t, p in self.parts.items() if fact_id in p.row), None)

    def nbytes(self) -> int:
        """The bytes the index holds: its arrays exactly, its maps as an upper bound (the types
        are shared strings: a key an entry)."""
        return sum(p.nbytes() for p in self.parts.values())

    def nbytes_with(self, more: dict[str, int]) -> int:
        """The most it would hold with `more[type]` new facts of each type."""
        return sum(p.nbytes_with(more.get(t, 0)) for t, p in self.parts.items())

    def __contains__(self, fact_id: int) -> bool:
        return any(fact_id in p.row for p in self.parts.values())

    def ids(self) -> set[int]:
        return {i for p in self.parts.values() for i in p.row}

    def put(self, fact_id: int, type: str, vector: np.ndarray) -> None:
        codes, params = encode(np.asarray(vector, dtype=np.float32)[None])
        old = self.type_of(fact_id)
        if old is not None and old != type:
            self.parts[old].remove(fact_id)
        self.parts[type].put(fact_id, codes[0], params[0])

    def extend(self, ids: np.ndarray, types: np.ndarray, codes: np.ndarray, params: np.ndarray) -> None:
        """Rows of facts it does not hold yet, in one go (`types` as TYPE_CODE)."""
        for t, code in TYPE_CODE.items():
            mine = types == code
            if mine.any():
                self.parts[t].extend(ids[mine], codes[mine], params[mine])

    def remove(self, fact_id: int) -> None:
        for part in self.parts.values():
            part.remove(fact_id)  # (nothing for the parts that do not hold it)

    def clear(self) -> None:
        self.parts = {t: Rows(self.dims) for t in TYPES}

    def vector(self, fact_id: int) -> np.ndarray | None:
        """A fact's exact vector, from the table (None: the index does not hold it)."""
        if fact_id not in self:
            return None
        found, vectors = self.read(np.array([fact_id], dtype=np.int64))
        return vectors[0] if len(found) else None

    def holds(self, fact_id: int, vector: np.ndarray) -> bool:
        """Whether the fact's row is the code of `vector` (state.py compares the index with the table)."""
        type = self.type_of(fact_id)
        if type is None or len(vector) != self.dims:
            return False
        part = self.parts[type]
        held = part.take(np.array([part.row[fact_id]]))
        return all(np.array_equal(a, b) for a, b in zip(held, encode(vector[None])))

    def _read(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The exact vectors of `ids` (repeats allowed), from the table: (each id's row in the
        vectors, -1 for one the table lacks; the vectors)."""
        unique, back = np.unique(ids, return_inverse=True)
        found, vectors = self.read(unique) if len(unique) else (unique, np.zeros((0, self.dims), np.float32))
        row = np.full(len(unique), -1, dtype=np.int64)
        row[np.searchsorted(unique, found)] = np.arange(len(found))
        return row[back], vectors

    def _exact(self, ids: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of `ids` the table holds, and their exact cosines with one query (or each with
        its own row of `queries`)."""
        row, vectors = self._read(ids)
        held = row >= 0
        return held, exact(vectors[row[held]], queries if queries.ndim == 1 else queries[held])

    def search(self, query: np.ndarray, type: str | None = None, k: int = 30,
               exclude: int | None = None, hidden: Iterable[int] = ()) -> list[tuple[int, float]]:
        """The k nearest facts as (id, exact cosine), best first, ties by id: exact search's answer.

        The best k + RESCORE on the codes (of all the types asked) are rescored, and any other
        row that could still reach the k-th (exact_top.py). The `hidden` ids (facts no longer
        current) are left out before the top k is taken."""
        return self.top(self.scan(query, type, exclude, hidden), query, k)

    def scan(self, query: np.ndarray, type: str | None = None, exclude: int | None = None,
             hidden: Iterable[int] = ()) -> list[tuple[Rows, np.ndarray]]:
        """`search`'s first half: each part asked, with its scores on the codes (-inf for a row
        left out). It reads no table, so it can run on another thread beside a SQLite
        statement (recall's keyword list) while no write can change the rows."""
        scored = []  # (part, its scores on the codes)
        code = query_code(query)
        for t in [type] if type else TYPES:
            part = self.parts[t]
            if part.n:
                s = part.scores(query, code)
                s[part.rows_of(hidden)] = -np.inf
                if exclude in part.row:
                    s[part.row[exclude]] = -np.inf
                scored.append((part, s))
        return scored

    def pooled(self, type: str | None = None) -> bool:
        """Whether a `scan` of `type` (None: every type) shares a part's blocks among the pool's threads."""
        return any(self.parts[t].pooled for t in ([type] if type else TYPES))

    def top(self, scored: list[tuple[Rows, np.ndarray]], query: np.ndarray, k: int = 30) -> list[tuple[int, float]]:
        """`search`'s second half, over a `scan`: the best k rescored from the table (on the
        thread that holds the read)."""
        ids, cosines = exact_top(scored, query, k, RESCORE, lambda ids: self._rescored(query, [ids]))
        return [(int(i), float(c)) for i, c in zip(ids, cosines)]

    def _rescored(self, query: np.ndarray, ids: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """(ids the table holds, their exact cosines with `query`) of these lists of ids."""
        ids = np.concatenate(ids) if ids else np.zeros(0, np.int64)
        held, cosines = self._exact(ids, query)
        return ids[held], cosines

    def near(self, queries: np.ndarray, type: str, least: float, exclude: int | None = None,
             top: tuple[float, int, Iterable[int]] | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each query (each row of `queries`, or one vector), every fact of `type` at or above
        cosine `least`, as (ids, exact cosines): each row whose code is within its bound of
        `least` is rescored, and no other can reach it.

        `top` (lower, k, hidden): also each query's k closest facts from cosine `lower` up to
        `least` (and any tied with the k-th), leaving out the `hidden` ids, exactly (the best
        k + RESCORE_TOP on the codes rescored, then any row that could still reach the k-th): what
        a write's proposals need, without rescoring every row down to `lower` (a batch's writes
        share one scan of the codes; at 10k synthetic facts, every row down to 0.4 was some 840 a
        query)."""
        q = np.atleast_2d(np.asarray(queries, dtype=np.float32))
        part = self.parts[type]
        q1, q2, r1 = norms(q)
        rows, which = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
        banded = top is not None and top[0] < least
        low = top[0] if banded else least
        maybe: list[tuple[np.ndarray, ...]] = []  # with `top`: rows that may lie in [lower, least)
        if banded:
            hidden = np.zeros(part.n, dtype=bool)
            hidden[part.rows_of(list(top[2]))] = True
        if len(q) == 1 and part.n:  # one query: the threaded scan, then only the rows near enough
            s = part.scores(q[0])
            at = np.flatnonzero(s >= low - bound(part.widest, q1, q2, self.dims, r1))
            blocks = [(at, s[at][:, None], part.take(at)[1])]
        else:
            blocks = ((start + np.arange(len(s)), s, params) for start, s, params in part.scan(q))
        for at, s, params in blocks:
            # The rows within the widest bound, then each within its own (flat: 2-D nonzero is slow).
            r, j = np.divmod(np.flatnonzero(s >= low - bound(part.widest, q1, q2, self.dims, r1)), s.shape[1])
            sr, b = s[r, j], bound(params[r], q1[j], q2[j], self.dims, r1[j])
            close = sr + b >= least
            rows.append(at[r[close]])
            which.append(j[close])
            if banded:
                m = (sr + b >= low) & (sr - b < least) & ~hidden[at[r]]
                maybe.append((at[r[m]], j[m], sr[m], b[m]))
        rows, which = np.concatenate(rows), np.concatenate(which)
        ids = part.fact_ids[rows]
        if exclude is not None:
            ids, which = ids[ids != exclude], which[ids != exclude]
        row, vectors = self._read(ids)
        order = np.argsort(which, kind="stable")  # rescored query by query: no query copied a row
        ends = np.searchsorted(which[order], np.arange(len(q) + 1))
        out = []
        for j in range(len(q)):
            mine = order[ends[j] : ends[j + 1]]
            mine = mine[row[mine] >= 0]  # (a row the table lacks is left out)
            cosines = exact(vectors[row[mine]], q[j])
            out.append((ids[mine][cosines >= least], cosines[cosines >= least]))
        band = self._bands(part, q, *(np.concatenate(a) for a in zip(*maybe)), top[0], least, top[1]) if maybe else []
        for j, (ids_j, cosines_j) in enumerate(band):
            out[j] = (np.concatenate([out[j][0], ids_j]), np.concatenate([out[j][1], cosines_j]))
        return out

    def _bands(self, part: Rows, q: np.ndarray, rows: np.ndarray, which: np.ndarray, s: np.ndarray, b: np.ndarray,
               lower: float, least: float, k: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """`near`'s band for each query at once, over the rows of its scan that may lie in [lower,
        least), the hidden left out (`rows`, their query `which`, score `s` on the codes and bound
        `b`): each query's best k + RESCORE_TOP on the codes rescored, then any row that could still
        reach its k-th; each query's k best in the band (and any tied with the k-th), with their
        exact cosines."""
        order = np.lexsort((-s, which))  # by query, the best on the codes first
        rows, which, s, b = rows[order], which[order], s[order], b[order]
        starts = np.searchsorted(which, np.arange(len(q) + 1))
        cosines = np.full(len(rows), np.nan, dtype=np.float32)  # NaN: not rescored (never in the band)
        first = np.arange(len(rows)) - starts[which] < k + RESCORE_TOP
        self._rescore_rows(part, q, rows, which, first, cosines)
        inside = (cosines >= lower) & (cosines < least)
        kth = np.full(len(q), lower, dtype=np.float32)
        for j in range(len(q)):
            mine = cosines[starts[j] : starts[j + 1]][inside[starts[j] : starts[j + 1]]]
            if len(mine) >= k:
                kth[j] = np.sort(mine)[-k]
        self._rescore_rows(part, q, rows, which, ~first & (s + b >= kth[which]), cosines)
        inside = (cosines >= lower) & (cosines < least)
        ids = part.fact_ids[rows]
        return [k_best(ids[starts[j] : starts[j + 1]][inside[starts[j] : starts[j + 1]]],
                       cosines[starts[j] : starts[j + 1]][inside[starts[j] : starts[j + 1]]], k) for j in range(len(q))]

    def _rescore_rows(self, part: Rows, q: np.ndarray, rows: np.ndarray, which: np.ndarray, chosen: np.ndarray,
                      cosines: np.ndarray) -> None:
        """The exact cosine of each `chosen` row with its query, into `cosines` (one read of the table)."""
        at = np.flatnonzero(chosen)
        if not len(at):
            return
        row, vectors = self._read(part.fact_ids[rows[at]])
        for j in np.unique(which[at]):
            mine = at[(which[at] == j) & (row >= 0)]
            cosines[mine] = exact(vectors[row[np.searchsorted(at, mine)]], q[j])

    def rank_of(self, query: np.ndarray, fact_id: int, type: str | None = None,
                hidden: Iterable[int] = ()) -> tuple[int | None, float | None]:
        """Where one fact stands for a query: (1-based rank or None, exact cosine), its place in
        search's order (a tie goes to the smaller id). Rows whose code is within its bound of the
        fact's cosine are rescored; the others are surely above or below it."""
        if fact_id not in self:
            return None, None
        held, mine = self._exact(np.array([fact_id], dtype=np.int64), query)
        if not held.all():
            return None, None
        own = mine[0]
        if type is not None and self.type_of(fact_id) != type:
            return None, float(own)
        q1, q2, r1 = norms(query)
        code = query_code(query)
        better, unsure = 0, []
        for t in [type] if type else TYPES:
            part = self.parts[t]
            if not part.n:
                continue
            s = part.scores(query, code)
            s[part.rows_of([fact_id, *hidden])] = np.nan  # neither above nor near
            wide = bound(part.widest, q1, q2, self.dims, r1)
            near = np.flatnonzero(np.abs(s - own) <= wide)
            b = bound(part.take(near)[1], q1, q2, self.dims, r1)
            better += int((s > own + wide).sum() + (s[near] - b > own).sum())
            unsure.append(part.fact_ids[near[(s[near] - b <= own) & (s[near] + b >= own)]])
        ids, cosines = self._rescored(query, unsure)
        return better + int(((cosines > own) | ((cosines == own) & (ids < fact_id))).sum()) + 1, float(own)

    def pairs(self, type: str, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every same-type pair at or above `threshold` as (exact cosines, smaller ids, larger ids)."""
        return all_pairs(self.parts[type], self.dims, self._rescored_pairs, threshold)

    def _rescored_pairs(self, a: np.ndarray, b: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Of the pairs of facts (a, b), those at or above `threshold` by their exact cosine:
        (cosines, a, b). Each fact's vector is read once, the pairs rescored PAIRS_READ at a
        time (what fits in cache)."""
        row, vectors = self._read(np.concatenate([a, b]))
        ra, rb = row[: len(a)], row[len(a) :]
        held = (ra >= 0) & (rb >= 0)
        a, b, ra, rb = a[held], b[held], ra[held], rb[held]
        s = np.empty(len(a), dtype=np.float32)
        for k in range(0, len(a), PAIRS_READ):
            s[k : k + PAIRS_READ] = exact(vectors[ra[k : k + PAIRS_READ]], vectors[rb[k : k + PAIRS_READ]])
        keep = s >= threshold
        return s[keep], a[keep], b[keep]
