"""What the storage answers: rows of facts, and the reads ranking needs (the keyword list, how
many facts hold a term, highlights, the index's own tokens). The vector list is the matrix's
(`VectorIndex.search`). Ranking itself is searching.py's; nothing here ranks.

Every method that reads the file opens `state.reading()`, or runs inside a read or write the
caller holds, so the rows and the matrix come from one snapshot."""

from __future__ import annotations

import logging
import sqlite3
from itertools import islice
from collections.abc import Iterable

from ..facts import (FACT_COLUMNS, MAX_FILTER, MAX_SOURCE, ORDERS, Fact, InvalidInput, NotFound, clean_order, clean_type, decode_cursor,
                    encode_cursor, valid_unicode)
from ..review.history import client_matches
from ..writes.lifecycle import clean_as_of, clean_status, status_filter
from .ranking import idf, information, quote
from ..storage.state import State
from ..storage.term_lists import averages, tokens_of, varint

log = logging.getLogger(__name__)


class Reader:
    def __init__(self, state: State):
        self.state = state

    def open(self) -> None:
        """The temp tables: for "why this rank?", the stemmed tokens of any text by the index's own
        tokenizer; for the term lists (term_lists.py), FTS5's instances and per-term counts."""
        db = self.state.db
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe USING fts5(text, tokenize = 'porter unicode61')")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.probe_terms USING fts5vocab(temp, probe, instance)")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_terms USING fts5vocab(main, facts_fts, instance)")
        db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.fts_rows USING fts5vocab(main, facts_fts, row)")

    # -- rows --------------------------------------------------------------------------

    def get(self, fact_id: int) -> Fact:
        with self.state.reading():
            row = self.state.db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ?", (fact_id,)).fetchone()
        if row is None:
            raise NotFound(f"no fact with id {fact_id}")
        return Fact(*row)

    def get_many(self, ids: Iterable[int]) -> dict[int, Fact]:
        """Inside a read or write the caller holds."""
        ids = list(ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self.state.db.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id IN ({marks})", ids)
        return {row[0]: Fact(*row) for row in rows}

    def count(self) -> int:
        with self.state.reading():
            return self.state.db.execute("SELECT count(*) FROM facts").fetchone()[0]

    def list(
        self,
        type: str | None = None,
        source: str | None = None,
        q: str | None = None,
        limit: int = 50,
        cursor: str | None = None,
        ids: list[int] | None = None,
        order: str | None = None,
        status: str | None = None,
        as_of: str | None = None,
        reviewed: bool | None = None,
        client: str | None = None,
        source_prefix: str | None = None,
    ) -> tuple[list[Fact], str | None, int]:
        """In `order` (ORDERS; newest first by default): (facts, next cursor or None, total
        matching the filters). `status` and `as_of`: lifecycle.status_filter."""
        order = clean_order(order)
        status, as_of = clean_status(status), clean_as_of(as_of)
        column, newest_first = ORDERS[order]
        where, args = [], []
        if ids is not None:
            where.append(f"id IN ({','.join('?' * len(ids))})" if ids else "0")
            args.extend(ids)
        if type:
            where.append("type = ?")
            args.append(clean_type(type))
        if source:
            where.append("source = ?")
            args.append(valid_unicode(source, "source"))
        if q:
            if len(q) > MAX_FILTER:
                raise InvalidInput(f"q is {len(q)} characters; the limit is {MAX_FILTER}, the longest a fact can be")
            valid_unicode(q, "q")
            # instr, not LIKE: nothing to escape, and the Worker's SQLite caps LIKE patterns at 50
            # bytes. Over text_key, the case-folded text exact dedup compares: "CAFÉ" finds "café"
            # (SQLite's lower() folds ASCII only).
            where.append("instr(text_key, ?) > 0")
            args.append(q.casefold())
        if client is not None:  # the facts its adds (still in the history) wrote
            sql, client_args = client_matches(client)
            where.append(f"id IN (SELECT fact_id FROM history WHERE op IN ('add', 'restore') AND {sql})")
            args.extend(client_args)
        if source_prefix:
            if len(source_prefix) > MAX_SOURCE:
                raise InvalidInput(f"source_prefix is longer than {MAX_SOURCE} characters, the longest a source can be")
            where.append("substr(source, 1, ?) = ?")
            args += [len(source_prefix), valid_unicode(source_prefix, "source_prefix")]
        if reviewed is not None:
            where.append("reviewed_at IS NOT NULL" if reviewed else "reviewed_at IS NULL")
        lifecycle, lifecycle_args = status_filter(status, as_of)
        if lifecycle:
            where.append(lifecycle)
            args.extend(lifecycle_args)
        filters = " AND ".join(where) or "1"
        page_where, page_args = filters, list(args)
        # The column and the direction come from ORDERS, never from the request.
        after, direction = ("<", "DESC") if newest_first else (">", "ASC")
        if cursor:
            key, fid = decode_cursor(cursor, order)
            if column == "id":
                page_where += f" AND id {after} ?"
                page_args.append(fid)
            else:
                # A row value, not "a < ? OR (a = ? AND id < ?)": SQLite walks the index from it
                # rather than sorting all that lies past it.
                page_where += f" AND ({column}, id) {after} (?, ?)"
                page_args += [key, fid]
        sort = f"id {direction}" if column == "id" else f"{column} {direction}, id {direction}"
        db = self.state.db
        with self.state.reading():
            total = db.execute(f"SELECT count(*) FROM facts WHERE {filters}", args).fetchone()[0]
            rows = db.execute(
                f"SELECT {FACT_COLUMNS} FROM facts WHERE {page_where} ORDER BY {sort} LIMIT ?",
                [*page_args, limit + 1],
            ).fetchall()
        facts = [Fact(*r) for r in rows[:limit]]
        next_cursor = encode_cursor(facts[-1], order) if len(rows) > limit else None
        return facts, next_cursor, total

    def sources(self) -> list[tuple[str, int]]:
        with self.state.reading():
            return self.state.db.execute(
                "SELECT source, count(*) FROM facts GROUP BY source ORDER BY count(*) DESC").fetchall()

    # -- what ranking reads (inside a read the caller holds) ---------------------------

    def keyword(self, match: str, type: str | None, depth: int, hidden: tuple[int, ...] = ()) -> list[tuple[int, float]]:
        """Top `depth` by BM25 as (id, bm25), lower (better) first, leaving out the `hidden` ids
        before the top is taken: the best depth + len(hidden) hold depth others, if there are."""
        if not match:
            return []
        if not type:  # our own lists, when they hold the query's terms (term_lists.py): the same list
            found = self.state.term_lists.top(match, depth + len(hidden), self.state.committed_seq)
            if found is not None:
                leave = set(hidden)
                return [r for r in found if r[0] not in leave][:depth]
        if type:
            sql = ("SELECT facts_fts.rowid, bm25(facts_fts) AS s FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid"
                   " WHERE facts_fts MATCH ? AND facts.type = ? ORDER BY s, facts_fts.rowid LIMIT ?")
            args: tuple = (match, type, depth + len(hidden))
        else:
            sql = "SELECT rowid, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ? ORDER BY s, rowid LIMIT ?"
            args = (match, depth + len(hidden))
        try:
            if not hidden:
                return self.state.db.execute(sql, args).fetchall()
            leave = set(hidden)
            return list(islice((r for r in self.state.db.execute(sql, args) if r[0] not in leave), depth))
        except sqlite3.OperationalError:
            # The builder quotes every term, so this should not happen; if it does (a damaged
            # index, say), the query still gets its vector results, and /stats says so.
            log.exception("the keyword search failed for MATCH %r: this recall is by vector alone", match)
            self.state.keyword_errors += 1
            return []

    def having(self, term: str) -> int:
        """How many facts hold `term`."""
        held = self.state.term_lists.having(term, self.state.committed_seq)
        if held is not None:
            return held
        return self.state.db.execute(
            "SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?", (quote(term),)).fetchone()[0]

    def term_counts(self, query_terms: list[str], expansions: list[dict] = ()) -> tuple[list[dict], float | None]:
        """Each query term with how many facts hold it and its IDF, as bm25() weighs it, and the
        query's information (their sum; None without terms). An expansion word says its term."""
        if not query_terms:
            return [], None
        rows = self.indexed_rows()
        known = {e["word"]: e for e in expansions}
        having = [known[t]["facts"] if t in known else self.having(t) for t in query_terms]
        counts = [{"term": t, "facts": n, "idf": idf(rows, n), **({"from": known[t]["term"]} if t in known else {})}
                  for t, n in zip(query_terms, having)]
        return counts, information(rows, having)

    def indexed_rows(self) -> int:
        """The row count bm25() itself uses: the first varint of FTS5's averages record (row 1
        of facts_fts_data). One row read, where count(*) walks the table (about 20 ms at 1M)."""
        record = averages(self.state.db)
        return varint(record) if record else 0

    def matching(self, match: str, ids: list[int], columns: str = "rowid") -> list[tuple]:
        """Rows of `ids` that `match` matches (only these: cheap even when the match is broad)."""
        if not match or not ids:
            return []
        marks = ",".join("?" * len(ids))
        return self.state.db.execute(
            f"SELECT {columns} FROM facts_fts WHERE facts_fts MATCH ? AND rowid IN ({marks})", [match, *ids]).fetchall()

    def bm25_rank(self, match: str, fact_id: int, type: str | None,
                  hidden: tuple[str, list] | None = None) -> tuple[float, int] | None:
        """One fact's BM25 for `match` and its rank in the keyword list (the `hidden` ids left
        out), or None if it does not match."""
        db = self.state.db
        row = db.execute("SELECT bm25(facts_fts) FROM facts_fts WHERE facts_fts MATCH ? AND rowid = ?",
                         (match, fact_id)).fetchone()
        if not row:
            return None
        type_sql, type_args = (" AND facts.type = ?", [type]) if type else ("", [])
        if hidden:
            type_sql += f" AND facts_fts.rowid NOT IN ({hidden[0]})"
            type_args += hidden[1]
        bm25 = row[0]
        better = db.execute(
            "SELECT count(*) FROM (SELECT bm25(facts_fts) AS s, facts_fts.rowid AS id FROM facts_fts"
            f" JOIN facts ON facts.id = facts_fts.rowid WHERE facts_fts MATCH ?{type_sql})"
            " WHERE s < ? OR (s = ? AND id < ?)",
            [match, *type_args, bm25, bm25, fact_id],
        ).fetchone()[0]
        return bm25, better + 1

    def fact_terms(self, fact_id: int) -> list[str]:
        """A stored fact's tokens as the index holds them, in order."""
        return [r[0] for r in self.state.db.execute(
            "SELECT term FROM temp.fts_terms WHERE doc = ? ORDER BY offset", (fact_id,))]

    def tokens(self, text: str) -> list[str]:
        """`text` as the FTS index sees it: lower-cased, split and Porter-stemmed."""
        with self.state.lock:
            return tokens_of(self.state.db, [text])[0]
