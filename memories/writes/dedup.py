"""When two texts that the model finds nearly the same still say different things.

Near-duplicate dedup on write merges a new fact into an existing one when their cosine is at or
above the threshold. The model cannot be trusted with the details that make a fact a fact: with
MiniLM, "...on 5 March" and "...on 6 March" score 0.975, 02:00 and 03:00 0.991. A memory that
drops a real fact is worse than one that keeps a duplicate, so a near match never merges texts
that differ in a number, a date or time, a weekday or month, a name, or a negation. Measured on
memories/data/dedup_pairs.json (benchmarks/dedup_quality.py). The Worker's dedup.ts mirrors
this; tests/golden/recall.json holds both to the same answers.
"""

from __future__ import annotations

import re

from ..facts import text_key

CAPITALISED = re.compile(r"(?<![^\W_])[^\W\d_][^\W_]*", re.UNICODE)
NEGATIONS = frozenset("not no never none nobody nothing nowhere neither nor cannot without n't".split())
# Counting and ordering words say "which one" as surely as digits do.
NUMBER_WORDS = frozenset(
    """zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred
    thousand million billion first second third fourth fifth sixth seventh eighth ninth tenth
    eleventh twelfth once twice half dozen""".split()
)
CALENDAR = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday january february march april may june
    july august september october november december today tomorrow yesterday morning afternoon
    evening night noon midnight weekend weekday""".split()
)
# Capitalised words that are no one's name: a sentence's first word is often one of these.
COMMON = frozenset(
    """the a an this that these those it its owner owners my our your his her their there here i we
    you he she they on in at to for from by with of and or but if when while after before since
    until every each all some any no not never to do does did is are was were be been has have
    had please always usually also""".split()
)


def words(text: str) -> list[str]:
    """Lower-cased words, with the "n't" of "doesn't" a word of its own (a negation)."""
    lowered = text.lower().replace("\u2019", "'").replace("n't", " n't")
    return re.findall(r"n't|[^\W_]+", lowered)


def numbers(tokens: list[str]) -> list[str]:
    """Digits (14, 2028, 9, 30 in 9:30, 1 in 1st) and number words, as they come."""
    out = []
    for t in tokens:
        digits = re.sub(r"[^0-9]", "", t)
        if digits:
            out.append(digits.lstrip("0") or "0")  # "02" and "2" are one hour; no int(): 4,300 digits is its limit
        elif t in NUMBER_WORDS:
            out.append(t)
    return out


def names(text: str) -> set[str]:
    return {w.lower() for w in CAPITALISED.findall(text) if w[0].isupper() and w.lower() not in COMMON}


def calendar(tokens: list[str]) -> set[str]:
    """Days, months and times of day, "Saturdays" as "saturday"."""
    return {w if w in CALENDAR else w[:-1] for w in tokens if w in CALENDAR or w[:-1] in CALENDAR}


def mentions(tokens: list[str], name: str) -> bool:
    """The name is among the tokens, as it is or in the singular or plural ("Saturdays")."""
    return name in tokens or name.removesuffix("s") in tokens or name + "s" in tokens


def distinct(a: str, b: str) -> str | None:
    """Why two near-identical texts still state different facts, or None if nothing says so."""
    wa, wb = words(a), words(b)
    if sorted(numbers(wa)) != sorted(numbers(wb)):
        return "they differ in a number"
    if calendar(wa) != calendar(wb):
        return "they differ in a day, month or time of day"
    if sum(w in NEGATIONS for w in wa) % 2 != sum(w in NEGATIONS for w in wb) % 2:
        return "one says not"
    # A name in one text that the other does not mention at all (in any case): another person,
    # place or thing. A name both mention, wherever it stands, is the same one.
    if any(not mentions(wb, n) for n in names(a)) or any(not mentions(wa, n) for n in names(b)):
        return "they differ in a name"
    return None


# How close the same text with and without its subject must be to be looked at (MiniLM: 0.81-0.86).
SUBJECT_FLOOR = 0.6
# The owner as a fact's opening subject, which a memory's facts often leave out ("Is allergic to
# peanuts.", as ChatGPT writes them): matched on the case-folded text.
OWNER_OPENING = re.compile(r"^(?:the +)?(?:owner|user)(?:'s|\u2019s)? +")


def bare(text: str) -> str:
    """The text as exact dedup compares it, without an opening owner subject or a closing full stop."""
    return OWNER_OPENING.sub("", text_key(text).rstrip(". "))


def same_but_subject(a: str, b: str) -> bool:
    """One fact, written with and without its subject: "The owner is allergic to peanuts." and
    "Is allergic to peanuts." (the memory is the owner's; another subject is another fact)."""
    return bool(bare(a)) and bare(a) == bare(b)


SUBJECTS = ("", "the owner ", "owner ", "the user ", "user ", "the owner's ", "owner's ", "the user's ", "user's ",
            "the owner\u2019s ", "owner\u2019s ", "the user\u2019s ", "user\u2019s ")


def spellings(text: str) -> list[str]:
    """Every text_key the same fact has with or without its subject and full stop: what a replaced
    fact is looked up by, so "Lives in Utrecht." is the replaced "The owner lives in Utrecht."."""
    b = bare(text)
    return [text_key(text)] + ([f"{s}{b}{end}" for s in SUBJECTS for end in ("", ".")] if b else [])
