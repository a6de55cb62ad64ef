"""The read path: recall and explain, each one pipeline from top to bottom.

1. The model, outside the lock: the query's vector, and its expandable terms' vectors (a term
   the vocabulary holds keeps its stored vector).
2. Under one read (`state.reading()`), so every id ranked has its row:
   the plan (vocabulary words close to the query's terms, the FTS5 query), the two candidate
   lists (BM25 from reading.py; cosine from the index, its scan of the codes on another thread
   beside the plan and the keyword list), the terms' counts, `recall.fuse`, and the rows of
   what will be shown.
3. The model again, outside the lock: `recall.rerank` over the fused top.
Ranking decisions are recall.py's pure functions; this file only feeds them what they need.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from functools import cache, partial

import numpy as np

from ..facts import MODES, Fact, InvalidInput, check_query
from ..review.history import edited_after
from ..writes.lifecycle import clean_as_of, is_current
from ..writes.lifecycle import hidden as hidden_sql
from .outdated import newer_first, older_of
from .reading import Reader
from .ranking import TOKEN, Fused, Fusion, expand, expansion_kept, fuse, match_terms, rerank, rerank_plan, terms, via
from ..storage.state import State

log = logging.getLogger(__name__)


@cache
def _beside() -> ThreadPoolExecutor:
    """Where recall's vector scans run beside their keyword lists. Each memory recalls under its
    own lock, so these threads serve several memories at once; a fifth at once queues."""
    return ThreadPoolExecutor(4, thread_name_prefix="recall")


@dataclass
class Ranking:
    """What step 2 found: the FTS5 query and its expansions, both lists, the fused order, and the
    query terms' counts and information (for the "info" method and the debugger)."""

    match: str
    expansions: list[dict]
    kw: list[tuple[int, float]]
    vec: list[tuple[int, float]]
    fused: list[Fused]
    counts: list[dict]
    info: float | None


