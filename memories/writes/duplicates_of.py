"""Which stored fact a write duplicates: the same text (ignoring case) among current facts, a
replaced fact that said it, or the nearest same-type fact at the threshold that differs in no
number, date, name or negation (dedup.py), or says it with or without its subject. The write path
(writing.py) asks, inside its transaction."""

from __future__ import annotations

import numpy as np

from .dedup import SUBJECT_FLOOR, distinct, same_but_subject, spellings
from ..facts import NEAR_CANDIDATES, Fact, now, text_key
from .lifecycle import is_current
from ..recall.reading import Reader
from ..storage.state import State

CURRENT = "(valid_until IS NULL OR valid_until > ?)"


class Duplicates:
    def __init__(self, state: State, reader: Reader):
        self.state = state
        self.reader = reader

    def exact(self, text: str, type: str, exclude: int | None = None,
                         leave: tuple[int, ...] = ()) -> tuple[int, str, float] | None:
        """A current same-type fact with the same text (ignoring case), but those in `leave`."""
        marks = ",".join("?" * len(leave))
        row = self.state.db.execute(
            f"SELECT id FROM facts WHERE type = ? AND text_key = ? AND id IS NOT ? AND {CURRENT} AND id NOT IN ({marks}) LIMIT 1",
            (type, text_key(text), exclude, now(), *leave),
        ).fetchone()
        return (row[0], "exact", 1.0) if row else None

    def replaced(self, text: str, type: str) -> tuple[int, str, float] | None:
        """A replaced same-type fact with the same text, or the same without its subject: the write
        answers it rather than storing what was true before again (with `supersedes`, the client
        says it is true again)."""
        keys = spellings(text)
        row = self.state.db.execute(
            f"SELECT id FROM facts WHERE type = ? AND text_key IN ({', '.join('?' * len(keys))}) AND superseded_by IS NOT NULL"
            " ORDER BY id DESC LIMIT 1", (type, *keys)).fetchone()
        return (row[0], "replaced", 1.0) if row else None

    def current_closest(self, ids: np.ndarray, scores: np.ndarray, floor: float, leave: tuple[int, ...],
                         most: int, read: dict[int, Fact] | None = None) -> tuple[dict[int, Fact], list[tuple[int, float]]]:
        """Of the same-type facts `ids` with their cosines `scores`, those at or above `floor` and
        not in `leave`, best score first, then lowest id: the facts read, and the first `most`
        current ones as (id, cosine). Rows are read a few at a time: a crowd is mostly current,
        and a batch's own neighbours can be hundreds. `read`: rows one write has read already for
        the same new fact (its dedup and its proposals look at the same neighbours), kept there."""
        keep = (scores >= floor) & ~np.isin(ids, np.array(leave, dtype=np.int64))
        ids, scores = ids[keep], scores[keep]
        order = np.lexsort((ids, -scores))
        closest = list(zip(ids[order].tolist(), scores[order].tolist()))
        facts: dict[int, Fact] = {}
        read = {} if read is None else read
        current: list[tuple[int, float]] = []
        for start in range(0, len(closest), 4 * most):
            part = closest[start : start + 4 * most]
            read |= self.reader.get_many(fid for fid, _ in part if fid not in read)
            facts |= {fid: read[fid] for fid, _ in part if fid in read}
            current += [(fid, s) for fid, s in part if fid in facts and is_current(facts[fid].valid_until, "")]
            if len(current) >= most:
                break
        return facts, current[:most]

    def near(self, text: str, ids: np.ndarray, scores: np.ndarray,
             leave: tuple[int, ...] = (), read: dict[int, Fact] | None = None) -> tuple[int, str, float] | None:
        """Of the same-type facts `ids` with their cosines `scores`, the first current one at or
        above the threshold that says the same thing (best score first, then lowest id): one that
        differs in a number, date, name or negation is another fact (dedup.py)."""
        read = {} if read is None else read
        facts, near = self.current_closest(ids, scores, self.state.threshold, tuple(leave), NEAR_CANDIDATES, read)
        found = next(((fid, "near", s) for fid, s in near if distinct(text, facts[fid].text) is None), None)
        if found:
            return found
        # The same text with or without "The owner" scores below the threshold: its own look.
        facts, near = self.current_closest(ids, scores, SUBJECT_FLOOR, tuple(leave), NEAR_CANDIDATES, read)
        return next(((fid, "near", s) for fid, s in near if same_but_subject(text, facts[fid].text)), None)
