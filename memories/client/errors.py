"""What can go wrong reaching a memory, as one tree: `Unreachable` (no answer: refused, timed out)
apart from `StatusError` (an answer with an error status, by its code) and `InvalidResponse` (an
answer that is not the contract)."""

from __future__ import annotations

from .answers import Fact


class MemoryServiceError(Exception):
    """Root of every error this client raises."""


class Unreachable(MemoryServiceError):
    """No answer: the service is down, refused the connection, or is not at this address."""

    def __init__(self, message: str, url: str):
        super().__init__(message)
        self.url = url


class TimedOut(Unreachable):
    """The service did not answer within the client's timeout."""


class InvalidResponse(MemoryServiceError):
    """An answer that is not what the contract says (not JSON, missing fields)."""


class StatusError(MemoryServiceError):
    """The service answered with an error status."""

    def __init__(self, status: int, code: str, message: str, body: dict | None = None):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.body = status, code, message, body or {}


class BadRequest(StatusError):
    """400, 413 or 422: the service refused what was sent."""


class Unauthorized(StatusError):
    """401: the shared secret is missing or wrong."""


class NotFound(StatusError):
    pass


class Conflict(StatusError):
    """409: an edit would duplicate another fact, named in `existing`."""

    @property
    def existing(self) -> Fact | None:
        raw = self.body.get("error", {}).get("existing")
        return Fact.from_json(raw) if raw else None


class ImportRunning(Conflict):
    """409 import_running: another import is running into this memory; this one was refused,
    not queued. `running` says which client runs it and when its last batch was."""

    @property
    def running(self) -> dict:
        return self.body.get("error", {}).get("running") or {}


class ServiceUnavailable(StatusError):
    """503: the embedding model or store is unavailable."""


def error_for_status(status: int, code: str = "") -> type[StatusError]:
    if status == 409 and code == "import_running":
        return ImportRunning
    if status in (400, 413, 422):
        return BadRequest
    return {401: Unauthorized, 404: NotFound, 409: Conflict, 503: ServiceUnavailable}.get(status, StatusError)
