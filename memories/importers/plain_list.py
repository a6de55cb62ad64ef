"""A plain list of memories, as people copy it out of ChatGPT's "Manage memories" or Claude's
memory settings, or as either dumps it when asked (ChatGPT's "Model Set Context", the answer to
Claude's export prompt): one memory a line. Bullets (-, *, •) and numbering (1. 1) (1)) are
stripped; a date opening the entry ("[2024-09-05]." or "2025-10-05 -") is its time; a nested
bullet stays in its entry; blank lines, code fences and headings (a Markdown #, or a short line
ending in a colon: "Saved memories:") are skipped."""

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


def read(text: str, source: str) -> Parsed:
    parsed = Parsed()
    entries: list[tuple[int, str, str | None]] = []  # (line, text, time), nested bullets joined to it
    last = 0  # the line the last entry, or its last nested bullet, is on
    for n, raw in enumerate(lines(text), start=1):
        line = raw.strip()
        bullet = BULLET.match(line)
        fact = line[bullet.end():] if bullet else line
        if not fact or HEADING.fullmatch(line) or FENCE.fullmatch(line):  # (a bullet with nothing after it is a blank line)
            continue
        if bullet and entries and last == n - 1 and raw[: len(raw) - len(raw.lstrip())].count(" ") >= 2:
            at, said, time = entries[-1]  # a nested bullet stays in its entry
            entries[-1] = (at, said + (" " if said.endswith(":") else "; ") + fact, time)
        else:
            dated = DATED.match(fact)
            entries.append((n, fact[dated.end():] if dated else fact, dated.group(1) if dated else None))
        last = n
    for n, fact, time in entries:
        candidate(parsed, n, fact, source, None, time)
    return parsed


def chatgpt(text: str, mapping: dict) -> Parsed:
    return read(text, "import:chatgpt")


def claude(text: str, mapping: dict) -> Parsed:
    return read(text, "import:claude")


def any_list(text: str, mapping: dict) -> Parsed:
    """A list whose tool is not named (`--from auto` found a plain list)."""
    return read(text, "import:list")
