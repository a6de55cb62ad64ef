// What the memory holds, read (memories/recall/reading.py): its rows (get, list, count) and the
// keyword reads the ranking asks for: the BM25 list, how many facts hold a term, which rows a
// query matches, and a text's tokens as the FTS index sees them.

import { byKey } from "../storage/by_key";
import { FACT_COLUMNS, type Fact, MAX_SOURCE, MAX_TEXT, ORDERS, asFact, chars, cleanOrder, cleanType, decodeCursor, encodeCursor } from "../facts";
import { clientMatches } from "../review/history";
import { invalid, notFound, wellFormed } from "../serving/http";
import { keywordTop } from "./keyword_top";
import { type Clause, cleanAsOf, cleanStatus, statusFilter } from "../writes/lifecycle";
import { casefold } from "../text";
import { idf, information } from "./ranking";
import type { Expansion } from "./searching";
import { Part } from "../storage/state";
import { factCount, having } from "../storage/term_counts";
import { type FactType, TYPES } from "../storage/vectors";

const JOINED_COLUMNS = FACT_COLUMNS.split(", ").map((c) => `t.${c}`).join(", ");  // a fact's, as by_key.ts names its table

export class Reader extends Part {
  health() {
    const full = this.state.full;
    return { ok: true, facts: this.count(), model: this.embedder.model, dims: this.embedder.dims, mode: full ? "keyword-only" : "hybrid",
      memory_full: full !== null, ...(full ? { warning: full } : {}), engine: "worker",
      // The model's calls in flight (embedder.ts Watched): a write the client gave up on may be waiting there.
      embedding: this.embedder.waiting?.() ?? { calls: 0, waiting_ms: 0 } };
  }

  count(): number {
    return factCount(this.sql);  // a row a type, not a row a fact (term_counts.ts)
  }

  get(id: number): Fact {
    const rows = this.sql.exec(`SELECT ${FACT_COLUMNS} FROM facts WHERE id = ?`, id).toArray();
    if (!rows.length) throw notFound(`no fact with id ${id < 0 ? "past 2^63" : id}`);
    return asFact(rows[0]);
  }

  getMany(ids: Iterable<number>): Map<number, Fact> {
    const out = new Map<number, Fact>();
    for (const r of byKey(this.sql, JOINED_COLUMNS, "facts", "id", [...ids])) out.set(r.id as number, asFact(r));
    return out;
  }

