"""One import's batches under one `import_id`, the way the command line (`import --url`) and the
dashboard's Import page import over the contract (docs/memory-api.md, "One import at a time").

    with Importing(client) as memory:
        memory.add_many(batch, note=...)  # each batch carries the import's id

Leaving the block ends the import (an empty batch with `import_done`), whether it finished or
failed, so the memory is free for the next one at once rather than after its idle time. While
another import runs, a batch raises `ImportRunning` (a 409), whose message says so."""

from __future__ import annotations

import secrets

from .errors import MemoryServiceError


def new_import_id() -> str:
    return secrets.token_urlsafe(12)  # 16 of the letters, digits, _ and - an import_id takes


class Importing:
    """The client, as importers.plan and client.restore take a memory, with every batch of one
    import. Anything else (settings, pairs, stats) goes to the client as it is."""

    def __init__(self, client, import_id: str | None = None):
        self.client = client
        self.import_id = import_id or new_import_id()

    def add_many(self, facts: list[dict], restore: bool = False, *, dry_run: bool = False, note: str = "") -> list:
        return self.client.add_many(facts, restore, dry_run=dry_run, note=note, import_id=self.import_id)

    def end(self) -> None:
        """The import is over: the memory takes another at once. A failure to say so is let go:
        the memory frees itself after its idle time."""
        try:
            self.client.add_many([], import_id=self.import_id, import_done=True)
        except MemoryServiceError:
            pass

    def __getattr__(self, name: str):
        return getattr(self.client, name)

    def __enter__(self) -> Importing:
        return self

    def __exit__(self, *exc) -> None:
        self.end()
