"""The pure parts of recall, one pipeline: the FTS5 query builder, then `fuse` over the two
candidate lists the store feeds it (keyword hits with BM25, vector hits with cosine, and for
method "info" the query terms' document frequencies). worker/src/recall/ranking.ts mirrors it."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

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


# The agent's facts speak of its user as "the owner"; the user asks as "I": "my sister" is
# "the owner's sister", which FTS5 indexes as "owner s sister".
FIRST_PERSON = {"i": ["owner"], "me": ["owner"], "myself": ["owner"], "mine": ["owner"], "my": ["owner", "s"]}


def tokens(text: str, alias_self: bool = False) -> list[str]:
    found = TOKEN.findall(text.lower())
    if not alias_self:
        return found
    return [t2 for t in found for t2 in FIRST_PERSON.get(t, [t])]


def terms(text: str, alias_self: bool = False) -> list[str]:
    """The query's searchable terms: lower-cased, stop words dropped, each once, in order."""
    seen: dict[str, None] = {}
    for token in tokens(text, alias_self):
        if token not in STOP_WORDS and token not in seen:
            seen[token] = None
            if len(seen) == MAX_TERMS:
                break
    return list(seen)


MAX_PHRASES = 16


def phrases(text: str, alias_self: bool = False) -> list[str]:
    """Runs of adjacent query words that start and end on a searchable term, with at most one
    stop word between ("anna s brother", "spouse called"): a fact that has them in that
    order is the one asked about, not a look-alike that shares the words in another order."""
    words = tokens(text, alias_self)[:512]
    found: dict[str, None] = {}
    for i, first in enumerate(words):
        if first in STOP_WORDS:
            continue
        for j in (i + 1, i + 2):
            if j < len(words) and words[j] not in STOP_WORDS:
                found.setdefault(" ".join(words[i : j + 1]), None)
                break
        if len(found) == MAX_PHRASES:
            break
    return list(found)


def quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def match_expression(text: str, with_phrases: bool = False, alias_self: bool = False, extra: list[str] = ()) -> str:
    """An FTS5 MATCH that ORs the quoted terms (and phrases, and `extra` words: the expansion),
    or '' when nothing is left to search.

    BM25 scores each OR-ed phrase, so a fact matching a whole phrase outranks one with the
    same words scattered."""
    parts = [quote(t) for t in terms(text, alias_self)]
    if with_phrases:
        parts += [quote(p) for p in phrases(text, alias_self)]
    parts += [quote(w) for w in extra]
    return " OR ".join(parts)


def match_terms(match: str) -> list[str]:
    """The quoted terms (and phrases) of a MATCH expression that `match_expression` built."""
    return [t[1:-1].replace('""', '"') for t in match.split(" OR ")] if match else []


# Query expansion: the memory's own words that the model finds close to a query term. The
# vocabulary is each fact's words that could carry meaning (no stop words, digits or words of
# one or two letters), each embedded alone; a query term brings in its closest words.
EXPAND_CLOSEST = 3  # of a term's closest vocabulary words (itself included), those over the bar
# An expansion word more facts hold than this is left out: the keyword query would score every
# one of them (about 1 ms per 1,000 at 1M facts: "met" in 24% of them took recall's p95 from 1.3x
# to 2.7x its p50) for a word that tells few facts apart. Under 50,000 facts it never applies.
EXPAND_MOST_FACTS = 50_000


def expandable(word: str) -> bool:
    return len(word) > 2 and not word.isdigit() and word not in STOP_WORDS


def vocabulary_words(text: str) -> list[str]:
    """The words of a fact that the vocabulary holds, each once, in order."""
    return list(dict.fromkeys(w for w in TOKEN.findall(text.lower()) if expandable(w)))


def expand(query_terms: list[str], closest: list[list[tuple[str, float]]], bar: float) -> list[tuple[str, str, float]]:
    """Words to add to the keyword query, as (word, the term it came from, cosine).

    `closest[i]` holds (word, cosine) for vocabulary words close to the i-th expandable query
    term (at least its EXPAND_CLOSEST closest). Of each term's EXPAND_CLOSEST closest (ties to
    the word first in sort order; the term itself counts), those at or above `bar` that the
    query does not already hold, each once."""
    asked = [t for t in query_terms if expandable(t)]
    found: dict[str, tuple[str, str, float]] = {}
    for term, near in zip(asked, closest):
        for word, cosine in sorted(near, key=lambda wc: (-wc[1], wc[0]))[:EXPAND_CLOSEST]:
            if cosine >= bar and word not in query_terms and word not in found:
                found[word] = (word, term, float(cosine))
    return list(found.values())


