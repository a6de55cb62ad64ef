"""What every reader does with one candidate fact: the checks POST /facts makes, so a line that
cannot be a fact is refused in the dry run with its line and why, not by the memory midway."""

from __future__ import annotations

import re

from ..facts import StoreError, clean_text, clean_time, clean_type

DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def candidate(parsed, line: int, text: object, source: str, type: object = None, time: object = None) -> None:
    """Add the fact to `parsed.items`, or the line and why to `parsed.refused`."""
    try:
        item = {"text": clean_text(text), "type": clean_type(type or "fact"), "source": source, "line": line}
        if time not in (None, ""):
            if not isinstance(time, str):
                raise StoreError("its time is not text")
            item["created_at"] = clean_time(time + "T00:00:00Z" if DATE.fullmatch(time) else time, "its time")
    except StoreError as e:
        parsed.refused.append((line, str(e)))
        return
    parsed.items.append(item)
