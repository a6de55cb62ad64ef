"""What the owner reviews: near-duplicate pairs, each fact's nearest neighbour (the threshold
histogram) and a fact's neighbours. At or above the review floor the pairs are read from the
table writes keep (pairs.py); below it they are computed from the index."""

from __future__ import annotations

import numpy as np

from ..writes.dedup import distinct
from ..facts import Fact, MemoryFull, clean_type
from ..storage.pairs import top
from ..recall.reading import Reader
from ..storage.state import State
from ..storage.vectors import TYPES


class Review:
    def __init__(self, state: State, reader: Reader):
        self.state = state
        self.reader = reader

    def duplicates(self, threshold: float | None = None, type: str | None = None, limit: int = 1000) -> tuple[list[dict], int]:
        """Same-type pairs with cosine >= threshold, highest first: (pairs, total found)."""
        state = self.state
        types = [clean_type(type)] if type else list(TYPES)
        with state.reading():
            threshold = state.threshold if threshold is None else threshold
            if threshold >= state.floor and state.pairs_built():
                s, a, b = state.pairs.read(threshold, types)
            else:
                if state.full:  # every pair needs the vectors
                    raise MemoryFull(state.full)
                parts = [state.vectors.pairs(t, threshold) for t in types]
                s, a, b = (np.concatenate([p[k] for p in parts]) for k in range(3))
            total = len(s)
            order = top(s, a, b, limit)
            found = list(zip(s[order].tolist(), a[order].tolist(), b[order].tolist()))
            facts = self.reader.get_many({fid for _, a, b in found for fid in (a, b)})
        # `distinct`: why the two may be different facts after all (dedup.py), for the owner's review.
        pairs = [{"a": facts[a].to_dict(), "b": facts[b].to_dict(), "score": s, "distinct": distinct(facts[a].text, facts[b].text)}
                 for s, a, b in found]
        return pairs, total

    def nearest(self, type: str | None = None) -> list[tuple[int, float]]:
        """Each fact's cosine with its nearest same-type neighbour, for a threshold histogram,
        from the pairs kept on write: facts whose nearest is below the floor are not listed."""
        types = [clean_type(type)] if type else list(TYPES)
        with self.state.reading():
            best = self.state.pairs.nearest(types)
        return sorted(best.items())

    def neighbours(self, fact_id: int, limit: int = 10) -> list[tuple[Fact, float]]:
        self.reader.get(fact_id)
        with self.state.reading():
            if self.state.full:
                raise MemoryFull(self.state.full)
            vector = self.state.vectors.vector(fact_id)
            if vector is None:
                return []
            near = self.state.vectors.search(vector.copy(), None, limit, exclude=fact_id)
            facts = self.reader.get_many(f for f, _ in near)
        return [(facts[f], s) for f, s in near]
