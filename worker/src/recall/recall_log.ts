// The recall log (memories/recall/recall_log.py): what each client asked, what it got back (ids, `via`,
// scores in order), under which settings and model, and how long it took; the newest `keep`
// recalls, so the owner can debug a bad recall after the fact. A row a recall, in a transaction
// of its own after the recall has answered; a log write that fails is logged and never fails
// the recall.

import { chars, stamp } from "../facts";
import { invalid, notFound, wellFormed } from "../serving/http";
import { cleanPageCursor, clientMatches } from "../review/history";
import type { Fusion } from "./ranking";
import { Part, type State } from "../storage/state";

export const DEFAULT_KEEP = 2_000;
const MAX_FILTER = 1_000;  // a `q` filter, in characters

const COLUMNS = 'id, at, client, query, type, mode, "limit", settings, results, model, ms';

export interface RecallEntry {
  id: number;
  at: string;
  client: string;
  query: string;
  type: string | null;
  mode: string;
  limit: number;
  settings: Fusion;
  results: { id: number; via: string; score: number; text?: string; forgotten?: boolean }[];
  model: string | null;
  ms: number;
}

/** What a recall answered, as much of it as the log keeps. */
export interface Answer {
  results: { fact: { id: number; text: string }; via: string; score: number }[];
  mode: string;
}

const asEntry = (r: Record<string, SqlStorageValue>): RecallEntry => ({
  id: r.id as number, at: r.at as string, client: r.client as string, query: r.query as string, type: r.type as string | null,
  mode: r.mode as string, limit: r.limit as number, settings: JSON.parse(r.settings as string), results: JSON.parse(r.results as string),
  model: r.model as string | null, ms: r.ms as number,
});

export class RecallLog extends Part {
  constructor(state: State, public keep: number = DEFAULT_KEEP) {
    super(state);
  }

  private pending: SqlStorageValue[][] = [];

  /** Log one recall as the searcher answered it; never throws. The row is written just after the
   * answer has gone, before the object's next request (`flush`): a write made before the answer
   * would hold it back until storage confirms the write (the output gate), for a row the agent
   * never reads. A recall logged is there for any request that follows it. */
  add(client: string, query: string, type: string | null, limit: number, settings: Fusion, answer: Answer, ms: number): void {
    if (this.keep <= 0) return;
    // The text as given: what the agent got stays readable after an edit or a delete.
    const results = answer.results.map((r) => ({ id: r.fact.id, via: r.via, score: r.score, text: r.fact.text }));
    this.pending.push([stamp(new Date()), client, query, type, answer.mode, limit, JSON.stringify(settings),
      JSON.stringify(results), this.embedder.model, ms]);
    if (this.pending.length === 1) this.ctx.waitUntil(new Promise((done) => setTimeout(done, 0)).then(() => this.flush()));
  }

  /** Write the recalls kept by `add`, in one transaction; never throws. */
  flush(): void {
    if (!this.pending.length) return;
    const rows = this.pending.splice(0);
    try {
      this.ctx.storage.transactionSync(() => {
        let entry = 0;
        for (const row of rows) {
          row[7] = JSON.stringify(this.unforgotten(JSON.parse(row[7] as string)));  // forgotten while it ran: no text
          entry = this.sql.exec<{ id: number }>(
            `INSERT INTO recalls (${COLUMNS.slice(4)}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, ...row).one().id;
        }
        this.sql.exec("DELETE FROM recalls WHERE id <= ?", entry - this.keep);
      });
    } catch (e) {
      console.error("could not log a recall; the recall itself was answered", e);
    }
  }

  /** `results` with the text of each fact forgotten since it was read taken out, marked as
   * `forget` marks it: a fact no longer here and with no history entry (a fact deleted and not
   * forgotten keeps its delete entry). recall_log.py `unforgotten`. */
  private unforgotten(results: RecallEntry["results"]): RecallEntry["results"] {
    if (!results.length) return results;
    const ids = JSON.stringify(results.map((r) => r.id));
    const here = new Set(this.sql.exec<{ id: number }>("SELECT id FROM facts WHERE id IN (SELECT value FROM json_each(?1))"
      + " UNION SELECT fact_id FROM history WHERE fact_id IN (SELECT value FROM json_each(?1))", ids).toArray().map((r) => r.id));
    return results.map((r) => (here.has(r.id) ? r : { id: r.id, via: r.via, score: r.score, forgotten: true }));
  }

  entry(id: number): RecallEntry {
    const rows = this.sql.exec(`SELECT ${COLUMNS} FROM recalls WHERE id = ?`, id).toArray();
    if (!rows.length) throw notFound(`no logged recall with id ${id}`);
    return asEntry(rows[0]);
  }

  /** Newest first: the recalls, the next page's cursor (or null) and how many match the filters. */
  entries(limit: number, cursor: string | null, client: string | null, q: string | null, empty: boolean, factId: number | null) {
    const where: string[] = [];
    const args: SqlStorageValue[] = [];
    if (client !== null) {
      const [match, clientArgs] = clientMatches(client);
      where.push(match);
      args.push(...clientArgs);
    }
    if (q) {
      if (chars(q) > MAX_FILTER) throw invalid(`q is ${chars(q)} characters; the limit is ${MAX_FILTER}`);
      where.push("instr(lower(query), lower(?)) > 0");
      args.push(wellFormed(q, "q"));
    }
    if (empty) where.push("results = '[]'");
    if (factId !== null) {
      where.push("EXISTS (SELECT 1 FROM json_each(recalls.results) WHERE json_extract(value, '$.id') = ?)");
      args.push(factId);
    }
    const filters = where.join(" AND ") || "1";
    const before = cleanPageCursor(cursor);
    const [page, pageArgs] = before !== null ? [`${filters} AND id < ?`, [...args, before]] : [filters, args];
    const total = this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM recalls WHERE ${filters}`, ...args).one().n;
    const rows = this.sql.exec(`SELECT ${COLUMNS} FROM recalls WHERE ${page} ORDER BY id DESC LIMIT ?`, ...pageArgs, limit + 1).toArray();
    const recalls = rows.slice(0, limit).map(asEntry);
    return { recalls, next_cursor: rows.length > limit ? String(recalls[recalls.length - 1].id) : null, total };
  }

  /** A fact forgotten for good leaves no text in the log: each row that returned it keeps the id,
   * marked forgotten (inside the caller's transaction; recall_log.py `forget`). The recalls answered
   * before this request were written at its start (memory.ts). */
  forget(factId: number): number {
    const rows = this.sql.exec("SELECT id, results FROM recalls WHERE EXISTS (SELECT 1 FROM json_each(recalls.results)"
      + " WHERE json_extract(value, '$.id') = ?)", factId).toArray();
    for (const row of rows) {
      const kept = (JSON.parse(row.results as string) as RecallEntry["results"]).map((r) => {
        if (r.id !== factId) return r;
        const { text: _, ...rest } = r;
        return { ...rest, forgotten: true };
      });
      this.sql.exec("UPDATE recalls SET results = ? WHERE id = ?", JSON.stringify(kept), row.id);
    }
    return rows.length;
  }

  clear(): number {
    return this.ctx.storage.transactionSync(() => this.sql.exec("DELETE FROM recalls RETURNING id").toArray().length);
  }
}
