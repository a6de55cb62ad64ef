"""Undo: one history entry taken back, recorded as a new entry that names it. What each kind of
entry undoes is a write of its own (writing.py, conflicts.py); this file says which, what an undo
would overwrite (ChangedSince, unless forced), and what a deleted fact brings back with it (its
pairs, and the facts it replaced: replacing.py). worker/src/review/undo.ts mirrors it."""

from __future__ import annotations

from functools import partial

from ..writes import replacing
from .conflicts import Conflicts, put_pairs
from ..facts import AlreadyUndone, ChangedSince, Fact, InvalidInput
from .history import Entry
from ..storage.state import State
from ..writes.writing import Writer

CHANGED_FIELDS = ("text", "type", "source", "valid_until", "superseded_by")  # what an undo puts back, so what it would overwrite


class Undo:
    def __init__(self, state: State, writer: Writer, conflicts: Conflicts):
        self.state, self.writer, self.conflicts = state, writer, conflicts
        self.history = writer.history

    def undo(self, entry_id: int, client: str = "", force: bool = False) -> tuple[Entry, Fact | None, bool]:
        """Undo one history entry as the contract says (POST /history/{id}/undo): (the entry
        that records the undo; the fact; True). An undo that would overwrite what was written
        since the entry is a ChangedSince unless `force`. The lock is held throughout (an RLock:
        the write below takes it again), so no write of this process lands between the check
        and the undo."""
        with self.state.lock:
            entry = self.history.entry(entry_id)
            if entry.undone_by is not None:
                raise AlreadyUndone(f"history entry {entry_id} was undone already, by entry {entry.undone_by}")
            if not force:
                self._unchanged_since(entry)
            note = f"undo of #{entry_id}"
            if entry.op in ("delete",):  # what was there, under its id and times: no dedup
                b = entry.before
                result = self.writer.put_back(b, client=client, note=note, undoes=entry_id,
                                              also=partial(self._rejoin, b["id"], b.get("pairs", []), b.get("replaced", []), client))
                fact = self.writer.reader.get(result.fact.id)
            elif entry.op in ("edit",):
                b = entry.before
                fact = self.writer.edit(entry.fact_id, text=b["text"], type=b["type"], source=b["source"], client=client,
                                        note=note, undoes=entry_id, undo_of=entry)
            elif entry.op in ("add", "restore"):
                fact = self.writer.delete(entry.fact_id, client=client, note=note, undoes=entry_id)
            elif entry.op == "review":
                self.writer.unreview(entry, client, note)
                fact = None
            elif entry.op == "resolve":
                b = entry.before
                self.conflicts.set_resolution(b["old"], b["new"], b["resolution"], client=client, note=note, undoes=entry_id)
                fact = None
            else:  # settings
                fact = None
                self.writer.set_settings(entry.before, client=client, note=note, undoes=entry_id)
            return self.history.entry(self.history.entry(entry_id).undone_by), fact, True

    def _rejoin(self, fid: int, pairs: list[dict], replaced: list[dict], client: str) -> None:
        """Inside the write that puts a deleted fact back: its pairs, the facts it replaced (each
        still current and not replaced since: replaced again), and itself current again if the
        fact that replaced it is gone."""
        db, before = self.state.db, self.writer.review_before
        put_pairs(db, self.history, pairs, client, None)
        fact = self.writer.reader.get(fid)
        if fact.superseded_by is not None:
            if fact.superseded_by in self.writer.reader.get_many([fact.superseded_by]):
                replacing.settle(db, before, [fact.superseded_by])
            else:
                replacing.unreplace(db, [fid])
        fact = self.writer.reader.get(fid)
        for r in replaced:
            old = self.writer.reader.get_many([r["id"]]).get(r["id"])
            if old is None:
                continue
            try:
                replacing.check(db, old, fid, fact)
            except InvalidInput:
                continue  # changed since: left as it is now
            replacing.replace(db, old.id, fid, before)

    def _unchanged_since(self, entry: Entry) -> None:
        """ChangedSince when the fact (or the settings) no longer holds what `entry` left: the
        undo would silently overwrite a later write. A delete's undo overwrites nothing (its id
        in use is IdTaken)."""
        if entry.op in ("delete", "review"):  # (a review's undo leaves facts reviewed again since as they are)
            return
        if entry.op == "resolve":
            a = entry.after
            row = self.state.db.execute("SELECT resolution FROM conflicts WHERE old = ? AND new = ?", (a["old"], a["new"])).fetchone()
            now_holds, left, newer = {"resolution": row[0] if row else None}, {"resolution": a["resolution"]}, None
        elif entry.op == "settings":
            now_holds, left = self.state.settings(), entry.after
            newer = self.state.db.execute("SELECT max(id) FROM history WHERE op = 'settings' AND id > ?",
                                          (entry.id,)).fetchone()[0]
        else:
            fact = self.writer.reader.get(entry.fact_id)  # gone since: NotFound, as before
            now_holds = {k: getattr(fact, k) for k in CHANGED_FIELDS}
            left = {k: entry.after.get(k) for k in CHANGED_FIELDS}
            if entry.op == "add":  # and the facts it replaced are still replaced by it
                for r in (entry.before or {}).get("replaced", []):
                    still = self.writer.reader.get_many([r["id"]]).get(r["id"])
                    if still is None or still.superseded_by != entry.fact_id:
                        now_holds = {**now_holds, f"fact {r['id']}": still.to_dict() if still else None}
                        left = {**left, f"fact {r['id']}": f"replaced by {entry.fact_id}"}
            newer = self.state.db.execute("SELECT max(id) FROM history WHERE fact_id = ? AND id > ?",
                                          (entry.fact_id, entry.id)).fetchone()[0]
        if now_holds != left:
            what = "the settings" if entry.op == "settings" else f"fact {entry.fact_id}"
            by = f" by history entry {newer}" if newer else ""
            raise ChangedSince(f"{what} changed since history entry {entry.id}{by}: undoing it would overwrite that; "
                               "send force true to undo it anyway", newer, now_holds)
