"""The recall debugger: keyword, vector and fused rankings of one query side by side."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memories.client import BadRequest, NotFound, parse_time

from ..forms import RecallForm
from ..memory import memory
from .recalls import then_and_now

WORD = re.compile(r"\w")  # a letter or digit: what a keyword search could look for


def fusion_from_url(params) -> dict:
    """Settings in the URL (`f_method=rrf&f_rerank=0`), as a logged recall or a comparison links
    them: the debugger ranks as that recall did. A value that is not one is left out."""
    fusion = {}
    for key, cast in FUSION_TYPES.items():
        value = params.get(f"f_{key}")
        if value in (None, ""):
            continue
        try:
            fusion[key] = cast(value)
        except ValueError:
            continue
    return fusion


def as_bool(value: str) -> bool:
    if value.lower() in ("true", "1", "on"):
        return True
    if value.lower() in ("false", "0", "off"):
        return False
    raise ValueError(value)


FUSION_TYPES = {"preset": str, "k": int, "depth": int, "kw_weight": float, "vec_weight": float, "phrases": as_bool, "method": str,
                "alias_self": as_bool, "expand": float, "rerank": int}


@require_GET
def recall_debugger(request: HttpRequest) -> HttpResponse:
    form = RecallForm(request.GET or None)
    context: dict = {"form": form}
    if form.is_bound and form.is_valid() and form.cleaned_data["q"].strip():
        q = form.cleaned_data["q"]
        type = form.cleaned_data.get("type") or None
        limit = form.cleaned_data.get("limit") or 15
        pin = form.cleaned_data.get("pin")
        settings = fusion_from_url(request.GET)
        lifecycle = form.lifecycle()
        client = memory(request.memory)
        try:
            # The owner's look: not logged.
            result = client.recall(q, type=type, limit=limit, debug=True, fusion=settings or None, log=False,
                                   **lifecycle)
        except BadRequest as e:
            form.add_error("q", e.message)
            return render(request, "recall.html", context, status=422)
        context["settings"] = settings
        # The links that rank again (pin, the memory's own settings) keep these as well as the settings.
        when = {k: v for k, v in {"as_of": request.GET.get("as_of") if lifecycle["as_of"] else None,
                                  "include_stale": "on" if lifecycle["include_stale"] else None}.items() if v}
        context["settings_query"] = urlencode({**{f"f_{k}": v for k, v in settings.items()}, **when})
        context["when_query"] = urlencode(when)
        context["stale"] = stale_marks(result, lifecycle["as_of"])
        logged = then_now(client, request.GET.get("recall"), result, settings)
        if logged:
            context.update(logged)
        fused = [{"hit": h, "rank": i, **contributions(h, result.fusion)} for i, h in enumerate(result.results, start=1)]
        context.update(result=result, fused=fused, query=q, pin=pin, fusion=result.fusion,
                       # an empty MATCH: no word at all ('"', '*', emoji), or only stop words
                       has_words=bool(WORD.search(q)))
        if result.rerank:  # one click to turn it off: the memory's own settings, the rerank at 0
            context["rerank_off"] = json.dumps({**client.settings()["fusion"], "rerank": 0})
        if pin:
            try:
                context["explain"] = client.explain(q, pin, type=type, **lifecycle)
            except (NotFound, BadRequest):  # a memory may refuse an id it could never hold rather than miss it
                context["pin_missing"] = True
            else:
                fused_ids = [h.fact.id for h in result.results]
                context["pin_fused_rank"] = fused_ids.index(pin) + 1 if pin in fused_ids else None
    return render(request, "recall.html", context, status=400 if form.is_bound and form.errors else 200)


def stale_marks(result, as_of: str | None) -> dict[int, str]:
    """The facts of every column that were not current when recall answered (now, or `as_of`):
    {id: "replaced" or "expired"}. The fused list says it of each hit; the keyword and vector
    lists hold the same facts, judged by their validity."""
    at = parse_time(as_of) if as_of else datetime.now(UTC)
    marks = {h.fact.id: h.fact for h in result.results if not h.current}
    marks |= {r.fact.id: r.fact for r in [*result.kw, *result.vec] if not r.fact.current_at(at)}
    return {fid: "replaced" if f.superseded_by is not None else "expired" for fid, f in marks.items()}


def then_now(client, recall_id: str | None, result, settings: dict) -> dict | None:
    """For a recall opened from the Recalls page: what the agent got then beside what the memory
    answers now, under the same settings (and the same mode, when it was not hybrid)."""
    if not recall_id or not recall_id.isdigit() or len(recall_id) > 15:
        return None
    try:
        logged = client.logged_recall(int(recall_id))
    except NotFound:
        return {"recall_gone": recall_id}
    now = result
    if logged.mode in ("keyword", "vector"):
        now = client.recall(logged.query, type=logged.type, limit=logged.limit, mode=logged.mode,
                            fusion=settings or None, log=False)
    return {"logged": logged, "changes": then_and_now(client, logged, now)}


def contributions(hit, fusion: dict) -> dict:
    """What each list added to a hit's score: as the service reports it, or (for a service that
    does not) reciprocal rank fusion's weight / (k + rank)."""
    if hit.parts:
        return {"kw_part": hit.parts.get("kw", 0.0), "vec_part": hit.parts.get("vec", 0.0),
                "rerank_part": hit.parts.get("rerank", 0.0)}
    k = fusion.get("k", 60)
    return {
        "kw_part": fusion.get("kw_weight", 1.0) / (k + hit.kw_rank) if hit.kw_rank else 0.0,
        "vec_part": fusion.get("vec_weight", 1.0) / (k + hit.vec_rank) if hit.vec_rank else 0.0,
    }
