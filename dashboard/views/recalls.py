"""The agent's recalls, from the memory's recall log: what each client asked and what it got,
and "then vs now" for one of them (what it got beside what the memory answers today)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET
from django.views.decorators.vary import vary_on_headers

from memories.client import BadRequest, Fact, LoggedRecall, MemoryClient, Recall

from ..memory import memory
from .history import names

PAGE_SIZE = 30
SHOWN = 3  # facts a row shows, as the agent got them
FUSION_KEYS = ("k", "depth", "kw_weight", "vec_weight", "phrases", "method", "alias_self", "expand", "rerank")


@dataclass(frozen=True)
class Got:
    """One fact a recall returned: its place then, and what became of it since."""

    rank: int
    id: int
    via: str
    score: float
    fact: Fact | None  # as it is now; None when deleted since
    edited: bool  # changed since the recall
    given: str | None  # the text the agent was given (None: logged before the log kept it, or forgotten)
    forgotten: bool  # forgotten for good since: the log keeps only its id


def got(recall: LoggedRecall, now: dict[int, Fact], limit: int | None = None) -> list[Got]:
    results = recall.results[:limit] if limit else recall.results
    return [Got(rank, r["id"], r["via"], r["score"], now.get(r["id"]), edited_since(r, now.get(r["id"]), recall.at),
                r.get("text"), bool(r.get("forgotten")))
            for rank, r in enumerate(results, start=1)]


def edited_since(result: dict, fact: Fact | None, at: datetime) -> bool:
    """Changed after the recall; of a fact replaced or expired since, only when its text did
    (its replacement changed its row too: "replaced by #N" says that)."""
    if fact is None or fact.updated_at <= at:
        return False
    return fact.status == "current" or (result.get("text") is not None and result["text"] != fact.text)


def debug_url(recall: LoggedRecall) -> str:
    """The recall debugger with this recall's query, type, limit, mode and settings, and its then/now band."""
    params = {"q": recall.query, "type": recall.type or "", "limit": recall.limit, "recall": recall.id}
    if recall.mode in ("keyword", "vector"):
        params["mode"] = recall.mode
    params.update({f"f_{k}": v for k, v in recall.settings.items() if k in FUSION_KEYS})
    return reverse("recall") + "?" + urlencode(params)


@require_GET
@vary_on_headers("HX-Request")
def recall_log(request: HttpRequest) -> HttpResponse:
    client = memory(request.memory)
    q = request.GET.get("q", "").strip()[:1000]
    who = request.GET.get("client", "").strip()[:64]
    empty = request.GET.get("empty") == "1"
    try:
        recalls, cursor, total = client.recalls(limit=PAGE_SIZE, cursor=request.GET.get("cursor") or None,
                                                client=who or None, q=q or None, empty=empty)
    except BadRequest as e:  # a mangled cursor or client name typed into the URL
        recalls, cursor, total, error = [], None, 0, e.message
    else:
        error = None
    now = client.facts(r["id"] for rec in recalls for r in rec.results[:SHOWN])
    rows = [{"recall": rec, "top": got(rec, now, SHOWN), "debug": debug_url(rec)} for rec in recalls]
    context = {"rows": rows, "next_cursor": cursor, "total": total, "q": q, "who": who, "empty": empty, "error": error}
    if request.htmx:  # the rows only: the filter form and its suggestions stay
        return render(request, "recalls.html#recall-rows", context)
    newest = recalls if not (q or who or empty or request.GET.get("cursor")) else client.recalls(limit=100)[0]
    return render(request, "recalls.html", {**context, "clients": names(r.client for r in newest)})


MAX_LOG_PAGES = 20  # 2,000 recalls, the log's default size, at 100 a request


@dataclass(frozen=True)
class Returned:
    """Which facts the logged recalls returned, and how far back the log reaches."""

    ids: set[int]
    recalls: int
    since: datetime | None


def returned(client: MemoryClient) -> Returned:
    """Every fact id the recall log holds (the newest MAX_LOG_PAGES hundred recalls)."""
    ids: set[int] = set()
    cursor, seen, oldest = None, 0, None
    for _ in range(MAX_LOG_PAGES):
        found, cursor, _ = client.recalls(limit=100, cursor=cursor)
        ids.update(r["id"] for rec in found for r in rec.results)
        seen += len(found)
        oldest = found[-1].at if found else oldest
        if not cursor:
            break
    return Returned(ids, seen, oldest)


@dataclass(frozen=True)
class Change:
    """One fact in the then/now band."""

    id: int
    then: int | None  # its rank in what the agent got
    now: int | None  # its rank in what the memory answers today
    fact: Fact | None
    status: str  # kept, moved, edited, deleted, replaced, expired, dropped, new
    given: str | None = None  # the text the agent was given, when the log kept it


def then_and_now(client: MemoryClient, recall: LoggedRecall, now: Recall) -> list[Change]:
    """What the agent got beside what the memory returns now, each fact marked."""
    current = {h.fact.id: i for i, h in enumerate(now.results, start=1)}
    facts = client.facts(r["id"] for r in recall.results) | {h.fact.id: h.fact for h in now.results}
    changes = []
    for g in got(recall, facts):
        rank_now = current.get(g.id)
        if g.fact is None:
            status = "deleted"
        elif g.fact.status != "current":  # replaced or expired since: its end is the news, not the edit that set it
            status = g.fact.status
        elif g.edited:
            status = "edited"
        elif rank_now is None:
            status = "dropped"
        else:
            status = "kept" if rank_now == g.rank else "moved"
        changes.append(Change(g.id, g.rank, rank_now, g.fact, status, g.given))
    then_ids = {r["id"] for r in recall.results}
    changes += [Change(h.fact.id, None, i, h.fact, "new") for i, h in enumerate(now.results, start=1)
                if h.fact.id not in then_ids]
    return changes
