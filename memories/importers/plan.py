"""A dry run, then the import it showed. The dry run sends the file's facts through the memory's
own checks (`POST /facts/batch` with `dry_run`, or the engine's), a batch at a time, and keeps
what it answered: which facts it would store, which it would merge into facts already there (and
which), which it would propose as replacing others, which lines it refused. The import then stores
exactly the facts the dry run said it would (each as the owner saw it: `force` over a near
duplicate the dry run did not see, one later in the file), so the counts are the dry run's.

`memory` is anything with `add_many(items, dry_run=..., note=...)` answering results with
`created`, `match`, `fact` and `conflicts`: the client of the contract, or the CLI's engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .facts import text_key

BATCH = 100  # what a POST /facts/batch takes


@dataclass
class Plan:
    store: list[dict] = field(default_factory=list)  # the facts it would store, in the file's order
    merged: list[tuple[dict, object]] = field(default_factory=list)  # (fact, the answer naming the one it matches)
    repeated: list[dict] = field(default_factory=list)  # a line the file already had (same type, same text)
    proposed: list[tuple[dict, list]] = field(default_factory=list)  # (fact, the facts it may replace)
    refused: list[tuple[int, str]] = field(default_factory=list)  # (line, why)
    # A proposal of an earlier line of the file: the dry run checks a batch as if stored, giving each
    # line of it the id it would have, which no fact has yet. (id(fact), that id) -> the earlier line.
    in_file: dict[tuple[int, int], int] = field(default_factory=dict)

    def counts(self) -> dict:
        return {"store": len(self.store), "merged": len(self.merged) + len(self.repeated),
                "proposed": len(self.proposed), "refused": len(self.refused),
                "proposals": sum(len(ps) for _, ps in self.proposed)}  # what the import adds to the queue

    def line_of(self, item: dict, old_id: int) -> int | None:
        """The line of the file a proposal's old fact is, when it is one (no fact has its id yet)."""
        return self.in_file.get((id(item), old_id))


def sendable(item: dict) -> dict:
    return {k: v for k, v in item.items() if k != "line"}


def dry_run(memory, items: list[dict], refused: list[tuple[int, str]] = (),
            progress: Callable[[int], None] = lambda n: None) -> Plan:
    plan = Plan(refused=list(refused))
    seen: set[tuple[str, str]] = set()
    unique = []
    for item in items:
        key = (item["type"], text_key(item["text"]))
        (plan.repeated if key in seen else unique).append(item)
        seen.add(key)
    for start in range(0, len(unique), BATCH):
        batch = unique[start : start + BATCH]
        results = memory.add_many([sendable(i) for i in batch], dry_run=True)
        lines = {r.fact.id: i["line"] for i, r in zip(batch, results) if r.created}  # the ids it would give
        for item, result in zip(batch, results):
            if result.created:
                plan.store.append(item)
                if result.conflicts:
                    plan.proposed.append((item, list(result.conflicts)))
                    for old_id in (proposal_text(p)[0] for p in result.conflicts):
                        if old_id in lines:
                            plan.in_file[(id(item), old_id)] = lines[old_id]
            else:
                plan.merged.append((item, result))
        progress(len(batch))
    return plan


def run(memory, plan: Plan, note: str, progress: Callable[[int], None] = lambda n: None) -> list:
    """Store what the dry run said it would, a batch at a time (each one transaction); through
    `memory.import_batches` when it has one (the engine: the next batch embedded while one is
    written)."""
    items = [sendable(i) | {"force": True} for i in plan.store]
    batches = getattr(memory, "import_batches", None)
    if batches is None:
        batches = lambda items, note: (memory.add_many(items[i : i + BATCH], note=note)  # noqa: E731
                                       for i in range(0, len(items), BATCH))
    results = []
    for done in batches(items, note=note):
        results += done
        progress(len(done))
    return results


def proposal_text(p) -> tuple[int, str]:
    """A proposal's old fact, from the client's Proposal or the engine's dict."""
    return (p.old.id, p.old.text) if hasattr(p, "old") else (p["id"], p["fact"]["text"])
