"""What a fact is and what the engine accepts: the `Fact` type, the errors the HTTP contract maps
to statuses, the limits, and the checks every input goes through before any write or read."""

from __future__ import annotations

import base64
from dataclasses import asdict, dataclass
from datetime import UTC, datetime

from .vectors import TYPES

MAX_TEXT = 8000
MAX_SOURCE = 200
MAX_QUERY = 32_000
MAX_FILTER = MAX_TEXT  # a longer substring can match no fact
DEFAULT_THRESHOLD = 0.97
# Pairs at or above this cosine are kept on write (pairs.py): /duplicates at or above
# it is a table read; below it, all pairs are computed.
DEFAULT_FLOOR = 0.80
NEAR_CANDIDATES = 10  # same-type neighbours over the threshold that dedup looks at
MODES = ("hybrid", "keyword", "vector")  # hybrid fuses both lists; the others answer from one


class StoreError(Exception):
    """Root of the engine's errors; `code` and `status` are what the HTTP contract says."""

    code, status = "error", 500


class InvalidInput(StoreError):
    code, status = "invalid", 422


class TooLarge(StoreError):
    code, status = "too_large", 413


class NotFound(StoreError):
    code, status = "not_found", 404


class Conflict(StoreError):
    code, status = "duplicate", 409

    def __init__(self, message: str, existing: Fact, match: str, score: float):
        super().__init__(message)
        self.existing, self.match, self.score = existing, match, score


class IdTaken(StoreError):
    code, status = "id_taken", 409


class Unavailable(StoreError):
    code, status = "model_unavailable", 503


@dataclass(frozen=True)
class Fact:
    id: int
    text: str
    type: str
    source: str
    created_at: str
    updated_at: str

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AddResult:
    fact: Fact
    created: bool
    match: str | None = None  # "exact" or "near" when not created
    score: float | None = None


FACT_COLUMNS = "id, text, type, source, created_at, updated_at"


def stamp(when: datetime) -> str:
    """UTC, microseconds, Z: one fixed width, so the text sorts as the time does (years < 1000 too)."""
    return when.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def now() -> str:
    return stamp(datetime.now(UTC))


def text_key(text: str) -> str:
    """What exact dedup compares: the text without surrounding white space, case-folded."""
    return text.strip().casefold()


def valid_unicode(value: str, name: str) -> str:
    """JSON's \\ud800 escape gives Python a lone surrogate, which SQLite, the model and UTF-8 refuse."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{name} contains a lone surrogate: it is not valid Unicode") from None
    return value


def clean_text(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInput("text must be a string")
    text = valid_unicode(text, "text").strip()
    if not text:
        raise InvalidInput("text is empty")
    if len(text) > MAX_TEXT:
        raise TooLarge(f"text is {len(text)} characters; the limit is {MAX_TEXT}")
    return text


def clean_type(type: object) -> str:
    if type not in TYPES:
        raise InvalidInput(f"type must be one of {', '.join(TYPES)}")
    return type  # type: ignore[return-value]


def clean_source(source: object) -> str:
    if not isinstance(source, str):
        raise InvalidInput("source must be a string")
    if len(source) > MAX_SOURCE:
        raise TooLarge(f"source is longer than {MAX_SOURCE} characters")
    return valid_unicode(source, "source").strip()


def clean_time(value: object, name: str) -> str | None:
    """An ISO-8601 time as this store writes it (UTC, microseconds, Z), or None."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        if when.tzinfo is None:
            raise InvalidInput(f"{name} needs a time zone (end it in Z for UTC)")
        return stamp(when)
    except (ValueError, OverflowError):
        raise InvalidInput(f"{name} is not an ISO-8601 time") from None


def clean_id(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and value < 2**53:  # JSON's 5.0, as the Worker reads it
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < 2**63:
        raise InvalidInput("id must be a positive whole number")
    return value


def encode_cursor(fact: Fact) -> str:
    return base64.urlsafe_b64encode(f"{fact.created_at}|{fact.id}".encode()).decode()


def decode_cursor(cursor: str) -> tuple[str, int]:
    try:
        created_at, _, fid = base64.urlsafe_b64decode(cursor.encode()).decode().partition("|")
        if 1 <= int(fid) < 2**63:  # a fact id; a bigger one would overflow SQLite's integers
            return created_at, int(fid)
    except Exception:
        pass
    raise InvalidInput("cursor is not one this service gave out")


def clean_items(items: list[dict]) -> list[tuple]:
    return [
        (clean_text(i.get("text")), clean_type(i.get("type", "fact")), clean_source(i.get("source", "")),
         clean_time(i.get("created_at"), "created_at"), clean_time(i.get("updated_at"), "updated_at"),
         clean_id(i.get("id")))
        for i in items
    ]



def check_query(query: object, type: str | None) -> None:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query is empty")
    if len(query) > MAX_QUERY:
        raise TooLarge(f"query is {len(query)} characters; the limit is {MAX_QUERY}")
    valid_unicode(query, "query")
    if type is not None:
        clean_type(type)
