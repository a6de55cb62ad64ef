"""Curation through the memory's own history: deletes the trash can undo, and the few decisions
only the dashboard knows (a pair that is not a duplicate, a case kept from a recall).

The memory records every write by any client (the agent through MCP, an import, the API, the
dashboard) in its history, in the write's own transaction: the trash and the audit log read it
there, so what an agent did is as visible and as undoable as a click here. The dashboard's own
table (`AuditEntry`) keeps only what is not a write to the memory."""

from __future__ import annotations

from dataclasses import asdict

from django.http import HttpRequest

from memories.client import Fact, HistoryEntry, MemoryClient

from .models import AuditEntry


def snapshot(fact: Fact | None) -> dict | None:
    if fact is None:
        return None
    data = asdict(fact)
    data["created_at"] = fact.created_at.isoformat().replace("+00:00", "Z")
    data["updated_at"] = fact.updated_at.isoformat().replace("+00:00", "Z")
    for name in ("valid_until", "reviewed_at"):
        if data[name] is not None:
            data[name] = data[name].isoformat().replace("+00:00", "Z")
    return data


def record(request: HttpRequest, action: str, fact_id: int | None = None, *, before: Fact | None = None,
           after: Fact | None = None, note: str = "", memory: str | None = None) -> AuditEntry:
    """A decision only the dashboard knows (not a write to the memory). `memory`: the memory the
    fact is in, if not the one the request is about."""
    return AuditEntry.objects.create(
        memory=memory or request.memory, user=request.user.get_username() if request.user.is_authenticated else "",
        action=action, fact_id=fact_id, before=snapshot(before), after=snapshot(after), note=note,
    )


def last_delete(client: MemoryClient, fact_id: int) -> HistoryEntry | None:
    """The history's most recent delete of a fact that is not undone: the trash entry an Undo
    link names (a delete is `client.delete`; the memory keeps the fact in its history)."""
    entries, _ = client.history(fact_id=fact_id, op="delete", limit=1)
    return entries[0] if entries and entries[0].undone_by is None else None
