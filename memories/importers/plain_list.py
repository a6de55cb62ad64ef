"""A plain list of memories, as people copy it out of ChatGPT's "Manage memories" or Claude's
memory settings, or as either dumps it when asked (ChatGPT's "Model Set Context", the answer to
Claude's export prompt): one memory a line. Bullets (-, *, •) and numbering (1. 1) (1)) are
stripped; a date opening the entry ("[2024-09-05]." or "2025-10-05 -") is its time; a nested
bullet stays in its entry; blank lines, code fences and headings (a Markdown #, or a short line
ending in a colon: "Saved memories:") are skipped.

An assistant's answer wraps the list in its own words ("Here's what I remember about you:", "Let
me know if you'd like me to change anything."). When the list has bullets, numbers or a code
fence, a line outside it (before its first entry, after its last) that reads as the assistant
talking is no memory: it is counted in `not_memories` with its line. A list without any of them
has no outside, so every line of it stays a memory."""

from __future__ import annotations

import re

from . import Parsed, lines
from .facts import candidate

# Both match a line already stripped of its white space: a leading \s* would let the heading's
# [^.!?]{1,60} start at every space of a long run of them (2 MB of spaces then a letter took 0.5 s, now 2 ms).
BULLET = re.compile(r"(?:[-*•·–](?:\s+|$)|\(?[0-9]{1,4}[.)](?:\s+|$))")
HEADING = re.compile(r"#{1,6}(?:\s.*)?|[^.!?]{0,100}:")


# ChatGPT's "Model Set Context" ("1. [2024-09-05]. User's name is Tibor.") and the answer to
# Claude's export prompt ("[2025-10-05] - The owner ...") date each entry: the fact's time.
DATED = re.compile(r"\[?(\d{4}-\d{2}-\d{2})\]?(?:\.|\s+-|:)?\s+")
FENCE = re.compile(r"(?:```|~~~).*")

# The assistant talking, as its answers open and close a list: an opening it uses, a question, or
# "I" and "you" in one line. A memory says "the user" or "the owner" (ChatGPT's own "The user wants
# me to ..." has no "you"), so it reads as neither.
OPENING = re.compile(r"(?:here(?:['’]s| is| are)|let me know|i hope|hope (?:this|that)|feel free|"
                     r"that['’]s (?:all|everything)|this is (?:all|everything)|is there anything|anything else|"
                     r"would you like|(?:sure|certainly|of course|absolutely)[,!.])", re.IGNORECASE)
FIRST_PERSON = re.compile(r"\b(?:i|i['’](?:m|ve|ll|d)|me|my)\b", re.IGNORECASE)
SECOND_PERSON = re.compile(r"\b(?:you|you['’](?:re|ve|ll|d)|your|yours)\b", re.IGNORECASE)
PROSE = "the assistant's words around the list"


def talking(line: str) -> bool:
    return bool(OPENING.match(line) or line.endswith("?") or (FIRST_PERSON.search(line) and SECOND_PERSON.search(line)))


def entries(text: str) -> tuple[list[tuple[int, str, str | None]], list[tuple[int, str]]]:
    """The list's entries, each (line, text, its date), nested bullets joined to it; and (line, why)
    of the assistant's words around it."""
    raws = lines(text)
    rows = [raw.strip() for raw in raws]
    fenced, inside = set(), False
    for n, line in enumerate(rows, start=1):
        if FENCE.fullmatch(line):
            inside = not inside
        elif inside and line:
            fenced.add(n)
    listed = [n for n, line in enumerate(rows, start=1) if n in fenced or (BULLET.match(line) and BULLET.sub("", line, 1))]
    first, last_listed = (listed[0], listed[-1]) if listed else (1, len(rows))  # no bullets, numbers or fence: no outside
    found: list[tuple[int, str, str | None]] = []
    prose: list[tuple[int, str]] = []
    last = 0  # the line the last entry, or its last nested bullet, is on
    for n, (raw, line) in enumerate(zip(raws, rows), start=1):
        if line and not first <= n <= last_listed and talking(line):
            prose.append((n, PROSE))
            continue
        bullet = BULLET.match(line)
        fact = line[bullet.end():] if bullet else line
        if not fact or HEADING.fullmatch(line) or FENCE.fullmatch(line):  # (a bullet with nothing after it is a blank line)
            continue
        if bullet and found and last == n - 1 and raw[: len(raw) - len(raw.lstrip())].count(" ") >= 2:
            at, said, time = found[-1]  # a nested bullet stays in its entry
            found[-1] = (at, said + (" " if said.endswith((":", ",", ";", ".")) else "; ") + fact, time)
        else:
            dated = DATED.match(fact)
            found.append((n, fact[dated.end():] if dated else fact, dated.group(1) if dated else None))
        last = n
    return found, prose


def read(text: str, source: str) -> Parsed:
    found, prose = entries(text)
    parsed = Parsed(not_memories=prose)
    for n, fact, time in found:
        candidate(parsed, n, fact, source, None, time)
    return parsed


def chatgpt(text: str, mapping: dict) -> Parsed:
    return read(text, "import:chatgpt")


def claude(text: str, mapping: dict) -> Parsed:
    return read(text, "import:claude")


def any_list(text: str, mapping: dict) -> Parsed:
    """A list whose tool is not named (`--from auto` found a plain list)."""
    return read(text, "import:list")
