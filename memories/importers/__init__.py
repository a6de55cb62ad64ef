"""Memories kept in other tools, read into facts to import: one file a format. Each reader turns a
file into `Parsed`: the facts to store (text, type, source `import:<format>`, created_at when the
file has one) and the lines it refused and why; a file it cannot read at all raises Malformed with
the line. Nothing here writes: the CLI (cli.py `import --from`) and the dashboard send the facts
through a dry run first, then store exactly what it showed.

The formats, as their public documentation described them on 2026-12-02 (docs/operations.md):

    list, chatgpt-list,         plain_list.py  one memory a line, as copied from the memory settings
    claude-list
    csv, json, jsonl            table.py       rows or objects, with a column mapping
    mem0                        mem0.py        mem0's get_all / export: memory, created_at, metadata; its Markdown export
    chatgpt-export              chatgpt_export.py  ChatGPT's conversations.json: the memories saved, custom instructions
    auto                        detect.py      the format found from the content (the default)
    letta                       letta.py       Letta's archival passages: text, created_at, tags
    mcp-memory                  mcp_memory.py  the MCP memory server's graph (memory.jsonl): entities, relations
    claude-ai                   claude_ai.py   a Claude.ai export's memories (memories.json): its Markdown, a fact a line
    claude-code                 claude_code.py Claude Code's memory folder, or a zip of it: topic files, MEMORY.md
    backup                      backup_file.py a backup of a memory: restored into an empty one, else its current facts
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

MAX_BYTES = 20 * 1024 * 1024  # a file over it is refused, saying so: 100,000 facts of 200 bytes fit


class Malformed(ValueError):
    """The file cannot be read as its format: nothing of it is imported."""


@dataclass
class Parsed:
    items: list[dict] = field(default_factory=list)  # each as POST /facts takes it, and "line": where it came from
    refused: list[tuple[int, str]] = field(default_factory=list)  # (line, why) of what cannot be a fact
    columns: list[str] = field(default_factory=list)  # a table's columns, for the mapping and its preview
    not_memories: list[tuple[int, str]] = field(default_factory=list)  # (line, why) of what was read and is no memory


def read_text(path: Path) -> str:
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise Malformed(f"{path} is {size:,} bytes; the limit is {MAX_BYTES:,} (split the file)")
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        line = path.read_bytes()[: e.start].count(b"\n") + 1
        raise Malformed(f"{path}:{line}: not UTF-8 text") from None


def lines(text: str) -> list[str]:
    """The file's lines, split at "\n" (and "\r\n") only: str.splitlines() also splits at U+2028,
    U+0085 and the like, which JSON allows raw inside a string and a pasted list may hold."""
    return [line.removesuffix("\r") for line in text.split("\n")]


DEEP = "JSON nested too deeply to read (thousands of arrays or objects one inside another)"


def load_json(text: str):
    """A whole JSON document, or Malformed: with the line where it stops being JSON, or saying it
    nests too deeply (the decoder raises RecursionError, which is a reason, not a traceback)."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise Malformed(f"line {e.lineno}: not JSON ({e.msg})") from None
    except RecursionError:
        raise Malformed(DEEP) from None


def json_list(text: str, keys: tuple[str, ...], what: str) -> list:
    """A JSON export's list of records: the document itself, or the list under the first of
    `keys` an object holds; anything else is Malformed, saying `what` was expected."""
    data = load_json(text)
    if isinstance(data, dict):
        data = next((data[k] for k in keys if k in data), None)
    if not isinstance(data, list):
        raise Malformed(f"line 1: not {what}: a list, or {{\"{keys[0]}\": [...]}}")
    return data


FOLDERS = ("claude-code",)  # the formats read from a folder or a zip: their reader takes the path, not its text


def formats() -> dict:
    """Format name -> its reader, `read(text, mapping) -> Parsed` (`read(path, mapping)` for FOLDERS)."""
    from . import backup_file, chatgpt_export, claude_ai, claude_code, letta, mcp_memory, mem0, plain_list, table

    return {"chatgpt-list": plain_list.chatgpt, "claude-list": plain_list.claude, "chatgpt-export": chatgpt_export.read,
            "csv": table.csv_rows, "json": table.json_array, "jsonl": table.json_lines, "mem0": mem0.read,
            "letta": letta.read, "mcp-memory": mcp_memory.read, "list": plain_list.any_list, "claude-ai": claude_ai.read,
            "claude-code": claude_code.read, "backup": backup_file.read}


def detected(path: Path) -> tuple[str, str]:
    """The file's format found from its content (or a folder's, or a zip's), and why (detect.py)."""
    from .detect import detect, detect_folder

    return detect_folder(path) or detect(read_text(path))


def read(format: str, path: Path, mapping: dict | None = None) -> Parsed:
    readers = formats()
    if format not in readers:
        raise Malformed(f"unknown format {format!r}: one of {', '.join(readers)}")
    if format in FOLDERS:
        return readers[format](path, mapping or {})
    if path.is_dir():
        raise Malformed(f"{path} is a folder: {' and '.join(FOLDERS)} read a folder (or a zip of one), "
                        f"{format} reads a file")
    return readers[format](read_text(path), mapping or {})
