"""Which recalled facts may be outdated: of an open proposal (conflicts.py; both facts current,
nobody resolved it), the older fact, by `created_at` then id. Recall answers the newer of the two
above the older and marks the older `may_be_outdated`, so an agent that has not heard from the
owner yet still reads the newest answer first ("I don't drink coffee anymore" above "drinks two
coffees a day"). benchmarks/lifecycle.py measures it against its absence on every evaluation set.
worker/src/recall/outdated.ts mirrors it.
"""

from __future__ import annotations

import sqlite3

from ..facts import now

# Switched off only by benchmarks/lifecycle.py, to measure the ranking without it.
NEWER_FIRST = True


def older_of(db: sqlite3.Connection, ids: list[int]) -> dict[int, int]:
    """Of the facts `ids`, each that an open proposal says may be outdated, with the newer fact
    that says so (the newest, if several do)."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    at = now()
    rows = db.execute(
        "SELECT o.id, o.created_at, n.id, n.created_at FROM conflicts c JOIN facts o ON o.id = c.old "
        "JOIN facts n ON n.id = c.new WHERE c.resolution IS NULL "
        "AND (o.valid_until IS NULL OR o.valid_until > ?) AND (n.valid_until IS NULL OR n.valid_until > ?) "
        f"AND (c.old IN ({marks}) OR c.new IN ({marks}))", [at, at, *ids, *ids]).fetchall()
    out: dict[int, tuple[str, int]] = {}
    for a, a_at, b, b_at in rows:
        (older, _), (newer, newer_at) = sorted([(a, a_at), (b, b_at)], key=lambda f: (f[1], f[0]))
        if older in ids and (older not in out or out[older] < (newer_at, newer)):
            out[older] = (newer_at, newer)
    return {older: newer for older, (_, newer) in out.items()}


def newer_first(ids: list[int], older: dict[int, int]) -> list[int]:
    """`ids` in recall's order, each newer fact of a pair moved just above its older one when it
    ranked below it; the rest keep their order."""
    order = list(ids)
    if not NEWER_FIRST:
        return order
    for old in sorted(older, key=ids.index):
        new = older[old]
        if new in order and order.index(new) > order.index(old):
            order.remove(new)
            order.insert(order.index(old), new)
    return order
