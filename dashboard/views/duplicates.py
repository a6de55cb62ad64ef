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
from ..diff import chart, histogram, word_diff
from ..forms import DuplicateFilter, parse_id
from ..memory import forget_status, memory
from ..models import DismissedPair
from ..problems import owner_mistake

BINS_LOW = 0.5


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
    shown = [p for p in pairs if DismissedPair.key(p.a.id, p.b.id) not in dismissed]
    rows = [{"pair": p, "diff": word_diff(p.a.text, p.b.text)} for p in shown]

    context = {"form": form, "threshold": threshold, "rows": rows, "total": total, "hidden": len(pairs) - len(shown),
               "query": request.GET.urlencode(),
               "dismissed": DismissedPair.objects.filter(memory=request.memory).order_by("-created_at")[:200]}
    try:
        nearest, floor = client.nearest(type)
    except NotFound:
        nearest = floor = None  # a memory without this extension of the contract: no histogram
    if nearest is not None:
        # A memory that keeps pairs from a review floor up lists only facts with a neighbour there.
        bins = histogram(nearest, low=floor or BINS_LOW)
        context.update(chart=chart(bins, threshold), nearest_count=len(nearest), floor=floor,
                       caught=sum(1 for s in nearest if s >= threshold - 1e-9))
    return render(request, "duplicates.html#results" if request.htmx else "duplicates.html", context)


@require_POST
def duplicate_resolve(request: HttpRequest) -> HttpResponse:
    """keep_a / keep_b delete the other; merge saves new text on the kept one and deletes the other;
    not_duplicate remembers the pair so it is never shown again."""
    a, b = parse_id(request.POST.get("a")), parse_id(request.POST.get("b"))
    back = request.POST.get("next") or ""
    if a is None or b is None or a == b:
        return owner_mistake(request, "That is not a pair of facts",
                             "A pair needs two different fact ids, whole numbers from 1 to 2^63 − 1.",
                             back=_back(back), back_label="Back to the near-duplicates")
    action = request.POST.get("action")
    client = memory(request.memory)
    try:
        if action == "keep_a":
            audit.delete(request, client, b, note=f"near-duplicate of #{a}")
            messages.success(request, f"Kept #{a}, deleted #{b}.")
        elif action == "keep_b":
            audit.delete(request, client, a, note=f"near-duplicate of #{b}")
            messages.success(request, f"Kept #{b}, deleted #{a}.")
        elif action == "merge":
            keep, drop = (a, b) if request.POST.get("keep") != "b" else (b, a)
            text = (request.POST.get("text") or "").strip()
            if not text:
                messages.error(request, "The merged text is empty; nothing was changed.")
                return redirect(_back(back))
            before = client.get(keep)
            try:
                after = client.edit(keep, text=text)
            except Conflict as e:
                if not (e.existing and e.existing.id == drop):
                    messages.error(request, f"Could not save the merged text: {e.message}. Nothing was changed.")
                    return redirect(_back(back))
                # The merged text duplicates the fact being dropped: drop it first, then save.
                audit.delete(request, client, drop, note=f"merged into #{keep}")
                after = client.edit(keep, text=text)
            except BadRequest as e:
                messages.error(request, f"Could not save the merged text: {e.message}. Nothing was changed.")
                return redirect(_back(back))
            else:
                audit.delete(request, client, drop, note=f"merged into #{keep}")
            audit.record(request, "edit", keep, before=before, after=after, note=f"merged with #{drop}")
            messages.success(request, f"Saved #{keep} with the merged text and deleted #{drop}.")
        elif action == "not_duplicate":
            DismissedPair.dismiss(request.memory, a, b)
            audit.record(request, "not_duplicate", a, note=f"#{a} and #{b} are not duplicates")
            messages.success(request, f"#{a} and #{b} are marked as not duplicates; they will not be shown again "
                                      "(“Marked not a duplicate” below undoes it).")
        elif action == "undo_not_duplicate":
            low, high = DismissedPair.key(a, b)
            DismissedPair.objects.filter(memory=request.memory, low_id=low, high_id=high).delete()
            audit.record(request, "not_duplicate", a, note=f"undone: #{a} and #{b} may be duplicates again")
            messages.success(request, f"#{a} and #{b} are shown as a pair again if they are close enough.")
        else:
            return owner_mistake(request, "Unknown action", "Choose keep, merge or not a duplicate.", back=_back(back))
    except NotFound:
        messages.warning(request, "One of those facts is already gone.")
    forget_status()
    return redirect(_back(back))


def _back(query: str) -> str:
    """The duplicates page with the owner's filters: only ever a query string on our own page."""
    return reverse("duplicates") + (f"?{QueryDict(query).urlencode()}" if query else "")
