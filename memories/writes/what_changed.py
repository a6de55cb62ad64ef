"""What a new fact says changed, when it does not keep the old one's sentence: the thing a change
word is about, and a measure's new amount. same_question.py asks these when its frame test cannot
see the question both answer ("The owner's password manager is LastPass." / "The owner moved from
LastPass to Bitwarden."; "5 mg of amlodipine" / "The doctor raised the amlodipine dose to 10 mg.").
worker/src/writes/what_changed.ts mirrors it line for line; tests/golden/same_question.json holds both to
the same answers. Each rule was found on the seen sets of benchmarks/lifecycle.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .same_question import Words

# The change words whose thing is the old fact's: "switched the broadband", "The office moved".
SWITCHES = frozenset(
    """moved relocated switched changed replaced transferred upgraded downgraded increased decreased
    raised lowered reduced pushed postponed rescheduled delayed renamed rebranded retitled took_over moves
    moving relocates relocating switches switching renames renaming transfers transferring""".split()
)
# How close two facts must be for a measure's change to be theirs, and how many words around a
# number say what it measures.
MEASURED = 0.6
AROUND = 3
CURRENCY = "£$€¥"
# "Biscuit is up to 14 kg", "put the rent up to £1,240": a measure said as a change.
UP = frozenset("up down".split())
BE = frozenset("is are was were be been being".split())
ARTICLES = frozenset("the a an his her their my our its your".split())
FROM = frozenset(["from"])
ADVERBS = frozenset("longer anymore no_more any_more".split())


def measure(o: Words, n: Words, shared: set[str]) -> tuple[list[str], list[str]] | None:
    """A number in each with one unit after it ("12 kg" / "14 kg", "9:30" / "10:00", "£400" /
    "£650"), the numbers differ, the words around both name one thing (what is measured), and no
    one else is named: the old amount and the new one."""
    if _names(o) - _names(n) and _names(n) - _names(o):
        return None
    units_old, units_new = _units(o), _units(n)
    for i, unit in units_old.items():
        for j, other in units_new.items():
            if unit != other or o.keys[i] in shared or n.keys[j] in shared:
                continue
            if (_around(o, i) & _around(n, j) & shared) - {unit}:
                return [o.raw[i]], [n.raw[j]]
    return None


def said_up(words: Words) -> bool:
    return bool(UP & {w.lower() for w in words.raw})


def taken_back(words: Words, old: Words, cues: set[str]) -> set[str]:
    """What a retraction takes back: the words after its cue ("gave up coffee", "scrapped the Lake
    District offsite") or, when the cue follows "is" or "been" or nothing follows it, before it
    ("The HelloFresh deliveries are cancelled"). Not after an adverb: "no more messages" is not a
    thing taken back. Not the person the old fact is about: "Ben's party is cancelled" takes
    nothing back from "Ben is the owner's godson"."""
    out: set[str] = set()
    cues = cues - ADVERBS
    for i, raw in enumerate(words.raw):
        if raw.lower() in cues:
            after = set() if i and words.raw[i - 1].lower() in BE else _thing(words, i, 1)
            out |= after or _thing(words, i, -1)
    first = next((k for k in old.keys if k and k != "~"), "")
    return out - ({first} if _capital(old, first) and _capital(words, first) else set())


def switched(words: Words, old: Words, cues: set[str]) -> set[str]:
    """A switch word's thing: what it switches ("moved from LastPass to ...", "switched the
    broadband over to ...") or what switched ("The office moved to ..."), a thing and not a person
    ("Ingrid moved to Oslo" says nothing of Ingrid's job). What follows "to" is the new answer."""
    thing: set[str] = set()
    for i, raw in enumerate(words.raw):
        if raw.lower() in cues:
            after = _thing(words, i, 1, skip=FROM)
            before = {k for k in _thing(words, i, -1) if not _name(words, old, k)}
            thing |= after | before
    return thing


def _thing(words: Words, i: int, step: int, skip: frozenset[str] = frozenset()) -> set[str]:
    """The content words next to position i, one way: up to the next glue or small word that is
    not an article ("coffee | and", "HelloFresh deliveries | are"); past `skip` words and "the
    owner's" only when they come first ("from LastPass", "renamed the owner's plan")."""
    out: set[str] = set()
    m = i + step
    while 0 <= m < len(words.raw) and len(out) < AROUND:
        key, low = words.keys[m], words.raw[m].lower()
        if key and key != "~":
            out.add(key)
        elif out and (key == "~" or low not in ARTICLES):
            break
        elif not out and step == 1 and low not in ARTICLES | skip and not _owning(words, m):
            break
        m += step
    return out


def _name(words: Words, old: Words, key: str) -> bool:
    """A name: written with a capital past the text's first word, or first and in the old fact too
    ("Leo moved ..." after "Leo is ..."; not "Newsletter was renamed ..." after "The newsletter ...")."""
    return any(k == key and raw[:1].isupper() and (m > 0 or _capital(old, key))
               for m, (raw, k) in enumerate(zip(words.raw, words.keys)))


def _owning(words: Words, m: int) -> bool:
    """Position m is in a possessive before a thing: "the owner's Flex 20 plan"."""
    return words.raw[m] == "'s" or words.raw[m + 1 : m + 2] == ["'s"]


def _capital(words: Words, key: str) -> bool:
    return any(k == key and raw[:1].isupper() for raw, k in zip(words.raw, words.keys))


def _around(words: Words, i: int) -> set[str]:
    """The content words nearest a position: three before it and three after."""
    at = [m for m, k in enumerate(words.keys) if k and k != "~" and m != i]
    before = [m for m in at if m < i][-AROUND:]
    after = [m for m in at if m > i][:AROUND]
    return {words.keys[m] for m in before + after}


def _names(words: Words) -> set[str]:
    """The names a text holds: capitalised words, its first only when it owns something ("Mia's")."""
    return {k for m, (raw, k) in enumerate(zip(words.raw, words.keys))
            if k and k != "~" and raw[:1].isupper() and (m > 0 or words.raw[1:2] == ["'s"])}


def _units(words: Words) -> dict[int, str]:
    """Each number's position and its unit: "time", "money", or the next content word ("mg")."""
    out = {}
    for i, raw in enumerate(words.raw):
        if not any(c.isdigit() for c in raw):
            continue
        if ":" in raw or (i + 1 < len(words.raw) and words.raw[i + 1].lower() in ("am", "pm")):
            out[i] = "time"
        elif raw[0] in CURRENCY:
            out[i] = "money"
        else:
            unit = next((k for k in words.keys[i + 1 : i + 3] if k and k != "~"), "")
            if unit and not any(c.isdigit() for c in unit):
                out[i] = unit
    return out
