"""The one door every write goes through: add, import, edit, delete, review and settings, each with
dedup-on-write. Each question lives in the module that names it: a replacement's validity in
replacing.py, the owner's review in reviewing.py, an undo in undo.py, a reindex in reindexing.py,
a pair's resolution in conflicts.py; worker/src/writes/writing.ts mirrors it.

A write changes the row, its FTS entry, its vector, its pairs and the vocabulary's new words in
one transaction (`state.writing()`), so it is all or nothing. Embedding, the slow part, happens
before the lock is taken; the dedup check runs under it, against everything in the file."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np

from ..storage.codes import exact_all
from .duplicates_of import Duplicates
from ..facts import (FACT_COLUMNS, AddResult, Conflict, Fact, IdTaken, InvalidInput,
                    Item, MemoryFull, NotFound, clean_id_named, clean_items, clean_source, clean_text, clean_time,
                    clean_type, now, text_key)
from . import replacing
from .replacing import UNSET
from .lifecycle import PROPOSE, PROPOSE_CANDIDATES, PROPOSING, hidden, proposals
from ..storage.pairs import MARGIN
from .replace_at_once import replace_now, replaces_at_once
from ..review import reviewing
from ..review.reviewing import reviewed_by
from ..review.forgetting import drop_unheld_words
from ..review.history import Entry, History
from ..review.conflicts import pairs_of
from ..recall.reading import Reader
from ..storage.reindexing import word_vectors
from ..storage.state import State, to_blob


RESTORED = "from a backup: stored as it was, without the duplicate check"


class RolledBack(Exception):
    """A dry run's end: the write's transaction is rolled back, and nothing of it applied."""


class Writer:
    def __init__(self, state: State, reader: Reader, history: History):
        self.state = state
        self.reader = reader
        self.history = history
        self.duplicates = Duplicates(state, reader)

    def add_many(self, items: list[dict], client: str = "", restore: bool = False, dry_run: bool = False,
                 note: str = "", alone: bool = False) -> list[AddResult]:
        """Store facts with dedup-on-write; each fact is all or nothing, the batch one commit.
        An item's id, created_at and updated_at put back one that was deleted or exported;
        `restore` stores each as given, with no dedup (a backup into an empty memory: what was
        there, force-stored near duplicates and all). `dry_run`: every check and every answer
        as if stored, then nothing kept (the transaction rolled back, the index untouched).
        `note`: each history entry's (an import names its file). `alone`: POST /facts's one fact."""
        clean = clean_items(items)
        if clean and self.state.full:  # before the model is asked
            raise MemoryFull(self.state.full)
        return self._store(clean, *self._embed_facts([c.text for c in clean]), client=client, restore=restore,
                           note=note or (RESTORED if restore else ""), dry_run=dry_run, alone=alone)

    def import_batches(self, items: list[dict], size: int = 64, client: str = "", restore: bool = False,
                       note: str = "") -> Iterator[list[AddResult]]:
        """`add_many` over `items`, `size` at a time, each batch one commit. The next batch is
        embedded in a thread while this one is written: the model and the write (the dedup scan,
        SQLite, the commit) each leave part of the machine idle. Bad input fails before any write."""
        batches = [clean_items(items[i : i + size]) for i in range(0, len(items), size)]
        with ThreadPoolExecutor(1, thread_name_prefix="embed") as pool:
            ahead = pool.submit(self._embed_facts, [c.text for c in batches[0]]) if batches else None
            for n, clean in enumerate(batches):
                embedded = ahead.result()  # only the batch in hand and the next are held
                if n + 1 < len(batches):
                    ahead = pool.submit(self._embed_facts, [c.text for c in batches[n + 1]])
                yield self._store(clean, *embedded, client=client, restore=restore, note=note or (RESTORED if restore else ""))

    def put_back(self, before: dict, client: str, note: str, undoes: int, also: Callable[[], object]) -> AddResult:
        """A deleted fact stored again as it was, under its id and times, with no dedup (an undo of
        its delete); `also`: more of the same write."""
        [result] = self._store(clean_items([before]), *self._embed_facts([before["text"]]), client=client, op="restore",
                               note=note, undoes=undoes, restore=True, also=also)
        return result

    def _embed_facts(self, texts: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The texts' vectors, and those of their words the vocabulary lacks (in a call of their own)."""
        words = self.state.vocab.missing(texts, committed=True)
        return self.state.embed(texts), dict(zip(words, self.state.embed(words))) if words else {}

    def _add_words(self, texts: list[str], embedded: dict[str, np.ndarray]) -> None:
        """The new words of stored texts into the vocabulary (inside their write)."""
        words = self.state.vocab.missing(texts)
        if words:  # another writer's words we have not read yet may lack vectors: embedded here
            embedded = word_vectors(self.state, words, embedded)
            self.state.vocab.add(words, np.array([embedded[w] for w in words]))

    def _stale(self) -> list[int]:
        """The facts no longer current (inside the write): never proposed."""
        return [r[0] for r in self.state.db.execute(*hidden(None))]

    def _replaceable(self, ids: tuple[int, ...]) -> dict[int, Fact]:
        """The facts a write's `supersedes` names, each one that exists, is current and is not
        replaced yet (inside the write); any other is a 422 naming it, and nothing is stored."""
        facts = self.reader.get_many(ids)
        for fid in ids:
            if fid not in facts:
                raise InvalidInput(f"supersedes names fact {fid}, which does not exist")
            try:
                replacing.check_old(facts[fid])
            except InvalidInput as e:
                raise InvalidInput(f"supersedes names fact {fid}: {e}") from None
        return facts

    @property
    def review_before(self) -> bool:
        return self.state.review["mode"] == "before"

    def _proposals(self, fid: int, text: str, created_at: str, ids: np.ndarray, scores: np.ndarray,
                   leave: tuple[int, ...], read: dict[int, Fact] | None = None) -> tuple[dict, ...]:
        """The current facts the new fact `fid` may replace (lifecycle.proposals), each kept in
        `conflicts` inside the write and answered with what differs. A newer one that may replace
        it (an imported fact older than what the memory holds) is kept the other way round, and
        is not in the answer: the write replaces nothing newer than itself."""
        facts, near = self.duplicates.current_closest(ids, scores, PROPOSE, (*leave, fid), PROPOSE_CANDIDATES, read)
        newer = frozenset(i for i, _ in near if facts[i].created_at > created_at)
        out = []
        for other, score, differs, reverse in proposals(near, {i: f.text for i, f in facts.items()}, text, newer):
            old, new = (fid, other) if reverse else (other, fid)
            self.state.db.execute("INSERT OR IGNORE INTO conflicts (old, new, score, differs) VALUES (?, ?, ?, ?)",
                                  (old, new, round(score, 6), json.dumps(differs, ensure_ascii=False)))
            if not reverse:
                out.append({"id": other, "fact": facts[other].to_dict(), "score": round(score, 6), "differs": differs, "replaced": False})
        return tuple(out)

    def _unlink(self, fid: int) -> None:
        """Remove fact `fid`'s pairs (inside the write, before its vector leaves the table: its
        neighbours are found with it)."""
        vectors = self.state.vectors
        vector, type = vectors.vector(fid), vectors.type_of(fid)
        if vector is None or type is None:
            self.state.pairs.unlink(fid, None)
            return
        self.state.pairs.unlink(fid, vectors.near(vector, type, self.state.floor - MARGIN)[0][0])

    def _similar(self, fid: int, type: str, vector: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The other same-type facts at or above the floor or the threshold, whichever is lower,
        and their cosines with `vector`: one search serves an edit's dedup check and its pairs."""
        low = min(self.state.floor, self.state.threshold)
        return self.state.vectors.near(vector, type, low, exclude=fid)[0]

    # -- the writes --------------------------------------------------------------------

    def _store(self, clean: list[Item], vectors: np.ndarray, words: dict[str, np.ndarray], client: str = "",
               op: str = "add", note: str = "", undoes: int | None = None, restore: bool = False,
               dry_run: bool = False, also: Callable[[], object] | None = None, alone: bool = False) -> list[AddResult]:
        """`restore`: no dedup and no proposals; a fact whose id is in use is still refused (IdTaken).
        `dry_run`: all of it, then rolled back. `also`: more of the same write, after the facts."""
        state = self.state
        results: list[AddResult] = []
        try:
            with state.lock, state.writing() as after:
                self._store_in(after, clean, vectors, words, results, client, op, note, undoes, restore, alone)
                if also:
                    also()
                if dry_run:
                    raise RolledBack
        except RolledBack:
            pass
        return results

    def _store_in(self, after: list, clean: list[Item], vectors: np.ndarray, words: dict[str, np.ndarray],
                  results: list[AddResult], client: str, op: str, note: str, undoes: int | None, restore: bool,
                  alone: bool = False) -> None:
        """The body of `_store`, inside its write: each result appended to `results`."""
        state, db = self.state, self.state.db
        # Each type's new facts against its stored rows, one scan a type: for the near-dedup check,
        # the review's pairs and the proposals. A fact's proposals need only its closest few down to
        # PROPOSE (`top`), not every fact that far: its k leaves room for the facts the batch's
        # `supersedes` name (no longer current once a fact of the batch replaces them; a lone fact's
        # are left out of it) and for a near duplicate stored over.
        low = min(state.floor, state.threshold)
        types = [c.type for c in clean]
        prior: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for t in set(types):
            mine = [i for i, u in enumerate(types) if u == t]
            top = None
            if t in PROPOSING and not restore:
                leave = clean[mine[0]].supersedes if len(mine) == 1 else ()
                named = sum(len(clean[i].supersedes) for i in mine)
                top = (PROPOSE, PROPOSE_CANDIDATES + named + 1, [*self._stale(), *leave])
            prior.update(zip(mine, state.vectors.near(vectors[mine], t, low, top=top)))
        low = min(low, PROPOSE)
        within = exact_all(vectors)  # the batch against itself, for facts stored earlier in it
        batch: list[tuple[int, str, int]] = []  # (id, type, position in the batch) stored so far
        lacking: dict[str, None] = {}  # the words those facts bring that the vocabulary lacks
        for n, (item, vector) in enumerate(zip(clean, vectors)):
            text, type = item.text, item.type
            near_ids, near_scores = prior[n]
            same = [(fid, k) for fid, t, k in batch if t == type and within[n, k] >= low]
            if same:
                near_ids = np.concatenate([near_ids, np.array([f for f, _ in same], dtype=np.int64)])
                near_scores = np.concatenate([near_scores, within[n, [k for _, k in same]]])
            replaced = {} if restore else self._replaceable(item.supersedes)
            near = None
            read: dict[int, Fact] = {}  # its neighbours' rows, read once for its dedup and its proposals
            dup = None if restore else self.duplicates.exact(text, type, leave=item.supersedes)
            if not dup and not restore:
                near = self.duplicates.near(text, near_ids, near_scores, item.supersedes, read)
                dup = None if item.force else near
            if not dup and not restore and not item.supersedes:
                dup = self.duplicates.replaced(text, type)
            if dup:
                existing = self.reader.get_many([dup[0]])[dup[0]]
                results.append(AddResult(existing, False, dup[1], round(dup[2], 6)))
                continue
            created_at = item.created_at or now()
            updated_at = item.updated_at or created_at
            if item.valid_until is not None and item.valid_until < created_at:
                raise InvalidInput("valid_until must not be before the fact's created_at")
            if item.id is not None and db.execute("SELECT 1 FROM facts WHERE id = ?", (item.id,)).fetchone():
                raise IdTaken(f"fact id {item.id} is in use by another fact")
            # Room for it and those of the batch before it (a 507 rolls back the whole batch).
            more = Counter(t for _, t, _ in batch) + Counter([type])
            lacking.update(dict.fromkeys(state.vocab.missing([text])))  # (the table gains the words at the write's end)
            state.ensure_room(dict(more), list(lacking))
            superseded_by = item.superseded_by if restore else None
            if restore:  # as it was; a backup from before the review was there to be seen: reviewed
                reviewed_at = item.reviewed_at if item.reviewed_given else created_at
            else:
                reviewed_at = created_at if reviewed_by(client, item.source, state.review) else None
            fid = db.execute(
                "INSERT INTO facts (id, text, text_key, type, source, created_at, updated_at, valid_until, superseded_by,"
                " reviewed_at, own_valid_until) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (item.id, text, text_key(text), type, item.source, created_at, updated_at, item.valid_until, superseded_by,
                 reviewed_at, item.own_valid_until if superseded_by is not None else None),
            ).lastrowid
            db.execute("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", (fid, text))
            db.execute(
                "INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
                (fid, state.model, len(vector), to_blob(vector)),
            )
            state.pairs.link(fid, type, near_ids, near_scores, state.floor)
            # Later items of the batch see this one through `batch`; the index, once committed.
            after.append(partial(state.vectors.put, fid, type, vector))
            batch.append((fid, type, n))
            for old in replaced.values():  # each named fact replaced by this one, in this write
                replacing.replace(db, old.id, fid, self.review_before)
            # (a near duplicate stored over with `force` is the same fact, not one it replaces)
            leave = (*item.supersedes, *([near[0]] if near else []))
            conflicts = () if restore or type not in PROPOSING else self._proposals(fid, text, created_at, near_ids, near_scores, leave, read)
            at_once = replaces_at_once(state.proposals, alone and op == "add", client, item.source, state.review, conflicts)
            if at_once:  # the memory's proposals setting: replaced in this write, the pair kept as done
                conflicts, replaced = replace_now(db, self.reader, fid, conflicts, self.review_before), {**replaced, **at_once}
            fact = Fact(fid, text, type, item.source, created_at, updated_at, item.valid_until, superseded_by, reviewed_at)
            why = note
            if near:  # (an import's note, naming its file, stays first)
                why = (why + "; " if why else "") + f"stored though a near duplicate of #{near[0]} ({near[2]:.3f}): the client's decision"
            if replaced:
                why = (why + "; " if why else "") + "replaces " + ", ".join(f"#{i}" for i in replaced)
                why += " at once (the memory's proposals setting is replace)" if at_once else ""
            before = {"replaced": [f.to_dict() for f in replaced.values()]} if replaced else None
            self.history.record(client, op, fid, before=before, after=fact, note=why, undoes=undoes)
            results.append(AddResult(fact, True, conflicts=conflicts,
                                     pending=reviewed_at is None and state.review["mode"] == "before"))
        self._add_words([r.fact.text for r in results if r.created], words)

    def edit(self, fact_id: int, text: str | None = None, type: str | None = None, source: str | None = None,
             client: str = "", note: str = "", undoes: int | None = None, valid_until: object = UNSET,
             superseded_by: object = UNSET, undo_of: Entry | None = None) -> Fact:
        """Change the given fields; the others keep what they hold when the write lock is taken,
        so an edit of one field never undoes a concurrent edit of another. `superseded_by`: a
        current fact that replaces this one (None: no longer replaced); `valid_until`: when it
        stops being current (None: never; of a replaced fact, its own end). `undo_of`: an edit
        entry whose `before` is put back, through the same checks (UndoRefused)."""
        state, db = self.state, self.state.db
        old = self.reader.get(fact_id)
        text = clean_text(text) if text is not None else None
        type = clean_type(type) if type is not None else None
        source = clean_source(source) if source is not None else None
        if valid_until is not UNSET:
            valid_until = clean_time(valid_until, "valid_until")
        if superseded_by is not UNSET:
            superseded_by = clean_id_named(superseded_by, "superseded_by")
        # Embed before taking the lock (the slow part), if the text is to change.
        vector, words = self._embed_facts([text]) if text is not None and text != old.text else (None, {})
        vector = vector[0] if vector is not None else None
        with state.lock:
            with state.writing() as after:  # the read, the dedup check and the write as one
                row = db.execute(f"SELECT {FACT_COLUMNS}, own_valid_until FROM facts WHERE id = ?", (fact_id,)).fetchone()
                if row is None:
                    raise NotFound(f"no fact with id {fact_id}")
                current, own = Fact(*row[:-1]), row[-1]
                new_text = current.text if text is None else text
                new_type = current.type if type is None else type
                new_source = current.source if source is None else source
                if undo_of is not None:  # its validity as the edit leaves it, checked inside the write
                    new_valid, own, new_by = replacing.undone(db, current, own, undo_of)
                else:
                    new_valid, own, new_by = replacing.patched(db, current, own, valid_until, superseded_by)
                reembed = new_text != current.text
                if reembed or new_type != current.type:  # vector work: its dedup check and pairs
                    state.ensure_room({}, state.vocab.missing([new_text]) if reembed else [])
                if not reembed:
                    vector = state.vectors.vector(fact_id)
                elif vector is None:  # the text changed under us since we looked
                    vector = state.embed([new_text])[0]
                if reembed:
                    self._add_words([new_text], words)
                changed = reembed or new_type != current.type
                similar = self._similar(fact_id, new_type, vector) if changed and vector is not None else None
                if changed:
                    dup = self.duplicates.exact(new_text, new_type, fact_id) or (similar and self.duplicates.near(new_text, *similar))
                    if dup:
                        existing = self.reader.get_many([dup[0]])[dup[0]]
                        raise Conflict(
                            f"this edit would duplicate fact {existing.id} ({dup[1]} match, score {dup[2]:.3f})",
                            existing, dup[1], dup[2],
                        )
                if similar is not None:
                    self._unlink(fact_id)  # before its vector changes in the table
                updated_at = now()
                reviewed_at = current.reviewed_at
                if (new_text, new_type, new_source) != (current.text, current.type, current.source):
                    reviewed_at = updated_at if reviewed_by(client, new_source, state.review) else None
                db.execute(
                    "UPDATE facts SET text = ?, text_key = ?, type = ?, source = ?, updated_at = ?, valid_until = ?,"
                    " superseded_by = ?, reviewed_at = ?, own_valid_until = ? WHERE id = ?",
                    (new_text, text_key(new_text), new_type, new_source, updated_at, new_valid, new_by, reviewed_at, own, fact_id),
                )
                # Its end from the fact replacing it; and what it replaces, now it may be pending again.
                replacing.settle(db, self.review_before, [fact_id, *([new_by] if new_by is not None else [])])
                if new_by is not None:
                    new_valid = db.execute("SELECT valid_until FROM facts WHERE id = ?", (fact_id,)).fetchone()[0]
                if reembed:
                    db.execute("DELETE FROM facts_fts WHERE rowid = ?", (fact_id,))
                    db.execute("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", (fact_id, new_text))
                    db.execute(
                        "INSERT OR REPLACE INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
                        (fact_id, state.model, len(vector), to_blob(vector)),
                    )
                if similar is not None:  # its pairs become those of its new text and type
                    state.pairs.link(fact_id, new_type, *similar, state.floor)
                if vector is not None:
                    after.append(partial(state.vectors.put, fact_id, new_type, vector))
                edited = Fact(fact_id, new_text, new_type, new_source, current.created_at, updated_at, new_valid, new_by, reviewed_at)
                self.history.record(client, "edit", fact_id, before=current, after=edited, note=note, undoes=undoes)
        return edited

    def review(self, ids: object, client: str = "", note: str = "") -> tuple[list[int], int | None]:
        """POST /facts/review (reviewing.py `review`)."""
        return reviewing.review(self.state, self.history, ids, client, note)

    def unreview(self, entry: Entry, client: str, note: str) -> None:
        """The undo of a review entry (reviewing.py `unreview`)."""
        reviewing.unreview(self.state, self.history, entry, client, note)

    def delete(self, fact_id: int, client: str = "", note: str = "", undoes: int | None = None) -> Fact:
        """Remove the row, its FTS entry and its vector together; returns what was removed. The
        facts it replaced are current again, with their own validity (none is left replaced by a
        fact that is not there). The history keeps the whole fact, the pairs it was in and the
        facts it replaced, so the delete can be undone."""
        state, db = self.state, self.state.db
        with state.writing() as after:
            fact = self.reader.get(fact_id)
            pairs = pairs_of(db, fact_id)  # its contradictions, open or resolved: an undo puts them back
            replaced = replacing.replaced_by(db, fact_id)
            own = db.execute("SELECT own_valid_until FROM facts WHERE id = ?", (fact_id,)).fetchone()[0]
            kept = ({"pairs": pairs} if pairs else {}) | ({"replaced": replaced} if replaced else {}) | (
                {"own_valid_until": own} if fact.superseded_by is not None else {})
            self.history.record(client, "delete", fact_id, before=fact.to_dict() | kept, note=note, undoes=undoes)
            replacing.unreplace(db, [r["id"] for r in replaced])
            self._unlink(fact_id)  # before its vector leaves the table
            db.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            db.execute("DELETE FROM facts_fts WHERE rowid = ?", (fact_id,))
            db.execute("DELETE FROM vectors WHERE fact_id = ?", (fact_id,))
            db.execute("DELETE FROM conflicts WHERE old = ? OR new = ?", (fact_id, fact_id))
            if fact.reviewed_at is None:  # a fact the owner never approved leaves no word of its own behind
                drop_unheld_words(state, [fact.text], after)
            after.append(partial(state.vectors.remove, fact_id))
        if state.full:  # does it fit again? Then its vectors are read now
            state.version = None
            with state.reading():
                pass
        return fact

    def set_settings(self, settings: dict | Callable[[dict], dict], client: str = "", note: str = "",
                     undoes: int | None = None) -> dict:
        """The memory's own settings (a Fusion as a dict, and `threshold` when it has its own
        duplicate threshold; or a function of those before that gives them), recorded with those
        before; settings equal to those in use change nothing and record nothing."""
        state = self.state
        with state.writing() as after:
            before = state.settings()
            fusion = settings(before) if callable(settings) else settings
            if fusion == before and undoes is None:  # a value already in use: nothing to record (an undo is always recorded)
                return fusion
            state.set_meta("settings", json.dumps(fusion))
            mode = (fusion.get("review") or {}).get("mode", "after")
            if mode != (before.get("review") or {}).get("mode", "after"):  # pending facts' replacements wait, or apply
                replacing.settle(state.db, mode == "before")
            self.history.record(client, "settings", None, before=before, after=fusion, note=note, undoes=undoes)
            after.append(partial(state.use_settings, fusion))
        return fusion
