"""A backup uploaded on the Import page, put back as it was into an empty memory: every fact
with its id, times and replaced status (`POST /facts/batch` with `restore`, 100 a transaction),
then the backup's settings and its pairs, as `python -m memories import` restores one. Into a
memory that holds facts a backup is not restored (its ids would collide, and its pairs name them):
the page imports its current facts as new ones instead (memories/importers/backup_file.py)."""

from __future__ import annotations

from dataclasses import dataclass

from memories.importers.backup_file import BackupFile
from memories.importers.plan import BATCH


@dataclass
class Restored:
    facts: int
    pairs: int
    pairs_skipped: int
    settings: bool


def restorable(backup: BackupFile, facts_there: int) -> bool:
    """As the CLI decides (memories/backup.restores): every fact with its id, into an empty memory;
    and, as the CLI restores none of a backup with a broken line, every line read."""
    return facts_there == 0 and bool(backup.rows) and not backup.refused and all("id" in r for r in backup.rows)


def restore(client, backup: BackupFile, progress) -> Restored:
    created = 0
    for start in range(0, len(backup.rows), BATCH):
        batch = backup.rows[start : start + BATCH]
        created += sum(r.created for r in client.add_many(batch, restore=True))
        progress(len(batch))
    settings = backup.settings
    if settings:
        client.put_settings(settings.get("fusion"), threshold=settings.get("threshold"), review=settings.get("review"),
                            proposals=settings.get("proposals"))
    pairs = client.restore_conflicts(backup.pairs) if backup.pairs else (0, 0)
    return Restored(created, pairs[0], pairs[1], bool(settings))
