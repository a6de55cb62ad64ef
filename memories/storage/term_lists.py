"""The keyword list from term lists of our own: the facts each index term is in and how often,
read from FTS5 and kept in step with the file, scored with numpy in FTS5's own arithmetic, so
the list is the one `ORDER BY bm25(facts_fts), rowid` gives, ids and scores to the bit.

FTS5's bm25() is an auxiliary function, called once for every row the MATCH finds: at 100k facts
a broad recall spends most of its keyword time there (benchmarks/term_lists_bench.py: 6.1 ms
against 0.75 for the same lists scored here, p50).

A term's list is read the second time a recall asks for it (a word asked once costs no read:
about 0.4 microseconds a posting), with each fact's length in tokens on the first. What is held
is bounded in bytes (MEMORY_TERM_LISTS_BYTES, LIMIT unless set; 0 keeps none), the least
recently used list out first, and counted in /stats' `memory_parts`. The lists follow the change
log that keeps the vector index in step (state.py; every write to a fact's text writes its
vector too), so another process's writes are patched in as this one's are.

What the lists cannot answer, FTS5 answers as before: a type filter, a quoted term that is not
one token (a phrase), a term in more than MOST_POSTINGS facts, a query whose lists are not all
held.
"""

from __future__ import annotations

import logging
import math
import sqlite3
from collections import OrderedDict

import numpy as np

from ..recall.ranking import match_terms
from ..recall.text_vectors import configured

log = logging.getLogger(__name__)

LIMIT = 16 * 1024 * 1024  # about 2.7 million postings: every list of 300k facts of ten words
K1, B = 1.2, 0.75  # fts5Bm25Function's constants
CHUNK = 500  # fact ids a read names at once
STEMS = 10_000  # query terms whose stems, and stems asked once, are remembered
PATCH_MOST = 10_000  # changed facts past which the lists are dropped rather than patched
POSTING = 6  # bytes: an int32 id and a uint16 count
# A term in more facts than this is left to FTS5: scoring its list at once takes tens of MB for
# a moment (at 1M facts a word every fact holds took the peak 36 MB up, past the 1.2 GB floor).
MOST_POSTINGS = 250_000
SCORED = 65_536  # postings scored at a time: each fact's sum is still added phrase by phrase
ENTRY = 400  # bytes a list holds beside its postings: its stem, the map's slot, two arrays' headers


