"""The memories of a Claude.ai data export (Settings › Privacy › Export data): `memories.json` in
the exports of 2025 and most of 2026, a list of one record a person; `memories/<account uuid>.json`
in the split exports since, one record. A record holds any of:

- `conversations_memory`: the memory Claude keeps of the person, Markdown with bold lines as its
  sections ("**Work context**", "**Brief history**" then "*Recent months*");
- `project_memories`: `{project uuid: Markdown}`, one memory a project;
- `memory_files`: `[{"path": "/profile.md", "content", "updated_at"}]`, a Markdown file a topic,
  each with front matter (`name`, `description`, `sources`, `aliases`) and lines such as
  "- [stated] Prefers metric units".

Each line of each text is a fact (markdown_memory.py: front matter, headings, bullets, tags and
link markup out). The source says where it came from: `import:claude-ai#Work context`,
`import:claude-ai:project/<uuid>#...`, `import:claude-ai:profile.md`. A memory file's
`updated_at` is its facts' time, where a line has no date of its own; the other texts keep none.

When a memory file says it was backfilled (`sources: [backfill]`), Claude wrote the memory files
from `conversations_memory`: its lines are then counted as not memories, since the files say
each again (a paragraph of it beside each of their lines would fill the queue with proposals)."""

from __future__ import annotations

from . import Malformed, Parsed, load_json
from .markdown_memory import entries, facts, front_matter

SOURCE = "import:claude-ai"
KEYS = ("conversations_memory", "project_memories", "memory_files")


def records(data: object) -> list[dict] | None:
    """The export's records, or None when `data` is not a Claude.ai export's memories."""
    found = data if isinstance(data, list) else [data]
    if found and all(isinstance(r, dict) for r in found) and any(k in r for r in found for k in KEYS):
        return found
    return None


def read(text: str, mapping: dict) -> Parsed:
    found = records(load_json(text))
    if found is None:
        raise Malformed("line 1: not a Claude.ai export's memories: no conversations_memory, project_memories or "
                        "memory_files")
    parsed = Parsed(columns=["conversations_memory", "project_memories", "memory_files"])
    for record in found:
        summary = record.get("conversations_memory")
        if backfilled(record) and isinstance(summary, str):
            parsed.not_memories += [(e.line, "conversations_memory: the memory files were backfilled from it, and are "
                                     "imported") for e in entries(summary)]
        else:
            memory(parsed, summary, SOURCE, "conversations_memory")
        projects = record.get("project_memories")
        for uuid, said in projects.items() if isinstance(projects, dict) else []:
            memory(parsed, said, f"{SOURCE}:project/{uuid}", f"project_memories {uuid}")
        files = record.get("memory_files")
        for n, file in enumerate(files if isinstance(files, list) else [], start=1):
            path = file.get("path") if isinstance(file, dict) and isinstance(file.get("path"), str) else f"file {n}"
            content = file.get("content") if isinstance(file, dict) else None
            memory(parsed, content, f"{SOURCE}:{path.lstrip('/')}", f"memory_files {path}",
                   file.get("updated_at") if isinstance(file, dict) else None, required=True)
    return parsed


def backfilled(record: dict) -> bool:
    files = record.get("memory_files") if isinstance(record.get("memory_files"), list) else []
    return any("backfill" in front_matter(f["content"].split("\n"))[0].get("sources", "")
               for f in files if isinstance(f, dict) and isinstance(f.get("content"), str))


def memory(parsed: Parsed, text: object, source: str, where: str, time: object = None, required: bool = False) -> None:
    if text is None and not required:
        return
    if not isinstance(text, str):
        parsed.refused.append((1, f"{where}: not text"))
        return
    facts(parsed, text, source, where, time if isinstance(time, str) else None)
