"""Review near-duplicate pairs and resolve them."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from memories.client import BadRequest, Conflict, NotFound

from .. import audit
from ..diff import SCALE_LOW, chart, histogram, word_diff
from ..forms import DuplicateFilter, parse_id
from ..lookalike import conflict
from ..memory import forget_status, memory
from ..models import DismissedPair
from ..problems import owner_mistake


@require_GET
@vary_on_headers("HX-Request")
def duplicate_list(request: HttpRequest) -> HttpResponse:
    form = DuplicateFilter(request.GET)
    form.is_valid()
    threshold = form.cleaned_data.get("threshold") or settings.DUPLICATE_THRESHOLD
    type = form.cleaned_data.get("type") or None
    client = memory(request.memory)
    pairs, total = client.duplicates(threshold, type=type, limit=500)
    dismissed = DismissedPair.all_keys(request.memory)
    undecided = [p for p in pairs if DismissedPair.key(p.a.id, p.b.id) not in dismissed]
    # A pair on the Contradictions page is decided there, and a replaced or expired fact is no
    # duplicate of anything: the memory's dedup leaves it out too.
    queued = open_pairs(client)
    contradictions = [p for p in undecided if DismissedPair.key(p.a.id, p.b.id) in queued]
    shown = [p for p in undecided if DismissedPair.key(p.a.id, p.b.id) not in queued
             and p.a.status == "current" and p.b.status == "current"]
    rows = [{"pair": p, "diff": word_diff(p.a.text, p.b.text), "conflict": conflict(p)} for p in shown]

    context = {"form": form, "threshold": threshold, "rows": rows, "total": total, "hidden": len(pairs) - len(undecided),
               "queued": len(contradictions), "stale": len(undecided) - len(contradictions) - len(shown),
               "query": request.GET.urlencode(), "scale_low": SCALE_LOW,
               "dismissed": DismissedPair.objects.filter(memory=request.memory).order_by("-created_at")[:200]}
    try:
        nearest, floor = client.nearest(type)
    except NotFound:
        nearest = floor = None  # a memory without this extension of the contract: no histogram
    if nearest is not None:
        context.update(distribution(nearest, floor, threshold, pairs, total))
    return render(request, "duplicates.html#results" if request.htmx else "duplicates.html", context)


QUEUE_PAGES = 5  # pages of 100 open contradictions read to leave them out here


def open_pairs(client) -> set[tuple[int, int]]:
    """The open contradictions' pairs, as DismissedPair.key orders them (none from a memory that
    keeps no queue); the newest QUEUE_PAGES hundred."""
    keys, cursor = set(), None
    for _ in range(QUEUE_PAGES):
        try:
            proposals, cursor, _ = client.conflicts(limit=100, cursor=cursor)
        except NotFound:
            return keys
        keys |= {DismissedPair.key(p.old.id, p.new.id) for p in proposals}
        if not cursor:
            break
    return keys


def distribution(nearest: list[float], floor: float | None, threshold: float, pairs, total: int) -> dict:
    """The histogram on the slider's scale and what its caption and the empty message say.

    A memory with a review floor lists only facts whose nearest neighbour is at or above it;
    below the floor, the pairs just fetched (every pair at or above the threshold, if none were
    cut off) give each of their facts' nearest neighbour, so a listed pair always has its bar."""
    scores = list(nearest)
    known_from = floor or SCALE_LOW
    if floor and threshold < floor:
        best: dict[int, float] = {}
        for p in pairs:
            for fid in (p.a.id, p.b.id):
                best[fid] = max(best.get(fid, 0.0), p.score)
        scores += [s for s in best.values() if s < floor]
        cut = total > len(pairs)
        known_from = max(SCALE_LOW, min(floor, pairs[-1].score if cut and pairs else threshold))
    drawn = [s for s in scores if s >= SCALE_LOW - 1e-9]
    below_threshold = [s for s in scores if s < threshold - 1e-9]
    out = {"nearest_count": len(drawn), "floor": floor, "known_from": known_from,
           "caught": sum(1 for s in drawn if s >= threshold - 1e-9), "under_scale": len(scores) - len(drawn),
           "closest_below": max(below_threshold) if below_threshold else None}
    if drawn:
        out["chart"] = chart(histogram(drawn), threshold, known_from=known_from)
    return out




