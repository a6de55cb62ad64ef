"""Which fact replaces which, and what that does to the old fact's validity. Every way a
replacement is made or taken back (a write's `supersedes`, PATCH's `superseded_by`, a conflict's
resolution, a delete, an undo, the owner's approval) goes through the checks and the one rule
here, so none can make a loop, replace a fact that is not current, or hide the owner's fact
behind one still waiting in the inbox. worker/src/writes/replacing.ts mirrors it.

A replaced fact keeps the validity it had in `own_valid_until`. Its `valid_until` is the earlier
of that and the replacement's time (the later of the two facts' creation) once the replacing fact
counts: it is not pending (the memory recalls it: review "after", or the owner approved it).
Until then the old fact stays current, its `superseded_by` naming what waits to replace it.
Taking a replacement back (un-replacing, or deleting the fact that replaced it) gives the old
fact its own validity again, exactly."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from ..facts import FACT_COLUMNS, Fact, InvalidInput, UndoRefused
from .lifecycle import is_current

if TYPE_CHECKING:
    from ..review.history import Entry

UNSET = object()  # an edit's field not given (None clears valid_until and superseded_by)

# valid_until of each fact replaced by one of the ids (a JSON array), or of every replaced fact
# when that is null, from its own validity and its replacing fact: the rule above. :before, whether the
# memory's review is "before" (an unreviewed fact is pending).
SETTLE = """
UPDATE facts SET valid_until = (
    SELECT CASE
        WHEN :before AND b.reviewed_at IS NULL THEN facts.own_valid_until
        WHEN facts.own_valid_until IS NOT NULL AND facts.own_valid_until < max(facts.created_at, b.created_at)
            THEN facts.own_valid_until
        ELSE max(facts.created_at, b.created_at) END
    FROM facts AS b WHERE b.id = facts.superseded_by)
WHERE superseded_by IS NOT NULL AND (:by IS NULL OR superseded_by IN (SELECT value FROM json_each(:by)))
  AND EXISTS (SELECT 1 FROM facts AS b WHERE b.id = facts.superseded_by)
"""


def settle(db: sqlite3.Connection, review_before: bool, by: list[int] | None = None) -> None:
    """Inside a write: the validity of the facts that `by` replace (every replaced fact: None)."""
    if by is not None and not by:
        return
    db.execute(SETTLE, {"before": int(review_before), "by": None if by is None else json.dumps(by)})


def replace(db: sqlite3.Connection, old: int, by: int, review_before: bool) -> None:
    """Inside a write, checked already (`check`): fact `old` replaced by fact `by`."""
    db.execute("UPDATE facts SET own_valid_until = valid_until, superseded_by = ? WHERE id = ? AND superseded_by IS NULL",
               (by, old))
    settle(db, review_before, [by])


def unreplace(db: sqlite3.Connection, ids: list[int]) -> None:
    """Inside a write: these facts no longer replaced, each with its own validity back."""
    db.execute("UPDATE facts SET valid_until = own_valid_until, own_valid_until = NULL, superseded_by = NULL"
               " WHERE superseded_by IS NOT NULL AND id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))


def replaced_by(db: sqlite3.Connection, fid: int) -> list[dict]:
    """The facts `fid` replaces (waiting or in effect), each as its row holds it, own validity too:
    what a delete of `fid` gives back, and its undo replaces again."""
    rows = db.execute(f"SELECT {FACT_COLUMNS}, own_valid_until FROM facts WHERE superseded_by = ? ORDER BY id", (fid,))
    return [Fact(*r[:-1]).to_dict() | {"own_valid_until": r[-1]} for r in rows.fetchall()]


def chain(db: sqlite3.Connection, fid: int) -> list[int]:
    """The ids `fid`'s superseded_by leads to, `fid` first (a loop stops where it closes)."""
    seen: list[int] = []
    at: int | None = fid
    while at is not None and at not in seen:
        seen.append(at)
        row = db.execute("SELECT superseded_by FROM facts WHERE id = ?", (at,)).fetchone()
        at = row[0] if row else None
    return seen