def expansion_kept(facts: int) -> bool:
    """Whether an expansion word that `facts` facts hold joins the query: some fact must hold
    it (a word stays in the vocabulary after its last fact goes), and not too many."""
    return 0 < facts <= EXPAND_MOST_FACTS


METHODS = ("rrf", "relative", "ratio", "info")


def idf(rows: int, having: int) -> float:
    """A term's inverse document frequency exactly as FTS5's bm25() computes it."""
    value = math.log((rows - having + 0.5) / (having + 0.5))
    return value if value > 0 else 1e-6


def information(rows: int, having: list[int]) -> float:
    """What a fact matching every query term once, at average length, scores in BM25: the sum
    of the terms' IDFs. A term most facts contain adds almost nothing; a rare one adds a lot."""
    return sum(idf(rows, n) for n in having)


@dataclass(frozen=True)
class Fusion:
    """How the keyword and vector lists are merged (each setting can come per request).

    method "rrf": weight / (k + rank) summed over the lists a fact is in (rank only).
    method "relative": each list's scores min-max scaled to 0..1 over its top `depth`, times
    the list's weight, summed: a fact far ahead in one list keeps its lead (score-aware).
    method "ratio": each score divided by its list's best, times the weight, summed.
    method "info": the vector list as "ratio"; the keyword list's BM25 divided by the query's
    `information` (a fact matching every term once scores about 1) rather than by the best hit,
    so a keyword lead built on words most facts contain ("owner") counts for little.
    """

    k: int = 60  # reciprocal rank fusion constant
    depth: int = 30  # how many hits each list contributes
    kw_weight: float = 1.0
    vec_weight: float = 1.0
    phrases: bool = False  # also match adjacent query words as phrases (see `phrases`)
    method: str = "rrf"
    alias_self: bool = False  # "I", "me", "my" in a query also search for "owner"
    # A vocabulary word joins the keyword query when its cosine with a query term reaches this
    # (`expand`); 0 turns expansion off. Set for MiniLM: another model needs its own.
    expand: float = 0.0
    # How many of the fused top are ranked again with the words they share taken out (`rerank`);
    # 0 turns it off.
    rerank: int = 0

    def match(self, query: str, extra: list[str] = ()) -> str:
        return match_expression(query, self.phrases, self.alias_self, extra)

    def terms(self, query: str, extra: list[str] = ()) -> list[str]:
        """The terms whose document frequencies method "info" needs ([] for other methods)."""
        return terms(query, self.alias_self) + list(extra) if self.method == "info" else []

    def expandable_terms(self, query: str) -> list[str]:
        """The query terms whose closest vocabulary words may join the query ([] when off)."""
        return [t for t in terms(query, self.alias_self) if expandable(t)] if self.expand else []

    def contribution(self, rank: int | None, weight: float) -> float:
        """A list's part of an RRF score."""
        return 0.0 if rank is None else weight / (self.k + rank)

    def parts(self, kw: list[tuple[int, float]], vec: list[tuple[int, float]],
              info: float | None = None) -> dict[int, tuple[float, float, int | None, int | None]]:
        """Each listed fact's (keyword part, vector part, keyword rank, vector rank).

        kw and vec are (id, score) best first, higher scores better (so BM25 comes negated);
        `info` is the query's `information`, which method "info" divides BM25 by."""
        out: dict[int, list] = {}
        for slot, (hits, weight) in enumerate(((kw, self.kw_weight), (vec, self.vec_weight))):
            if self.method != "rrf" and hits:
                top, bottom = hits[0][1], hits[-1][1] if self.method == "relative" else 0.0
                if self.method == "info" and slot == 0 and info:
                    top = info
                span = top - bottom
            for rank, (fid, score) in enumerate(hits, start=1):
                entry = out.setdefault(fid, [0.0, 0.0, None, None])
                if self.method != "rrf":
                    entry[slot] = weight * ((score - bottom) / span if span > 0 else 1.0)
                else:
                    entry[slot] = self.contribution(rank, weight)
                entry[slot + 2] = rank
        return {fid: tuple(e) for fid, e in out.items()}