@require_POST
def duplicate_resolve(request: HttpRequest) -> HttpResponse:
    """keep_a / keep_b delete the other; merge saves new text on the kept one and deletes the other;
    not_duplicate ("keep both") remembers the pair so it is never shown again. From htmx the pair
    is replaced in place by what was done; without JavaScript the page comes back with a message."""
    a, b = parse_id(request.POST.get("a")), parse_id(request.POST.get("b"))
    back = request.POST.get("next") or ""
    if a is None or b is None or a == b:
        return owner_mistake(request, "That is not a pair of facts",
                             "A pair needs two different fact ids, whole numbers from 1 to 2^63 − 1.",
                             back=_back(back), back_label="Back to the near-duplicates")
    action = request.POST.get("action")
    if action not in ("keep_a", "keep_b", "merge", "not_duplicate", "undo_not_duplicate"):
        return owner_mistake(request, "Unknown action", "Choose keep, merge or not a duplicate.", back=_back(back))
    level, note = _resolve(request, memory(request.memory), action, a, b)
    forget_status()
    if request.htmx:
        return render(request, "duplicates.html#resolved", {"a": a, "b": b, "level": level, "note": note, "action": action,
                                                            "query": back}, status=200 if level != "error" else 422)
    messages.add_message(request, getattr(messages, level.upper()), note)
    return redirect(_back(back))


def _resolve(request: HttpRequest, client, action: str, a: int, b: int) -> tuple[str, str]:
    """Do one action on the pair: (message level, what happened)."""
    try:
        if action == "keep_a":
            client.delete(b, note=f"near-duplicate of #{a}")
            return "success", f"Kept #{a}, deleted #{b}."
        if action == "keep_b":
            client.delete(a, note=f"near-duplicate of #{b}")
            return "success", f"Kept #{b}, deleted #{a}."
        if action == "merge":
            keep, drop = (a, b) if request.POST.get("keep") != "b" else (b, a)
            text = (request.POST.get("text") or "").strip()
            if not text:
                return "error", "The merged text is empty; nothing was changed."
            try:
                client.edit(keep, text=text, note=f"merged with #{drop}")
            except Conflict as e:
                if not (e.existing and e.existing.id == drop):
                    return "error", f"Could not save the merged text: {e.message}. Nothing was changed."
                # The merged text duplicates the fact being dropped: drop it first, then save.
                client.delete(drop, note=f"merged into #{keep}")
                client.edit(keep, text=text, note=f"merged with #{drop}")
            except BadRequest as e:
                return "error", f"Could not save the merged text: {e.message}. Nothing was changed."
            else:
                client.delete(drop, note=f"merged into #{keep}")
            return "success", f"Saved #{keep} with the merged text and deleted #{drop}."
        if action == "not_duplicate":
            DismissedPair.dismiss(request.memory, a, b)
            audit.record(request, "not_duplicate", a, note=f"#{a} and #{b} are not duplicates")
            return "success", (f"Kept both #{a} and #{b}: they are marked as not duplicates and will not be shown again "
                               "(“Marked not a duplicate” below undoes it).")
        low, high = DismissedPair.key(a, b)
        DismissedPair.objects.filter(memory=request.memory, low_id=low, high_id=high).delete()
        audit.record(request, "not_duplicate", a, note=f"undone: #{a} and #{b} may be duplicates again")
        return "success", f"#{a} and #{b} are shown as a pair again if they are close enough."
    except NotFound:
        return "warning", "One of those facts is already gone."


def _back(query: str) -> str:
    """The duplicates page with the owner's filters: only ever a query string on our own page."""
    return reverse("duplicates") + (f"?{QueryDict(query).urlencode()}" if query else "")