def check_old(old: Fact, by: int | None = None) -> None:
    """InvalidInput unless `old` may be replaced now (by `by`): current, and not replaced by
    another fact. (An expired fact replaced would come back in as_of, and lose its own end.)"""
    if old.superseded_by is not None and old.superseded_by != by:
        raise InvalidInput(f"fact {old.id} is replaced already, by fact {old.superseded_by}: "
                           "un-replace it first (superseded_by null) to name another")
    if not is_current(old.valid_until, ""):
        raise InvalidInput(f"fact {old.id} is not current (its validity ended {old.valid_until}): only a current fact is replaced")


def check(db: sqlite3.Connection, old: Fact, by: int, by_fact: Fact | None, name: str = "superseded_by") -> None:
    """InvalidInput unless fact `by` may replace `old` now: `check_old`, and `by` another current
    fact whose chain does not lead back to `old`."""
    check_old(old, by)
    if by == old.id:
        raise InvalidInput(f"{name} names fact {old.id} itself: a fact cannot replace itself")
    if by_fact is None:
        raise InvalidInput(f"{name} names fact {by}, which does not exist")
    if not is_current(by_fact.valid_until, ""):
        raise InvalidInput(f"{name} names fact {by}, which is not current: only a current fact replaces")
    if old.id in chain(db, by):
        raise InvalidInput(f"{name} names fact {by}, whose chain leads back to fact {old.id}: a loop")


def fact_of(db: sqlite3.Connection, fid: int) -> Fact | None:
    row = db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ?", (fid,)).fetchone()
    return Fact(*row) if row else None


def patched(db: sqlite3.Connection, fact: Fact, own: str | None, valid_until: object,
            superseded_by: object) -> tuple[str | None, str | None, int | None]:
    """What an edit (PATCH's `valid_until` and `superseded_by`, each UNSET when not given) makes of
    `fact`'s validity (`own`: its own_valid_until), checked inside the write (`check`): its
    (valid_until, own_valid_until, superseded_by). A replaced fact's valid_until is then settled
    from its own."""
    new_valid, new_by = fact.valid_until, fact.superseded_by
    if superseded_by is None and new_by is not None:  # no longer replaced: its own end back
        new_valid, own, new_by = own, None, None
    elif superseded_by not in (UNSET, None, new_by):
        check(db, fact, superseded_by, fact_of(db, superseded_by))  # type: ignore[arg-type]
        own, new_by = fact.valid_until, superseded_by  # type: ignore[assignment]
    if valid_until is not UNSET:
        if valid_until is not None and valid_until < fact.created_at:  # type: ignore[operator]
            raise InvalidInput("valid_until must not be before the fact's created_at")
        if new_by is None:
            new_valid = valid_until  # type: ignore[assignment]
        else:
            own = valid_until  # type: ignore[assignment]
    return new_valid, own, new_by


def undone(db: sqlite3.Connection, fact: Fact, own: str | None, entry: Entry) -> tuple[str | None, str | None, int | None]:
    """What an undo of edit `entry` puts back of `fact`'s validity: its end, or the fact that
    replaced it, again only where a write could (UndoRefused says why not, `force` or not)."""
    was_valid, was_by = entry.before.get("valid_until"), entry.before.get("superseded_by")
    if was_by is None:  # not replaced then: its end as it was
        return was_valid, None, None
    if was_by == fact.superseded_by:
        return fact.valid_until, own, was_by
    try:
        check(db, fact, was_by, fact_of(db, was_by))
    except InvalidInput as e:
        raise UndoRefused(f"history entry {entry.id} cannot be undone: fact {fact.id} would be replaced by fact {was_by}, "
                          f"and {e}") from None
    return fact.valid_until, fact.valid_until, was_by
