"""A backup put back into an empty memory over the contract, the one way both the command line
(`import --url`) and the dashboard's Import page do it: the facts in `restore` batches (each one
transaction there, every fact with its id and times, no dedup), then the backup's settings, then
its pairs (POST /conflicts/restore), whose fact ids are the backup's own."""

from __future__ import annotations

from collections.abc import Callable


def restore_backup(client, items: list[dict], settings: dict | None, pairs: list[dict], batch: int,
                   progress: Callable[[list], object] = lambda answers: None) -> tuple[list, tuple[int, int]]:
    """The answers of every fact written, and (pairs restored, pairs skipped). `progress` is given
    each batch's answers as it lands, so a caller can say how far a restore got when one fails."""
    results = []
    for start in range(0, len(items), batch):
        answers = client.add_many(items[start : start + batch], restore=True)
        results += answers
        progress(answers)
    if settings:
        client.put_settings(settings.get("fusion"), threshold=settings.get("threshold"), review=settings.get("review"),
                            proposals=settings.get("proposals"))
    return results, client.restore_conflicts(pairs)