class TermLists:
    """Every method runs inside a read or write the caller holds: the state's lock, and one
    snapshot of the file whose change-log entry is `seq`."""

    def __init__(self, db: sqlite3.Connection, limit: int | None = None):
        self.db = db
        self.limit = configured("MEMORY_TERM_LISTS_BYTES", LIMIT) if limit is None else limit
        self._lists: OrderedDict[str, tuple[np.ndarray, np.ndarray]] = OrderedDict()  # stem: ids, counts
        self._bytes = 0
        self._asked: set[str] = set()  # stems asked for once and not read
        self._stems: dict[str, str | None] = {}  # a quoted term's one token (None: not one)
        self.length = np.zeros(0, np.uint16)  # each fact's tokens, by id (0: no such fact)
        self.seq: int | None = None  # the change log's entry the lists are in step with
        self.hits = 0  # queries the lists answered
        self.misses = 0  # ... and those FTS5 answered, for want of a list
        self.reads = 0  # lists read from FTS5

    def nbytes(self) -> int:
        return self._bytes + self.length.nbytes

    def clear(self) -> None:
        """Hold nothing, nor remember what was asked (a forget for good: no list may outlive a
        forgotten fact's words)."""
        self._drop()
        self._asked.clear()
        self._stems.clear()

    def _drop(self) -> None:
        self._lists.clear()
        self._bytes = 0
        self.length = np.zeros(0, np.uint16)

    def __len__(self) -> int:
        return len(self._lists)

    # -- what recall asks --------------------------------------------------------------

    def top(self, match: str, depth: int, seq: int | None) -> list[tuple[int, float]] | None:
        """The best `depth` for `match` (match_expression's quoted terms, OR-ed) as (id, bm25),
        lower first, ties by id: what FTS5 gives. None when FTS5 must answer."""
        try:
            stems = self._held(match_terms(match), seq)
            record = averages(self.db)
        except sqlite3.Error:
            log.exception("the term lists could not be read: FTS5 answers")
            self._drop()
            self.seq = None
            return None
        if stems is None or not record:
            return None
        # A stem no fact holds adds nothing; with no stem left, no fact matches.
        stems = [s for s in stems if len(self._lists[s][0])]
        if not stems:
            return []
        rows, tokens = varints(record)[:2]
        avgdl = float(tokens) / float(rows)
        scores = np.zeros(len(self.length), np.float64)  # (a fact that matches scores above 0)
        # Phrase by phrase in the MATCH's order, each adding what fts5Bm25Function adds in its
        # order of operations: the same doubles. (A stem twice counts twice, as in FTS5.)
        for stem in stems:
            ids, counts = self._lists[stem]
            idf = math.log((rows - len(ids) + 0.5) / (len(ids) + 0.5))
            idf = idf if idf > 0 else 1e-6
            for at in range(0, len(ids), SCORED):
                part = ids[at : at + SCORED]
                f = counts[at : at + SCORED].astype(np.float64)
                d = self.length[part].astype(np.float64)
                scores[part] += idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / avgdl)))
        ids = np.flatnonzero(scores)
        found = scores[ids]
        if len(ids) > depth:  # every fact scoring at least the depth-th, ties included
            keep = np.flatnonzero(found >= np.partition(found, len(found) - depth)[len(found) - depth])
            ids, found = ids[keep], found[keep]
        order = np.lexsort((ids, -found))[:depth]
        return [(int(i), float(-s)) for i, s in zip(ids[order], found[order])]

    def having(self, term: str, seq: int | None) -> int | None:
        """How many facts hold `term` when its list is held and in step; else None."""
        stem = self._stems.get(term)
        if stem is None or stem not in self._lists or seq is None or not self.limit:
            return None
        self._in_step(seq)
        held = self._lists.get(stem)
        return None if held is None else len(held[0])

    # -- reading the lists -------------------------------------------------------------

    def _held(self, terms: list[str], seq: int | None) -> list[str] | None:
        """The stems of `terms` with every one's list held (read now when each was asked for
        before and they fit), or None."""
        if seq is None or not self.limit or not terms:
            return None
        self._in_step(seq)
        stems = self._stem(terms)
        if stems is None:
            return None
        for s in stems:
            if s in self._lists:
                self._lists.move_to_end(s)
        missing = [s for s in dict.fromkeys(stems) if s not in self._lists]
        if missing:
            first = [s for s in missing if s not in self._asked]
            if len(self._asked) + len(first) > STEMS:
                self._asked.clear()
            self._asked.update(missing)
            # (Reading may push out a list the query holds: then FTS5 answers it.)
            if first or not self._read(missing) or any(s not in self._lists for s in stems):
                self.misses += 1
                return None
        self.hits += 1
        return stems

    def _read(self, missing: list[str]) -> bool:
        """Read the lists of `missing` from FTS5 (and the lengths, the first time); False (and
        none kept) when they would not fit."""
        for stem in missing:  # (FTS5's count walks the term's doclist: a read of its list costs far more)
            held = self.db.execute("SELECT doc FROM temp.fts_rows WHERE term = ?", (stem,)).fetchone()
            if held and held[0] > MOST_POSTINGS:
                return False
        if not len(self.length) and not self._read_lengths():
            return False
        lists = {}
        for stem in missing:
            docs = np.fromiter((r[0] for r in self.db.execute("SELECT doc FROM temp.fts_terms WHERE term = ?", (stem,))), np.int64)
            ids, counts = np.unique(docs, return_counts=True)  # (FTS5 gives an instance a row)
            # (a fact of MAX_TEXT characters holds far fewer than 65,536 tokens)
            lists[stem] = (ids.astype(np.int32), counts.astype(np.uint16))
        if self.length.nbytes + sum(size(i) for i, _ in lists.values()) > self.limit:
            return False
        for stem, held in lists.items():
            self._put(stem, held)
        self.reads += len(lists)
        return True

    def _put(self, stem: str, held: tuple[np.ndarray, np.ndarray]) -> None:
        old = self._lists.pop(stem, None)
        if old is not None:
            self._bytes -= size(old[0])
        self._lists[stem] = held
        self._bytes += size(held[0])
        while self._lists and self._bytes + self.length.nbytes > self.limit:
            _, (ids, _counts) = self._lists.popitem(last=False)
            self._bytes -= size(ids)

    def _read_lengths(self) -> bool:
        """Each fact's tokens, from FTS5's docsize rows; False when its ids run too high for
        the array to be worth holding (a restore from a sparse backup, say)."""
        top = self.db.execute("SELECT max(id) FROM facts_fts_docsize").fetchone()[0] or 0
        if self._too_high(top):
            return False
        self.length = np.zeros(top + 1, np.uint16)
        for fid, sz in self.db.execute("SELECT id, sz FROM facts_fts_docsize"):
            self.length[fid] = sz[0] if sz[0] < 0x80 else varints(sz)[0]
        return True

    def _too_high(self, top: int) -> bool:
        """Ids up to `top` would take the lengths past half the bound, or past an int32."""
        return (top + 1) * 2 > self.limit // 2 or top >= 2**31

    def _stem(self, terms: list[str]) -> list[str] | None:
        """Each term's one token, by the index's own tokenizer; None if a term is not one."""
        unknown = list(dict.fromkeys(t for t in terms if t not in self._stems))
        if unknown:
            if len(self._stems) + len(unknown) > STEMS:
                self._stems.clear()
            for term, tokens in zip(unknown, tokens_of(self.db, unknown)):
                self._stems[term] = tokens[0] if len(tokens) == 1 else None
        stems = [self._stems.get(t) for t in terms]
        return None if None in stems else stems

    # -- keeping them in step ----------------------------------------------------------

    def _in_step(self, seq: int) -> None:
        """Patch the lists with the facts the change log names after our entry, or drop them when
        it no longer reaches back to it or names too many."""
        if self.seq == seq:
            return
        if self.seq is not None and (self._lists or len(self.length)):
            first = self.db.execute("SELECT min(seq) FROM vector_changes").fetchone()[0]
            changed = ([r[0] for r in self.db.execute(
                "SELECT DISTINCT fact_id FROM vector_changes WHERE seq > ? AND seq <= ? ORDER BY fact_id", (self.seq, seq))]
                if first is not None and first <= self.seq else None)
            if changed is None or len(changed) > PATCH_MOST:
                self._drop()
            elif changed:
                self._patch(changed)
        else:
            self._drop()
        self.seq = seq

    def _patch(self, changed: list[int]) -> None:
        """Each changed fact out of every list, and back into its terms' lists from its text now."""
        now: dict[int, list[str]] = {}
        for i in range(0, len(changed), CHUNK):
            part = changed[i : i + CHUNK]
            rows = self.db.execute(f"SELECT id, text FROM facts WHERE id IN ({','.join('?' * len(part))})", part).fetchall()
            now.update(zip((r[0] for r in rows), tokens_of(self.db, [r[1] for r in rows])))
        gone = np.array(changed, np.int64)
        if len(self.length):
            if max(changed) >= len(self.length):
                if self._too_high(max(changed)):
                    self._drop()
                    return
                grown = np.zeros(max(max(changed) + 1, len(self.length) * 5 // 4), np.uint16)
                grown[: len(self.length)] = self.length
                self.length = grown
            self.length[gone] = 0
            for fid, tokens in now.items():
                self.length[fid] = len(tokens)
        added: dict[str, dict[int, int]] = {}
        for fid, tokens in now.items():
            for token in tokens:
                if token in self._lists:
                    counts = added.setdefault(token, {})
                    counts[fid] = counts.get(fid, 0) + 1
        for stem in list(self._lists):
            ids, counts = self._lists[stem]
            at = np.searchsorted(ids, gone)
            there = at[(at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == gone)] if len(ids) else at[:0]
            new = added.get(stem)
            if not len(there) and not new:
                continue
            ids, counts = np.delete(ids, there), np.delete(counts, there)
            if new:
                ids = np.concatenate([ids, np.fromiter(new, np.int32, len(new))])
                counts = np.concatenate([counts, np.fromiter(new.values(), np.uint16, len(new))])
                order = np.argsort(ids, kind="stable")
                ids, counts = ids[order], counts[order]
            if len(ids):
                self._put(stem, (ids, counts))
            else:  # no fact holds it now
                self._bytes -= size(self._lists.pop(stem)[0])


def averages(db: sqlite3.Connection) -> bytes:
    """FTS5's averages record (row 1 of facts_fts_data): its row count, then each column's total
    tokens, the N and avgdl of bm25(); b"" for an index that never held a row."""
    row = db.execute("SELECT block FROM facts_fts_data WHERE id = 1").fetchone()
    return row[0] if row and row[0] else b""


def tokens_of(db: sqlite3.Connection, texts: list[str]) -> list[list[str]]:
    """Each text's tokens in order, by the index's own tokenizer, through reading.Reader.open's
    probe table (inside the engine's lock). Only the temp database is written, statement by
    statement, so a read that calls this never waits on or blocks another process's writer."""
    out: list[list[str]] = [[] for _ in texts]
    db.executemany("INSERT INTO temp.probe (rowid, text) VALUES (?, ?)", enumerate(texts, 1))
    try:
        for doc, term in db.execute("SELECT doc, term FROM temp.probe_terms ORDER BY doc, offset"):
            out[doc - 1].append(term)
    finally:
        db.execute("DELETE FROM temp.probe")
    return out


def size(ids: np.ndarray) -> int:
    """The bytes a list of these ids holds."""
    return len(ids) * POSTING + ENTRY


def varint(data: bytes) -> int:
    """SQLite's variable-length integer (as FTS5 writes it): big-endian 7-bit groups with a
    continuation bit, the ninth byte whole."""
    value = 0
    for i, byte in enumerate(data[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value
    return value


def varints(data: bytes) -> list[int]:
    """Every varint in `data`, in order (FTS5's averages record holds its row count, then the
    tokens of each column). Nine bytes at most each, as `varint` reads them."""
    out = []
    while data:
        out.append(varint(data))
        data = data[next((i + 1 for i, byte in enumerate(data[:8]) if byte < 0x80), 9):]
    return out
