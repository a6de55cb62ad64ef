"""What a fact is and what the engine accepts: the `Fact` type, the errors the HTTP contract maps
to statuses, the limits, and the checks every input goes through before any write or read."""

from __future__ import annotations

import base64
import re
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta, timezone

from .storage.vectors import TYPES

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


class AlreadyUndone(StoreError):
    code, status = "already_undone", 409


class ChangedSince(StoreError):
    """An undo would overwrite what was written after the entry: `entry` is the newest entry of
    the fact (or of the settings) since, and `current` what it holds now."""

    code, status = "changed_since", 409

    def __init__(self, message: str, entry: int | None, current: dict | None):
        super().__init__(message)
        self.entry, self.current = entry, current


class UndoRefused(StoreError):
    """An undo that would leave the memory in a state no write may make (a loop of replacements,
    a fact replaced by one that is gone or not current): refused even with `force`."""

    code, status = "undo_refused", 409


class Unavailable(StoreError):
    code, status = "model_unavailable", 503


class MemoryFull(StoreError):
    """The vectors and words in memory would pass the memory's budget (MEMORY_BUDGET_BYTES)."""
    code, status = "memory_full", 507


@dataclass(frozen=True)
class Fact:
    id: int
    text: str
    type: str
    source: str
    created_at: str
    updated_at: str
    valid_until: str | None = None  # after it the fact is no longer current (lifecycle.py)
    superseded_by: int | None = None  # the fact that replaced this one
    reviewed_at: str | None = None  # when the owner reviewed it; None: not yet (reviewing.py)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AddResult:
    fact: Fact
    created: bool
    match: str | None = None  # "exact", "near" or "replaced" when not created
    score: float | None = None
    conflicts: tuple[dict, ...] = ()  # a created fact's proposals: facts it may replace (lifecycle.py)
    pending: bool = False  # created unreviewed in a memory that recalls only reviewed facts


FACT_COLUMNS = "id, text, type, source, created_at, updated_at, valid_until, superseded_by, reviewed_at"


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


# What a time may be (as the Worker's facts.ts): YYYY-MM-DD, T (or t, or a space), HH:MM, then
# optionally :SS and a fraction of 1 to 6 digits, then Z (or z) or an offset +HH:MM or +HHMM.
# ASCII digits only; tests/golden/parsing.json holds the cases both sides answer alike.
TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]{1,6}))?)?"
                  r"(?:([Zz])|([+-])([0-9]{2}):?([0-9]{2}))?")


def clean_time(value: object, name: str) -> str | None:
    """A time as this store writes it (UTC, microseconds, Z), or None. Any other time, a date
    that is not in the calendar (2024-02-30, 24:00) or one outside the years 1 to 9999 in UTC: 422."""
    if value is None:
        return None
    m = TIME.fullmatch(value) if isinstance(value, str) else None
    if not m:
        raise InvalidInput(f"{name} is not an ISO-8601 time")
    y, mo, d, h, mi, s, frac, z, sign, oh, om = m.groups()
    try:
        if sign and not (int(oh) < 24 and int(om) < 60):
            raise ValueError
        when = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), int((frac or "").ljust(6, "0")))
        if not z and not sign:
            raise InvalidInput(f"{name} needs a time zone (end it in Z for UTC)")
        offset = timedelta(hours=int(oh), minutes=int(om)) * (-1 if sign == "-" else 1) if sign else timedelta(0)
        return stamp(when.replace(tzinfo=timezone(offset)))
    except (ValueError, OverflowError):  # not in the calendar; before year 1 or past 9999 once in UTC
        raise InvalidInput(f"{name} is not an ISO-8601 time") from None


MAX_FACT_ID = 2**53 - 1  # the largest id a JSON number holds exactly, and the Worker's JavaScript


