"""The exact k best rows for one query, over rows of codes: what the facts' index (`search`)
and the vocabulary (`closest`) both answer.

The best k + `extra` rows on their codes are rescored exactly. A row left out scores no more than
the last of them on its code; if that and the widest bound could still reach the k-th exact
cosine, every row that could is rescored too (rare: rows closer together than the codes' error,
as in a crowd of near-copies).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .codes import bound, norms
from .rows import Rows

# (ids) -> (those of them the table holds, their exact cosines with the query)
Rescore = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def exact_top(scored: list[tuple[Rows, np.ndarray]], query: np.ndarray, k: int, extra: int,
              rescore: Rescore) -> tuple[np.ndarray, np.ndarray]:
    """The k best (ids, exact cosines), best first, ties by id, of rows `scored`: each part of
    the rows with its scores on the codes for `query` (-inf for a row left out)."""
    wanted = k + extra
    tops = [(part, s, np.argpartition(-s, min(wanted, part.n) - 1)[:wanted]) for part, s in scored if part.n]
    if not tops:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    best = np.concatenate([s[top] for _, s, top in tops])
    cut = np.partition(best, len(best) - wanted)[len(best) - wanted] if len(best) > wanted else -np.inf
    kept, left = [], []  # the ids rescored; (part, scores, its rows rescored, the most a row left out scores)
    for part, s, top in tops:
        mine = top[s[top] >= cut]
        kept.append(part.fact_ids[mine[s[mine] != -np.inf]])
        if len(mine) < part.n:
            left.append((part, s, mine, cut if len(mine) < len(top) else s[top].min()))
    ids, cosines = rescore(np.concatenate(kept))
    kth = np.sort(cosines)[-k] if len(cosines) >= k else -np.inf
    q1, q2, r1 = norms(query)
    more = []
    for part, s, mine, most in left:
        widest = bound(part.widest, q1, q2, part.dims, r1)
        if most + widest >= kth:
            # (a row left out stays out, even when fewer than k were held and kth is -inf)
            rows = np.setdiff1d(np.flatnonzero((s >= kth - widest) & (s != -np.inf)), mine)
            more.append(part.fact_ids[rows[s[rows] + bound(part.take(rows)[1], q1, q2, part.dims, r1) >= kth]])
    if more:
        extra_ids, extra_cosines = rescore(np.concatenate(more))
        ids, cosines = np.concatenate([ids, extra_ids]), np.concatenate([cosines, extra_cosines])
    order = np.lexsort((ids, -cosines))[:k]
    return ids[order], cosines[order]
