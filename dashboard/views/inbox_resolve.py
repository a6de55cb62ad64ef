"""The Inbox's choices on what a fact may replace: replace one, or both true for one or for all of
the fact's proposals; then the fact is approved. Its history entries are undone together (inbox.py
`inbox_undo`)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_POST

from memories.client import BadRequest, NotFound

from ..forms import parse_id
from ..memory import forget_status, memory
from ..problems import owner_mistake
from .inbox import answer, back_to, done, review_many


MOST_PROPOSED = 3  # a write proposes at most three (lifecycle.PROPOSE_MOST, the contract's)
RESOLVED = {"replace": "#{new} replaces #{old}, and is approved.",
            "keep_both": "Both #{old} and #{new} are true, and #{new} is approved."}


@require_POST
def inbox_resolve(request: HttpRequest) -> HttpResponse:
    """Replace #N (the new fact replaces the old one) or both true (for one proposal, or all of
    the fact's: "Both true for all"), then approve the new fact: history entries undone together."""
    new, olds = parse_id(request.POST.get("id")), [parse_id(v) for v in request.POST.getlist("old")]
    resolution = request.POST.get("resolution")
    if new is None or not olds or None in olds or new in olds or len(olds) > MOST_PROPOSED:
        return owner_mistake(request, "That is not a pair of facts",
                             "A contradiction is two different fact ids, whole numbers from 1 to 2^53 − 1.",
                             back=reverse("inbox"), back_label="The inbox")
    if resolution not in RESOLVED or (resolution == "replace" and len(olds) > 1):
        return owner_mistake(request, "Unknown choice", "Choose “Replace” or “Both true”.", back=reverse("inbox"),
                             back_label="The inbox")
    client = memory(request.memory)
    entries, fact = [], None
    for old in olds:
        try:
            _, fact, entry = client.resolve(old, new, resolution)
        except NotFound:
            note = f"#{old} or #{new} is gone: deleted since. Nothing was changed."
        except BadRequest as e:  # a fact no longer current: someone decided first
            note = f"Nothing was changed: {e.message}."
        else:
            entries.append(entry)
            continue
        if not entries:
            return answer(request, "inbox.html#done", done(new, note, [], level="warning"), back_to(request, new))
    _, reviewed = review_many(client, [new])
    forget_status()
    note = (RESOLVED[resolution].format(old=olds[0], new=new) if len(olds) == 1 else
            f"#{new} and each of {', '.join(f'#{o}' for o in olds)} are true, and #{new} is approved.")
    context = done(new, note, [*entries, *reviewed], text=fact.text)
    return answer(request, "inbox.html#done", context, back_to(request, new))
