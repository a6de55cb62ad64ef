"""Near-duplicates that may state different facts: look-alikes to keep apart, not merge.

The engine's own rule (memories/dedup.py's `distinct`: a number, a date or time, a weekday or
month, a name, a negation) is imported as it is: that module imports nothing but `re`, nothing of
the engine's storage (tests/test_duplicates_page.py holds it to that). The model also finds
"Leon's sister is Emil." and "Leon's brother is Emil." the same (0.954); a relation word is the
dashboard's own addition here.
"""

from __future__ import annotations

import re

from memories.dedup import distinct

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


def conflict(a: str, b: str) -> str | None:
    """Why two near-identical texts may still say different things, or None."""
    why = distinct(a, b)
    if why:
        return why
    ra, rb = relations(a), relations(b)
    if ra != rb:
        return f"they differ in a relation ({' / '.join(sorted(ra ^ rb))})"
    return None
