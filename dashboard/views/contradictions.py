"""The contradictions queue: pairs of current facts that a write proposed may replace one another
(GET /conflicts), side by side with the words that differ, each resolved in place and undoable.
Adding a fact offers the same three choices for the proposals its write returned."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memories.client import BadRequest, Conflict, HistoryEntry, MemoryClient, NotFound, Proposal

from ..diff import marked
from ..forms import RESOLUTIONS, parse_id
from ..memory import counted_conflicts, forget_status, memory
from ..problems import owner_mistake
from ..subjects import grouped
from ..strip import with_strip

PAGE_SIZE = 20  # pairs a page: each costs two look-ups in the history (who wrote each fact)
KINDS = {"number": "a number", "date": "a date or time", "negation": "a negation", "name": "a name",
         "word": "other words"}
PLACES = ("queue", "added")  # where a pair is shown: the queue's row, or the add panel's line


def added(client: MemoryClient, fact_ids) -> dict[int, HistoryEntry | None]:
    """Each fact's `add` entry: who stored it and with what note ("import of memories.json
    (json)"); None when the history no longer holds it (trimmed, or forgotten for good)."""
    found = {}
    for fid in sorted(set(fact_ids)):
        entries, _ = client.history(fact_id=fid, op="add", limit=1)
        found[fid] = entries[0] if entries else None
    return found


def writers(entries: dict[int, HistoryEntry | None]) -> dict[int, str | None]:
    return {fid: (e.client or "an unnamed client") if e else None for fid, e in entries.items()}


def row(proposal: Proposal, who: dict[int, str | None] | None = None) -> dict:
    """One pair as the templates show it: both texts with their differing words marked."""
    differs = proposal.differs or {}
    return {"p": proposal, "old": proposal.old, "new": proposal.new,
            "old_text": marked(proposal.old.text, differs.get("old") or []),
            "new_text": marked(proposal.new.text, differs.get("new") or []),
            "kinds": [KINDS.get(k, k) for k in differs.get("kinds") or []],
            "old_by": (who or {}).get(proposal.old.id), "new_by": (who or {}).get(proposal.new.id),
            # Which is newer, by the facts' own times: when neither is, no choice is offered first.
            "sure": proposal.new.created_at > proposal.old.created_at,
            "differs_json": json.dumps({k: differs.get(k) or [] for k in ("kinds", "old", "new")}, ensure_ascii=False)}


@require_GET
def contradiction_list(request: HttpRequest) -> HttpResponse:
    client = memory(request.memory)
    cursor = request.GET.get("cursor") or None
    try:
        proposals, next_cursor, total = client.conflicts(limit=PAGE_SIZE, cursor=cursor)
    except BadRequest as e:  # only a cursor typed or kept from another memory reaches the memory here
        return owner_mistake(request, "That page of contradictions does not exist",
                             f"The memory cannot page from there ({e.message}).",
                             back=reverse("contradictions"), back_label="The newest contradictions")
    except NotFound:  # a memory of contract v3 keeps no queue
        return render(request, "contradictions.html", {"unsupported": True})
    counted_conflicts(total, request.memory)
    entries = added(client, [f.id for p in proposals for f in (p.old, p.new)])
    who = writers(entries)
    rows = [row(p, who) for p in proposals]
    notes = {fid: e.note for fid, e in entries.items() if e}
    try:
        mode = client.settings().get("proposals")  # None: a memory without the setting
    except NotFound:
        mode = None
    done = client.conflicts(limit=DONE_SHOWN, done=True) if mode == "replace" and not cursor else ([], None, 0)
    return render(request, "contradictions.html", {
        "rows": rows, "groups": grouped(rows, notes), "total": total, "next_cursor": next_cursor, "cursor": cursor,
        "query": request.GET.urlencode(), "place": "queue", "mode": mode, "done": [row(p) for p in done[0]],
        "done_total": done[2]})


@require_POST
def contradiction_setting(request: HttpRequest) -> HttpResponse:
    """The memory's proposals setting: every proposal waits for the owner, or a trusted client's
    single proposal replaces at once (recorded, undoable, listed as done)."""
    mode = request.POST.get("proposals")
    if mode not in MODES:
        return owner_mistake(request, "Unknown choice", "Choose “Ask me” or “Replace at once”.",
                             back=reverse("contradictions"), back_label="The contradictions")
    try:
        memory(request.memory).put_settings(proposals=mode)
    except (BadRequest, NotFound):  # a memory of an older contract keeps no such setting
        messages.error(request, "This memory keeps no proposals setting: it speaks an older version of the contract.")
    else:
        messages.success(request, MODES[mode] + " The audit log's Undo puts the setting back.")
    return redirect("contradictions")