def clean_id(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_FACT_ID:  # JSON's 5.0, as the Worker reads it
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_FACT_ID:
        raise InvalidInput(f"id must be a whole number from 1 to {MAX_FACT_ID}")
    return value


# GET /facts's orders: (the column, newest or highest first). Ties on a time are broken by the
# id, the same way round. Each order's cursor names it, but "created"'s, which stays the plain
# "created_at|id" this service has always given out.
ORDERS = {
    "created": ("created_at", True), "updated": ("updated_at", True), "id": ("id", True),
    "created_asc": ("created_at", False), "updated_asc": ("updated_at", False), "id_asc": ("id", False),
}
DEFAULT_ORDER = "created"


def clean_order(value: object) -> str:
    if value is None:
        return DEFAULT_ORDER
    if not isinstance(value, str) or value not in ORDERS:
        raise InvalidInput(f"order must be one of {', '.join(ORDERS)}")
    return value  # type: ignore[return-value]


def encode_cursor(fact: Fact, order: str = DEFAULT_ORDER) -> str:
    """URL-safe base64 of "key|id" (the key: the order's time, empty for the id), "order:" before it
    for every order but "created"."""
    column = ORDERS[order][0]
    key = "" if column == "id" else getattr(fact, column)
    text = f"{key}|{fact.id}" if order == DEFAULT_ORDER else f"{order}:{key}|{fact.id}"
    return base64.urlsafe_b64encode(text.encode()).decode()


# What this service gives out: URL-safe base64 with its padding, of "[order:]key|id".
CURSOR = re.compile(r"(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?")


def decode_cursor(cursor: str, order: str = DEFAULT_ORDER) -> tuple[str, int]:
    """(key, id) of a cursor given out under `order`: the id after its last "|", ASCII digits, 1 to
    2^63 - 1 (an id past 2^53 - 1 is not taken from a client, but autoincrement can reach one).
    Text before a first ":" that names an order other than "created" is the order the cursor was
    made under; any other text is "created"'s key, as before orders. Another order's cursor: 422."""
    try:
        if not (isinstance(cursor, str) and cursor and CURSOR.fullmatch(cursor)):
            raise ValueError
        key, bar, fid = base64.urlsafe_b64decode(cursor).decode("utf-8").rpartition("|")
        if not (bar and re.fullmatch(r"[0-9]{1,30}", fid) and 1 <= int(fid) < 2**63):
            raise ValueError
    except ValueError:  # UnicodeDecodeError too
        raise InvalidInput("cursor is not one this service gave out") from None
    head, colon, tail = key.partition(":")
    made, key = (head, tail) if colon and head in ORDERS and head != DEFAULT_ORDER else (DEFAULT_ORDER, key)
    if made != order:
        raise InvalidInput(f"cursor is from the list in order={made}, not order={order}: start that list again without it")
    if ORDERS[order][0] == "id" and key:
        raise InvalidInput("cursor is not one this service gave out")
    return key, int(fid)


@dataclass(frozen=True)
class Item:
    """A fact to store, checked: what POST /facts and each item of a batch take."""
    text: str
    type: str
    source: str
    created_at: str | None
    updated_at: str | None
    id: int | None
    force: bool
    valid_until: str | None
    superseded_by: int | None  # kept only by a restore
    supersedes: tuple[int, ...]
    reviewed_at: str | None  # kept only by a restore
    reviewed_given: bool  # the item names reviewed_at (null too); a restore of one that does not is reviewed
    own_valid_until: str | None = None  # kept only by a restore: a replaced fact's own validity (replacing.py)


def clean_items(items: list[dict]) -> list[Item]:
    from .writes.lifecycle import clean_supersedes  # (lifecycle.py reads this file's checks)

    out = []
    for i in items:
        if not isinstance(i, dict):
            raise InvalidInput("each fact must be an object")
        item = Item(clean_text(i.get("text")), clean_type(i.get("type", "fact")), clean_source(i.get("source", "")),
                    clean_time(i.get("created_at"), "created_at"), clean_time(i.get("updated_at"), "updated_at"),
                    clean_id(i.get("id")), clean_force(i.get("force")), clean_time(i.get("valid_until"), "valid_until"),
                    clean_id_named(i.get("superseded_by"), "superseded_by"), tuple(clean_supersedes(i.get("supersedes"))),
                    clean_time(i.get("reviewed_at"), "reviewed_at"), "reviewed_at" in i,
                    clean_time(i.get("own_valid_until"), "own_valid_until"))
        if item.valid_until is not None and item.created_at is not None and item.valid_until < item.created_at:
            raise InvalidInput("valid_until must not be before the fact's created_at")
        out.append(item)
    return out


def clean_id_named(value: object, name: str) -> int | None:
    try:
        return clean_id(value)
    except InvalidInput:
        raise InvalidInput(f"{name} must be a fact id: a whole number from 1 to {MAX_FACT_ID}") from None


def clean_force(value: object) -> bool:
    """`force`: store even over a near (not an exact) duplicate, the client's decision."""
    if value is None:
        return False
    if not isinstance(value, bool):
        raise InvalidInput("force must be true or false")
    return value



def check_query(query: object, type: str | None) -> None:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query is empty")
    if len(query) > MAX_QUERY:
        raise TooLarge(f"query is {len(query)} characters; the limit is {MAX_QUERY}")
    valid_unicode(query, "query")
    if type is not None:
        clean_type(type)
