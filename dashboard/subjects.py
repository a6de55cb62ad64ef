"""What a pair of the contradictions queue is about, so the queue reads at a person's size: the
pairs an import's writes proposed together, under the import; the others by the subject their
old fact opens with ("Kerensa Aldous", "the standup", "the owner"), so a run of look-alikes
("Kerensa Aldous is Fitzroy's mother." / "... Hamish's mother.") is one group the owner can mark
both true at once. Only for showing: the memory decides what a proposal is."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# The words that end a subject: "The standup | is at 9:30", "Kerensa Aldous | is ...".
VERBS = frozenset("""is are was were has have had does do did will would can could should
    may might must lives live works work goes meets starts takes uses likes prefers""".split())
OWNER = frozenset("i my me we our user owner users".split())
STARTS = frozenset("the a an at in on for after before since every our this".split())
WORD = re.compile(r"[^\W_][\w'’.-]*")
MOST_WORDS = 4
IMPORT = re.compile(r"^import of (.+)$")


@dataclass
class Group:
    title: str
    kind: str  # "import" or "subject"
    rows: list = field(default_factory=list)


def subject(text: str) -> str:
    """The words a fact opens with up to its verb, at most four, "the owner" for the owner's own
    facts ("User works ...", "The owner's rent ...", "Has a son ..."), lower case but for names."""
    words = [w.rstrip(".,;:") for w in WORD.findall(text)]
    head: list[str] = []
    for w in words:
        lw = w.lower().replace("’", "'")
        # A name ends at the first word in lower case: "Biscuit | the dog weighs 12 kg".
        named = head and head[0][:1].isupper() and head[0].lower() not in STARTS
        if lw in VERBS or (named and not w[:1].isupper()):
            break
        if lw.endswith("'s"):  # "Umar's sister ...": Umar's
            head.append(w[:-2])
            break
        head.append(w)
        if len(head) == MOST_WORDS:
            break
    lowered = [w.lower().replace("’", "'") for w in head]
    if not head or lowered[0] in OWNER or lowered[:2] in (["the", "owner"], ["the", "user"]):
        return "the owner"
    if lowered[0] in ("the", "a", "an"):
        head = [lowered[0]] + head[1:]
    return " ".join(head)


def grouped(rows: list[dict], notes: dict[int, str]) -> list[Group]:
    """The queue's rows in groups, each where its first pair is (the newest first): an import's
    pairs (the new fact's `add` note names the import) under it, the rest by subject."""
    groups: dict[tuple[str, str], Group] = {}
    for r in rows:
        found = IMPORT.match(notes.get(r["new"].id) or "")
        key = ("import", found.group(1)) if found else ("subject", subject(r["old"].text).casefold())
        if key not in groups:
            groups[key] = Group(found.group(1) if found else subject(r["old"].text), key[0])
        groups[key].rows.append(r)
    return list(groups.values())