def posted_pair(request: HttpRequest) -> tuple[int | None, int | None, float, dict]:
    """The pair a form names, and the score and differences it was shown with (for showing it
    again after an undo: nothing here is trusted beyond display, which escapes it)."""
    old, new = parse_id(request.POST.get("old")), parse_id(request.POST.get("new"))
    try:
        score = float(request.POST.get("score") or 0)
    except ValueError:
        score = 0.0
    try:
        differs = json.loads(request.POST.get("differs") or "{}")
    except ValueError:
        differs = {}
    if not isinstance(differs, dict):
        differs = {}
    differs = {k: [w for w in differs.get(k) if isinstance(w, str)] if isinstance(differs.get(k), list) else []
               for k in ("kinds", "old", "new")}
    return old, new, score, differs


MODES = {"propose": "Every proposal waits here for you.",
         "replace": "A new answer written by the dashboard or a client you trust (on the Inbox page) replaces the one "
                    "fact it answers at once, and is listed here as done; writes that propose more, and imports, wait."}
DONE_SHOWN = 10  # the newest pairs replaced at once, shown above the queue

DONE = {"replace": "#{new} replaces #{old}: #{old} is kept as replaced, and recall no longer answers with it.",
        "keep_old": "#{old} is right: #{new} is kept as replaced by it, and recall no longer answers with it.",
        "keep_both": "Both #{old} and #{new} are true: both stay current, and the pair is not proposed again."}


@require_POST
def contradiction_resolve(request: HttpRequest) -> HttpResponse:
    """New replaces old, old is right (it replaces the new one), or both true. From htmx the
    pair is replaced in place by what was done, with an Undo; without JavaScript the queue comes
    back with a message (the audit log has the Undo)."""
    old, new, score, differs = posted_pair(request)
    resolution = request.POST.get("resolution")
    place = request.POST.get("place") if request.POST.get("place") in PLACES else "queue"
    back = back_to(request, place, new)
    if old is None or new is None or old == new:
        return owner_mistake(request, "That is not a pair of facts",
                             "A contradiction is two different fact ids, whole numbers from 1 to 2^53 − 1.",
                             back=back, back_label="Back")
    if resolution not in RESOLUTIONS:
        return owner_mistake(request, "Unknown choice",
                             "Choose “New replaces old”, “Both true” or “Old is right”.", back=back, back_label="Back")
    context = {"old_id": old, "new_id": new, "score": score, "differs_json": json.dumps(differs, ensure_ascii=False),
               "place": place, "resolution": resolution}
    client = memory(request.memory)
    try:
        approved = approve_winner(client, old, new, resolution)
        _, _, entry = client.resolve(old, new, resolution)
    except NotFound:
        level, note, entry = "warning", f"#{old} or #{new} is gone: deleted since. Nothing was changed.", None
    except BadRequest as e:  # a fact no longer current: someone (the agent, another tab) decided first
        level, note, entry = "warning", f"Nothing was changed: {e.message}.", None
    else:
        level, note = "success", DONE[resolution].format(old=old, new=new)
        note += f" #{approved} was waiting for review: approved, so it is recalled." if approved else ""
        forget_status()
    if not request.htmx:
        messages.add_message(request, getattr(messages, level.upper()),
                             note + (" The audit log's Undo puts it back." if entry else ""))
        return redirect(back)
    answer = render(request, "contradictions.html#resolved", {**context, "level": level, "note": note, "entry": entry})
    return with_strip(request, with_total(request, place, answer))


def approve_winner(client: MemoryClient, old: int, new: int, resolution: str) -> int | None:
    """The fact the owner chose to keep, approved when it waits for review (as the Inbox's `r`
    does): a replacement by a pending fact would leave neither recalled. The one replaced is
    reviewed too: the owner has decided it, so it leaves the Inbox. The kept one's id, or None."""
    if resolution not in ("replace", "keep_old"):
        return None
    winner, loser = (new, old) if resolution == "replace" else (old, new)
    facts = client.facts([winner, loser])
    waiting = [i for i in (winner, loser) if i in facts and not facts[i].reviewed]
    if waiting:
        client.review(waiting)
    return winner if winner in waiting else None


