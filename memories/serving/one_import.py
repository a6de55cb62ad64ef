"""One import at a time into a memory (issue 49 §1; docs/memory-api.md, "One import at a time").

An import is a series of `POST /facts/batch` calls that carry the same `import_id`, a token the
importer makes (the CLI, the dashboard's Import page). While one import is running, a batch of
another `import_id` is refused with `409 import_running`, saying which client runs the other one
and when its last batch was, rather than queued or mixed in with it. An import runs from its first
batch until a batch of it says `import_done` (an empty one ends it), or until it has sent nothing
for `MEMORY_IMPORT_IDLE_SECONDS` (60): an importer that crashed does not hold the memory for ever.
A batch without `import_id` (an agent's ordinary batch write) is never refused and changes
nothing here. A dry run is refused like any batch while another import runs (its answers would
not hold), but does not start one: it stores nothing.

What runs is held by the process that serves the memory, for that memory alone (one `OneImport`
an app of service.py; the Worker's twin, worker/src/serving/one_import.ts, one a Durable Object).
It is checked and marked on the event loop, before the batch's work goes to a thread, so two
batches arriving together cannot both find the memory free.
"""

from __future__ import annotations

import os
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone

from ..facts import InvalidInput, StoreError

IDLE_SECONDS = 60  # an import with no batch for this long no longer holds the memory
IMPORT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class ImportRunning(StoreError):
    """409: another import is running into this memory."""

    code, status = "import_running", 409

    def __init__(self, message: str, running: dict):
        super().__init__(message)
        self.running = running  # {"client", "last_seen", "idle_seconds"}: in the error, beside the message


@dataclass
class Running:
    import_id: str
    client: str
    last_seen: float  # monotonic: when its last batch began or ended
    last_seen_at: str  # the same, as the contract's time
    batches: int = 0  # its batches in flight: running whatever the clock says


def idle_seconds() -> int:
    """MEMORY_IMPORT_IDLE_SECONDS (whole seconds, at least 1), or IDLE_SECONDS."""
    value = os.environ.get("MEMORY_IMPORT_IDLE_SECONDS") or ""
    if not value:
        return IDLE_SECONDS
    if not (value.isdigit() and int(value) >= 1):
        raise SystemExit("error: MEMORY_IMPORT_IDLE_SECONDS must be a whole number of seconds, at least 1")
    return int(value)


def import_fields(data: dict) -> tuple[str | None, bool]:
    """The batch's `import_id` (or None) and `import_done`, as the contract says them."""
    import_id, done = data.get("import_id"), data.get("import_done", False)
    if import_id is not None and not (isinstance(import_id, str) and IMPORT_ID.fullmatch(import_id)):
        raise InvalidInput("import_id must be 1 to 64 letters, digits, _ or -")
    if done is None:
        done = False
    if not isinstance(done, bool):
        raise InvalidInput("import_done must be true or false")
    if done and import_id is None:
        raise InvalidInput("import_done goes with the import_id of the import it ends")
    return import_id, done


def now_text() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class OneImport:
    """The import running into one memory, if any."""

    def __init__(self, idle: int, clock=time.monotonic):
        self.idle, self.clock = idle, clock
        self.running: Running | None = None

    def holder(self) -> Running | None:
        """The import holding the memory now: one with a batch in flight, or seen within `idle`."""
        r = self.running
        if r is not None and r.batches == 0 and self.clock() - r.last_seen >= self.idle:
            self.running = r = None
        return r

    def check(self, import_id: str) -> None:
        r = self.holder()
        if r is not None and r.import_id != import_id:
            ago = max(0.0, self.clock() - r.last_seen)
            who = f" by {r.client}" if r.client else ""
            raise ImportRunning(
                f"another import is running into this memory{who} (its last batch {int(ago + 0.5)} s ago, at {r.last_seen_at}): "
                f"this one is refused, not queued; start it again once that import ends, or after {self.idle} s "
                "without a batch from it",
                {"client": r.client, "last_seen": r.last_seen_at, "idle_seconds": self.idle})

    @contextmanager
    def batch(self, import_id: str | None, done: bool, client: str, dry_run: bool):
        """Around one batch's work: refused (ImportRunning) when another import runs; a batch that
        stores marks its import running until it ends, and `done` after it succeeds ends it."""
        if import_id is None:
            yield
            return
        self.check(import_id)
        if dry_run:  # stores nothing: holds nothing
            yield
            if done:
                self.end(import_id)
            return
        r = self.holder()
        if r is None:
            r = self.running = Running(import_id, client, self.clock(), now_text())
        r.batches += 1
        r.last_seen, r.last_seen_at = self.clock(), now_text()
        try:
            yield
        finally:
            r.batches -= 1
            r.last_seen, r.last_seen_at = self.clock(), now_text()
        if done:  # (reached only when the batch succeeded)
            self.end(import_id)

    def end(self, import_id: str) -> None:
        if self.running is not None and self.running.import_id == import_id:
            self.running = None
