"""What every reader does with one candidate fact: the checks POST /facts makes (its limits, as
memories/facts.py and the contract state them), so a line that cannot be a fact is refused in the
dry run with its line and why, not by the memory midway through a batch. The importers run beside
the dashboard, which reaches a memory only through its client: nothing here imports the engine,
and the memory checks every fact again."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

MAX_TEXT = 8000
MAX_SOURCE = 200
TYPES = ("fact", "skill", "log")
DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
# The contract's time (docs/memory-api.md "Objects"; the memory's TIME in memories/facts.py).
TIME = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt ]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:[.,]([0-9]{1,6}))?)?"
                  r"(?:([Zz])|([+-])([0-9]{2}):?([0-9]{2}))")


class Refused(ValueError):
    pass


def text_key(text: str) -> str:
    """What exact dedup compares (the memory's own rule): stripped, case-folded."""
    return text.strip().casefold()


def checked_text(text: object) -> str:
    if not isinstance(text, str):
        raise Refused("text is empty" if text is None else "text must be a string")
    text = text.strip()
    if not text:
        raise Refused("text is empty")
    if len(text) > MAX_TEXT:
        raise Refused(f"text is {len(text)} characters; the limit is {MAX_TEXT}")
    return valid_unicode(text, "text")


def valid_unicode(value: str, name: str) -> str:
    """JSON's \\ud800 escape gives a lone surrogate, which the memory refuses (422) and which
    would fail the whole batch of the dry run: refused here, on its own line."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(f"{name} contains a lone surrogate: it is not valid Unicode") from None
    return value


def checked_time(value: str) -> str:
    """The time as the memory takes it (a date alone is its midnight UTC), or Refused."""
    value = value + "T00:00:00Z" if DATE.fullmatch(value) else value
    m = TIME.fullmatch(value)
    if not m:
        raise Refused("its time is not an ISO-8601 time with a zone")
    y, mo, d, h, mi, s, frac, z, sign, oh, om = m.groups()
    try:
        if sign and not (int(oh) < 24 and int(om) < 60):
            raise ValueError
        offset = timedelta(hours=int(oh), minutes=int(om)) * (-1 if sign == "-" else 1) if sign else timedelta(0)
        when = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), int((frac or "").ljust(6, "0")),
                        tzinfo=timezone(offset))
        when.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        raise Refused("its time is not a real date and time") from None
    return value


def instant(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def candidate(parsed, line: int, text: object, source: str, type: object = None, time: object = None,
              until: object = None) -> None:
    """Add the fact to `parsed.items`, or the line and why to `parsed.refused`. `until`: when it
    stops being true (its `valid_until`), never before its time."""
    try:
        kind = type or "fact"
        if kind not in TYPES:
            raise Refused(f"type must be one of {', '.join(TYPES)}")
        if len(source) > MAX_SOURCE:
            raise Refused(f"source is longer than {MAX_SOURCE} characters")
        valid_unicode(source, "source")
        item = {"text": checked_text(text), "type": kind, "source": source, "line": line}
        if time not in (None, ""):
            if not isinstance(time, str):
                raise Refused("its time is not text")
            item["created_at"] = checked_time(time)
        if until not in (None, ""):
            if not isinstance(until, str):
                raise Refused("its expiry is not text")
            item["valid_until"] = checked_time(until)
            if "created_at" in item and instant(item["valid_until"]) < instant(item["created_at"]):
                raise Refused("it expires before it was made")
    except Refused as e:
        parsed.refused.append((line, str(e)))
        return
    parsed.items.append(item)
