"""The pure parts of recall: the FTS5 query builder and reciprocal rank fusion."""

from __future__ import annotations

import re
from dataclasses import dataclass

# Words too common to say anything about which fact is meant. Question words are here
# because the agent asks in questions ("Who is Priya?").
STOP_WORDS = frozenset(
    """
    a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it
    its itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve don doesn didn isn wasn weren won
    """.split()
)

# unicode61 splits on anything that is not a letter or a digit; match that so every term we
# quote is one FTS5 token and a quote, `*`, `:` or `NEAR` in user text is only ever text.
TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
MAX_TERMS = 64  # a 10 KB query still makes a MATCH that runs in milliseconds


def terms(text: str) -> list[str]:
    """The query's searchable terms: lower-cased, stop words dropped, each once, in order."""
    seen: dict[str, None] = {}
    for token in TOKEN.findall(text.lower()):
        if token not in STOP_WORDS and token not in seen:
            seen[token] = None
            if len(seen) == MAX_TERMS:
                break
    return list(seen)


def match_expression(text: str) -> str:
    """An FTS5 MATCH that ORs the quoted terms, or '' when nothing is left to search."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms(text))


@dataclass(frozen=True)
class Fusion:
    """How the keyword and vector lists are merged (each setting can come per request)."""

    k: int = 60  # reciprocal rank fusion constant
    depth: int = 30  # how many hits each list contributes
    kw_weight: float = 1.0
    vec_weight: float = 1.0

    def contribution(self, rank: int | None, weight: float) -> float:
        return 0.0 if rank is None else weight / (self.k + rank)


def fuse(kw_ids: list[int], vec_ids: list[int], fusion: Fusion) -> list[tuple[int, float, int | None, int | None]]:
    """Reciprocal rank fusion: (id, score, kw_rank, vec_rank), best first, ranks 1-based.

    Ties go to the fact the vector list ranked higher, then the keyword list, then the id,
    so the order never depends on dict iteration.
    """
    kw_rank = {fid: r for r, fid in enumerate(kw_ids, start=1)}
    vec_rank = {fid: r for r, fid in enumerate(vec_ids, start=1)}
    fused = []
    for fid in kw_rank.keys() | vec_rank.keys():
        kr, vr = kw_rank.get(fid), vec_rank.get(fid)
        score = fusion.contribution(kr, fusion.kw_weight) + fusion.contribution(vr, fusion.vec_weight)
        fused.append((fid, score, kr, vr))
    big = 1 << 30
    fused.sort(key=lambda h: (-h[1], h[3] or big, h[2] or big, h[0]))
    return fused


def via(kw_rank: int | None, vec_rank: int | None) -> str:
    return "both" if kw_rank and vec_rank else ("kw" if kw_rank else "vec")
