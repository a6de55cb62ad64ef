"""Whether the owner has looked at a fact: which writes count as reviewed, and the memory's `review`
setting (docs/memory-api.md, "Review"), and the owner's review itself and its undo, which the
writer (writing.py) runs as its own. The write path asks `reviewed_by`; recall asks `pending`
through lifecycle.hidden. worker/src/review/reviewing.ts mirrors it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..facts import InvalidInput, clean_id, now
from ..writes import replacing
from .history import MAX_CLIENT, Entry, History

if TYPE_CHECKING:
    from ..storage.state import State

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


def review(state: State, history: History, ids: object, client: str = "", note: str = "") -> tuple[list[int], int | None]:
    """The owner reviewed these facts (POST /facts/review): each not yet reviewed is, now, in one
    write and one history entry. (the ids reviewed, the entry or None when none was)."""
    ids = clean_ids(ids)
    db, before = state.db, state.review["mode"] == "before"
    with state.writing():
        marks = ",".join("?" * len(ids))
        found = dict(db.execute(f"SELECT id, reviewed_at FROM facts WHERE id IN ({marks})", ids).fetchall())
        unknown = [i for i in ids if i not in found]
        if unknown:
            raise InvalidInput(f"ids name facts that do not exist: {', '.join(map(str, unknown[:10]))}")
        todo = [i for i in ids if found[i] is None]
        if not todo:
            return [], None
        at = now()
        db.execute(f"UPDATE facts SET reviewed_at = ? WHERE id IN ({','.join('?' * len(todo))})", [at, *todo])
        replacing.settle(db, before, todo)  # what they replace waited for this
        entry = history.record(client, "review", None, before={"ids": todo}, after={"ids": todo, "reviewed_at": at},
                               note=note or f"{len(todo)} reviewed")
    return todo, entry


def unreview(state: State, history: History, entry: Entry, client: str, note: str) -> None:
    """The undo of a review entry: its facts that still hold what it left get what was before (a
    review's: unreviewed again; the undo of one: reviewed again, at the time they were)."""
    ids, left, was = entry.after["ids"], entry.after["reviewed_at"], entry.before.get("reviewed_at")
    with state.writing():
        state.db.execute(f"UPDATE facts SET reviewed_at = ? WHERE reviewed_at IS ? AND id IN ({','.join('?' * len(ids))})",
                         [was, left, *ids])
        replacing.settle(state.db, state.review["mode"] == "before", ids)
        history.record(client, "review", None, before=entry.after, after={"ids": ids, "reviewed_at": was},
                       note=note, undoes=entry.id)
