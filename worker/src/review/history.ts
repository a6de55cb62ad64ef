// What was done to the memory, by which client (memories/review/history.py): one entry a write, written
// inside the write's own `transactionSync` (so a write and its entry commit together or not at
// all), and the newest `keep` entries kept. The write path (writing.ts) records; the undo of an
// entry is a write too (undo.ts).

import { type Fact, MAX_CLIENT, stamp } from "../facts";
import type { Fusion } from "../recall/ranking";
import { HttpError, invalid, notFound } from "../serving/http";
import { Part, type State } from "../storage/state";

export { MAX_CLIENT };  // (kept in facts.ts, so reviewing.ts reads it without a cycle through state.ts)

export const OPS = ["add", "edit", "delete", "restore", "settings", "resolve", "review"] as const;
export type Op = (typeof OPS)[number];
export const DEFAULT_KEEP = 10_000;
// The trash is the history's deletes: other writes never push them out. A delete stays undoable
// for DELETES_DAYS and while it is among the last DELETES_KEPT, whichever is longer (history.py).
export const DELETES_DAYS = 30;
export const DELETES_KEPT = 1_000;
const PRUNE_DELETES_EVERY = 100;
export const MAX_NOTE = 200;  // characters of a write's `note`
const PRINTABLE_ASCII = /^[ -~]*$/;

/** X-Memory-Client: 1 to 64 printable ASCII characters, or none (""). */
export function cleanClient(value: string | null): string {
  if (value === null || value === "") return "";
  if (value.length > MAX_CLIENT || !PRINTABLE_ASCII.test(value)) {
    throw invalid(`X-Memory-Client must be 1 to ${MAX_CLIENT} printable ASCII characters`);
  }
  return value;
}

/** SQL for "entries of this client": the name as given, or followed by a space and a version
 * ("walk-agent" finds "walk-agent 0.1", the MCP server's "name version"; history.py
 * `client_matches`). An empty name matches only "". */
export function clientMatches(name: string): [string, SqlStorageValue[]] {
  const clean = cleanClient(name);
  if (!clean) return ["client = ?", [""]];
  return ["(client = ? OR substr(client, 1, ?) = ?)", [clean, clean.length + 1, `${clean} `]];
}

/** The history's and the recall log's cursor: the last id of the previous page. */
export function cleanPageCursor(cursor: string | null): number | null {
  if (!cursor) return null;
  if (/^[0-9]{1,16}$/.test(cursor) && 1 <= Number(cursor) && Number(cursor) <= Number.MAX_SAFE_INTEGER) return Number(cursor);
  throw invalid("cursor is not one this service gave out");
}

/** A history entry's `before` or `after`: the fact, or the settings. */
type Value = Fact | Fusion | Record<string, unknown>;

export interface Entry {
  id: number;
  at: string;
  client: string;
  op: Op;
  fact_id: number | null;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  note: string;
  undone_by: number | null;
}

const COLUMNS = "id, at, client, op, fact_id, before, after, note, undone_by";

const asEntry = (r: Record<string, SqlStorageValue>): Entry => ({
  id: r.id as number, at: r.at as string, client: r.client as string, op: r.op as Op, fact_id: r.fact_id as number | null,
  before: r.before ? JSON.parse(r.before as string) : null, after: r.after ? JSON.parse(r.after as string) : null,
  note: r.note as string, undone_by: r.undone_by as number | null,
});

export class History extends Part {
  constructor(state: State, public keep: number = DEFAULT_KEEP) {
    super(state);
  }

