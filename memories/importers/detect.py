"""Which format a file is, from its content (`--from auto`, the Import page's default): the format
and why, in words the dry run shows ("a Letta agent file: it has agents and blocks"). A file in
no known format is Malformed, naming what was seen and the formats known."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from pathlib import Path

from . import (Malformed, backup_file, chatgpt_export, claude_ai, claude_code, folder, formats, letta_agent, lines,
               load_json, mem0_markdown)
from .table import TEXT_COLUMNS, WRAPPERS

PASSAGES = "passages"  # Letta's archival passages, as letta.py takes them


def detect(text: str) -> tuple[str, str]:
    stripped = text.lstrip()
    if not stripped:
        raise Malformed("the file is empty")
    if stripped[0] in "[{\"":
        found = _document(stripped)
        if found:
            return found
    found = _json_lines(text)
    if found:
        return found
    if stripped.startswith("---") and mem0_markdown.is_export(text):
        return "mem0", "mem0's Markdown export: each memory a block of front matter (id, created_at, type), then its text"
    first = next((line for line in lines(text) if line.strip()), "")
    header = [c.strip().strip('"').lower() for c in first.split(",")]
    if "memory" in header and "metadata" in header:
        return "mem0", "mem0's memories as CSV: its header has memory and metadata"
    if "," in first and any(c.strip().strip('"').lower() in TEXT_COLUMNS for c in first.split(",")):
        return "csv", f"CSV: its first line is a header with a text column ({first[:60]})"
    if table_header(text):
        return "csv", f"CSV: its first line is a header ({first[:60]}), none of its columns named as the text is: say which"
    if stripped.startswith("<"):  # read as a list, its tags and declaration would be stored as facts
        raise Malformed("line 1: XML or HTML, which no format known reads: export the memories as JSON, CSV or a list "
                        f"(the formats known: {', '.join(formats())})")
    if stripped[0] in "[{":
        raise Malformed("line 1: JSON, but no format known holds it (a list of memories, an object holding one, a "
                        f"Letta agent file, JSON Lines); the formats known: {', '.join(formats())}")
    return "list", "a list of memories, one a line (no JSON, no CSV header)"


HEADER_CELL = re.compile(r"[A-Za-z_][\w.-]{0,39}")  # a name, not words: "Likes tea, coffee" is a memory


def table_header(text: str) -> bool:
    """A CSV whose header names no text column: a first line of two or more names, and the next
    rows of as many cells. A list read in its place would store the header and each row as facts."""
    rows = list(csv.reader(io.StringIO("\n".join(lines(text)[:20]), newline="")))
    rows = [r for r in rows if r]
    if len(rows) < 2 or len(rows[0]) < 2 or not all(HEADER_CELL.fullmatch(c.strip()) for c in rows[0]):
        return False
    return all(len(r) == len(rows[0]) for r in rows[1:-1]) and len(rows[-1]) <= len(rows[0])  # (the last may be cut)


def detect_folder(path: Path) -> tuple[str, str] | None:
    """A folder or a zip: Claude Code's memory folder, the only format of files in a folder (a
    zip without Markdown files is Malformed, saying what it holds); None for any other file."""
    zipped = not path.is_dir() and zipfile.is_zipfile(path)
    if not path.is_dir() and not zipped:
        return None
    names = folder.markdown_names(path)
    index = [n for n in names if Path(n).name.lower() == claude_code.INDEX]
    holds = (f"it holds {index[0]} and {len(names) - 1} other Markdown file{'s' if len(names) != 2 else ''}" if index
             else f"it holds {len(names)} Markdown file{'s' if len(names) != 1 else ''}, no MEMORY.md")
    return "claude-code", f"Claude Code's memory folder{', zipped' if zipped else ''}: {holds}"


def _document(text: str) -> tuple[str, str] | None:
    try:
        data = letta_agent.unwrapped(load_json(text))
    except Malformed:
        return None
    if letta_agent.is_agent_file(data):
        return "letta", "a Letta agent file: it has " + ("core_memory" if "core_memory" in data else "agents and blocks")
    if chatgpt_export.is_export(data):
        return "chatgpt-export", "ChatGPT's data export (conversations.json): conversations, each with a title and a mapping"
    found = claude_ai.records(data)
    if found:
        keys = [k for k in claude_ai.KEYS if any(k in r for r in found)]
        return "claude-ai", f"a Claude.ai export's memories: it has {', '.join(keys)}"
    records = data
    if isinstance(data, dict):
        key = next((k for k in (*WRAPPERS, PASSAGES) if isinstance(data.get(k), list)), None)
        records = data[key] if key else None
    if not isinstance(records, list):  # (one object: a JSON Lines file of one line, perhaps)
        return None
    objects = [r for r in records[:50] if isinstance(r, dict)]
    if objects and all("memory" in r for r in objects):
        return "mem0", "mem0's memories: each has memory"
    if objects and all("text" in r for r in objects) and any(k in r for r in objects for k in ("tags", "archive_id", "agent_id")):
        return "letta", "Letta's archival passages: each has text and tags"
    return "json", "a JSON list of memories"


def _json_lines(text: str) -> tuple[str, str] | None:
    records = []
    for line in lines(text)[:200]:
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except (json.JSONDecodeError, RecursionError):
            return None
    if not records or not all(isinstance(r, dict) for r in records):
        return None
    if backup_file.is_backup(records):
        return "backup", "a backup of a memory (the dashboard's Export, or python -m memories export): facts with their ids and times"
    if any(r.get("type") in ("entity", "relation") for r in records):
        return "mcp-memory", "the MCP memory server's graph: lines of entities and relations"
    return "jsonl", "JSON Lines: one object a line"
