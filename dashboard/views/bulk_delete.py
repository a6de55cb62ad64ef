"""Delete many facts at once, from the facts list's checkboxes or "all matching" its filters, and
undo them all: each delete and each undo one history entry of the memory's."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from memories.client import Conflict, NotFound

from .. import audit
from ..forms import FactFilter, parse_id
from ..memory import forget_status, memory
from ..problems import owner_mistake
from .facts import BULK_LIMIT, cases_expecting


def matching_facts(client, filters: dict) -> tuple[list, int]:
    """The facts the list's filters match, newest first, at most BULK_LIMIT of them, and how many
    match in all."""
    facts: list = []
    cursor, total = None, 0
    while len(facts) < BULK_LIMIT:
        page = client.list_facts(**filters, limit=min(100, BULK_LIMIT - len(facts)), cursor=cursor)
        facts += page.facts
        total, cursor = page.total, page.next_cursor
        if not cursor:
            break
    return facts[:BULK_LIMIT], total


@require_POST
def fact_bulk_delete(request: HttpRequest) -> HttpResponse:
    """First POST (from the list's checkboxes, or "all matching" with the list's filters) shows
    what will go; the second, with confirm, deletes, then offers to undo them all."""
    client = memory(request.memory)
    matching = None
    if request.POST.get("all") == "yes":
        # Checked again here, whatever the list showed: a filter dropped or empty would be every fact.
        filters = FactFilter(request.POST)
        if not filters.is_valid() or not filters.active():
            problems = [e for errors in filters.errors.values() for e in errors]
            return owner_mistake(request, "Nothing was selected",
                                 " ".join(problems) if problems else
                                 "“All matching” needs a search, a type or a source to match: without one it would be "
                                 "the whole memory. Select facts on the page instead.",
                                 back=reverse("facts"), back_label="Back to facts")
        facts, matching = matching_facts(client, {**filters.listing(), **filters.lifecycle()})
        ids = [fact.id for fact in facts]
    else:
        ids = [parse_id(i) for i in request.POST.getlist("ids")]
        ids = [] if None in ids else sorted(set(ids))[:BULK_LIMIT]  # a crafted id is no selection at all
    if not ids:
        messages.warning(request, "Select at least one fact to delete.")
        return redirect("facts")
    if request.POST.get("confirm") != "yes":
        if matching is None:
            facts = []
            for i in ids:
                try:
                    facts.append(client.get(i))
                except NotFound:
                    pass
        return render(request, "facts/delete.html", {"facts": facts, "bulk": True, "matching": matching, "limit": BULK_LIMIT,
                                                     "cases": cases_expecting(request.memory, [f.id for f in facts])})
    deleted, entries = [], []
    for i in ids:
        try:
            client.delete(i, note=f"bulk delete of {len(ids)}")
        except NotFound:
            continue  # already gone: the owner's intent holds
        deleted.append(i)
        entry = audit.last_delete(client, i)  # for "Undo all"
        if entry is not None:
            entries.append(entry.id)
    forget_status()
    messages.success(request, f"Deleted {len(deleted)} fact{'s' if len(deleted) != 1 else ''}: "
                     + ", ".join(f"#{i}" for i in deleted) + ". They are in the trash if you want them back.")
    if not entries:
        return redirect(reverse("facts"))
    return redirect(reverse("fact_bulk_undo") + "?" + "&".join(f"entry={e}" for e in entries))


def deletes(client, entry_ids) -> list:
    """The history entries of these ids that are deletes not yet undone: what "Undo all" may
    undo (a link naming other entries undoes nothing else)."""
    found = []
    for entry_id in entry_ids:
        try:
            entry = client.history_entry(entry_id)
        except NotFound:
            continue  # gone from the history: the memory keeps its newest entries
        if entry.op == "delete" and entry.undone_by is None:
            found.append(entry)
    return found


@require_http_methods(["GET", "POST"])
def fact_bulk_undo(request: HttpRequest) -> HttpResponse:
    """After a bulk delete: undo all of its deletes, each through the memory's history."""
    source = request.POST if request.method == "POST" else request.GET
    ids = sorted({int(e) for e in source.getlist("entry") if e.isdigit() and len(e) < 16})[:BULK_LIMIT]
    if not ids:
        return redirect("trash")  # every delete is there
    client = memory(request.memory)
    entries = deletes(client, ids)
    if request.method == "GET":
        return render(request, "facts/bulk_undo.html", {"entries": entries})
    restored, skipped = [], len(ids) - len(entries)
    for entry in entries:
        try:
            _, fact, changed = client.undo(entry.id)
        except (NotFound, Conflict):
            skipped += 1  # undone meanwhile, or its id taken
            continue
        if fact is not None and changed:
            restored.append(fact.id)
        else:
            skipped += 1
    forget_status()
    if restored:
        messages.success(request, f"Put back {len(restored)} fact{'s' if len(restored) != 1 else ''}: "
                         + ", ".join(f"#{i}" for i in restored) + ".")
    if skipped:
        messages.info(request, f"{skipped} delete{'s were' if skipped != 1 else ' was'} not undone "
                      "(undone already, or no longer in the history): see the trash.")
    return redirect("facts")
