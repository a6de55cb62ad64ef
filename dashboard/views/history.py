"""Nothing lost: the trash (undo a delete), the audit log, and a full JSONL backup."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from memories.client import Conflict

from .. import audit
from ..memory import forget_status, memory
from ..models import AuditEntry
from ..strip import with_count, with_strip

EXPORT_PAGE = 100


@require_GET
def trash(request: HttpRequest) -> HttpResponse:
    entries = AuditEntry.objects.filter(memory=request.memory, action="delete", undone_at__isnull=True)
    page = Paginator(entries, 50).get_page(request.GET.get("page"))
    return render(request, "trash.html", {"page": page})


@require_POST
def undo_delete(request: HttpRequest, entry_id: int) -> HttpResponse:
    entry = get_object_or_404(AuditEntry, id=entry_id, action="delete", memory=request.memory)
    if entry.undone_at:
        messages.info(request, f"Fact #{entry.fact_id} was already put back.")
        return redirect("trash")
    try:
        fact, restored = audit.undo(request, memory(entry.memory), entry)  # back where it was deleted from
    except Conflict as e:
        messages.error(request, f"Could not put fact #{entry.fact_id} back: {e.message}")
        return redirect("trash")
    forget_status()
    if request.htmx:
        return with_strip(request, with_count(request, render(request, "facts/list.html#fact-row", {"fact": fact, "saved": True})))
    if restored:
        messages.success(request, f"Put fact #{fact.id} back, with its keyword entry and vector.")
    else:
        messages.info(request, f"The memory already holds this fact again, as #{fact.id}.")
    return redirect("trash")


@require_GET
def audit_log(request: HttpRequest) -> HttpResponse:
    entries = AuditEntry.objects.filter(memory=request.memory)
    if request.GET.get("fact"):
        entries = entries.filter(fact_id=request.GET["fact"]) if request.GET["fact"].isdigit() else entries.none()
    page = Paginator(entries, 100).get_page(request.GET.get("page"))
    return render(request, "audit.html", {"page": page, "fact": request.GET.get("fact", "")})


@require_GET
def export(request: HttpRequest) -> StreamingHttpResponse:
    """Every fact as JSONL, the format `python -m memories import` restores (ids and times kept)."""
    client = memory(request.memory)
    first = client.list_facts(limit=EXPORT_PAGE)  # fail here, as a page, if the service is down

    def lines():
        page = first
        while True:
            for fact in page.facts:
                yield json.dumps(audit.snapshot(fact), ensure_ascii=False) + "\n"
            if not page.next_cursor:
                return
            page = client.list_facts(limit=EXPORT_PAGE, cursor=page.next_cursor)

    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    response = StreamingHttpResponse(lines(), content_type="application/x-ndjson; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="memory-{request.memory}-{stamp}.jsonl"'
    return response