@dataclass
class Fused:
    id: int
    kw_rank: int | None
    vec_rank: int | None
    kw_part: float
    vec_part: float
    rerank_part: float = 0.0

    @property
    def score(self) -> float:
        return self.kw_part + self.vec_part + self.rerank_part

    def sort_key(self) -> tuple:
        big = 1 << 30
        return (-self.score, self.vec_rank or big, self.kw_rank or big, self.id)


def fuse(kw: list[tuple[int, float]], vec: list[tuple[int, float]], fusion: Fusion, info: float | None = None) -> list[Fused]:
    """Fused hits, best first, ranks 1-based: the whole of ranking, given the two lists.

    kw is (id, -bm25) and vec (id, cosine), each best first; `info` is the query's
    `information` (method "info" only). Ties go to the fact the vector list ranked higher,
    then the keyword list, then the id, so the order never depends on dict iteration.
    """
    fused = [Fused(fid, kr, vr, kp, vp) for fid, (kp, vp, kr, vr) in fusion.parts(kw, vec, info).items()]
    fused.sort(key=Fused.sort_key)
    return fused


# Reranking the fused top. The facts at the top often share the words that made them candidates
# ("Cosima" in every fact about Cosima), and those words dominate both lists, so the fact that
# answers ("Cosima Jaramillo reports to Ulla Pereira." for "who is cosima's boss") can sit below
# her other facts. The top facts and the query are embedded again without the words the top
# shares, and each fact gains its cosine there (as a share of the best, times RERANK_WEIGHT):
# the model then compares what tells them apart. Chosen on the seen sets, then run once on the
# unseen (docs/recall-quality.md).
RERANK_SHARED = 2  # a query term at least this many of the top facts hold is shared
RERANK_WEIGHT = 0.5


@dataclass(frozen=True)
class Rerank:
    """What reranking the top embeds: the query and each top fact without the shared words."""

    shared: list[str]
    query: str
    facts: list[str]


def without(text: str, words: set[str]) -> str:
    """`text` with every word in `words` (lower-case tokens) taken out, the rest as written."""
    return TOKEN.sub(lambda m: "" if m.group(0).lower() in words else m.group(0), text).strip()


def rerank_plan(query: str, texts: list[str], alias_self: bool = False) -> Rerank | None:
    """The texts to embed to rerank the facts `texts` (the fused top, best first), or None when
    there is nothing to do: under two facts, no shared query term, or nothing left of the query.
    What is left may be stop words only ("who is 's" for "who is anna's sister"): measured on
    2026-12-01, leaving those alone cost 21 questions at rank 1 on the seen sets (lookalikes
    96 -> 76) for +1 on the unseen, so they are reranked (docs/recall-quality.md)."""
    if len(texts) < 2:
        return None
    held = [set(tokens(t)) for t in texts]
    shared = [t for t in terms(query, alias_self) if expandable(t) and sum(t in h for h in held) >= RERANK_SHARED]
    if not shared:
        return None
    words = set(shared)
    rest = without(query, words)
    if not TOKEN.search(rest):
        return None
    return Rerank(shared, rest, [without(t, words) for t in texts])


def rerank(head: list[Fused], cosines: list[float]) -> list[Fused]:
    """The fused top again, each fact given RERANK_WEIGHT times its cosine (with the query, both
    without the shared words) over the best of them. Unchanged when no cosine is above 0."""
    best = max(cosines, default=0.0)
    if best <= 0:
        return head
    for hit, cosine in zip(head, cosines):
        hit.rerank_part = RERANK_WEIGHT * cosine / best
    return sorted(head, key=Fused.sort_key)


def via(kw_rank: int | None, vec_rank: int | None) -> str:
    return "both" if kw_rank and vec_rank else ("kw" if kw_rank else "vec")


SEED = Fusion()  # the design we started from: RRF, k=60, top 30 each
# The default, chosen on evaluation sets written before it and run once per candidate
# (docs/recall-quality.md): score-aware fusion with the keyword list weighed by how informative its
# matched terms are, and query terms expanded to the memory's own words the model finds close
# (cosine >= 0.65, chosen on the seen sets, then run once on the unseen), then the top 5 ranked
# again without the words they share (`rerank`: the same way). Phrases and "my" as "the owner's"
# stay available per request; on the unseen sets they changed nothing, so they are off.
DEFAULT = replace(SEED, method="info", expand=0.65, rerank=5)
PRESETS = {"default": DEFAULT, "seed": SEED}
