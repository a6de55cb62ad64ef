"""The dashboard's record of every curation action, and the trash that undoes deletes."""

from __future__ import annotations

from dataclasses import asdict

from django.http import HttpRequest
from django.utils import timezone

from memories.client import Fact, MemoryClient

from .models import AuditEntry


def snapshot(fact: Fact | None) -> dict | None:
    if fact is None:
        return None
    data = asdict(fact)
    data["created_at"] = fact.created_at.isoformat().replace("+00:00", "Z")
    data["updated_at"] = fact.updated_at.isoformat().replace("+00:00", "Z")
    return data


def record(request: HttpRequest, action: str, fact_id: int | None = None, *, before: Fact | None = None,
           after: Fact | None = None, note: str = "", memory: str | None = None) -> AuditEntry:
    """`memory`: the memory the fact is in, if not the one the request is about."""
    return AuditEntry.objects.create(
        memory=memory or request.memory, user=request.user.get_username() if request.user.is_authenticated else "", action=action, fact_id=fact_id,
        before=snapshot(before), after=snapshot(after), note=note,
    )


def delete(request: HttpRequest, client: MemoryClient, fact_id: int, note: str = "", fact: Fact | None = None) -> AuditEntry:
    """Delete a fact through the client, keeping it in the trash (the audit entry). Pass `fact`
    when the caller has just read it, to spare a second read."""
    fact = fact or client.get(fact_id)
    client.delete(fact_id)
    return record(request, "delete", fact_id, before=fact, note=note)


def undo(request: HttpRequest, client: MemoryClient, entry: AuditEntry) -> tuple[Fact, bool]:
    """Put a deleted fact back under its id and times, with its FTS entry and vector
    (the service rebuilds both). (fact, restored): not restored when the memory already holds
    the same fact again, which is then the one returned. `client` is the entry's own memory's."""
    b = entry.before
    result = client.add(b["text"], b["type"], b.get("source", ""), id=b["id"], created_at=b["created_at"],
                        updated_at=b["updated_at"])
    entry.undone_at = timezone.now()
    entry.save(update_fields=["undone_at"])
    record(request, "restore", result.fact.id, after=result.fact, memory=entry.memory,
           note="" if result.created else f"already stored again as #{result.fact.id} ({result.match} match)")
    return result.fact, result.created
