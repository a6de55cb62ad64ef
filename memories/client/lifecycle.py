"""What is true now and what the owner reviews: POST /facts/review, the contradictions queue
(/conflicts), near duplicates (/duplicates)."""

from __future__ import annotations

from .answers import Fact, Pair, Proposal
from .errors import NotFound
from .transport import MAX_PAGE


class LifecycleCalls:
    """Mixed into MemoryClient, over Transport's _request and _parse."""

    def review(self, ids) -> tuple[list[int], int | None]:
        """The owner reviewed these facts (up to 200): (the ids reviewed now, the history entry or None)."""
        body = self._request("POST", "/facts/review", json={"ids": [int(i) for i in ids]})
        return self._parse(lambda b: ([int(i) for i in b["reviewed"]], b.get("entry")), body)

    def conflicts(self, *, limit: int = 50, cursor: str | None = None, every: bool = False,
                  done: bool = False) -> tuple[list[Proposal], str | None, int]:
        """Open proposals, newest first: (pairs, next cursor, how many are open). `every`: every pair
        the memory keeps, resolved or no longer asked about too (what a backup holds); `done`: those
        the memory replaced at once (its proposals setting)."""
        params = {"limit": limit, **({"cursor": cursor} if cursor else {}), **({"all": "true"} if every else {}),
                  **({"done": "true"} if done else {})}
        body = self._request("GET", "/conflicts", safe=True, params=params)
        return self._parse(lambda b: ([Proposal.from_json(c) for c in b["conflicts"]], b.get("next_cursor"), int(b["total"])), body)

    def backup_conflicts(self) -> list[dict]:
        """Every pair the memory keeps, oldest first, as a backup's lines hold them (memories/backup.py:
        fact ids, not facts); [] from a memory of contract v3, which has no GET /conflicts."""
        out, cursor = [], None
        while True:
            try:
                pairs, cursor, _ = self.conflicts(limit=MAX_PAGE, cursor=cursor, every=True)
            except NotFound:
                return []
            out += [{"id": p.id, "old": p.old.id, "new": p.new.id, "score": p.score, "differs": p.differs,
                     "resolution": p.resolution} for p in pairs]
            if not cursor:
                return sorted(out, key=lambda p: p["id"])

    def restore_conflicts(self, pairs: list[dict]) -> tuple[int, int]:
        """A backup's pairs put back after its facts, MAX_PAGE a request: (restored, skipped)."""
        restored = skipped = 0
        for start in range(0, len(pairs), MAX_PAGE):
            body = self._request("POST", "/conflicts/restore", json={"conflicts": pairs[start : start + MAX_PAGE]})
            done = self._parse(lambda b: (int(b["restored"]), int(b["skipped"])), body)
            restored, skipped = restored + done[0], skipped + done[1]
        return restored, skipped

    def resolve(self, old: int, new: int, resolution: str) -> tuple[Fact, Fact, int]:
        """replace (new replaces old), keep_old (old replaces new) or keep_both: (old, new, the history entry)."""
        body = self._request("POST", "/conflicts/resolve", json={"old": int(old), "new": int(new), "resolution": resolution})
        return self._parse(lambda b: (Fact.from_json(b["old"]), Fact.from_json(b["new"]), int(b["entry"])), body)

    def duplicates(self, threshold: float = 0.97, *, type: str | None = None, limit: int = 1000) -> tuple[list[Pair], int]:
        params = {"threshold": threshold, "limit": limit, **({"type": type} if type else {})}
        body = self._request("GET", "/duplicates", safe=True, params=params)
        return self._parse(lambda b: ([Pair(Fact.from_json(p["a"]), Fact.from_json(p["b"]), float(p["score"]), p.get("distinct"))
                                       for p in b["pairs"]], int(b.get("total", len(b["pairs"])))), body)

    def nearest(self, type: str | None = None) -> tuple[list[float], float | None]:
        """Each listed fact's cosine with its nearest same-type fact, and the review floor below
        which facts are not listed (None from a memory that lists every fact)."""
        body = self._request("GET", "/duplicates/nearest", safe=True, params={"type": type} if type else None)
        return self._parse(lambda b: ([float(n["score"]) for n in b["nearest"]],
                                      float(b["floor"]) if b.get("floor") is not None else None), body)