  /** In `order` (ORDERS; newest first by default), as reading.py's `list`; `status` and `asOf`
   * as lifecycle.ts `statusFilter` says; `reviewed` (the owner's review, or not), `client` (the
   * facts a client's adds and restores wrote, with or without its version) and `sourcePrefix`. */
  list(type: string | null, source: string | null, q: string | null, limit: number, cursor: string | null, ids: number[] | null = null,
    orderParam: string | null = null, status: string | null = null, asOf: string | null = null, reviewed: boolean | null = null,
    client: string | null = null, sourcePrefix: string | null = null) {
    const order = cleanOrder(orderParam);
    const [column, newestFirst] = ORDERS[order];
    const [lifecycle, lifecycleArgs]: Clause = statusFilter(cleanStatus(status), cleanAsOf(asOf));
    const where: string[] = lifecycle ? [lifecycle] : [];
    const args: SqlStorageValue[] = [...lifecycleArgs];
    if (ids !== null) {
      // One binding for up to 100 ids: with the other filters they would pass the object's 100 a statement.
      where.push("id IN (SELECT value FROM json_each(?))");
      args.push(JSON.stringify(ids));
    }
    if (type) { where.push("type = ?"); args.push(cleanType(type)); }
    if (source) { where.push("source = ?"); args.push(wellFormed(source, "source")); }
    if (q) {
      // No fact is longer than MAX_TEXT, so no longer substring can match (and SQLite caps a LIKE pattern).
      if (chars(q) > MAX_TEXT) throw invalid(`q is ${chars(q)} characters; the limit is ${MAX_TEXT}, the longest a fact can be`);
      wellFormed(q, "q");
      // instr, not LIKE: the object's SQLite caps a LIKE pattern at 50 bytes. Over text_key, the
      // case-folded text (Python's casefold, text.ts), so "CAFÉ" finds "café" on both memories.
      where.push("instr(text_key, ?) > 0");
      args.push(casefold(q));
    }
    if (client !== null) {  // the facts its adds (still in the history) wrote
      const [sql, clientArgs] = clientMatches(client);
      where.push(`id IN (SELECT fact_id FROM history WHERE op IN ('add', 'restore') AND ${sql})`);
      args.push(...clientArgs);
    }
    if (sourcePrefix) {
      if (chars(sourcePrefix) > MAX_SOURCE) throw invalid(`source_prefix is longer than ${MAX_SOURCE} characters, the longest a source can be`);
      where.push("substr(source, 1, ?) = ?");
      args.push(chars(sourcePrefix), wellFormed(sourcePrefix, "source_prefix"));
    }
    if (reviewed !== null) where.push(reviewed ? "reviewed_at IS NOT NULL" : "reviewed_at IS NULL");
    const filters = where.join(" AND ") || "1";
    let pageWhere = filters;
    const pageArgs = [...args];
    // The column and the direction come from ORDERS, never from the request.
    const [after, direction] = newestFirst ? ["<", "DESC"] : [">", "ASC"];
    if (cursor) {
      const [key, id] = decodeCursor(cursor, order);
      if (column === "id") {
        pageWhere += ` AND id ${after} ?`;
        pageArgs.push(id);
      } else {
        // A row value, as reading.py: SQLite walks the index from it rather than sorting all past it.
        pageWhere += ` AND (${column}, id) ${after} (?, ?)`;
        pageArgs.push(key, id);
      }
    }
    const sort = column === "id" ? `id ${direction}` : `${column} ${direction}, id ${direction}`;
    // The whole memory or one type: the count the triggers keep; other filters count what they match.
    const total = where.length === (type ? 1 : 0) ? factCount(this.sql, type ? cleanType(type) : null)
      : this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM facts WHERE ${filters}`, ...args).one().n;
    const rows = this.sql.exec(
      `SELECT ${FACT_COLUMNS} FROM facts WHERE ${pageWhere} ORDER BY ${sort} LIMIT ?`, ...pageArgs, limit + 1,
    ).toArray();
    const facts = rows.slice(0, limit).map(asFact);
    return { facts, next_cursor: rows.length > limit ? encodeCursor(facts[facts.length - 1], order) : null, total };
  }

  // -- what the ranking reads -------------------------------------------------------------

  /** The row count bm25() itself uses: the first varint of FTS5's averages record (row 1 of
   * facts_fts_data), as reading.py reads it. One row read, where count(*) reads every fact: each
   * recall paid a row a fact of the memory for it, against the rows-read allowance. */
  indexedRows(): number {
    const rows = this.sql.exec<{ block: ArrayBuffer | null }>("SELECT block FROM facts_fts_data WHERE id = 1").toArray();
    return rows.length && rows[0].block ? varint(new Uint8Array(rows[0].block)) : 0;
  }

  /** How many facts hold `term`: a row of FTS5's own counts, not a row a fact (term_counts.ts). */
  having(term: string): number {
    return having(this.sql, term);
  }

  /** The ids of `hidden` (lifecycle.ts: the facts recall leaves out), for the vector search. */
  hiddenIds(hidden: Clause | null): Set<number> {
    if (!hidden) return new Set();
    return new Set(this.sql.exec<{ id: number }>(hidden[0], ...hidden[1]).toArray().map((r) => r.id));
  }

  /** Top `depth` by BM25 as [id, bm25], lower (better) first, ties by id, the `hidden` facts
   * left out, so the depth is of those answered from. They are left out here, as the rows come,
   * and not by a `NOT IN` in the query, which FTS5 probes once for every fact the query matches,
   * each probe a row read (the rows a Durable Object is billed for). Of all types, by FTS5's own
   * sort (keyword_top.ts: about as many rows read as returned, where scoring every match in the
   * statement read two rows a match); of one type the same, the other types left out as hidden
   * ones are (the index holds each fact's type), or, while the memory is full and holds no index,
   * every match scored, at most `hidden.size` of the best rows being hidden. */
  keyword(match: string, type: FactType | null, depth: number, hidden: Set<number> = new Set()): [number, number][] {
    if (!match) return [];
    try {
      if (!type) return keywordTop(this.sql, match, depth, hidden);
      if (!this.state.full) {  // the index knows each fact's type: the other types left out as the rows come
        const index = this.state.vectors, wanted = TYPES.indexOf(type);
        let unknown = false;  // a fact the index does not hold (none should be): the statement below instead
        const leftOut = (id: number) => {
          if (hidden.has(id)) return true;
          const row = index.row.get(id);
          if (row === undefined) unknown = true;
          return row === undefined || index.types[row] !== wanted;
        };
        const top = keywordTop(this.sql, match, depth, { has: leftOut });
        if (!unknown) return top;
      }
      const rows = this.sql.exec<{ id: number; s: number }>("SELECT facts_fts.rowid AS id, bm25(facts_fts) AS s FROM facts_fts"
        + " JOIN facts ON facts.id = facts_fts.rowid WHERE facts_fts MATCH ? AND facts.type = ? ORDER BY s, facts_fts.rowid LIMIT ?",
      match, type, depth + hidden.size);
      const kept: [number, number][] = [];
      for (const r of rows) {
        if (hidden.has(r.id)) continue;
        kept.push([r.id, r.s]);
        if (kept.length === depth) break;
      }
      return kept;
    } catch (e) {
      // The builder quotes every term, so this should not happen; if it does (a damaged index),
      // the recall keeps its vector list, and /stats says so.
      console.error("the keyword search failed: this recall is by vector alone", match, e);
      this.state.keywordErrors += 1;
      return [];
    }
  }

  /** Each query term with how many facts hold it and its IDF, as bm25() weighs it, and the
   * query's information, their sum (reading.py `term_counts`). An expansion word says its term. */
  termCounts(queryTerms: string[], expansions: Expansion[] = []) {
    if (!queryTerms.length) return { counts: [], info: null };
    const rows = this.indexedRows();
    const known = new Map(expansions.map((e) => [e.word, e]));
    const having = queryTerms.map((term) => known.get(term)?.facts ?? this.having(term));
    const counts = queryTerms.map((term, i) => ({
      term, facts: having[i], idf: idf(rows, having[i]), ...(known.has(term) ? { from: known.get(term)!.term } : {}),
    }));
    return { counts, info: information(rows, having) };
  }

  /** Rows among `ids` that `match` matches: [id, highlighted text]. */
  matching(match: string, ids: number[], highlight = false): [number, string][] {
    if (!match || !ids.length) return [];
    const wanted = new Set(ids);
    const out: [number, string][] = [];
    for (let i = 0; i < ids.length; i += 99) {
      const part = ids.slice(i, i + 99);
      const cols = highlight ? "rowid AS id, highlight(facts_fts, 0, char(2), char(3)) AS h" : "rowid AS id, '' AS h";
      const rows = this.sql.exec(`SELECT ${cols} FROM facts_fts WHERE facts_fts MATCH ? AND rowid IN (${part.map(() => "?").join(",")})`, match, ...part);
      // The object's SQLite ignores a one-value `rowid IN (?)` beside an FTS5 MATCH and returns
      // every match (worker/test/fts.test.ts): keep only the rows asked for.
      for (const r of rows) if (wanted.has(r.id as number)) out.push([r.id as number, r.h as string]);
    }
    return out;
  }

  /** `text` as the FTS index sees it: lower-cased, split and Porter-stemmed. */
  tokens(text: string): string[] {
    return this.ctx.storage.transactionSync(() => {
      this.sql.exec("INSERT INTO probe (rowid, text) VALUES (1, ?)", text);
      // FTS5 holds new terms in memory until a savepoint or commit flushes them; the vocab
      // table reads only what is flushed, so open (and close) one before reading.
      const found = this.ctx.storage.transactionSync(() =>
        this.sql.exec<{ term: string }>("SELECT term FROM probe_terms WHERE doc = 1 ORDER BY offset").toArray().map((r) => r.term));
      this.sql.exec("DELETE FROM probe WHERE rowid = 1");
      return found;
    });
  }
}

/** SQLite's variable-length integer (as FTS5 writes it): big-endian 7-bit groups with a
 * continuation bit, the ninth byte whole (reading.py `varint`). */
export function varint(data: Uint8Array): number {
  let value = 0;
  for (let i = 0; i < Math.min(9, data.length); i++) {
    if (i === 8) return value * 256 + data[i];
    value = value * 128 + (data[i] & 0x7f);
    if (data[i] < 0x80) return value;
  }
  return value;
}
