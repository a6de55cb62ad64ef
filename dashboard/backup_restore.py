"""A backup uploaded on the Import page, put back as it was into an empty memory: every fact
with its id, times and replaced status (`POST /facts/batch` with `restore`, 100 a transaction),
then the backup's settings and its pairs, by the same function as `python -m memories import --url`
(memories/client/restore.py). Into a
memory that holds facts a backup is not restored (its ids would collide, and its pairs name them):
the page imports its current facts as new ones instead (memories/importers/backup_file.py)."""

from __future__ import annotations

from dataclasses import dataclass

from memories.client.restore import restore_backup
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
    results, pairs = restore_backup(client, backup.rows, backup.settings, backup.pairs, BATCH,
                                    lambda answers: progress(len(answers)))
    return Restored(sum(r.created for r in results), pairs[0], pairs[1], bool(backup.settings))
