"""Nothing lost: the trash and the audit log, both read from the memory's own history (every
write by any client, with the fact before and after), undo of any entry, and a JSONL backup."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memories.client import BadRequest, Conflict, MemoryClient, NotFound, StatusError

from .. import audit
from ..memory import forget_status, memory
from ..models import AuditEntry
from ..strip import with_count, with_strip

EXPORT_PAGE = 100
HISTORY_PAGE = 50
OPS = ("add", "edit", "delete", "restore", "settings", "resolve", "review")
# What an undo did, by the op of the entry that records it (the note only says "undo of #N").
UNDONE = {"edit": "fact #{fact.id} holds its text, type and source as before",
          "delete": "fact #{fact.id} is deleted again (the trash has it)",
          "settings": "the settings are back as they were",
          "resolve": "the pair is an open contradiction again",
          "review": "the facts it reviewed wait in the Inbox again"}
BACK = ("audit", "trash", "contradictions", "inbox")  # the pages an undo form may come back to


def names(clients) -> list[str]:
    """Client names for a filter's suggestions: each as seen, and each without its version (the
    memory matches "claude-code" to "claude-code 2.1.0")."""
    found = set()
    for name in clients:
        if name:
            found.add(name)
            bare = name.split(" ", 1)[0]
            if bare != name:
                found.add(bare)
    return sorted(found, key=str.lower)


def clients_seen(client: MemoryClient, op: str | None = None) -> list[str]:
    """The clients the newest 100 history entries name (of `op`, if given); none from a memory
    that keeps no history (contract v2)."""
    try:
        entries, _ = client.history(limit=100, op=op)
    except NotFound:
        return []
    return names(e.client for e in entries)


def history_page(request: HttpRequest, **filters):
    """One page of the memory's history, newest first, and the next page's cursor; a cursor or
    filter the memory refuses (one typed into the URL) reads as the first page."""
    client = memory(request.memory)
    try:
        return client.history(limit=HISTORY_PAGE, cursor=request.GET.get("cursor") or None, **filters)
    except BadRequest:
        return client.history(limit=HISTORY_PAGE, **filters)


@require_GET
def trash(request: HttpRequest) -> HttpResponse:
    """Deletes by any client, newest first; those already undone are left out."""
    entries, cursor = history_page(request, op="delete")
    return render(request, "trash.html", {"entries": [e for e in entries if e.undone_by is None], "next_cursor": cursor})


@require_POST
def undo_delete(request: HttpRequest, entry_id: int) -> HttpResponse:
    """Undo a history entry: a delete comes back under its id and times (with its keyword
    entry and vector), an edit goes back, an add goes."""
    client = memory(request.memory)
    back = request.POST.get("next") if request.POST.get("next") in BACK else "trash"
    try:
        entry, fact, _ = client.undo(entry_id, force=request.POST.get("force") == "yes")
    except NotFound:
        messages.error(request, f"There is no history entry #{entry_id} any more: the memory keeps its newest entries only.")
        return redirect("trash")
    except Conflict as e:
        if e.code == "changed_since":  # what the undo would overwrite, and a choice
            error = e.body.get("error", {})
            return render(request, "undo_confirm.html", {
                "entry": client.history_entry(entry_id), "newer": error.get("entry"), "current": error.get("current"),
                "back": back}, status=409)
        messages.info(request, f"Could not undo #{entry_id}: {e.message}")
        return redirect("trash")
    forget_status()
    if request.htmx and fact is not None and entry.op == "restore":
        return with_strip(request, with_count(request, render(request, "facts/list.html#fact-row", {"fact": fact, "saved": True})))
    if entry.op == "restore":
        messages.success(request, f"Put fact #{fact.id} back, with its keyword entry and vector.")
    else:
        messages.success(request, f"Undid history entry #{entry_id}: {UNDONE[entry.op].format(fact=fact)}.")
    return redirect(back)


@require_GET
def audit_log(request: HttpRequest) -> HttpResponse:
    """Everything done to the memory, by any client (the agent, an import, the dashboard)."""
    fact = request.GET.get("fact", "")
    op = request.GET.get("op", "")
    client_name = request.GET.get("client", "")
    filters = {"fact_id": int(fact) if fact.isdigit() and len(fact) < 16 else None, "op": op if op in OPS else None,
               "client": client_name or None}
    if fact and filters["fact_id"] is None:
        entries, cursor = [], None
    else:
        try:
            entries, cursor = history_page(request, **filters)
        except StatusError as e:  # a client name the memory refuses, say
            messages.error(request, e.message)
            entries, cursor = [], None
    # Decisions only the dashboard knows (pairs marked "not a duplicate"), beside the history.
    decisions = AuditEntry.objects.filter(memory=request.memory, action="not_duplicate")[:20]
    return render(request, "audit.html", {"entries": entries, "next_cursor": cursor, "fact": fact, "op": op,
                                          "client_name": client_name, "ops": OPS, "decisions": decisions,
                                          "clients": clients_seen(memory(request.memory))})


@require_GET
def export(request: HttpRequest) -> StreamingHttpResponse:
    """Every fact as JSONL, the format `python -m memories import` restores (ids and times kept),
    after the memory's own settings when it has any, and then the pairs it keeps (its open
    contradictions, and those marked both true): memories/backup.py, the same file as `export`."""
    client = memory(request.memory)
    first = client.list_facts(limit=EXPORT_PAGE)  # fail here, as a page, if the service is down
    settings = client.backup_settings()

    def lines():
        if settings:
            yield json.dumps({"settings": settings}, ensure_ascii=False) + "\n"
        page = first
        while True:
            for fact in page.facts:
                yield json.dumps(audit.snapshot(fact), ensure_ascii=False) + "\n"
            if not page.next_cursor:
                break
            page = client.list_facts(limit=EXPORT_PAGE, cursor=page.next_cursor)
        for pair in client.backup_conflicts():
            yield json.dumps({"conflict": pair}, ensure_ascii=False) + "\n"

    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="memory-{request.memory}-{stamp}.jsonl"'
    return response
