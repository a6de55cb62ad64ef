"""The one way the dashboard reaches a memory: an httpx client of docs/memory-api.md.

Works against any implementation of the contract (the local service, a Durable Object). One class,
`MemoryClient`, made of a file a section of the contract: transport.py (how a request goes, and
the service itself), facts.py, recall.py, lifecycle.py (review, contradictions, near
duplicates), history.py and settings.py. What it answers is in answers.py, what goes wrong in
errors.py (both importable from here, as before).
"""

from __future__ import annotations

from .answers import (AddResult, Fact, Health, Hit, HistoryEntry, LoggedRecall, Page, Pair, Proposal,  # noqa: F401
                      Ranked, Recall, parse_time)
from .errors import (BadRequest, Conflict, ImportRunning, InvalidResponse, MemoryServiceError, NotFound,  # noqa: F401
                     ServiceUnavailable, StatusError, TimedOut, Unauthorized, Unreachable, error_for_status)
from .facts import FactCalls
from .history import HistoryCalls
from .lifecycle import LifecycleCalls
from .recall import RecallCalls
from .settings import SettingsCalls
from .transport import MAX_FACT_ID, MAX_PAGE, Transport  # noqa: F401


class MemoryClient(FactCalls, RecallCalls, LifecycleCalls, HistoryCalls, SettingsCalls, Transport):
    """A memory over HTTP: every route of the contract, a method each."""
