"""Which lines of a memory written as Markdown are facts: the memory texts of a Claude.ai export
(claude_ai.py) and the topic files of Claude Code's memory folder (claude_code.py).

Front matter (between `---` lines at the top), blank lines, headings, code fences and lines of
punctuation alone ("{", "}", "---", "|---|") are not facts. A heading (`## Testing`, a line of bold
or italic alone, a short line ending in a colon) names the section the lines under it come from:
emphasis is subordinate to a Markdown heading, so "Brief history / Recent months". Off each line:
a bullet or a number, bold stars, a leading tag ("[stated]") and link markup ("[text](file.md)"
is its text, "[[slug]]" its slug, a link to a web page keeps its address). A date opening the line
("[2025-10-05] - ") is its time. A nested bullet stays in its entry, as plain_list.py keeps it,
and so do the "Why:" and "How to apply:" that explain an entry (the list and code under a "How to
apply:" too); any other fenced code block is one fact, its lines as they are."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .facts import MAX_SOURCE, candidate
from .plain_list import BULLET, DATED, FENCE

# Emphasis headings rank below the six Markdown levels, bold above italic: "## Memory" holds
# "**Brief history**", which holds "*Recent months*".
EMPHASIS = {"**": 7, "__": 7, "*": 8, "_": 8}
MARKDOWN_HEADING = re.compile(r"(#{1,6})\s+(.*)")
EMPHASIS_HEADING = re.compile(r"(\*\*|__|\*|_)([^*_]{1,100}?):?\1:?")
COLON_HEADING = re.compile(r"[^.!?:]{1,100}:")  # "Interests:", as plain_list.py and letta_agent.py read it
TAG = re.compile(r"\[[a-z][a-z -]{0,20}\](?!\()\s+")  # "[stated] ", Claude.ai's note of how it learned a line
# Neither pattern lets a bracket inside a bracket, nor a link's address hold a space: each
# character is looked at a bounded number of times, so a line of a million "[" reads in linear time.
LINK = re.compile(r"\[([^\[\]]*)\]\(\s*<?([^()\s<>]*)>?\s*\)")
WIKI_LINK = re.compile(r"\[\[([^\[\]|]+)(?:\|([^\[\]|]+))?\]\]")
WORD = re.compile(r"[^\W_]")  # a letter or a digit: a line without one is punctuation
# Claude Code writes a rule, then "**Why:**" and "**How to apply:**": one memory, whose reason
# alone ("Why: the user confirmed this approach") is no fact. They stay in the entry above.
LABEL = re.compile(r"(?:why|how to apply)\s*:", re.IGNORECASE)


@dataclass
class Entry:
    line: int  # of the text the entry opens on, from 1
    text: str
    time: str | None  # the date the line opens with, if any
    section: str  # the headings above it, "" for none


def front_matter(lines: list[str]) -> tuple[dict, int]:
    """The front matter's fields, those of a nested block too (`metadata:` then `  type: project`),
    and how many lines it takes: ({}, 0) when the text does not open with one. Read a line at a
    time, not as YAML: a description holding ": " breaks a strict parser, and the fields are only
    read, never run."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    fields: dict[str, str] = {}
    for n, line in enumerate(lines[1:], start=2):
        if line.strip() == "---":
            return fields, n
        key, colon, value = line.strip().partition(":")
        if colon and key.strip() and value.strip():
            fields.setdefault(key.strip(), value.strip().strip("\"'"))
    return {}, 0  # never closed: not front matter


def heading(line: str) -> tuple[int, str] | None:
    """(level, title) of a heading line, else None."""
    m = MARKDOWN_HEADING.fullmatch(line)
    if m:
        return len(m.group(1)), clean(m.group(2).rstrip("# \t"))
    m = EMPHASIS_HEADING.fullmatch(line)
    if m:
        return EMPHASIS[m.group(1)], m.group(2).strip()
    if COLON_HEADING.fullmatch(line) and not BULLET.match(line):
        return 9, clean(line[:-1])
    return None


def clean(text: str) -> str:
    """The line's words without their markup: links as their text, bold stars off."""
    text = WIKI_LINK.sub(lambda m: m.group(2) or m.group(1), text)
    text = LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})" if "://" in m.group(2) else m.group(1), text)
    return text.replace("**", "").strip()


def entries(text: str) -> list[Entry]:
    """The facts of a Markdown text, each with its line, its own date and its section."""
    lines = text.split("\n")
    _, start = front_matter(lines)
    found: list[Entry] = []
    sections: list[tuple[int, str]] = []  # the headings in force, outermost first
    fence: tuple[int, list[str]] | None = None  # (its line, its lines so far) while inside a code fence
    last = 0  # the line the last entry, or its last nested bullet, is on
    explaining = False  # after "How to apply:" on a line of its own: the list under it is the entry's
    for n, raw in enumerate(lines[start:], start=start + 1):
        raw = raw.rstrip("\r")
        line = raw.strip()
        section = " / ".join(title for _, title in sections)
        if FENCE.fullmatch(line):
            if fence is None:
                fence = (n, [])
            else:
                code(found, fence, section, explaining)
                fence = None
            continue
        if fence is not None:
            fence[1].append(raw)
            continue
        bullet = BULLET.match(line)
        said = line[bullet.end():] if bullet else line.lstrip("> ")
        tag = TAG.match(said)
        said = clean(said[tag.end():] if tag else said)
        if found and not bullet and LABEL.match(said):
            found[-1].text += " " + said  # "**Why:** ...": the reason for the entry above, said in it
            explaining, last = said.endswith(":"), n
            continue
        titled = heading(line)
        if titled:
            level, title = titled
            sections = [s for s in sections if s[0] < level] + [(level, title)]
            explaining = False
            continue
        if not WORD.search(said):
            continue
        if bullet and found and (explaining or (last == n - 1 and len(raw) - len(raw.lstrip()) >= 2)):
            entry = found[-1]  # a nested bullet, or a step of how to apply it, stays in its entry
            entry.text += (" " if entry.text.endswith((":", ",", ";", ".")) else "; ") + said
        else:
            dated = DATED.match(said)
            found.append(Entry(n, said[dated.end():] if dated else said, dated.group(1) if dated else None, section))
            explaining = False
        last = n
    if fence is not None:  # a fence never closed: its lines all the same
        code(found, fence, " / ".join(title for _, title in sections), explaining)
    return found


def code(found: list[Entry], fence: tuple[int, list[str]], section: str, explaining: bool) -> None:
    said = "\n".join(fence[1]).strip("\n")
    if not WORD.search(said):
        return
    if explaining and found:
        found[-1].text += "\n" + said
    else:
        found.append(Entry(fence[0], said, None, section))


def facts(parsed, text: str, source: str, where: str, time: str | None = None) -> None:
    """Each entry of `text` a candidate fact of `parsed`, its source `source#section`, its time its
    own date or else `time`; a line refused says `where` it is ("feedback_testing.md: ...")."""
    before = len(parsed.refused)
    for e in entries(text):
        candidate(parsed, e.line, e.text, (f"{source}#{e.section}" if e.section else source)[:MAX_SOURCE], None,
                  e.time or time)
    parsed.refused[before:] = [(line, f"{where}: {why}") for line, why in parsed.refused[before:]]
