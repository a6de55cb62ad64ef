"""A plain list of memories, as people copy it out of ChatGPT's "Manage memories" or Claude's
memory settings: one memory a line. Bullets (-, *, •) and numbering (1. 1) (1)) are stripped;
blank lines and headings (a Markdown #, or a short line ending in a colon: "Saved memories:")
are skipped."""

from __future__ import annotations

import re

from . import Parsed
from .facts import candidate

BULLET = re.compile(r"^\s*(?:[-*•·–](?:\s+|$)|\(?[0-9]{1,4}[.)](?:\s+|$))")
HEADING = re.compile(r"^\s*(?:#{1,6}\s.*|[^.!?]{1,60}:)\s*$")


def read(text: str, source: str) -> Parsed:
    parsed = Parsed()
    for n, line in enumerate(text.splitlines(), start=1):
        text = BULLET.sub("", line, count=1)
        if not text.strip() or HEADING.match(line):  # (a bullet with nothing after it is a blank line)
            continue
        candidate(parsed, n, text, source)
    return parsed


def chatgpt(text: str, mapping: dict) -> Parsed:
    return read(text, "import:chatgpt")


def claude(text: str, mapping: dict) -> Parsed:
    return read(text, "import:claude")
