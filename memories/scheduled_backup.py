"""Backups on a schedule (`python -m memories backup DIR`): a memory's backup written into DIR as
`memory-NAME-YYYYMMDDTHHMMSSZ.jsonl`, atomically (a temporary file, flushed to disk, read back and
checked, then renamed into place: a crash leaves the last good backup and no half file), the oldest
past `keep` removed. `--every 1d` runs it again and again (or a systemd timer calls it once:
deploy/). The restore drill in docs/operations.md puts one back."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from . import backup

EVERY = re.compile(r"(\d+)([smhd])")
SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass
class Written:
    path: Path
    facts: int
    pairs: int


def every(text: str) -> int:
    """'1d', '12h', '30m' or '45s' in seconds."""
    m = EVERY.fullmatch(text.strip())
    if not m or int(m.group(1)) == 0:
        raise ValueError(f"--every is a number and a unit (s, m, h or d), like 1d or 12h, not {text!r}")
    return int(m.group(1)) * SECONDS[m.group(2)]


def name_of(db: str | None, url: str | None) -> str:
    """The memory's name in the file's: a Worker's or `serve --dir`'s /memories/NAME, else the
    database file's stem (the default memory of a URL is `default`)."""
    if url:
        m = re.search(r"/memories/([^/?#]+)", url)
        return m.group(1) if m else "default"
    return Path(db or "memory.db").stem


def backup_once(write, directory: Path, name: str, keep: int, now: datetime | None = None) -> Written:
    """`write(out) -> (facts, pairs)` into DIR/memory-NAME-TIME.jsonl, checked, then the oldest of
    this memory's backups past `keep` removed."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    final = directory / f"memory-{name}-{stamp}.jsonl"
    partial = directory / f".{final.name}.partial"
    try:
        with partial.open("w", encoding="utf-8") as out:
            facts, pairs = write(out)
            out.flush()
            os.fsync(out.fileno())
        check(partial, facts, pairs)
        os.replace(partial, final)
    finally:
        partial.unlink(missing_ok=True)
    sync_folder(directory)
    for old in sorted(directory.glob(f"memory-{name}-*.jsonl"))[:-keep]:  # (their names sort by time)
        old.unlink()
    return Written(final, facts, pairs)


def check(path: Path, facts: int, pairs: int) -> None:
    """The file read back as an import reads it: every line a fact, the settings or a pair, as many
    as were written. Else it is not a backup, and nothing replaces the last good one."""
    found = backup.read(path)
    if found.problems or len(found.items) != facts or len(found.conflicts) != pairs:
        raise OSError(f"the backup written to {path} does not read back whole "
                      f"({len(found.items)} of {facts} facts, {len(found.conflicts)} of {pairs} pairs; "
                      f"{'; '.join(found.problems[:3])}): the last backup is kept")


def sync_folder(directory: Path) -> None:
    """The rename on disk too (POSIX: a folder's entries are synced by its own fsync)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def run(write, directory: Path, name: str, keep: int, interval: int | None, say) -> int:
    """Once, or every `interval` seconds until stopped; a failed backup is said and tried again at
    the next time (the last good one stays), and exits 1 when run once."""
    while True:
        started = time.monotonic()
        try:
            done = backup_once(write, directory, name, keep)
            say(f"backup of {name}: {done.facts} facts, {done.pairs} pairs -> {done.path} (read back and checked)")
        except Exception as e:  # noqa: BLE001 (a disk full, the service down: said, and tried again next time)
            say(f"backup of {name} failed: {e}")
            if interval is None:
                return 1
        if interval is None:
            return 0
        time.sleep(max(0.0, interval - (time.monotonic() - started)))
