"""The contract's answers as the client hands them on: facts, proposals, recalls, history entries
and the rest, each parsed from its JSON (`from_json`) as docs/memory-api.md gives it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime


def parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@dataclass(frozen=True)
class Fact:
    id: int
    text: str
    type: str
    source: str
    created_at: datetime
    updated_at: datetime
    valid_until: datetime | None = None  # after it the fact is no longer current (contract v4)
    superseded_by: int | None = None  # the fact that replaced this one
    reviewed_at: datetime | None = None  # when the owner reviewed it; None: not yet

    @classmethod
    def from_json(cls, d: dict) -> Fact:
        until, reviewed = d.get("valid_until"), d.get("reviewed_at")
        return cls(d["id"], d["text"], d["type"], d.get("source", ""), parse_time(d["created_at"]), parse_time(d["updated_at"]),
                   parse_time(until) if until else None, d.get("superseded_by"), parse_time(reviewed) if reviewed else None)

    @property
    def reviewed(self) -> bool:
        return self.reviewed_at is not None

    def current_at(self, when: datetime) -> bool:
        return self.valid_until is None or self.valid_until > when

    @property
    def status(self) -> str:
        """current, replaced or expired, now."""
        if self.current_at(datetime.now(UTC)):
            return "current"
        return "replaced" if self.superseded_by is not None else "expired"


@dataclass(frozen=True)
class Proposal:
    """A fact a new one may replace (a write's `conflicts`), or an open pair of GET /conflicts."""
    old: Fact
    score: float
    differs: dict  # {"kinds", "old", "new"}: what kind of difference, and the words each has that the other lacks
    new: Fact | None = None
    id: int | None = None  # the pair's id in GET /conflicts
    resolution: str | None = None  # GET /conflicts: None (proposed), "keep_both" or "replace" (done at once)
    replaced: bool = False  # a write's: replaced at once by it (the memory's proposals setting)

    @classmethod
    def from_json(cls, d: dict) -> Proposal:
        if "old" in d:  # GET /conflicts
            return cls(Fact.from_json(d["old"]), float(d["score"]), d["differs"], Fact.from_json(d["new"]), d.get("id"),
                       d.get("resolution"))
        return cls(Fact.from_json(d["fact"]), float(d["score"]), d["differs"], replaced=bool(d.get("replaced")))


@dataclass(frozen=True)
class AddResult:
    fact: Fact
    created: bool
    match: str | None = None
    score: float | None = None
    conflicts: list[Proposal] = field(default_factory=list)
    pending: bool = False  # stored unreviewed where only reviewed facts are recalled

    @classmethod
    def from_json(cls, b: dict) -> AddResult:
        dup = b.get("duplicate") or {}
        return cls(Fact.from_json(b["fact"]), bool(b["created"]), dup.get("match"), dup.get("score"),
                   [Proposal.from_json(c) for c in b.get("conflicts") or []], bool(b.get("pending")))


@dataclass(frozen=True)
class Page:
    facts: list[Fact]
    next_cursor: str | None
    total: int


@dataclass(frozen=True)
class Hit:
    fact: Fact
    score: float
    via: str
    kw_rank: int | None
    vec_rank: int | None
    bm25: float | None = None
    cosine: float | None = None
    parts: dict | None = None  # {"kw", "vec", "rerank"}: what each list (and the rerank) added to the score
    current: bool = True
    reviewed: bool = True
    edited_since: bool = False  # with as_of: its text was edited after then (the text is today's)
    may_be_outdated: bool = False  # an open proposal says a newer fact may replace it


@dataclass(frozen=True)
class Ranked:
    """A place in one list: the keyword list (score is BM25) or the vector list (cosine)."""

    fact: Fact
    rank: int
    score: float
    highlighted: str | None = None


@dataclass(frozen=True)
class Recall:
    results: list[Hit]
    mode: str = "hybrid"
    warning: str | None = None
    kw: list[Ranked] = field(default_factory=list)
    vec: list[Ranked] = field(default_factory=list)
    match: str | None = None
    fusion: dict = field(default_factory=dict)
    information: float | None = None  # method "info": what the keyword list's BM25 is divided by
    terms: list[dict] = field(default_factory=list)  # method "info": {"term", "facts", "idf"} each
    expansions: list[dict] = field(default_factory=list)  # {"word", "term", "cosine"}: words OR-ed into the keyword query
    rerank: dict | None = None  # {"shared", "query", "facts"}: the fused top ranked again without the words it shares


@dataclass(frozen=True)
class Pair:
    a: Fact
    b: Fact
    score: float
    distinct: str | None = None  # why the memory thinks they may be different facts after all


@dataclass(frozen=True)
class HistoryEntry:
    """One thing done to the memory (GET /history): `before` and `after` are the fact (or the
    settings) as they were, as the contract's JSON."""

    id: int
    at: datetime
    client: str
    op: str
    fact_id: int | None
    before: dict | None
    after: dict | None
    note: str
    undone_by: int | None

    @classmethod
    def from_json(cls, d: dict) -> HistoryEntry:
        return cls(int(d["id"]), parse_time(d["at"]), str(d["client"]), str(d["op"]), d.get("fact_id"), d.get("before"),
                   d.get("after"), str(d.get("note") or ""), d.get("undone_by"))


@dataclass(frozen=True)
class LoggedRecall:
    """One recall as a client made it (GET /recalls): `results` is [{"id", "via", "score"}] in order."""

    id: int
    at: datetime
    client: str
    query: str
    type: str | None
    mode: str
    limit: int
    settings: dict
    results: list[dict]
    model: str | None
    ms: float

    @classmethod
    def from_json(cls, d: dict) -> LoggedRecall:
        return cls(int(d["id"]), parse_time(d["at"]), str(d["client"]), str(d["query"]), d.get("type"), str(d["mode"]),
                   int(d["limit"]), dict(d["settings"]), [dict(r) for r in d["results"]], d.get("model"), float(d["ms"]))


@dataclass(frozen=True)
class Health:
    ok: bool
    facts: int
    model: str | None
    dims: int
    mode: str
    engine: str | None = None  # "python" (the local service) or "worker"; None from an older memory
    embedding: dict | None = None  # {calls, waiting_ms}: the model's calls in flight now
