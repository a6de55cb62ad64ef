"""The contradictions queue: the proposals writes made (lifecycle.py says which), while both facts
are current and nobody resolved them, and their resolution. Resolving is a write (writing.py):
"replace" and "keep_old" replace one fact by the other, "keep_both" marks the pair. Each is one
history entry, undoable. A backup keeps every pair, open or not (`every`), and a restore puts
them back (`restore`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..facts import FACT_COLUMNS, Fact, InvalidInput, NotFound, clean_id, now
from .history import clean_page_cursor
from ..writes.lifecycle import clean_pair, clean_resolution, differences, is_current
from ..writes import replace_at_once
from ..storage.state import State

if TYPE_CHECKING:
    from .history import History
    from ..writes.writing import Writer

RESTORED_PAIR = "from a backup: the pair as it was resolved"

OLD = ", ".join(f"o.{c}" for c in FACT_COLUMNS.split(", "))
NEW = ", ".join(f"n.{c}" for c in FACT_COLUMNS.split(", "))
COLUMNS = len(FACT_COLUMNS.split(", "))
# Open: not resolved, and both facts current now.
OPEN = ("c.resolution IS NULL AND (o.valid_until IS NULL OR o.valid_until > ?)"
        " AND (n.valid_until IS NULL OR n.valid_until > ?)")
# Replaced at once: the write's pair marked done, and the write's fact still what replaces the old one.
DONE = "c.resolution = ? AND o.superseded_by = c.new"
FROM = "conflicts c JOIN facts o ON o.id = c.old JOIN facts n ON n.id = c.new"


class Conflicts:
    def __init__(self, state: State, writer: Writer):
        self.state = state
        self.writer = writer

    def open(self, limit: int = 50, cursor: str | None = None, every: bool = False,
             done: bool = False) -> tuple[list[dict], str | None, int]:
        """Newest first: (conflicts, next cursor or None, how many are open). `every`: every pair
        kept, the resolved ones and those no longer asked about included (what a backup holds);
        `done`: those replaced at once (replace_at_once.py) whose new fact still replaces the old."""
        before = clean_page_cursor(cursor)
        at = now()
        which, args = ("1", []) if every else (DONE, [replace_at_once.DONE]) if done else (OPEN, [at, at])
        page, page_args = which, list(args)
        if before is not None:
            page += " AND c.id < ?"
            page_args.append(before)
        db = self.state.db
        with self.state.reading():
            total = db.execute(f"SELECT count(*) FROM {FROM} WHERE {which}", args).fetchone()[0]
            rows = db.execute(f"SELECT c.id, c.score, c.differs, c.resolution, {OLD}, {NEW} FROM {FROM} WHERE {page} "
                              "ORDER BY c.id DESC LIMIT ?", [*page_args, limit + 1]).fetchall()
        out = [{"id": r[0], "old": Fact(*r[4 : 4 + COLUMNS]).to_dict(), "new": Fact(*r[4 + COLUMNS :]).to_dict(),
                "score": r[1], "differs": json.loads(r[2]), "resolution": r[3]} for r in rows[:limit]]
        return out, str(out[-1]["id"]) if len(rows) > limit else None, total

    def restore(self, pairs: object, client: str = "") -> tuple[int, int]:
        """A backup's pairs put back (POST /conflicts/restore), after its facts: each one whose two
        facts are here and that the memory does not hold yet (the pair, or its id), in one write;
        a pair marked "keep_both" is a `resolve` history entry, undoable. (restored, skipped). Any
        number of pairs: the service takes MAX_BATCH a request."""
        if not isinstance(pairs, list):
            raise InvalidInput("conflicts must be a list of pairs")
        return self.restore_pairs([clean_pair(p, n) for n, p in enumerate(pairs)], client)

    def resolve(self, old: object, new: object, resolution: object, client: str = "") -> dict:
        """Resolve the pair: "replace" (new replaces old), "keep_old" (old replaces new) or
        "keep_both". Any two current facts may be resolved, proposed or not."""
        resolution = clean_resolution(resolution)
        ids = []
        for name, value in (("old", old), ("new", new)):
            if value is None:
                raise InvalidInput(f"{name} is required: a fact id")
            ids.append(clean_id(value))
        old_id, new_id = ids
        if old_id == new_id:
            raise InvalidInput("old and new are the same fact")
        with self.state.lock:  # the checks and the write as one, against this process's writers
            with self.state.reading():
                facts = self.writer.reader.get_many([old_id, new_id])
            for fid in ids:
                if fid not in facts:
                    raise NotFound(f"no fact with id {fid}")
                if not is_current(facts[fid].valid_until, ""):
                    raise InvalidInput(f"fact {fid} is not current: resolve only current facts")
            note = {"replace": f"resolved: #{new_id} replaces #{old_id}", "keep_old": f"resolved: #{old_id} is right, #{new_id} replaced",
                    "keep_both": f"resolved: #{old_id} and #{new_id} are both true"}[resolution]
            if resolution == "keep_both":
                entry = self.set_resolution(old_id, new_id, "keep_both", client=client, note=note)
            else:
                replaced, by = (old_id, new_id) if resolution == "replace" else (new_id, old_id)
                self.writer.edit(replaced, superseded_by=by, client=client, note=note)
                entry = self.state.db.execute("SELECT max(id) FROM history WHERE fact_id = ?", (replaced,)).fetchone()[0]
            with self.state.reading():
                both = self.writer.reader.get_many([old_id, new_id])
        return {"old": both[old_id].to_dict(), "new": both[new_id].to_dict(), "resolution": resolution, "entry": entry}

    def set_resolution(self, old: int, new: int, resolution: str | None, client: str = "", note: str = "",
                       undoes: int | None = None) -> int:
        """Mark the pair (old, new) as `resolution` ('keep_both', or None: open again), one history
        entry ("resolve"); the pair's row is made when no write proposed it. The entry's id."""
        state, db = self.state, self.state.db
        with state.writing():
            facts = self.writer.reader.get_many([old, new])
            for fid in (old, new):
                if fid not in facts:
                    raise NotFound(f"no fact with id {fid}")
            row = db.execute("SELECT resolution FROM conflicts WHERE old = ? AND new = ?", (old, new)).fetchone()
            if row is None:
                score = float(state.vectors.vector(old) @ state.vectors.vector(new)) if old in state.vectors and new in state.vectors else 0.0
                db.execute("INSERT INTO conflicts (old, new, score, differs, resolution) VALUES (?, ?, ?, ?, ?)",
                           (old, new, round(score, 6), json.dumps(differences(facts[old].text, facts[new].text), ensure_ascii=False),
                            resolution))
            else:
                db.execute("UPDATE conflicts SET resolution = ? WHERE old = ? AND new = ?", (resolution, old, new))
            before = {"old": old, "new": new, "resolution": row[0] if row else None}
            return self.writer.history.record(client, "resolve", new, before=before, after=before | {"resolution": resolution},
                                       note=note, undoes=undoes)

    def restore_pairs(self, pairs: list[dict], client: str = "") -> tuple[int, int]:
        """Put back a backup's pairs (lifecycle.clean_pair's), in one write: (restored, skipped)."""
        with self.state.writing():
            restored = put_pairs(self.state.db, self.writer.history, pairs, client, RESTORED_PAIR)
        return restored, len(pairs) - restored


def pairs_of(db, fact_id: int | None = None) -> list[dict]:
    """The pairs fact `fact_id` is in (what its delete takes with it), or every pair kept (an
    export), oldest first, as a backup holds them. (A pair goes with either of its facts.)"""
    where, args = ("old = ? OR new = ?", (fact_id, fact_id)) if fact_id is not None else ("1", ())
    rows = db.execute(f"SELECT id, old, new, score, differs, resolution FROM conflicts WHERE {where} ORDER BY id",
                                 args).fetchall()
    return [{"id": r[0], "old": r[1], "new": r[2], "score": r[3], "differs": json.loads(r[4]), "resolution": r[5]} for r in rows]


def put_pairs(db, history: History, pairs: list[dict], client: str, note: str | None) -> int:
    """Inside a write: each pair whose facts are here and whose pair and id are free, stored as
    it was; how many. With a `note`, each "keep_both" is a `resolve` entry (its undo opens the
    pair again), as the owner's resolution is; without, the caller's entry covers them."""
    put = 0
    for p in pairs:
        here = db.execute("SELECT count(*) FROM facts WHERE id IN (?, ?)", (p["old"], p["new"])).fetchone()[0] == 2
        taken = db.execute("SELECT 1 FROM conflicts WHERE (old = ? AND new = ?) OR id = ?", (p["old"], p["new"], p["id"])).fetchone()
        if not here or taken:
            continue
        db.execute("INSERT INTO conflicts (id, old, new, score, differs, resolution) VALUES (?, ?, ?, ?, ?, ?)",
                   (p["id"], p["old"], p["new"], p["score"], json.dumps(p["differs"], ensure_ascii=False), p["resolution"]))
        if p["resolution"] == "keep_both" and note is not None:  # (a pair replaced at once: its add entry covers it)
            pair = {"old": p["old"], "new": p["new"]}
            history.record(client, "resolve", p["new"], before=pair | {"resolution": None},
                                after=pair | {"resolution": p["resolution"]}, note=note)
        put += 1
    return put
