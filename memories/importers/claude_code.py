"""Claude Code's memory folder (`~/.claude/projects/<project>/memory/`, or a project's
`.claude/memory/`), as a folder or a zip of one (folder.py reads either): `MEMORY.md`, an index of
`- [Title](file.md) — summary` lines under headings, and a Markdown file a topic, which opens with
YAML front matter (`name`, `description`, `type: user|feedback|project|reference`; in some files a
nested `metadata:` block holds the type, some have none) and goes on with its body.

Each line of a topic file's body is a fact (markdown_memory.py: front matter, headings and link
markup out, a heading the section), its source the file and the section:
`import:claude-code:feedback_testing.md#How to apply`. A file whose name does not say its type has
the type before it (`import:claude-code:project/fog.md`), so one source prefix finds every file of
a type. An index line that summarises a topic file the folder holds is not a memory (the file is,
and its summary would repeat it): counted as such in the dry run, with its line. An index line
whose file is absent is imported as its summary (its title when it has none); the index's other
lines are facts of `import:claude-code:MEMORY.md`. The folder keeps no times, only a line's own
date: a file's modification time says when it was last edited, and a zip's has no time zone."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from . import Parsed, folder
from .markdown_memory import facts, front_matter
from .plain_list import BULLET

SOURCE = "import:claude-code"
INDEX = "memory.md"  # MEMORY.md, as Claude Code names it, in any case
INDEX_LINE = re.compile(r"(?:\*\*|__)?\[([^\[\]]+)\]\(\s*<?([^()\s<>]+)>?(?:\s[^()]*)?\)(?:\*\*|__)?\s*(?:[—–:-]+\s*(.*))?")


def read(path: Path, mapping: dict) -> Parsed:
    return read_files(folder.markdown_files(path))


def read_files(files: dict[str, str]) -> Parsed:
    """`files`: {path in the folder (or the zip): text}."""
    parsed = Parsed(columns=["file", "section", "line"])
    indexes = [n for n in files if PurePosixPath(n).name.lower() == INDEX]
    index = min(indexes, key=lambda n: (n.count("/"), n)) if indexes else None
    prefix = posixpath.dirname(index) + "/" if index and "/" in index else ""  # the folder the index is in
    topics = {n.removeprefix(prefix): n for n in files if n != index}  # as the index names them: their path in files
    if index:
        name = index.removeprefix(prefix)
        facts(parsed, without_summaries(parsed, files[index], topics, name), f"{SOURCE}:{name}", name)
    for name in sorted(topics):
        topic(parsed, name, files[topics[name]])
    return parsed


def without_summaries(parsed: Parsed, text: str, topics: dict, name: str) -> str:
    """The index with each line that summarises a topic file the folder holds blanked (counted as
    not memories), and each line whose file is absent as its summary alone; the lines keep their
    numbers."""
    lines = text.split("\n")
    for n, raw in enumerate(lines, start=1):
        line = raw.strip()
        bullet = BULLET.match(line)
        link = INDEX_LINE.fullmatch(line[bullet.end():] if bullet else line)
        if not link or re.match(r"[a-z][a-z0-9+.-]*:", link.group(2)):  # (a link to a web page is a line like any)
            continue
        target = posixpath.normpath(unquote(link.group(2).split("#")[0]))
        if target in topics:
            parsed.not_memories.append((n, f"{name}: summarises {target}, which is imported"))
            lines[n - 1] = ""
        else:
            lines[n - 1] = raw[: len(raw) - len(raw.lstrip())] + "- " + (link.group(3) or link.group(1))
    return "\n".join(lines)


def topic(parsed: Parsed, name: str, text: str) -> None:
    fields, _ = front_matter(text.split("\n"))
    kind = fields.get("type", "")
    name_says_it = not kind or PurePosixPath(name).name.lower().startswith(kind.lower())
    facts(parsed, text, f"{SOURCE}:{name}" if name_says_it else f"{SOURCE}:{kind}/{name}", name)
