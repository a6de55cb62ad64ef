"""Whether a new fact answers the same question as an older one with another answer: what makes
a proposal ("this may replace #12"). worker/src/writes/same_question.ts mirrors it line for line, and
tests/golden/same_question.json holds both to the same answers.

Two facts answer one question when they keep one frame (the same subject, the same attribute or
relation) and change one value in it: "The standup is at 9:30." / "The standup is at 10:00 now.";
or when the new one takes the old one back: "The owner no longer drinks coffee." A fact about the
same subject's other attribute ("Umar's wife is Elena." after "Umar's sister is Ingrid."), another
subject's same attribute ("Paul's sister ..."), or another true thing on the same topic ("likes
jazz" after "likes hiking") is not. Cosine alone cannot tell these apart (they all score alike),
so the rule reads the words. benchmarks/lifecycle.py measures it, seen and unseen sets apart.

The words of each text are sorted into roles: glue (is, has: the hinge between a frame's attribute
and its value), filler (the, of, to: nothing), change cues (now, new, moved: evidence of an
update, not part of the frame), the owner (the default subject, often left out: "Is allergic to
peanuts."), and content. The content the two texts share is the frame; what each holds that the
other lacks is its value. The frame holds when each side's value is one unbroken run of its text
(no shared word or glue inside it: "sister ... is ... Ingrid" against "wife ... is ... Elena" is
two runs, the attribute and the value) and the subject is shared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .dedup import CALENDAR, NUMBER_WORDS
from .what_changed import MEASURED, SWITCHES, measure, said_up, switched, taken_back

GLUE = frozenset("is are was were be been being am has have had 's called named titled known goes_by go_by going_by known_as".split())
FILLER = frozenset(
    """the a an of to in on at for from by with and or as into onto about per via its their his her
    our your this that these those it there here who which whose what where when than then so also
    just still too very really every each all some any one do does did ca wo sha""".split()
)
# The default subject: a memory's facts are about its owner unless they name someone else.
OWNER = frozenset("owner owners user users i me my mine myself we our".split())
# Words that say a fact changed, not what it is about: strong ones by themselves ("moved",
# "cancelled"), weak ones only with the frame kept ("now", "new").
STRONG = frozenset(
    """moved relocated switched changed replaced renamed rebranded retitled transferred became turned
    upgraded downgraded increased decreased raised lowered reduced pushed postponed rescheduled delayed
    sold left quit stopped resigned retired ended cancelled canceled terminated discontinued dropped
    renewed extended christened longer anymore off gave_up given_up giving_up stepped_down took_over
    called_off no_more any_more withdrew withdrawn scrapped shelved axed abandoned ditched lapsed
    unsubscribed dropped_out pulled_out moves moving relocates relocating switches switching renames
    renaming transfers transferring cancels cancelling canceling quits quitting stops stopping""".split()
)
WEAK = frozenset("now new newly currently since recently lately today again instead later latest actually".split())
CUES = STRONG | WEAK
# A new fact holding one of these takes the old one back ("no longer", "stopped", "cancelled").
RETRACTIONS = frozenset(
    "longer anymore quit stopped cancelled canceled ended off terminated discontinued gave_up given_up "
    "giving_up stepped_down called_off no_more any_more withdrew withdrawn scrapped shelved axed abandoned "
    "ditched lapsed unsubscribed dropped_out pulled_out cancels cancelling canceling quits quitting stops stopping".split()
)
# Two words that make one change word: "gave up", "stepped down", "called off".
PHRASES = re.compile(r"\b(gave|given|giving|stepped|took|called|no|any|goes|go|going|known) (up|down|over|off|more|by|as)\b", re.IGNORECASE)
OUT = re.compile(r"\b(dropped|pulled) (out)\b", re.IGNORECASE)  # "dropped out", not "goes out"
NEGATIONS = frozenset("not no never n't without".split())
# Words that name one place to live or work out of several verbs: "moved to X" answers "lives in Y".
SAME = {"home": "live", "live": "live", "lives": "live", "living": "live", "lived": "live", "moved": "live", "relocated": "live",
        "based": "live", "located": "live", "kept": "live", "stored": "live", "parked": "live", "housed": "live"}

NAMING = frozenset("called named title titled renamed goes_by go_by going_by known_as".split())
# How much of the old fact the new one must say again: with a retraction, with a strong change word.
RETRACTS = 0.4
CHANGED = 0.5
CLOSE = 0.8
NEAR = 0.6
# Two things said about one labelled subject ("D3.js: used for graphs" / "D3.js: licence ISC", as
# an MCP memory graph's observations read) differ in more than a short answer ("Tech stack: Go").
LABEL = re.compile(r"^([^:\n]{1,60}?): ")
ANSWER_WORDS = 3
# A subject written as one identifier ("mcp-server-memory", "D3.js"): what a text opens with.
IDENT = re.compile(r"^([^\W_]+(?:[-._/][^\W_]+)+)")

# An opening that says when, not what: "After the wedding, ...", "As of March, ...".
LEAD = re.compile(r"^(?:after|since|as of|from|following|starting|effective|these days|this|last|next)\b[^,;]{0,60},[ \t\r\n]*", re.I)
# Clauses: a sentence's end after a word (not "Ms." or "Dr."), or a semicolon.
CLAUSES = re.compile(r"(?:;|(?<=[a-z]{4})\.)[ \t\r\n]+")
TOKEN = re.compile(r"n't|[£$€¥]?\d+(?:[:.,/-]\d+)*[^\W_]*|[^\W\d_][^\W_]*(?:_[^\W\d_]+|'[^\W\d_]+)?|'s", re.UNICODE)


@dataclass(frozen=True)
class Answer:
    """Why a new fact answers an older one's question: `reason` "value", "retraction", "change"
    or "rename", and the words of each fact's answer as written (`old`, `new`)."""

    reason: str
    old: list[str]
    new: list[str]


