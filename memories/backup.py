"""A backup: every fact as a JSON line with its id and times, and the memory's own settings.

The first line may be `{"settings": {"fusion": {...}, "threshold": x}}`, written only when the
memory has settings of its own; it is what PUT /settings takes. A file without it (an export from
before, or another tool's) is a backup of facts alone. After the facts come the pairs the memory
keeps (its open contradictions, and those the owner marked both true), a line each:
`{"conflict": {"id", "old", "new", "score", "differs", "resolution"}}`, fact ids, as GET
/conflicts?all=true gives them.

What an import does with it depends on where it goes (`restores`): a backup (every line with its
id, as an export writes them) into a memory that holds no fact is a restore, every fact stored as it was (no dedup: facts force-stored over a near duplicate,
or that coexisted only under the memory's own threshold, come back too) and the settings put
back, then the pairs (POST /conflicts/restore); into a memory that holds facts it is a merge,
deduplicated, and the settings and the pairs are left as they are there (the ids the pairs name
are the backup's). Any other file is deduplicated as it is imported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .facts import StoreError, clean_id, clean_source, clean_text, clean_time, clean_type
from .writes.lifecycle import clean_pair

FIELDS = ("id", "text", "type", "source", "created_at", "updated_at", "valid_until", "superseded_by", "reviewed_at")  # an export restores as it was
PAIR_FIELDS = ("id", "old", "new", "score", "differs", "resolution")
SHOWN = 10  # merged facts an import names, one a line


@dataclass
class Backup:
    items: list[dict] = field(default_factory=list)
    settings: dict | None = None  # as PUT /settings takes them
    conflicts: list[dict] = field(default_factory=list)  # as POST /conflicts/restore takes them
    problems: list[str] = field(default_factory=list)  # a message a line that is neither


def fact_line(fact: dict) -> str:
    return json.dumps({k: fact.get(k) for k in FIELDS}, ensure_ascii=False) + "\n"


def conflict_line(pair: dict) -> str:
    return json.dumps({"conflict": {k: pair.get(k) for k in PAIR_FIELDS}}, ensure_ascii=False) + "\n"


def settings_line(settings: dict | None) -> str:
    """The first line, or none when the memory has no settings of its own."""
    return json.dumps({"settings": settings}, ensure_ascii=False) + "\n" if settings else ""


def own_settings(stored: dict | None) -> dict | None:
    """The settings line's content from the settings as the engine stores them (fusion's fields,
    and `threshold` when the memory has its own duplicate threshold)."""
    if not stored:
        return None
    fusion = {k: v for k, v in stored.items() if k not in ("threshold", "review", "proposals")}
    return ({"fusion": fusion} | ({"threshold": stored["threshold"]} if stored.get("threshold") is not None else {})
            | ({"review": stored["review"]} if stored.get("review") else {})
            | ({"proposals": stored["proposals"]} if stored.get("proposals") else {}))


def write_memory(memory, out) -> tuple[int, int]:
    """A backup of the engine's memory into `out`, in one read transaction, so a write meanwhile
    is in it whole or not at all; (facts, pairs) written."""
    db = memory.db
    db.execute("BEGIN")  # (the connection is in autocommit: this holds one snapshot of the file)
    try:
        stored = memory.state.meta("settings")
        out.write(settings_line(own_settings(json.loads(stored) if stored else None)))
        facts = 0
        for row in db.execute(f"SELECT {', '.join(FIELDS)} FROM facts ORDER BY id"):
            out.write(fact_line(dict(zip(FIELDS, row))))
            facts += 1
        pairs = memory.kept_pairs()
    finally:
        db.execute("COMMIT")
    for pair in pairs:
        out.write(conflict_line(pair))
    return facts, len(pairs)


def write_remote(client, out) -> tuple[int, int]:
    """A backup of a running memory (the service or a Worker) through its client, into `out`:
    pages of facts, then the pairs, each only when both its facts are in the backup (a write
    between the pages and the pairs would leave a pair naming a fact the restore has not)."""
    out.write(settings_line(client.backup_settings()))
    facts, params = [], {"limit": 100}
    while True:  # the raw rows, not the client's parsed ones: times go out exactly as stored
        page = client._request("GET", "/facts", safe=True, params=params)
        facts += page["facts"]
        if not page.get("next_cursor"):
            break
        params["cursor"] = page["next_cursor"]
    ids = {f["id"] for f in facts}
    for f in sorted(facts, key=lambda f: f["id"]):
        out.write(fact_line(f))
    pairs = [p for p in client.backup_conflicts() if p["old"] in ids and p["new"] in ids]
    for pair in pairs:
        out.write(conflict_line(pair))
    return len(facts), len(pairs)


def read(path: Path) -> Backup:
    """Every line's fact, the settings, and a message for each line that is neither: all checked
    before anything is written."""
    backup = Backup()
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise ValueError("not a JSON object")
                if set(data) == {"settings"}:
                    if not isinstance(data["settings"], dict) or backup.settings is not None:
                        raise ValueError("settings must be one JSON object, once")
                    backup.settings = data["settings"]
                    continue
                if set(data) == {"conflict"}:
                    backup.conflicts.append(clean_pair(data["conflict"], len(backup.conflicts)))
                    continue
                # (reviewed_at null is kept: an unreviewed fact; a line without it is from before the review)
                item = {k: data[k] for k in FIELDS if data.get(k) is not None or (k == "reviewed_at" and k in data)}
                item["text"] = clean_text(data.get("text"))
                clean_type(item.setdefault("type", "fact"))
                clean_source(item.setdefault("source", ""))
                clean_time(item.get("created_at"), "created_at")
                clean_id(item.get("id"))
                backup.items.append(item)
            except (ValueError, StoreError) as e:
                backup.problems.append(f"{path}:{n}: {e}")
    return backup


def restores(items: list[dict], facts_there: int) -> bool:
    """A restore: a backup (every fact with its id) into a memory that holds none."""
    return facts_there == 0 and bool(items) and all("id" in i for i in items)


def history_warning(history: dict, writes: int) -> str | None:
    """What an import of `writes` facts would push out of the history (the newest `keep` entries
    besides the trash's deletes are kept), said before it starts; None when nothing."""
    kept = history["entries"] - history["deletes"]
    out = kept + writes - history["keep"]
    if out <= 0:
        return None
    return (f"this import writes up to {writes} history entries: the oldest {min(out, kept)} entries (adds, edits, "
            f"settings) will be pushed out and can no longer be undone; deletes stay in the trash "
            f"({history['deletes_days']} days, at least the last {history['deletes_kept']})")


def merged_lines(items: list[dict], results: list) -> list[str]:
    """What a merge folded into facts already there, up to SHOWN of them, one a line."""
    lines = []
    for item, r in zip(items, results):
        if not r.created and len(lines) < SHOWN:
            how = f"{r.match} {r.score:.3f}" if r.score is not None else r.match
            lines.append(f"  {item['text'][:60]!r} is #{r.fact.id} ({how})")
    return lines