class Searcher:
    def __init__(self, state: State, reader: Reader):
        self.state = state
        self.reader = reader

    def recall(self, query: str, type: str | None = None, limit: int = 15, debug: bool = False,
               fusion: Fusion | None = None, mode: str = "hybrid", as_of: str | None = None,
               include_stale: bool = False) -> dict:
        """Hybrid recall, or `mode` "keyword" / "vector" for one list alone. A mode that needs the
        model when it is down answers by keyword and says so (mode "keyword-only", a warning).
        From the facts current now, or `as_of` then; `include_stale`: from every fact."""
        check_query(query, type)
        as_of = clean_as_of(as_of)
        if mode not in MODES:
            raise InvalidInput(f"mode must be one of {', '.join(MODES)}")
        fusion = fusion or self.state.fusion
        qvec, term_vectors, warning = self._query_vectors(query, fusion, mode) if mode != "keyword" else (None, None, None)
        if qvec is None and mode != "keyword":
            mode = "keyword"
        with self.state.reading():
            started = time.perf_counter()
            hidden = self._hidden(as_of, include_stale)
            ranking = self._rank(query, qvec, term_vectors, type, fusion, mode, hidden)
            kw, vec = ranking.kw, ranking.vec
            fused = ranking.fused[: max(limit, fusion.rerank if mode == "hybrid" else 0)]
            wanted = {h.id for h in fused}
            if debug:
                wanted |= {fid for fid, _ in kw} | {fid for fid, _ in vec}
                marked = dict(self.reader.matching(ranking.match, [fid for fid, _ in kw],
                                                   "rowid, highlight(facts_fts, 0, char(2), char(3))"))
            # Under the same lock as the ranking: a delete in between would leave a ranked id with no row.
            facts = self.reader.get_many(wanted)
            read = self.state.text_vectors.generation  # a forget after this: the rerank keeps no text
            edited = edited_after(self.state.db, [h.id for h in fused], as_of) if as_of else set()
            older = older_of(self.state.db, [h.id for h in fused]) if as_of is None else {}
            rank_ms = (time.perf_counter() - started) * 1000
        fused, reranked = self._rerank(query, fused, fusion, facts, read) if mode == "hybrid" else (fused, None)
        by_id = {h.id: h for h in fused}
        fused = [by_id[i] for i in newer_first([h.id for h in fused], older)][:limit]
        bm25 = dict(kw)
        cosine = dict(vec)
        out: dict = {
            "results": [
                {
                    "fact": facts[h.id].to_dict(),
                    "current": is_current(facts[h.id].valid_until, facts[h.id].created_at, as_of),
                    "reviewed": facts[h.id].reviewed_at is not None,
                    "score": h.score,
                    "via": via(h.kw_rank, h.vec_rank),
                    "kw_rank": h.kw_rank,
                    "vec_rank": h.vec_rank,
                    "bm25": bm25.get(h.id),
                    "cosine": cosine.get(h.id),
                    "parts": {"kw": h.kw_part, "vec": h.vec_part, "rerank": h.rerank_part},
                    "may_be_outdated": h.id in older,
                } | ({"edited_since": h.id in edited} if as_of else {})
                for h in fused
            ],
            "mode": "keyword-only" if warning else mode,
        }
        if warning:
            out["warning"] = warning
        if debug:
            out["kw"] = [
                {"fact": facts[f].to_dict(), "rank": r, "bm25": s, "highlighted": marked.get(f, facts[f].text)}
                for r, (f, s) in enumerate(kw, 1)
            ]
            out["vec"] = [{"fact": facts[f].to_dict(), "rank": r, "cosine": s} for r, (f, s) in enumerate(vec, 1)]
            out["match"] = ranking.match
            out["expansions"] = shown(ranking.expansions)
            out["rerank"] = reranked
            out["information"] = ranking.info
            out["terms"] = ranking.counts
            out["fusion"] = asdict(fusion)
            out["timing"] = {"rank_ms": rank_ms}  # ranking and reading the rows, not the embedding
        return out

    def explain(self, query: str, fact_id: int, type: str | None = None, fusion: Fusion | None = None,
                as_of: str | None = None, include_stale: bool = False) -> dict:
        """Why one fact ranks where it does for a query, list by list, among the facts recall
        answers from (`as_of`, `include_stale` as recall takes them)."""
        check_query(query, type)
        as_of = clean_as_of(as_of)
        self.reader.get(fact_id)  # an unknown id is a 404 before the model spends time on the query
        fusion = fusion or self.state.fusion
        qvec, term_vectors, warning = self._query_vectors(query, fusion)
        with self.state.reading():
            fact = self.reader.get(fact_id)  # again under the lock: it may have been deleted meanwhile
            # Its parts of the fused score come from the ranking recall uses, so the two agree.
            hidden = self._hidden(as_of, include_stale)
            ranking = self._rank(query, qvec, term_vectors, type, fusion, "hybrid", hidden)
            match = ranking.match
            fact_terms = self.reader.fact_terms(fact_id)
            current = is_current(fact.valid_until, fact.created_at, as_of)
            answered = not hidden or fact_id not in set(hidden[1])  # a fact recall leaves out has no rank among those it answers from
            found = self.reader.bm25_rank(match, fact_id, type, hidden and hidden[0]) if match and (not type or fact.type == type) else None
            bm25, kw_rank = found if found else (None, None)
            vec_rank, cosine = self.state.vectors.rank_of(qvec, fact_id, type, hidden[1] if hidden else ()) if qvec is not None else (None, None)
            if not answered:
                kw_rank = vec_rank = None
            fused = ranking.fused
            top = self.reader.get_many(h.id for h in fused[: fusion.rerank]) if qvec is not None else {}
            read = self.state.text_vectors.generation
        if qvec is not None:
            fused, _ = self._rerank(query, fused, fusion, top, read)
        query_terms = set(self.reader.tokens(" ".join(match_terms(match))))
        fused_rank, hit = next(((i, h) for i, h in enumerate(fused, 1) if h.id == fact_id), (None, None))
        parts = {"kw": hit.kw_part, "vec": hit.vec_part, "rerank": hit.rerank_part} if hit else {"kw": 0.0, "vec": 0.0, "rerank": 0.0}
        result = {
            "fact": fact.to_dict(),
            "match": match,
            "query_terms": sorted(query_terms),
            "fact_terms": fact_terms,
            "matched_terms": sorted(query_terms & set(fact_terms)),
            "bm25": bm25,
            "kw_rank": kw_rank,
            "cosine": cosine,
            "vec_rank": vec_rank,
            "depth": fusion.depth,
            "kw_contribution": parts["kw"],
            "vec_contribution": parts["vec"],
            "rerank_contribution": parts["rerank"],
            "score": parts["kw"] + parts["vec"] + parts["rerank"],
            "information": ranking.info,
            "expansions": shown(ranking.expansions),
            "fused_rank": fused_rank,
            "current": current,
            "fusion": asdict(fusion),
        }
        if warning:
            result["warning"] = warning
        return result

    # -- the steps ---------------------------------------------------------------------

    def _query_vectors(self, query: str, fusion: Fusion, mode: str = "hybrid") -> tuple[np.ndarray | None, np.ndarray | None, str | None]:
        """Step 1: the query's vector, its expandable terms' vectors for hybrid recall (a term the
        vocabulary holds keeps its stored vector) and a warning when the model is down."""
        state = self.state
        if not state.embedder:
            return None, None, "the embedding model is not loaded: keyword-only recall"
        if state.full:
            return None, None, f"{state.full} (memory_full: keyword-only recall)"
        try:
            asked = fusion.expandable_terms(query) if mode == "hybrid" else []
            if asked:
                state.vocabulary_ready.wait()  # a memory from before it: its words first
            vectors = state.vocab.vectors(asked)
            lacking = [t for t in asked if t not in vectors]
            # One model call at most (none for a query asked before): a text's vector does not
            # depend on the others in its batch.
            qvec, *fresh = state.text_vectors.embed([query, *lacking], state.embedder.embed)
            vectors |= dict(zip(lacking, fresh))
            return qvec, np.array([vectors[t] for t in asked]) if asked else None, None
        except Exception as e:
            return None, None, f"the embedding model failed ({e}): keyword-only recall"

    def _hidden(self, as_of: str | None, include_stale: bool) -> tuple[tuple[str, list], tuple[int, ...]] | None:
        """The facts recall leaves out (inside the read the caller holds): the SQL the keyword
        list excludes them by, and their ids for the vector search; None when none are."""
        if include_stale:
            return None
        sql, args = hidden_sql(as_of, pending=self.state.review["mode"] == "before")
        ids = self.state.stale() if as_of is None else tuple(r[0] for r in self.state.db.execute(sql, args))
        return ((sql, args), ids) if ids else None

    def _rank(self, query: str, qvec: np.ndarray | None, term_vectors: np.ndarray | None, type: str | None,
              fusion: Fusion, mode: str = "hybrid", hidden: tuple[tuple[str, list], tuple[int, ...]] | None = None) -> Ranking:
        """Step 2, under the read the caller holds: plan, the two lists (without the `hidden`
        facts), the counts, fuse."""
        # A scan of the codes long enough to use the pool starts on another thread, and the keyword
        # list is built beside it: numkong and SQLite both let go of the GIL. The scan is waited
        # for before anything else, an error included: no write may change the rows under it. A
        # shorter scan costs less here than the hand-off (at 10k facts 1.85 against 2.15 ms p50;
        # at 100k beside is 6.45 against 6.64: docs/performance.md).
        vectors = self.state.vectors
        scans = mode != "keyword" and qvec is not None and len(vectors)
        scan = partial(vectors.scan, qvec, type, None, hidden[1] if hidden else ())
        scanning = _beside().submit(scan) if scans and vectors.pooled(type) else None
        try:
            # The plan: the FTS5 query, with the expansions in it (hybrid recall only).
            expansions = self._expansions(query, term_vectors, fusion) if mode == "hybrid" else []
            words = [e["word"] for e in expansions]
            match = fusion.match(query, words) if mode != "vector" else ""
            kw = self.reader.keyword(match, type, fusion.depth, hidden[1] if hidden else ()) if mode != "vector" else []
        finally:
            if scanning:
                wait([scanning])
        scored = scanning.result() if scanning else scan() if scans else None
        vec = vectors.top(scored, qvec, fusion.depth) if scored is not None else []
        # How much the keyword list's terms tell (method "info"), and the fused order.
        counts, info = self.reader.term_counts(fusion.terms(query, words), expansions) if kw else ([], None)
        fused = fuse([(fid, -score) for fid, score in kw], vec, fusion, info)
        return Ranking(match, expansions, kw, vec, fused, counts, info)

    def _expansions(self, query: str, term_vectors: np.ndarray | None, fusion: Fusion) -> list[dict]:
        """Vocabulary words close to the query's terms (recall.expand), with how many facts hold
        each; a word no fact holds any more, or too many (recall.expansion_kept), is left out."""
        if term_vectors is None or not fusion.expand:
            return []
        found = expand(terms(query, fusion.alias_self), self.state.vocab.closest(term_vectors), fusion.expand)
        out = [{"word": w, "term": t, "cosine": c, "facts": self.reader.having(w)} for w, t, c in found]
        return [e for e in out if expansion_kept(e["facts"])]

    def _rerank(self, query: str, fused: list[Fused], fusion: Fusion, facts: dict[int, Fact],
                read: int | None = None) -> tuple[list[Fused], dict | None]:
        """Step 3: recall.rerank over the fused top `fusion.rerank`, and what it did (None when
        nothing). Outside the lock: a model call, over rows already read. The model failing
        leaves the order."""
        embedder = self.state.embedder
        head = fused[: fusion.rerank]
        plan = rerank_plan(query, [facts[h.id].text for h in head], fusion.alias_self) if embedder else None
        if plan is None:
            return fused, None
        # A fact with nothing left but the shared words (and punctuation) is not sent: Workers AI
        # refuses an empty text, and there is nothing of it to compare. Its cosine is 0.
        sent = [t for t in plan.facts if TOKEN.search(t)]
        try:
            qvec, *vectors = self.state.text_vectors.embed([plan.query, *sent], embedder.embed, since=read)
        except Exception:
            log.exception("reranking failed; the fused order stands")
            return fused, None
        found = iter(vectors)
        cosines = [float(next(found) @ qvec) if TOKEN.search(t) else 0.0 for t in plan.facts]
        done = {"shared": plan.shared, "query": plan.query,
                "facts": [{"id": h.id, "text": t, "cosine": c} for h, t, c in zip(head, plan.facts, cosines)]}
        return rerank(head, cosines) + fused[len(head):], done


def shown(expansions: list[dict]) -> list[dict]:
    """An expansion as the contract shows it."""
    return [{k: e[k] for k in ("word", "term", "cosine")} for e in expansions]
