"""Whether the owner has looked at a fact: which writes count as reviewed, and the memory's `review`
setting (docs/memory-api.md, "Review"). The write path (writing.py) asks `reviewed_by`; recall
asks `pending` through lifecycle.hidden. worker/src/review/reviewing.ts mirrors it."""

from __future__ import annotations

from ..facts import InvalidInput, clean_id
from .history import MAX_CLIENT

DASHBOARD = "dashboard"  # the owner's own client: what it writes is reviewed
MODES = ("after", "before")  # an unreviewed fact is recalled at once, or only once reviewed
DEFAULT = {"mode": "after", "trusted": []}
MAX_TRUSTED = 50
MAX_REVIEW = 200  # ids a POST /facts/review takes


def named(client: str, name: str) -> bool:
    """`client` is `name`, or `name` and a version after a space (the MCP server's "name version")."""
    return client == name or client.startswith(name + " ")


def reviewed_by(client: str, source: str, review: dict) -> bool:
    """Whether a write by `client` with `source` counts as the owner's review."""
    if named(client, DASHBOARD):
        return True
    trusted = review.get("trusted", [])
    return any(named(client, t) for t in trusted if client) or source in trusted


def clean_review(value: object, before: dict) -> dict:
    """PUT /settings's `review` over the setting `before`: `mode` and/or `trusted`."""
    if not isinstance(value, dict) or not value or set(value) - {"mode", "trusted"}:
        raise InvalidInput('review must be an object with "mode" and/or "trusted"')
    out = dict(before)
    if "mode" in value:
        if value["mode"] not in MODES:
            raise InvalidInput(f"review.mode must be one of {', '.join(MODES)}")
        out["mode"] = value["mode"]
    if "trusted" in value:
        trusted = value["trusted"]
        if not isinstance(trusted, list) or len(trusted) > MAX_TRUSTED:
            raise InvalidInput(f"review.trusted must be a list of up to {MAX_TRUSTED} client names or sources")
        for t in trusted:
            if not (isinstance(t, str) and 1 <= len(t) <= MAX_CLIENT and all(" " <= c <= "~" for c in t)):
                raise InvalidInput(f"review.trusted: each entry is a client name or a source of 1 to {MAX_CLIENT} "
                                   "printable ASCII characters")
        out["trusted"] = list(dict.fromkeys(trusted))
    return out


def clean_ids(value: object) -> list[int]:
    """POST /facts/review's `ids`: 1 to MAX_REVIEW fact ids."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_REVIEW:
        raise InvalidInput(f"ids must be a list of 1 to {MAX_REVIEW} fact ids")
    try:
        if any(v is None for v in value):
            raise InvalidInput("null")
        return list(dict.fromkeys(clean_id(v) for v in value))  # type: ignore[misc]
    except InvalidInput:
        raise InvalidInput(f"ids must be a list of 1 to {MAX_REVIEW} fact ids") from None
