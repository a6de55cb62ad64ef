"""A plain list of memories, as people copy it out of ChatGPT's "Manage memories" or Claude's
memory settings: one memory a line. Bullets (-, *, •) and numbering (1. 1) (1)) are stripped;
blank lines and headings (a Markdown #, or a short line ending in a colon: "Saved memories:")
are skipped."""

from __future__ import annotations

import re

from . import Parsed, lines
from .facts import candidate

# Both match a line already stripped of its white space: a leading \s* would let the heading's
# [^.!?]{1,60} start at every space of a long run of them (2 MB of spaces then a letter took 0.5 s, now 2 ms).
BULLET = re.compile(r"(?:[-*•·–](?:\s+|$)|\(?[0-9]{1,4}[.)](?:\s+|$))")
HEADING = re.compile(r"#{1,6}(?:\s.*)?|[^.!?]{0,60}:")


def read(text: str, source: str) -> Parsed:
    parsed = Parsed()
    for n, line in enumerate(lines(text), start=1):
        line = line.strip()
        bullet = BULLET.match(line)
        fact = line[bullet.end():] if bullet else line
        if not fact or HEADING.fullmatch(line):  # (a bullet with nothing after it is a blank line)
            continue
        candidate(parsed, n, fact, source)
    return parsed


def chatgpt(text: str, mapping: dict) -> Parsed:
    return read(text, "import:chatgpt")


def claude(text: str, mapping: dict) -> Parsed:
    return read(text, "import:claude")


def any_list(text: str, mapping: dict) -> Parsed:
    """A list whose tool is not named (`--from auto` found a plain list)."""
    return read(text, "import:list")
