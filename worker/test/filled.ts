// A memory filled straight into its tables, and the rows a piece of work reads there: what the
// rows-read tests (keyword_top, recall_rows) measure, one copy so a fix reaches both.
import type { MemoryObject } from "../src/memory";
import { TYPES } from "../src/storage/vectors";

const WORDS = "apple river mountain coffee garden window silver purple ocean forest planet rocket violin basket candle mirror pencil ladder tunnel castle".split(" ");

export interface Fill {
  varied?: boolean; // a few words more or fewer, some said twice (scores of every kind); else one length (large ties)
  typed?: boolean; // the i-th fact's type TYPES[i % 3], else all facts
  vectors?: boolean; // a vector of 16 random numbers each, then the object's state rebuilt
  seed?: number;
}

/** `n` facts (ids 1..n), "The fact number i is about ...", reviewed, in one transaction. */
export function fill(memory: MemoryObject, n: number, { varied = false, typed = false, vectors = false, seed = 1 }: Fill = {}): void {
  const { sql, ctx } = memory as unknown as { sql: SqlStorage; ctx: DurableObjectState };
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  ctx.storage.transactionSync(() => {
    for (let i = 1; i <= n; i++) {
      let text = `The fact number ${i} is about ${WORDS[i % 20]} ${WORDS[(i * 7) % 20]} word${i}.`;
      if (varied) text += Array.from({ length: Math.floor(random() * 4) }, () => WORDS[Math.floor(random() * 20)]).join(" ");
      sql.exec("INSERT INTO facts (id, text, text_key, type, created_at, updated_at, reviewed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        i, text, text.toLowerCase(), typed ? TYPES[i % 3] : "fact", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z");
      sql.exec("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", i, text);
      if (!vectors) continue;
      const v = Float32Array.from({ length: 16 }, () => random() - 0.5);
      const norm = Math.hypot(...v);
      sql.exec("INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, 'fake-bow-16', 16, ?)", i, v.map((x) => x / norm).buffer);
    }
  });
  if (vectors) (memory as unknown as { state: { rebuild(): void } }).state.rebuild();
}

/** What `work` returns, and the rows each statement it ran read: (statement, rows). */
export async function readBy<T>(sql: SqlStorage, work: () => T | Promise<T>): Promise<[T, [string, number][]]> {
  const exec = sql.exec;
  const cursors: [string, SqlStorageCursor<Record<string, SqlStorageValue>>][] = [];
  Object.assign(sql, { exec: (q: string, ...b: SqlStorageValue[]) => { const c = exec.call(sql, q, ...b); cursors.push([q, c]); return c; } });
  try {
    const out = await work();
    return [out, cursors.map(([q, c]) => [q, c.rowsRead])];
  } finally {
    delete (sql as Partial<SqlStorage>).exec;
  }
}

/** What `work` returns, and the rows its statements read in all. */
export async function rowsRead<T>(sql: SqlStorage, work: () => T | Promise<T>): Promise<[T, number]> {
  const [out, each] = await readBy(sql, work);
  return [out, each.reduce((sum, [, n]) => sum + n, 0)];
}
