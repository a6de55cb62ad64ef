"""Whether a write replaces the fact it proposes at once: the memory's `proposals` setting.
worker/src/writes/replace_at_once.ts mirrors it.

`propose` (the default) keeps every proposal for a client (the agent, the owner) to decide.
`replace`: a fact written alone by a client or with a source the memory trusts (reviewing.py's
rule: the dashboard, or the `review` setting's `trusted`) that proposes exactly one fact replaces
it in the same write, recorded with the add and undone with it, the pair kept as done
(`resolution` "replace"). Two or three proposals mean the write answers more than one question,
or the rule is unsure which: those wait for a decision, as a batch's (an import's) do."""

from __future__ import annotations

import sqlite3

from . import replacing
from ..facts import Fact, InvalidInput
from ..review.reviewing import reviewed_by

MODES = ("propose", "replace")
DEFAULT = "propose"
DONE = "replace"  # the pair's resolution once replaced at once


def clean_mode(value: object) -> str:
    """PUT /settings's `proposals`."""
    if value not in MODES:
        raise InvalidInput(f"proposals must be one of {', '.join(MODES)}")
    return value  # type: ignore[return-value]


def replaces_at_once(mode: str, alone: bool, client: str, source: str, review: dict, proposed: tuple) -> dict[int, Fact] | None:
    """The fact a write's proposals replace at once, as it was ({id: Fact}), or None: they wait.
    (A fact already waiting to be replaced by another, in a memory that reviews before, waits.)"""
    if mode != "replace" or not alone or len(proposed) != 1 or not reviewed_by(client, source, review):
        return None
    old = Fact(**proposed[0]["fact"])
    return None if old.superseded_by is not None else {old.id: old}


def replace_now(db: sqlite3.Connection, reader, fid: int, proposed: tuple, review_before: bool) -> tuple[dict]:
    """Inside the write: the one proposed fact replaced by fact `fid`, the pair marked done; the
    write's answer for it, its fact as it is now and `replaced` true."""
    old = proposed[0]["id"]
    replacing.replace(db, old, fid, review_before)
    db.execute("UPDATE conflicts SET resolution = ? WHERE old = ? AND new = ?", (DONE, old, fid))
    return ({**proposed[0], "fact": reader.get_many([old])[old].to_dict(), "replaced": True},)
