"""The write path: add, import, edit, delete and reindex, each with dedup-on-write.

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

from .codes import encode, exact_all
from .dedup import distinct
from .facts import (FACT_COLUMNS, NEAR_CANDIDATES, AddResult, AlreadyUndone, ChangedSince, Conflict, Fact, IdTaken, InvalidInput,
                    Item, MemoryFull, NotFound, UndoRefused, clean_id_named, clean_items, clean_source, clean_text, clean_time,
                    clean_type, now, text_key)
from . import replacing
from .lifecycle import PROPOSE, PROPOSE_MOST, PROPOSING, differences, hidden, is_current, proposals
from .pairs import MARGIN
from .reviewing import clean_ids, reviewed_by
from .forgetting import drop_unheld_words
from .history import Entry, History
from .reading import Reader
from .state import State, to_blob
from .vectors import LOAD_BATCH, TYPE_CODE, TYPES, VectorIndex
from .vocabulary import words_of


REINDEX_BATCH = 256  # facts embedded at a time by reindex
RESTORED = "from a backup: stored as it was, without the duplicate check"
RESTORED_PAIR = "from a backup: the pair as it was resolved"


class RolledBack(Exception):
    """A dry run's end: the write's transaction is rolled back, and nothing of it applied."""
CHANGED_FIELDS = ("text", "type", "source", "valid_until", "superseded_by")  # what an undo puts back, so what it would overwrite
UNSET = object()  # an edit's field not given (None clears valid_until and superseded_by)
CURRENT = "(valid_until IS NULL OR valid_until > ?)"


class Writer:
    def __init__(self, state: State, reader: Reader, history: History):
        self.state = state
        self.reader = reader
        self.history = history

    def add_many(self, items: list[dict], client: str = "", restore: bool = False, dry_run: bool = False,
                 note: str = "") -> list[AddResult]:
        """Store facts with dedup-on-write; each fact is all or nothing, the batch one commit.
        An item's id, created_at and updated_at put back one that was deleted or exported;
        `restore` stores each as given, with no dedup (a backup into an empty memory: what was
        there, force-stored near duplicates and all). `dry_run`: every check and every answer
        as if stored, then nothing kept (the transaction rolled back, the index untouched).
        `note`: each history entry's (an import names its file)."""
        clean = clean_items(items)
        if clean and self.state.full:  # before the model is asked
            raise MemoryFull(self.state.full)
        return self._store(clean, *self._embed_facts([c.text for c in clean]), client=client, restore=restore,
                           note=note or (RESTORED if restore else ""), dry_run=dry_run)

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

    # -- dedup -------------------------------------------------------------------------

    def _exact_duplicate(self, text: str, type: str, exclude: int | None = None,
                         leave: tuple[int, ...] = ()) -> tuple[int, str, float] | None:
        """A current same-type fact with the same text (ignoring case), but those in `leave`."""
        marks = ",".join("?" * len(leave))
        row = self.state.db.execute(
            f"SELECT id FROM facts WHERE type = ? AND text_key = ? AND id IS NOT ? AND {CURRENT} AND id NOT IN ({marks}) LIMIT 1",
            (type, text_key(text), exclude, now(), *leave),
        ).fetchone()
        return (row[0], "exact", 1.0) if row else None

    def _replaced_duplicate(self, text: str, type: str) -> tuple[int, str, float] | None:
        """A replaced same-type fact with the same text: the write answers it rather than storing
        what was true before again (with `supersedes`, the client says it is true again)."""
        row = self.state.db.execute(
            "SELECT id FROM facts WHERE type = ? AND text_key = ? AND superseded_by IS NOT NULL ORDER BY id DESC LIMIT 1",
            (type, text_key(text))).fetchone()
        return (row[0], "replaced", 1.0) if row else None

    def _current_closest(self, ids: np.ndarray, scores: np.ndarray, floor: float, leave: tuple[int, ...],
                         most: int) -> tuple[dict[int, Fact], list[tuple[int, float]]]:
        """Of the same-type facts `ids` with their cosines `scores`, those at or above `floor` and
        not in `leave`, best score first, then lowest id: the facts read, and the first `most`
        current ones as (id, cosine). Rows are read a few at a time: a crowd is mostly current,
        and a batch's own neighbours can be hundreds."""
        keep = (scores >= floor) & ~np.isin(ids, np.array(leave, dtype=np.int64))
        ids, scores = ids[keep], scores[keep]
        order = np.lexsort((ids, -scores))
        closest = list(zip(ids[order].tolist(), scores[order].tolist()))
        facts: dict[int, Fact] = {}
        current: list[tuple[int, float]] = []
        for start in range(0, len(closest), 4 * most):
            part = closest[start : start + 4 * most]
            facts |= self.reader.get_many(fid for fid, _ in part)
            current += [(fid, s) for fid, s in part if fid in facts and is_current(facts[fid].valid_until, "")]
            if len(current) >= most:
                break
        return facts, current[:most]

    def _near_among(self, text: str, ids: np.ndarray, scores: np.ndarray,
                    leave: tuple[int, ...] = ()) -> tuple[int, str, float] | None:
        """Of the same-type facts `ids` with their cosines `scores`, the first current one at or
        above the threshold that says the same thing (best score first, then lowest id): one that
        differs in a number, date, name or negation is another fact (dedup.py)."""
        facts, near = self._current_closest(ids, scores, self.state.threshold, tuple(leave), NEAR_CANDIDATES)
        return next(((fid, "near", s) for fid, s in near if distinct(text, facts[fid].text) is None), None)

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
    def _review_before(self) -> bool:
        return self.state.review["mode"] == "before"

    def _proposals(self, fid: int, text: str, ids: np.ndarray, scores: np.ndarray, leave: tuple[int, ...]) -> tuple[dict, ...]:
        """The current facts the new fact `fid` may replace (lifecycle.proposals), each kept in
        `conflicts` inside the write and answered with what differs."""
        facts, near = self._current_closest(ids, scores, PROPOSE, (*leave, fid), PROPOSE_MOST)
        out = []
        for old, score in proposals(near, {i for i, _ in near}):
            differs = differences(facts[old].text, text)
            self.state.db.execute("INSERT OR IGNORE INTO conflicts (old, new, score, differs) VALUES (?, ?, ?, ?)",
                                  (old, fid, round(score, 6), json.dumps(differs, ensure_ascii=False)))
            out.append({"id": old, "fact": facts[old].to_dict(), "score": round(score, 6), "differs": differs})
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
               dry_run: bool = False, also: Callable[[], object] | None = None) -> list[AddResult]:
        """`restore`: no dedup and no proposals; a fact whose id is in use is still refused (IdTaken).
        `dry_run`: all of it, then rolled back. `also`: more of the same write, after the facts."""
        state = self.state
        results: list[AddResult] = []
        try:
            with state.lock, state.writing() as after:
                self._store_in(after, clean, vectors, words, results, client, op, note, undoes, restore)
                if also:
                    also()
                if dry_run:
                    raise RolledBack
        except RolledBack:
            pass
        return results

    def _store_in(self, after: list, clean: list[Item], vectors: np.ndarray, words: dict[str, np.ndarray],
                  results: list[AddResult], client: str, op: str, note: str, undoes: int | None, restore: bool) -> None:
        """The body of `_store`, inside its write: each result appended to `results`."""
        state, db = self.state, self.state.db
        # Each type's new facts against that type's stored rows, one scan of its codes a
        # type: it serves the near-dedup check, the pairs kept for review and the proposals.
        # One fact's proposals need only its closest few down to PROPOSE (`top`), not every fact
        # that far; a batch's share one scan, down to PROPOSE for all.
        low = min(state.floor, state.threshold)
        types = [c.type for c in clean]
        prior: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for t in set(types):
            mine = [i for i, u in enumerate(types) if u == t]
            top = None
            if t in PROPOSING and not restore:
                leave = clean[mine[0]].supersedes if len(mine) == 1 else ()
                top = (PROPOSE, PROPOSE_MOST + len(leave) + 1, [*self._stale(), *leave])  # (+1: a near duplicate stored over)
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
            dup = None if restore else self._exact_duplicate(text, type, leave=item.supersedes)
            if not dup and not restore:
                near = self._near_among(text, near_ids, near_scores, item.supersedes)
                dup = None if item.force else near
            if not dup and not restore and not item.supersedes:
                dup = self._replaced_duplicate(text, type)
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
                replacing.replace(db, old.id, fid, self._review_before)
            # (a near duplicate stored over with `force` is the same fact, not one it replaces)
            leave = (*item.supersedes, *([near[0]] if near else []))
            conflicts = () if restore or type not in PROPOSING else self._proposals(fid, text, near_ids, near_scores, leave)
            fact = Fact(fid, text, type, item.source, created_at, updated_at, item.valid_until, superseded_by, reviewed_at)
            why = note
            if near:  # (an import's note, naming its file, stays first)
                why = (why + "; " if why else "") + f"stored though a near duplicate of #{near[0]} ({near[2]:.3f}): the client's decision"
            if replaced:
                why = (why + "; " if why else "") + "replaces " + ", ".join(f"#{i}" for i in replaced)
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
                row = db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ?", (fact_id,)).fetchone()
                if row is None:
                    raise NotFound(f"no fact with id {fact_id}")
                current = Fact(*row)
                new_text = current.text if text is None else text
                new_type = current.type if type is None else type
                new_source = current.source if source is None else source
                own = db.execute("SELECT own_valid_until FROM facts WHERE id = ?", (fact_id,)).fetchone()[0]
                if undo_of is not None:
                    new_valid, own, new_by = self._undone_validity(current, own, undo_of)
                else:
                    new_valid, own, new_by = self._validity(current, own, valid_until, superseded_by)
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
                    dup = self._exact_duplicate(new_text, new_type, fact_id) or (similar and self._near_among(new_text, *similar))
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
                replacing.settle(db, self._review_before, [fact_id, *([new_by] if new_by is not None else [])])
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

    def _validity(self, fact: Fact, own: str | None, valid_until: object,
                  superseded_by: object) -> tuple[str | None, str | None, int | None]:
        """An edit's (valid_until, own_valid_until, superseded_by) for `fact`, checked inside the
        write (replacing.check). A replaced fact's valid_until is then settled from its own."""
        new_valid, new_by = fact.valid_until, fact.superseded_by
        if superseded_by is None and new_by is not None:  # no longer replaced: its own end back
            new_valid, own, new_by = own, None, None
        elif superseded_by not in (UNSET, None, new_by):
            replacing.check(self.state.db, fact, superseded_by, self.reader.get_many([superseded_by]).get(superseded_by))
            own, new_by = fact.valid_until, superseded_by
        if valid_until is not UNSET:
            if valid_until is not None and valid_until < fact.created_at:
                raise InvalidInput("valid_until must not be before the fact's created_at")
            if new_by is None:
                new_valid = valid_until
            else:
                own = valid_until
        return new_valid, own, new_by

    def _undone_validity(self, fact: Fact, own: str | None, entry: Entry) -> tuple[str | None, str | None, int | None]:
        """What an undo of edit `entry` puts back of the fact's validity: its end, or the fact that
        replaced it, again only where a write could (UndoRefused says why not, `force` or not)."""
        was_valid, was_by = entry.before.get("valid_until"), entry.before.get("superseded_by")
        if was_by is None:  # not replaced then: its end as it was
            return was_valid, None, None
        if was_by == fact.superseded_by:
            return fact.valid_until, own, was_by
        try:
            replacing.check(self.state.db, fact, was_by, self.reader.get_many([was_by]).get(was_by))
        except InvalidInput as e:
            raise UndoRefused(f"history entry {entry.id} cannot be undone: fact {fact.id} would be replaced by fact {was_by}, "
                              f"and {e}") from None
        return fact.valid_until, fact.valid_until, was_by

    def set_resolution(self, old: int, new: int, resolution: str | None, client: str = "", note: str = "",
                       undoes: int | None = None) -> int:
        """Mark the pair (old, new) as `resolution` ('keep_both', or None: open again), one history
        entry ("resolve"); the pair's row is made when no write proposed it. The entry's id."""
        state, db = self.state, self.state.db
        with state.writing():
            facts = self.reader.get_many([old, new])
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
            return self.history.record(client, "resolve", new, before=before, after=before | {"resolution": resolution},
                                       note=note, undoes=undoes)

    def restore_pairs(self, pairs: list[dict], client: str = "") -> tuple[int, int]:
        """Put back a backup's pairs (lifecycle.clean_pair's), in one write: (restored, skipped)."""
        with self.state.writing():
            restored = self._put_pairs(pairs, client, RESTORED_PAIR)
        return restored, len(pairs) - restored

    def pairs_of(self, fact_id: int | None = None) -> list[dict]:
        """The pairs fact `fact_id` is in (what its delete takes with it), or every pair kept (an
        export), oldest first, as a backup holds them. (A pair goes with either of its facts.)"""
        where, args = ("old = ? OR new = ?", (fact_id, fact_id)) if fact_id is not None else ("1", ())
        rows = self.state.db.execute(f"SELECT id, old, new, score, differs, resolution FROM conflicts WHERE {where} ORDER BY id",
                                     args).fetchall()
        return [{"id": r[0], "old": r[1], "new": r[2], "score": r[3], "differs": json.loads(r[4]), "resolution": r[5]} for r in rows]

    def _put_pairs(self, pairs: list[dict], client: str, note: str | None) -> int:
        """Inside a write: each pair whose facts are here and whose pair and id are free, stored as
        it was; how many. With a `note`, each "keep_both" is a `resolve` entry (its undo opens the
        pair again), as the owner's resolution is; without, the caller's entry covers them."""
        db, put = self.state.db, 0
        for p in pairs:
            here = db.execute("SELECT count(*) FROM facts WHERE id IN (?, ?)", (p["old"], p["new"])).fetchone()[0] == 2
            taken = db.execute("SELECT 1 FROM conflicts WHERE (old = ? AND new = ?) OR id = ?", (p["old"], p["new"], p["id"])).fetchone()
            if not here or taken:
                continue
            db.execute("INSERT INTO conflicts (id, old, new, score, differs, resolution) VALUES (?, ?, ?, ?, ?, ?)",
                       (p["id"], p["old"], p["new"], p["score"], json.dumps(p["differs"], ensure_ascii=False), p["resolution"]))
            if p["resolution"] and note is not None:
                pair = {"old": p["old"], "new": p["new"]}
                self.history.record(client, "resolve", p["new"], before=pair | {"resolution": None},
                                    after=pair | {"resolution": p["resolution"]}, note=note)
            put += 1
        return put

    def review(self, ids: object, client: str = "", note: str = "") -> tuple[list[int], int | None]:
        """The owner reviewed these facts (POST /facts/review): each not yet reviewed is, now, in
        one write and one history entry. (the ids reviewed, the entry or None when none was)."""
        ids = clean_ids(ids)
        db = self.state.db
        with self.state.writing():
            marks = ",".join("?" * len(ids))
            found = dict(db.execute(f"SELECT id, reviewed_at FROM facts WHERE id IN ({marks})", ids).fetchall())
            unknown = [i for i in ids if i not in found]
            if unknown:
                raise InvalidInput(f"ids name facts that do not exist: {', '.join(map(str, unknown[:10]))}")
            todo = [i for i in ids if found[i] is None]
            if not todo:
                return [], None
            at = now()
            db.execute(f"UPDATE facts SET reviewed_at = ? WHERE id IN ({','.join('?' * len(todo))})", [at, *todo])
            replacing.settle(db, self._review_before, todo)  # what they replace waited for this
            entry = self.history.record(client, "review", None, before={"ids": todo}, after={"ids": todo, "reviewed_at": at},
                                        note=note or f"{len(todo)} reviewed")
        return todo, entry

    def unreview(self, entry: Entry, client: str, note: str) -> None:
        """The undo of a review entry: its facts that still hold what it left get what was before
        (a review's: unreviewed again; the undo of one: reviewed again, at the time they were)."""
        ids, left, was = entry.after["ids"], entry.after["reviewed_at"], entry.before.get("reviewed_at")
        with self.state.writing():
            self.state.db.execute(f"UPDATE facts SET reviewed_at = ? WHERE reviewed_at IS ? AND id IN ({','.join('?' * len(ids))})",
                                  [was, left, *ids])
            replacing.settle(self.state.db, self._review_before, ids)
            self.history.record(client, "review", None, before=entry.after, after={"ids": ids, "reviewed_at": was},
                                note=note, undoes=entry.id)

    def delete(self, fact_id: int, client: str = "", note: str = "", undoes: int | None = None) -> Fact:
        """Remove the row, its FTS entry and its vector together; returns what was removed. The
        facts it replaced are current again, with their own validity (none is left replaced by a
        fact that is not there). The history keeps the whole fact, the pairs it was in and the
        facts it replaced, so the delete can be undone."""
        state, db = self.state, self.state.db
        with state.writing() as after:
            fact = self.reader.get(fact_id)
            pairs = self.pairs_of(fact_id)  # its contradictions, open or resolved: an undo puts them back
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
                [result] = self._store(clean_items([b]), *self._embed_facts([b["text"]]), client=client, op="restore",
                                       note=note, undoes=entry_id, restore=True,
                                       also=partial(self._rejoin, b["id"], b.get("pairs", []), b.get("replaced", []), client))
                fact = self.reader.get(result.fact.id)
            elif entry.op in ("edit",):
                b = entry.before
                fact = self.edit(entry.fact_id, text=b["text"], type=b["type"], source=b["source"], client=client,
                                 note=note, undoes=entry_id, undo_of=entry)
            elif entry.op in ("add", "restore"):
                fact = self.delete(entry.fact_id, client=client, note=note, undoes=entry_id)
            elif entry.op == "review":
                self.unreview(entry, client, note)
                fact = None
            elif entry.op == "resolve":
                b = entry.before
                self.set_resolution(b["old"], b["new"], b["resolution"], client=client, note=note, undoes=entry_id)
                fact = None
            else:  # settings
                fact = None
                self.set_settings(entry.before, client=client, note=note, undoes=entry_id)
            return self.history.entry(self.history.entry(entry_id).undone_by), fact, True

    def _rejoin(self, fid: int, pairs: list[dict], replaced: list[dict], client: str) -> None:
        """Inside the write that puts a deleted fact back: its pairs, the facts it replaced (each
        still current and not replaced since: replaced again), and itself current again if the
        fact that replaced it is gone."""
        db, before = self.state.db, self._review_before
        self._put_pairs(pairs, client, None)
        fact = self.reader.get(fid)
        if fact.superseded_by is not None:
            if fact.superseded_by in self.reader.get_many([fact.superseded_by]):
                replacing.settle(db, before, [fact.superseded_by])
            else:
                replacing.unreplace(db, [fid])
        fact = self.reader.get(fid)
        for r in replaced:
            old = self.reader.get_many([r["id"]]).get(r["id"])
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
            fact = self.reader.get(entry.fact_id)  # gone since: NotFound, as before
            now_holds = {k: getattr(fact, k) for k in CHANGED_FIELDS}
            left = {k: entry.after.get(k) for k in CHANGED_FIELDS}
            if entry.op == "add":  # and the facts it replaced are still replaced by it
                for r in (entry.before or {}).get("replaced", []):
                    still = self.reader.get_many([r["id"]]).get(r["id"])
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

    def reindex(self) -> dict:
        """Rebuild the FTS index and every vector from the rows (after a model change, say)."""
        state, db = self.state, self.state.db
        select = "SELECT id, text, type FROM facts ORDER BY id"
        with state.reading():
            rows = db.execute(select).fetchall()
        state.ensure_room_anew(dict(Counter(r[2] for r in rows)), words_of([r[1] for r in rows]))
        # The model outside the lock, a batch at a time: reads and other writes go on meanwhile,
        # and a fact written meanwhile is embedded below, under the lock.
        embedded: dict[tuple[int, str], np.ndarray] = {}
        for i in range(0, len(rows), REINDEX_BATCH):
            part = rows[i : i + REINDEX_BATCH]
            embedded.update(zip(((r[0], r[1]) for r in part), state.embed([r[1] for r in part])))
        vocabulary = word_vectors(state, words_of([r[1] for r in rows]), {})
        with state.writing() as after:
            rows = db.execute(select).fetchall()  # it may have written meanwhile
            missing = [r for r in rows if (r[0], r[1]) not in embedded]
            if missing:
                embedded.update(zip(((r[0], r[1]) for r in missing), state.embed([r[1] for r in missing])))
            vectors = [embedded[r[0], r[1]] for r in rows]
            db.execute("DELETE FROM facts_fts")
            db.execute("DELETE FROM vectors")
            db.executemany("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", [(r[0], r[1]) for r in rows])
            db.executemany(
                "INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
                [(r[0], state.model, len(v), to_blob(v)) for r, v in zip(rows, vectors)],
            )
            index = VectorIndex(state.dims, state.read_vectors)
            for i in range(0, len(rows), LOAD_BATCH):
                part = rows[i : i + LOAD_BATCH]
                index.extend(np.array([r[0] for r in part], dtype=np.int64), np.array([TYPE_CODE[r[2]] for r in part], dtype=np.int8),
                             *encode(np.array(vectors[i : i + LOAD_BATCH])))
            rebuild_pairs(state, index)
            words = words_of([r[1] for r in rows])
            vocabulary = word_vectors(state, words, vocabulary)
            rebuild_vocabulary(state, words, np.array([vocabulary[w] for w in words]).reshape(len(words), -1))
            after.append(partial(setattr, state, "vectors", index))
            after.append(partial(setattr, state, "full", None))  # it fits: ensure_room_anew said so
        return {"facts": len(rows), "fts": len(rows), "vectors": len(rows), "model": state.model}


def word_vectors(state: State, words: list[str], have: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """`have`, and vectors for those `words` it lacks (each word embedded alone, as a query term is)."""
    lacking = [w for w in words if w not in have]
    return have | dict(zip(lacking, state.embed(lacking))) if lacking else have


def rebuild_pairs(state: State, index: VectorIndex) -> None:
    """Every pair at the floor from `index` (inside a write)."""
    state.pairs.clear()
    for t in TYPES:
        state.pairs.put_all(t, *index.pairs(t, state.floor))
    state.set_meta("pairs_floor", state.floor)
    state.set_meta("pairs_model", state.model)


def rebuild_vocabulary(state: State, words: list[str], vectors: np.ndarray) -> None:
    """The vocabulary as exactly `words` (inside a write)."""
    state.vocab.clear()
    state.vocab.add(words, vectors)
    state.set_meta("words_model", state.model)
