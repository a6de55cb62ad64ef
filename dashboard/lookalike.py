"""Near-duplicates that may state different facts: look-alikes to keep apart, not merge.

The memory says why two near-identical texts may be different facts (its write-time rule: a
number, a date or time, a weekday or month, a name, a negation) in each pair's `distinct`; the
dashboard reads it there and imports nothing of the engine. The model also finds "Leon's sister
is Emil." and "Leon's brother is Emil." the same (0.954): a relation word is the dashboard's own
addition here.
"""

from __future__ import annotations

import re

from memories.client import Pair

# Words that name who someone is to someone else: two texts that differ in one say different things.
RELATIONS = frozenset(
    """sister brother sibling mother father mum mom dad parent son daughter child wife husband spouse
    partner girlfriend boyfriend fiance fiancee aunt uncle niece nephew cousin grandmother grandfather
    grandma grandpa grandson granddaughter stepmother stepfather stepson stepdaughter boss manager
    colleague friend neighbour neighbor""".split()
)


def relations(text: str) -> set[str]:
    words = re.findall(r"[a-z]+", text.lower())
    return {w if w in RELATIONS else w[:-1] for w in words if w in RELATIONS or (w.endswith("s") and w[:-1] in RELATIONS)}


def conflict(pair: Pair) -> str | None:
    """Why two near-identical facts may still say different things, or None."""
    if pair.distinct:
        return pair.distinct
    ra, rb = relations(pair.a.text), relations(pair.b.text)
    if ra != rb:
        return f"they differ in a relation ({' / '.join(sorted(ra ^ rb))})"
    return None