@require_POST
def contradiction_undo(request: HttpRequest) -> HttpResponse:
    """Undo a resolution from its result line (htmx): the pair comes back as it was shown. The
    form's own action, without JavaScript, is the audit log's undo (history.undo_delete)."""
    old, new, score, differs = posted_pair(request)
    entry_id = parse_id(request.POST.get("entry"))
    place = request.POST.get("place") if request.POST.get("place") in PLACES else "queue"
    if old is None or new is None or entry_id is None:
        return owner_mistake(request, "Nothing to undo", "The form names no pair or no history entry.",
                             back=reverse("contradictions"), back_label="The contradictions")
    client = memory(request.memory)
    context = {"old_id": old, "new_id": new, "score": score, "differs_json": json.dumps(differs, ensure_ascii=False),
               "place": place, "entry": None, "level": "warning"}
    try:
        client.undo(entry_id)
    except NotFound:
        note = f"History entry #{entry_id} is gone: the memory keeps its newest entries only."
    except Conflict as e:
        if e.code == "changed_since":  # the audit log shows what it would overwrite, and asks
            context.update(changed=entry_id, changed_fact=client.history_entry(entry_id).fact_id)
            note = f"#{old} or #{new} changed since this was decided, so undoing it would overwrite that."
        else:
            note = f"Could not undo: {e.message}."
    else:
        forget_status()
        facts = client.facts([old, new])
        if old in facts and new in facts:
            pair = Proposal(facts[old], score, differs, facts[new])
            who = writers(added(client, [old, new])) if place == "queue" else None
            template = "contradictions.html#pair" if place == "queue" else "facts/list.html#proposal"
            return with_strip(request, with_total(request, place, render(request, template, {
                "r": row(pair, who), "place": place, "undone": True})))
        note = f"Undone, but #{old} or #{new} is gone since."
    return with_strip(request, with_total(request, place, render(request, "contradictions.html#resolved",
                                                                 {**context, "note": note})))


MOST_AT_ONCE = PAGE_SIZE  # the pairs one "both true for all of these" decides: a group of one page


def posted_pairs(request: HttpRequest) -> list[tuple[int, int]] | None:
    """The pairs a group's form names ("12-15" each), or None when any is not a pair of ids."""
    pairs = []
    for value in request.POST.getlist("pair")[: MOST_AT_ONCE + 1]:
        old, _, new = value.partition("-")
        old, new = parse_id(old), parse_id(new)
        if old is None or new is None or old == new:
            return None
        pairs.append((old, new))
    return pairs if 0 < len(pairs) <= MOST_AT_ONCE else None


@require_POST
def contradiction_keep_all(request: HttpRequest) -> HttpResponse:
    """"Both true for all of these": each pair of a group marked both true, one history entry each
    (the memory has no batch resolve); a pair someone decided first is skipped and said. From
    htmx the group's heading becomes what was done, with one Undo for all, and its pairs go."""
    pairs = posted_pairs(request)
    group = request.POST.get("group") or ""
    if pairs is None:
        return owner_mistake(request, "Those are not pairs of facts",
                             f"A group is 1 to {MOST_AT_ONCE} pairs of two different fact ids.",
                             back=reverse("contradictions"), back_label="The contradictions")
    client, entries, skipped = memory(request.memory), [], []
    for old, new in pairs:
        try:
            entries.append(client.resolve(old, new, "keep_both")[2])
        except (NotFound, BadRequest):  # deleted or decided since the page was shown
            skipped.append(f"#{old} and #{new}")
    forget_status()
    note = f"Marked {len(entries)} pair{'s' if len(entries) != 1 else ''} both true: they stay current and are not proposed again."
    if skipped:
        note += f" Left alone, deleted or decided since: {', '.join(skipped)}."
    if not request.htmx:
        messages.add_message(request, messages.SUCCESS if entries else messages.WARNING,
                             note + (" The audit log's Undo puts each back." if entries else ""))
        return redirect(back_to(request, "queue", None))
    answer = render(request, "contradictions.html#kept", {"group": group, "note": note, "entries": entries,
                                                           "pairs": pairs})
    return with_strip(request, with_total(request, "queue", answer))


@require_POST
def contradiction_undo_all(request: HttpRequest) -> HttpResponse:
    """Undo a group's "both true for all" (newest first); the queue is shown again with its pairs."""
    ids = {parse_id(v) for v in request.POST.getlist("entry")[:MOST_AT_ONCE]} - {None}
    if not ids:
        return owner_mistake(request, "Nothing to undo", "The form names no history entry.",
                             back=reverse("contradictions"), back_label="The contradictions")
    client, failed = memory(request.memory), 0
    for entry in sorted(ids, reverse=True):
        try:
            client.undo(entry)
        except (NotFound, Conflict):  # trimmed, or changed since: the audit log shows it
            failed += 1
    forget_status()
    if failed:
        messages.warning(request, f"{failed} of them could not be undone here (changed or gone since): the audit log shows why.")
    else:
        messages.success(request, "Undone: those pairs are open again.")
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Refresh"] = "true"
        return response
    return redirect("contradictions")


def with_total(request: HttpRequest, place: str, response: HttpResponse) -> HttpResponse:
    """On the queue, its count of open pairs updates with the answer (out of band); the add panel has none."""
    if place == "queue":
        response.content += render_to_string("contradictions.html#total", {"oob": True}, request).encode()
    return response


def back_to(request: HttpRequest, place: str, new: int | None) -> str:
    """Where a form without JavaScript goes back to: the queue (with the owner's page), or the new fact's page."""
    if place == "added" and new is not None:
        return reverse("fact_detail", args=[new])
    query = request.POST.get("next") or ""
    return reverse("contradictions") + (f"?{QueryDict(query).urlencode()}" if query else "")
