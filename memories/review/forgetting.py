"""What "forget for good" removes (DELETE /history?fact_id=N), in one write: every history entry
of the fact, and every copy of it in other facts' entries (an add's or a delete's `replaced`, a
delete's `pairs`, whose `differs` quote its words), its proposals, its text in the recall log (the
rows keep its id, marked forgotten), the words of its texts that no fact in the memory holds any
more, and the texts recall keeps the vectors of (text_vectors.py). Then the file: the FTS5 index
merged (a deleted row's terms stay in its segments until then) and the WAL checkpointed, over a
connection that zeroes what it frees (secure_delete), so a secret stored by mistake leaves no
byte in the file or the process (docs/security.md)."""

from __future__ import annotations

import json
import sqlite3

from ..recall.ranking import vocabulary_words
from ..recall.recall_log import RecallLog
from ..storage.state import State
from ..storage.vocabulary import words_of


def forget(state: State, recall_log: RecallLog, fact_id: int) -> int:
    """The history entries removed. Words another fact holds stay; so do a fact's own while it
    is still in the memory (forgetting its past texts only)."""
    db = state.db
    with state.writing() as after:
        texts = [v["text"] for row in db.execute("SELECT before, after FROM history WHERE fact_id = ?", (fact_id,))
                 for v in map(json.loads, filter(None, row)) if isinstance(v, dict) and isinstance(v.get("text"), str)]
        removed = db.execute("DELETE FROM history WHERE fact_id = ?", (fact_id,)).rowcount
        texts += forget_quoted(db, fact_id)
        db.execute("DELETE FROM conflicts WHERE old = ? OR new = ?", (fact_id, fact_id))
        recall_log.forget(fact_id)
        drop_unheld_words(state, texts, after)
        after.append(state.text_vectors.clear)  # recall's kept texts may hold its words
        after.append(state.term_lists.clear)  # ... and the term lists its words' stems
        # FTS5 keeps a deleted row's terms in its segments, marked deleted, until they merge.
        db.execute("INSERT INTO facts_fts (facts_fts) VALUES ('optimize')")
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the frames that held it, out of the WAL
    except sqlite3.Error:  # a reader holds the WAL: its frames go at the next checkpoint
        pass
    return removed


def drop_unheld_words(state: State, texts: list[str], after: list) -> None:
    """The words of `texts` that no fact holds, out of the vocabulary (inside the caller's write;
    the vocabulary read again once it commits)."""
    unheld = [w for w in words_of(texts) if not held(state.db, w)]
    if unheld:
        state.vocab.drop(unheld)
        if not state.full:  # a memory past its budget holds no word: none to read again
            after.append(state.vocab.reload)


def forget_quoted(db, fact_id: int) -> list[str]:
    """The fact as other facts' entries keep it, taken out of them: `before.replaced` (what an add
    replaced, or what a delete gave back) and `before.pairs` (a delete's pairs, whose `differs`
    quote both facts' words). Its texts there. Those entries' undos then leave it as it is."""
    texts = []
    rows = db.execute(
        "SELECT h.id, h.before FROM history h WHERE h.op IN ('add', 'delete') AND h.before IS NOT NULL AND ("
        "EXISTS (SELECT 1 FROM json_each(h.before, '$.replaced') WHERE json_extract(value, '$.id') = :fid) OR "
        "EXISTS (SELECT 1 FROM json_each(h.before, '$.pairs') WHERE json_extract(value, '$.old') = :fid"
        " OR json_extract(value, '$.new') = :fid))", {"fid": fact_id})
    for entry, before in rows.fetchall():
        before = json.loads(before)
        for key, quotes in (("replaced", lambda f: f.get("id") == fact_id),
                            ("pairs", lambda p: fact_id in (p.get("old"), p.get("new")))):
            if key in before:
                texts += [f["text"] for f in before[key] if quotes(f) and isinstance(f.get("text"), str)]
                before[key] = [f for f in before[key] if not quotes(f)]
                if not before[key]:
                    del before[key]
        db.execute("UPDATE history SET before = ? WHERE id = ?", (json.dumps(before, ensure_ascii=False) if before else None, entry))
    return texts


def held(db, word: str) -> bool:
    """Whether a fact holds `word` as the vocabulary counts words: the texts that contain it (its
    case-folded form in text_key) are read and tokenised as vocabulary.py does."""
    rows = db.execute("SELECT text FROM facts WHERE instr(text_key, ?) > 0", (word.casefold(),))
    return any(word in vocabulary_words(text) for (text,) in rows)
