"""The recall debugger: keyword, vector and fused rankings of one query side by side."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memories.client import BadRequest, NotFound, parse_time

from ..forms import RecallForm
from ..memory import memory
from .contradictions import row as conflict_row
from .recalls import then_and_now

WORD = re.compile(r"\w")  # a letter or digit: what a keyword search could look for
MARKED = re.compile("\x02(.*?)\x03")  # a matched token in a keyword hit's `highlighted`
PARTS = ("kw", "vec", "rerank")
EPSILON = 1e-9  # score differences below this are float noise, not a lead
CONFLICT_PAGES = 5  # pages of 100 open contradictions read for the pairs among the shown facts


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
                                  "as_of_time": request.GET.get("as_of_time") if lifecycle["as_of"] else None,
                                  "include_stale": "on" if lifecycle["include_stale"] else None}.items() if v}
        context["settings_query"] = urlencode({**{f"f_{k}": v for k, v in settings.items()}, **when})
        context["when_query"] = urlencode(when)
        context["stale"] = stale_marks(result, lifecycle["as_of"])
        logged = then_now(client, request.GET.get("recall"), result, settings)
        if logged:
            context.update(logged)
        fused = [{"hit": h, "rank": i, **contributions(h, result.fusion)} for i, h in enumerate(result.results, start=1)]
        context.update(conflicts_among(client, fused))
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
                context["outranked"] = outranked(fused, pin, context["explain"], result)
                context["outranked_by"] = {r["by"] for r in context["outranked"]}
                rank = context["explain"].get("fused_rank")
                if not context["pin_fused_rank"] and rank:  # ranked below the limit: how many more between
                    context["outranked_more"] = max(rank - 1 - len(fused), 0)
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


def outranked(fused: list[dict], pin: int, explain: dict, result) -> list[dict]:
    """The shown facts recall put above the pinned one, each with how much more it scored in each
    part and the part it gained most by: keyword, vector, rerank, or expansion (a keyword part
    that came only from words the query was widened with); or "newer": the newer fact of an open
    proposal with the pinned one, which recall places above it whatever the scores."""
    ids = [r["hit"].fact.id for r in fused]
    pinned_outdated = pin in ids and fused[ids.index(pin)]["hit"].may_be_outdated
    if pin in ids:
        mine = fused[ids.index(pin)]
        above, score = fused[: ids.index(pin)], mine["hit"].score
        theirs = {p: mine.get(f"{p}_part", 0.0) for p in PARTS}
    else:  # below the limit, or in neither list: every shown fact is above it
        above, score = fused, explain.get("score") or 0.0
        theirs = {p: explain.get(f"{p}_contribution") or 0.0 for p in PARTS}
    terms = match_terms(result.match)
    widened = [x["word"].lower() for x in result.expansions]
    own = [t for t in terms if t not in widened]
    matched = {r.fact.id: MARKED.findall(r.highlighted or "") for r in result.kw}
    reranked = {f["id"] for f in (result.rerank or {}).get("facts", [])}
    rows = []
    for r in above:
        fid = r["hit"].fact.id
        ahead = {p: r.get(f"{p}_part", 0.0) - theirs[p] for p in PARTS}
        words = [w for w in matched.get(fid, []) if w.lower() != "s"]  # a possessive's "s": no term the owner typed
        through = [w for w in words if by_expansion(w.lower(), own, widened)]
        total = r["hit"].score - score
        gains = {p: d for p, d in ahead.items() if d > EPSILON}
        conflict = next((c for c in r.get("conflicts", []) if c["other"] == pin), None)
        if total > EPSILON and gains:
            by = max(gains, key=gains.get)
            if by == "kw" and through and len(through) == len(words):
                by = "expansion"
        elif conflict and pinned_outdated:  # recall puts an open proposal's newer fact above the older
            by = "newer"
        else:  # no part is higher: the rerank reorders its top only and keeps it above the rest, or a tie
            by = "order" if fid in reranked and pin not in reranked else "tie"
        rows.append({**r, "ahead": ahead, "gained": set(gains), "total": total, "by": by, "through": through,
                     "conflict": conflict})
    return rows


def match_terms(match: str | None) -> list[str]:
    """The quoted terms (and phrases) of the recall's MATCH expression, lower-cased."""
    return [t.strip('"').replace('""', '"').lower() for t in match.split(" OR ")] if match else []


def by_expansion(word: str, own: list[str], widened: list[str]) -> bool:
    """Whether a matched word matched a word the query was widened with rather than one of its own
    terms: not when it is one of the query's own words in another form ("lives" for "live": the
    keyword index stems both to one), else when it shares a longer beginning with a widened one (a
    Porter stem is a word's beginning, mostly: "married" is "marri")."""
    if any(inflected(word) == inflected(t) for t in own):
        return False

    def shared(terms):
        return max((len(os.path.commonprefix([word, t])) for t in terms), default=0)

    return shared(widened) > shared(own)


INFLECTIONS = ("ing", "ed", "es", "s")


def inflected(word: str) -> str:
    """A word without its inflection, as the keyword index's Porter stemmer sees "live", "lives",
    "lived" and "living" alike (the dashboard does not import the engine's stemmer)."""
    for end in INFLECTIONS:
        if word.endswith(end) and len(word) - len(end) >= 3:
            word = word[: -len(end)]
            break
    return word.removesuffix("e") if len(word) > 3 else word


def conflicts_among(client, fused: list[dict]) -> dict:
    """The open contradictions (GET /conflicts) between two of the shown facts: look-alikes the
    memory itself proposed may replace one another, so recall may answer with the wrong one.
    Each fused row gets its pairs; `conflicts` lists them for the page."""
    shown = {r["hit"].fact.id: r for r in fused}
    pairs, cursor, complete = [], None, True
    try:
        for _ in range(CONFLICT_PAGES):
            found, cursor, _ = client.conflicts(limit=100, cursor=cursor)
            pairs += [p for p in found if p.old.id in shown and p.new.id in shown]
            if not cursor:
                break
        else:
            complete = False
    except NotFound:  # a memory of contract v3 keeps no queue
        return {"conflicts": [], "conflicts_complete": True}
    for r in fused:
        r["conflicts"] = []
    rows = []
    for p in pairs:
        old, new = shown[p.old.id], shown[p.new.id]
        pair = {**conflict_row(p), "old_rank": old["rank"], "new_rank": new["rank"],
                "gap": abs(old["hit"].score - new["hit"].score), "anchor": f"conflict-{p.old.id}-{p.new.id}"}
        old["conflicts"].append({"other": p.new.id, "anchor": pair["anchor"]})
        new["conflicts"].append({"other": p.old.id, "anchor": pair["anchor"]})
        rows.append(pair)
    rows.sort(key=lambda c: -c["p"].score)  # the closest look-alikes are the likeliest to be confused
    for r in fused:
        r["conflicts"].sort(key=lambda c: shown[c["other"]]["rank"])
    return {"conflicts": rows, "conflicts_complete": complete}