def stem(word: str) -> str:
    """A crude stem, the same on both sides: "drinks", "drinking" and "drink" are one word, as
    are "coffees" and "coffee", "lives" and "lived"."""
    w = word.removesuffix("'s")
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith("es") and (w[-3] in "sxz" or w[-4:-2] in ("ch", "sh")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        w = w[:-1]
    elif len(w) > 5 and w.endswith("ing"):
        w = w[:-3]
    elif len(w) > 4 and w.endswith("ed"):
        w = w[:-2]
    return w.removesuffix("e") if len(w) > 3 else w


@dataclass(frozen=True)
class Words:
    raw: list[str]  # as written
    keys: list[str]  # stemmed content words, or "~" for glue; None-like "" for the rest
    cues: set[str]
    negations: int


@lru_cache(maxsize=4096)  # a write reads its new text once a candidate, and a crowd's texts for every new fact
def read(text: str) -> Words:
    raw, keys, cues, negations = [], [], set(), 0
    # "doesn't" is "does" and a negation, as dedup.words reads it.
    text = text.replace("\u2019", "'").replace("n't", " n't").replace("N'T", " N'T")
    for token in TOKEN.findall(OUT.sub(r"\1_\2", PHRASES.sub(r"\1_\2", text))):
        word = token.lower()
        if word.endswith("'s") and len(word) > 2:  # "Umar's": the name, then the glue of possession
            for part, key in ((token[:-2], word[:-2]), ("'s", "~")):
                raw.append(part)
                keys.append("" if key in OWNER else (key if key == "~" else stem(key)))
            continue
        raw.append(token)
        if word in NEGATIONS:
            negations += 1
            keys.append("")
        elif word in SAME:
            if word in CUES:
                cues.add(word)
            keys.append(SAME[word])
        elif word == "off" and (len(keys) == 0 or keys[-1] != "~"):  # "drop-off", not "is off"
            keys.append("")
        elif word in CUES or (len(raw) > 1 and raw[-2].lower() == "since"):  # "since March": when, not what
            cues.add(word)
            keys.append("")
        elif word in GLUE:
            keys.append("~")
        elif word in FILLER or word in OWNER:
            keys.append("")
        else:
            keys.append(stem(word))
    return Words(raw, keys, cues, negations)


def _run(words: Words, value: set[str], shared: set[str]) -> list[int] | None:
    """The positions of the value's words if they make one unbroken run (no shared content word
    or glue between them), else None."""
    at = _at(words, value)
    if not at:
        return []
    between = range(at[0], at[-1] + 1)  # an answer can own something: "at Carla's house"
    if any((words.keys[i] == "~" and words.raw[i] != "'s") or words.keys[i] in shared for i in between):
        return None
    return at


def _as_written(words: Words, at: list[int]) -> list[str]:
    return list(dict.fromkeys(words.raw[i] for i in at))


def _written(words: Words, keys: set[str]) -> list[str]:
    return _as_written(words, _at(words, keys))


def answers(old: str, new: str, cosine: float = 0.0) -> Answer | None:
    """How `new` answers the question `old` answers, or None when it answers another one;
    `cosine` is the model's for the two texts. A new fact of several clauses answers it when one
    of them does: "The flat was sold; the new landlord is Ms. Kowalczyk."."""
    found = _answers(old, LEAD.sub("", new), cosine)
    clauses = [c for c in CLAUSES.split(new) if c]
    for clause in clauses if len(clauses) > 1 and not found else ():
        found = _answers(old, clause, cosine)
        if found:
            break
    return found


def _answers(old: str, new: str, cosine: float) -> Answer | None:
    o, n = read(old), read(new)
    ko = [k for k in o.keys if k and k != "~"]
    kn = [k for k in n.keys if k and k != "~"]
    if not ko or not kn:
        return None
    shared = set(ko) & set(kn)
    only_old, only_new = set(ko) - shared, set(kn) - shared
    cues = n.cues - o.cues
    covered = sum(k in shared for k in ko) / len(ko)
    said_old, said_new = _written(o, only_old), _written(n, only_new)
    said_again = (covered >= RETRACTS or (cosine >= NEAR and covered > 0)
                  or bool(taken_back(n, o, cues & RETRACTIONS) & shared))
    if (o.negations % 2 != n.negations % 2 or cues & RETRACTIONS) and said_again:
        # The new answer of a retraction is what takes the old one back: "no longer", "stopped".
        taken = [n.raw[i].replace("_", " ") for i, k in enumerate(n.keys)
                 if k in only_new or n.raw[i].lower() in cues or n.raw[i].lower() in NEGATIONS]
        return Answer("retraction", said_old, list(dict.fromkeys(taken)))
    # One measure, another amount, said as a change: "5 mg of amlodipine" / "The doctor raised the
    # amlodipine dose to 10 mg." (its subject can be written two ways, so before the subject's test).
    amounts = (cues or said_up(n)) and cosine >= MEASURED and _same_owned(o, n) and measure(o, n, shared)
    if amounts:
        return Answer("value", *amounts)
    # A switch said of the thing switched, however the subject is written ("moved from LastPass").
    if cues & SWITCHES and switched(n, o, cues & SWITCHES) & shared - set(SAME.values()):
        return Answer("change", said_old, said_new)
    # The subject: the first thing either names is named by the other too, or both are the owner's.
    # (Two facts of the owner's that open on different words only answer one question when the new
    # one says what changed: "User banks with Barclays." / "User switched to Monzo ...".)
    opened = ko[0] in shared or kn[0] in shared
    if not opened and not (_owner_first(o) and _owner_first(n)):
        return None
    if _observations(old, new, said_old, said_new) or _other_subjects(old, new):
        return None
    found = opened and _value(o, n, shared, only_old, only_new, cues, _named(old) | _named(new))
    if found:
        return found
    # A fresh sentence that says what changed ("The owner sold the Corolla and drives a Tesla."):
    # a strong change word, and most of the old fact said again.
    if cues & STRONG and (covered >= CHANGED or (cosine >= NEAR and covered >= RETRACTS / 2)):
        return Answer("change", said_old, said_new)
    # A new name, said as one: "TaskBoard is now called Tallyo.", "has a new title: Tinker Talk."
    if cues and NAMING & {w.lower() for w in n.raw} and covered >= RETRACTS / 4 * 3:
        return Answer("rename", said_old, said_new)
    # Nearly one sentence, a value changed in it ("Ravi's insulin dose is 12 units" / "Ravi now
    # injects 14 units of insulin").
    if (opened and cosine >= CLOSE and covered >= CHANGED and _same_owned(o, n) and not _narrowed(o, n, shared)
            and not _possessors(o, _at(o, only_old), n, _at(n, only_new))
            and _kinds(o, _at(o, only_old)) & _kinds(n, _at(n, only_new)) - {"word"}):
        return Answer("value", said_old, said_new)
    return None


def _narrowed(o: Words, n: Words, shared: set[str]) -> bool:
    """One text puts a word inside the other's frame: "The flight back from Vilnius ..." after "The
    flight to Vilnius ...": two words next to each other in one (filler aside) have a plain word
    between them in the other, so the two ask about different things."""
    for a, b in ((o, n), (n, o)):
        seq = [k for k in a.keys if k and k != "~"]
        at = [i for i, k in enumerate(b.keys) if k and k != "~"]  # b's content words' positions
        keys = [b.keys[i] for i in at]
        for x, y in zip(seq, seq[1:]):
            if x in shared and y in shared and x in keys:
                i = keys.index(x)
                j = next((m for m in range(i + 1, len(keys)) if keys[m] == y), i + 1)
                between = at[i + 1 : j]
                if between and all(b.keys[m] not in shared and "word" in _kinds(b, [m]) for m in between):
                    return True
    return False


def _possessors(o: Words, at_old: list[int], n: Words, at_new: list[int]) -> bool:
    """Both answers own what the frame names: "Kerensa is Fitzroy's mother." / "... Hamish's mother."
    are two people's mothers (another subject's same attribute), not two answers."""
    return bool(at_old and at_new) and all(_owns(w, at) for w, at in ((o, at_old), (n, at_new)))


def _owns(words: Words, at: list[int]) -> bool:
    """The words at `at` are all in a possessor: the first glue after each is "'s"."""
    for i in at:
        glue = next((j for j in range(i + 1, len(words.keys)) if words.keys[j] == "~"), None)
        if glue is None or words.raw[glue] != "'s":
            return False
    return True


def _observations(old: str, new: str, said_old: list[str], said_new: list[str]) -> bool:
    """Both open with one label and say more than a short answer after it."""
    a, b = LABEL.match(old), LABEL.match(new)
    return bool(a and b and a.group(1) == b.group(1) and max(len(said_old), len(said_new)) > ANSWER_WORDS)


def _same_owned(o: Words, n: Words) -> bool:
    a, b = _owned(o), _owned(n)
    return not a or not b or a == b


def _owned(words: Words) -> str:
    """What a text's first possessive owns ("Ravi's daughter": daughter), "" when it has none: two
    facts of one owner's different things answer different questions."""
    for i, raw in enumerate(words.raw[:-1]):
        if raw == "'s":
            return next((k for k in words.keys[i + 1:] if k and k != "~"), "")
    return ""


def _at(words: Words, keys: set[str]) -> list[int]:
    return [i for i, k in enumerate(words.keys) if k in keys]


def _other_subjects(old: str, new: str) -> bool:
    """Both open with an identifier, not the same one: "issue-8-entity-types ..." / "issue-9-relation-types ..."."""
    a, b = IDENT.match(old), IDENT.match(new)
    return bool(a and b and a.group(1) != b.group(1))


def _named(text: str) -> set[str]:
    found = IDENT.match(text)
    return {k for k in read(found.group(1)).keys if k and k != "~"} if found else set()


def _value(o: Words, n: Words, shared: set[str], only_old: set[str], only_new: set[str], cues: set[str],
           named: set[str]) -> Answer | None:
    """The frame kept and its value changed: "The standup is at 9:30." / "... at 10:00 now."."""
    # Who the subject is, said before it in one text only, is not its answer: "The owner's brother
    # Ben lives in Denver." / "Ben lives in Austin."
    only_old, only_new = only_old - _lead(o, shared), only_new - _lead(n, shared)
    if not only_old or not only_new:
        return None
    run_old, run_new = _run(o, only_old, shared), _run(n, only_new, shared)
    if run_old is None or run_new is None:
        return None
    # The frame is more than its subject: an attribute, a relation or a verb both keep.
    if not shared - _subject(o) - _subject(n) - named:
        return None
    # ... in one order, with the answer in one place of it: "Cosima reports to Ulla." and "Ulla
    # reports to Ivo." share their words, not their frame.
    if _frame(o, shared, run_old) != _frame(n, shared, run_new):
        return None
    if _possessors(o, run_old, n, run_new):
        return None
    kinds_old, kinds_new = _kinds(o, run_old), _kinds(n, run_new)
    if _flips(o, n, run_old, run_new):
        return Answer("retraction", _as_written(o, run_old), _as_written(n, run_new))
    # Two answers to one question are answers of one kind: a time for a time, a name for a name;
    # a change word ("now", "upgraded to") says so by itself.
    if not cues and not kinds_old & kinds_new:
        return None
    # A word for a word only where the frame says the thing has one ("The owner's car is a blue
    # Skoda." / "... a red Skoda."), not after a verb that takes many ("likes jazz", "likes hiking").
    if cues or kinds_old - {"word"} or (_after_glue(o, run_old) and _after_glue(n, run_new)):
        return Answer("value", _as_written(o, run_old), _as_written(n, run_new))
    return None


def _lead(words: Words, shared: set[str]) -> set[str]:
    """The content words before the first shared one when that is a name both give and the words
    before it describe it (none owns it, none comes again): "The owner's brother | Ben ..."."""
    first = next((i for i, k in enumerate(words.keys) if k in shared), 0)
    lead = {k for k in words.keys[:first] if k and k != "~"}
    if not first or not words.raw[first][:1].isupper() or words.raw[first - 1] == "'s":
        return set()
    return set() if lead & set(words.keys[first:]) else lead


def _frame(words: Words, shared: set[str], run: list[int]) -> tuple[tuple[str, ...], int]:
    """The shared words in their order (each once), and how many of them come before the answer."""
    seen: dict[str, int] = {}
    for i, k in enumerate(words.keys):
        if k in shared and k not in seen:
            seen[k] = i
    order = tuple(sorted(seen, key=seen.get))
    return order, sum(at < run[0] for at in seen.values())


def _after_glue(words: Words, run: list[int]) -> bool:
    """The answer follows "is" or "has" (filler aside; not the "'s" of "Mia's") and something
    before that names the thing."""
    before = [i for i in range(run[0]) if words.keys[i]]
    return (len(before) >= 2 and words.keys[before[-1]] == "~" and words.raw[before[-1]] != "'s"
            and any(words.keys[i] != "~" for i in before))


def _flips(o: Words, n: Words, run_old: list[int], run_new: list[int]) -> bool:
    """One answer is the other with "un" before it: "unpaid" / "paid"."""
    a = {w.lower() for w in (o.raw[i] for i in run_old)}
    b = {w.lower() for w in (n.raw[i] for i in run_new)}
    return any("un" + w in a for w in b) or any("un" + w in b for w in a)


def _owner_first(words: Words) -> bool:
    """The text opens with the owner as its subject ("User banks with ...", "The owner moved ..."),
    not with something of the owner's ("The owner's bank ...")."""
    for i, raw in enumerate(words.raw):
        if raw.lower() in FILLER:
            continue
        return raw.lower() in OWNER and (i + 1 == len(words.raw) or words.raw[i + 1] != "'s")
    return False


def _subject(words: Words) -> set[str]:
    """The names a text opens with ("Marisol Arrieta was born ..."): its subject, when it names one."""
    out = set()
    for raw, key in zip(words.raw, words.keys):
        if key == "~" or (key and not raw[:1].isupper()):
            break
        if key:
            out.add(key)
    return out


def _kinds(words: Words, at: list[int]) -> set[str]:
    """What sort of answer a run is: a number, a day or time, a name; else a word."""
    kinds = set()
    for i in at:
        w = words.raw[i]
        lw = w.lower()
        if any(c.isdigit() for c in w) or lw in NUMBER_WORDS:
            kinds.add("number")
        elif lw in CALENDAR or (lw.endswith("s") and lw[:-1] in CALENDAR):
            kinds.add("date")
        elif w[:1].isupper() and i > 0:
            kinds.add("name")
    return kinds or {"word"}
