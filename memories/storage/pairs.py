"""Near-duplicate pairs kept on write, one row per fact.

A pair (a, b) with a < b, same type, cosine at or above the review floor, is stored once, in the
row of its larger id: `ids` (little-endian int64) and `scores` (float32) of the fact's smaller-id
neighbours, and `best`, their highest score, so a read skips rows below its threshold undecoded.
A new fact has the largest id, so adding it writes one row at the end of the table. A table of
one row per pair wrote each pair into two b-trees at random places: at 100k templated facts
(about 47 pairs a fact at 0.80) committing those pages cost as much as embedding the facts.

Everything here runs inside the engine's write transaction (state.py `writing`), so the pairs change with
the row, FTS entry and vector they come from, or not at all.
"""

from __future__ import annotations

import sqlite3

import numpy as np

# Removing a fact from its neighbours' rows finds them again by cosine; a recomputed cosine can
# differ from the stored one in the last bits, so look a little below the floor.
MARGIN = 1e-3


def pack(ids: np.ndarray, scores: np.ndarray) -> tuple[float, bytes, bytes]:
    """A row's (best, ids, scores) columns, ids ascending."""
    order = np.argsort(ids, kind="stable")
    ids, scores = ids[order].astype("<i8"), scores[order].astype("<f4")
    return float(scores.max()), ids.tobytes(), scores.tobytes()


def unpack(ids: bytes, scores: bytes) -> tuple[np.ndarray, np.ndarray]:
    return np.frombuffer(ids, "<i8"), np.frombuffer(scores, "<f4")


class Pairs:
    def __init__(self, db: sqlite3.Connection):
        self.db = db

    def _row(self, fid: int) -> tuple[str, np.ndarray, np.ndarray] | None:
        row = self.db.execute("SELECT type, ids, scores FROM neighbours WHERE fact_id = ?", (fid,)).fetchone()
        return (row[0], *unpack(row[1], row[2])) if row else None

    def _put(self, fid: int, type: str, ids: np.ndarray, scores: np.ndarray) -> None:
        if len(ids):
            self.db.execute("INSERT OR REPLACE INTO neighbours (fact_id, type, best, ids, scores) VALUES (?, ?, ?, ?, ?)",
                            (fid, type, *pack(ids, scores)))
        else:
            self.db.execute("DELETE FROM neighbours WHERE fact_id = ?", (fid,))

    def link(self, fid: int, type: str, ids: np.ndarray, scores: np.ndarray, floor: float) -> None:
        """Store fact `fid`'s same-type neighbours `ids` (cosines `scores`) at or above the floor:
        the smaller ids in its own row, itself in the rows of the larger ones (a restored fact
        may have an old id)."""
        keep = (scores >= floor) & (ids != fid)
        ids, scores = ids[keep], scores[keep]
        smaller = ids < fid
        self._put(fid, type, ids[smaller], scores[smaller])
        for other, score in zip(ids[~smaller].tolist(), scores[~smaller].tolist()):
            have = self._row(other)
            old_ids, old_scores = (have[1], have[2]) if have else (np.zeros(0, np.int64), np.zeros(0, np.float32))
            mine = old_ids != fid
            self._put(other, type, np.append(old_ids[mine], fid), np.append(old_scores[mine], np.float32(score)))

    def unlink(self, fid: int, candidates: np.ndarray | None) -> None:
        """Remove every pair of fact `fid`: its own row, and itself from the rows of larger ids.
        `candidates` are the ids whose rows may hold it (its neighbours by cosine, found by the
        caller); None reads every row that lists anything (when its vector is not at hand)."""
        self.db.execute("DELETE FROM neighbours WHERE fact_id = ?", (fid,))
        if candidates is None:
            rows = [r[0] for r in self.db.execute("SELECT fact_id FROM neighbours WHERE fact_id > ?", (fid,))]
        else:
            rows = sorted(set(candidates[candidates > fid].tolist()))
        for other in rows:
            have = self._row(other)
            if have and (have[1] == fid).any():
                keep = have[1] != fid
                self._put(other, have[0], have[1][keep], have[2][keep])

    def clear(self) -> None:
        self.db.execute("DELETE FROM neighbours")

    def put_all(self, type: str, s: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        """Every pair of one type (cosines, smaller ids, larger ids), grouped into rows by b."""
        order = np.lexsort((a, b))
        s, a, b = s[order], a[order], b[order]
        starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]]) if len(b) else np.zeros(0, np.int64)
        ends = np.r_[starts[1:], len(b)]
        self.db.executemany(
            "INSERT INTO neighbours (fact_id, type, best, ids, scores) VALUES (?, ?, ?, ?, ?)",
            ((int(b[i]), type, *pack(a[i:j], s[i:j])) for i, j in zip(starts, ends)),
        )

    def read(self, threshold: float, types: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every pair at or above `threshold` of these types as (cosines, smaller ids, larger ids)."""
        marks = ",".join("?" * len(types))
        rows = self.db.execute(
            f"SELECT fact_id, ids, scores FROM neighbours WHERE best >= ? AND type IN ({marks})", (threshold, *types)
        ).fetchall()
        if not rows:
            return np.zeros(0, np.float32), np.zeros(0, np.int64), np.zeros(0, np.int64)
        a = np.frombuffer(b"".join(r[1] for r in rows), "<i8")
        s = np.frombuffer(b"".join(r[2] for r in rows), "<f4")
        b = np.repeat(np.array([r[0] for r in rows], np.int64), [len(r[1]) // 8 for r in rows])
        keep = s.astype(np.float64) >= threshold  # as SQLite compares the row's best
        return s[keep], a[keep], b[keep]

    def nearest(self, types: list[str]) -> dict[int, float]:
        """Each fact in a pair with its best cosine in any pair (either side)."""
        marks = ",".join("?" * len(types))
        rows = self.db.execute(f"SELECT fact_id, best, ids, scores FROM neighbours WHERE type IN ({marks})", types).fetchall()
        if not rows:
            return {}
        a = np.frombuffer(b"".join(r[2] for r in rows), "<i8")
        s = np.frombuffer(b"".join(r[3] for r in rows), "<f4")
        # A row's best is its fact's best as the larger id; as the smaller, its scores in other rows.
        ids = np.concatenate([np.array([r[0] for r in rows], np.int64), a])
        scores = np.concatenate([np.array([r[1] for r in rows], np.float32), s])
        found, at = np.unique(ids, return_inverse=True)  # ids may be anything up to 2^63: not indexes
        best = np.full(len(found), -np.inf, np.float32)
        np.maximum.at(best, at, scores)
        return dict(zip(found.tolist(), best.astype(np.float64).tolist()))


def top(s: np.ndarray, a: np.ndarray, b: np.ndarray, limit: int) -> np.ndarray:
    """The positions of the `limit` best pairs, by score (highest first), then a, then b,
    without sorting them all: only those at or above the limit-th best score are sorted."""
    if len(s) > limit > 0:
        kth = np.partition(s, len(s) - limit)[len(s) - limit]
        pick = np.flatnonzero(s >= kth)
    else:
        pick = np.arange(len(s))
    return pick[np.lexsort((b[pick], a[pick], -s[pick]))][:limit]