  /** One entry, inside the caller's `transactionSync`; the oldest past `keep` go in it too.
   * `undoes`: the entry this write undoes, marked in the same transaction (once only: a second
   * undo of it fails, and its write with it). */
  record(client: string, op: Op, factId: number | null, before: Value | null = null, after: Value | null = null,
    note = "", undoes: number | null = null): number {
    const json = (v: Value | null) => (v === null ? null : JSON.stringify(v));
    const entry = this.sql.exec<{ id: number }>(
      "INSERT INTO history (at, client, op, fact_id, before, after, note) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
      stamp(new Date()), client, op, factId, json(before), json(after), note,
    ).one().id;
    if (undoes !== null
      && !this.sql.exec("UPDATE history SET undone_by = ? WHERE id = ? AND undone_by IS NULL RETURNING id", entry, undoes).toArray().length) {
      throw new HttpError(409, "already_undone", `history entry ${undoes} was undone already`);
    }
    // Past `keep`: every entry but the deletes (found by history_op without passing the deletes kept),
    // and every PRUNE_DELETES_EVERY entries the deletes past both their time and the newest DELETES_KEPT.
    this.sql.exec(`DELETE FROM history WHERE op IN (${OPS.filter((o) => o !== "delete").map((o) => `'${o}'`).join(", ")}) AND id <= ?`,
      entry - this.keep);
    if (entry % PRUNE_DELETES_EVERY === 0) {
      const month = stamp(new Date(Date.now() - DELETES_DAYS * 86_400_000));
      this.sql.exec("DELETE FROM history WHERE op = 'delete' AND id <= ? AND at < ? AND id < ("
        + "SELECT id FROM history WHERE op = 'delete' ORDER BY id DESC LIMIT 1 OFFSET ?)", entry - this.keep, month, DELETES_KEPT - 1);
    }
    return entry;
  }

  /** How much the history holds and keeps, for /stats (history.py `status`). */
  status() {
    const r = this.sql.exec<{ entries: number; deletes: number }>(
      "SELECT count(*) AS entries, count(*) FILTER (WHERE op = 'delete' AND undone_by IS NULL) AS deletes FROM history").one();
    return { entries: r.entries, keep: this.keep, deletes: r.deletes, deletes_days: DELETES_DAYS, deletes_kept: DELETES_KEPT };
  }

  entry(id: number): Entry {
    const rows = this.sql.exec(`SELECT ${COLUMNS} FROM history WHERE id = ?`, id).toArray();
    if (!rows.length) throw notFound(`no history entry with id ${id}`);
    return asEntry(rows[0]);
  }

  /** Newest first: the entries and the next page's cursor (or null). */
  entries(limit: number, cursor: string | null, op: string | null, client: string | null, factId: number | null) {
    const where: string[] = [];
    const args: SqlStorageValue[] = [];
    if (op) {
      if (!OPS.includes(op as Op)) throw invalid(`op must be one of ${OPS.join(", ")}`);
      where.push("op = ?");
      args.push(op);
    }
    if (client !== null) {
      const [match, clientArgs] = clientMatches(client);
      where.push(match);
      args.push(...clientArgs);
    }
    if (factId !== null) {
      where.push("fact_id = ?");
      args.push(factId);
    }
    const before = cleanPageCursor(cursor);
    if (before !== null) {
      where.push("id < ?");
      args.push(before);
    }
    const rows = this.sql.exec(`SELECT ${COLUMNS} FROM history WHERE ${where.join(" AND ") || "1"} ORDER BY id DESC LIMIT ?`,
      ...args, limit + 1).toArray();
    const entries = rows.slice(0, limit).map(asEntry);
    return { entries, next_cursor: rows.length > limit ? String(entries[entries.length - 1].id) : null };
  }
}

/** Of `ids`, the facts whose text an edit changed after `at`: recall `as_of` answers a fact's text
 * as it is now, and says so (`edited_since`). history.py `edited_after`. */
export function editedAfter(sql: SqlStorage, ids: number[], at: string): Set<number> {
  if (!ids.length) return new Set();
  const rows = sql.exec<{ fact_id: number }>("SELECT DISTINCT fact_id FROM history WHERE op = 'edit' AND at > ?"
    + " AND fact_id IN (SELECT value FROM json_each(?))"
    + " AND json_extract(before, '$.text') IS NOT json_extract(after, '$.text')", at, JSON.stringify(ids)).toArray();
  return new Set(rows.map((r) => r.fact_id));
}
