"""What "forget for good" removes from the dashboard's own records, beside the memory's: the
audit log's entries of the fact (an evaluation set's load records each fact it stored, text and
all) and any other entry that quotes its text. The memory's side is memories/review/forgetting.py."""

from __future__ import annotations

import json

from .models import AuditEntry


def forget_records(memory: str, fact_id: int, texts: list[str]) -> int:
    """The audit entries of fact `fact_id` in `memory` removed, and any other that holds one of
    `texts` (its texts, as the page saw them); how many."""
    gone = AuditEntry.objects.filter(memory=memory, fact_id=fact_id).delete()[0]
    texts = [t for t in texts if t]
    quoting = [e.id for e in AuditEntry.objects.filter(memory=memory).only("id", "before", "after", "note")
               if any(t in json.dumps([e.before, e.after, e.note], ensure_ascii=False) for t in texts)]
    return gone + AuditEntry.objects.filter(id__in=quoting).delete()[0]
