// What the object holds of its storage (memories/state.py): the SQLite handle and its meta
// table, the model, the fact matrix and the vocabulary loaded from the tables, and whether the
// two still agree (stats). One State is shared by the parts of the object (reading.ts,
// writing.ts, searching.ts, background.ts, review.ts), so each sees the same matrix.

import { type Embedder, makeEmbedder } from "./embedder";
import { HttpError } from "./http";
import { DEFAULT, type Fusion } from "./recall";
import { type FactType, TYPES, VectorIndex } from "./vectors";
import { Vocabulary } from "./vocabulary";

const DEFAULT_THRESHOLD = 0.97;
// Pairs at or above this cosine are kept on write (the pairs table), as facts.py's DEFAULT_FLOOR.
const DEFAULT_FLOOR = 0.8;
const SAMPLED_ROWS = 256;  // matrix rows /stats compares with the table

export class State {
  sql: SqlStorage;
  vectors = new VectorIndex(0);
  vocab: Vocabulary;
  embedder: Embedder;
  threshold: number;
  floor: number;
  keywordErrors = 0;  // FTS5 searches that failed since the object started (recall went on by vector)
  // What recall and explain use when a request sends no fusion: the memory's own settings
  // (meta 'settings', PUT /settings) over the shipped default.
  readonly shipped: Fusion = DEFAULT;
  fusion: Fusion = DEFAULT;

  constructor(readonly ctx: DurableObjectState, env: Env) {
    this.sql = ctx.storage.sql;
    this.embedder = makeEmbedder(env);
    this.threshold = Number(env.DUPLICATE_THRESHOLD || DEFAULT_THRESHOLD);
    this.floor = Number(env.REVIEW_FLOOR || DEFAULT_FLOOR);
    this.vocab = new Vocabulary(this.sql, this.embedder.model, this.embedder.dims);
  }

  meta(key: string): SqlStorageValue | null {
    const rows = this.sql.exec("SELECT value FROM meta WHERE key = ?", key).toArray();
    return rows.length ? rows[0].value : null;
  }

  setMeta(key: string, value: SqlStorageValue): void {
    this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value);
  }

  /** The memory's own recall settings: those stored in it, or the shipped default. */
  settings(): Fusion {
    return this.fusion;
  }

  /** Recall with `stored` from now on (the fields this version knows; null: the shipped). */
  useSettings(stored: Record<string, unknown> | null): void {
    const known = Object.keys(this.shipped);
    this.fusion = { ...this.shipped, ...Object.fromEntries(Object.entries(stored ?? {}).filter(([k]) => known.includes(k))) };
  }

  /** Every pair at the floor is in the table (the fill has caught up). */
  pairsReady(): boolean {
    return this.meta("pairs_floor") === this.floor && (this.meta("pairs_upto") as number) >= (this.meta("pairs_target") as number);
  }

  /** How far the fill is: [facts paired, facts to pair], of those it set out to pair. */
  pairsProgress(): [number, number] {
    const n = (sql: string, ...args: SqlStorageValue[]) => this.sql.exec<{ n: number }>(sql, ...args).one().n;
    const target = (this.meta("pairs_target") as number | null) ?? 0;
    return [n("SELECT count(*) AS n FROM facts WHERE id <= ?", Math.min((this.meta("pairs_upto") as number | null) ?? 0, target)),
      n("SELECT count(*) AS n FROM facts WHERE id <= ?", target)];
  }

  loadVectors(): void {
    this.vectors = new VectorIndex(this.embedder.dims);
    const rows = this.sql.exec(
      "SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id WHERE v.model = ? AND v.dims = ?",
      this.embedder.model, this.embedder.dims,
    );
    for (const r of rows) this.vectors.put(r.fact_id as number, r.type as FactType, new Float32Array(r.embedding as ArrayBuffer));
  }

  /** The model's vectors of `texts`; its failure is the contract's 503. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    try {
      return await this.embedder.embed(texts);
    } catch (e) {
      throw new HttpError(503, "model_unavailable", `the embedding model failed: ${(e as Error).message}`);
    }
  }

  // -- consistency ----------------------------------------------------------------------

  /** Of `sample` facts drawn at random from the matrix, those whose row there is not their
   * vector in the table (state.py `_rows_out_of_step`): a sample, so /stats stays cheap. */
  private rowsOutOfStep(sample: number): number[] {
    const held = [...this.vectors.row.keys()];
    const from = Math.max(0, held.length - sample);
    for (let i = held.length - 1; i >= from; i--) {  // the last `sample` places of a Fisher-Yates shuffle
      const j = Math.floor(Math.random() * (i + 1));
      [held[i], held[j]] = [held[j], held[i]];
    }
    const drawn = held.slice(from);
    const out: number[] = [];
    for (const r of this.sql.exec("SELECT fact_id, embedding FROM vectors WHERE model = ? AND fact_id IN (SELECT value FROM json_each(?))",
      this.embedder.model, JSON.stringify(drawn))) {
      const stored = new Float32Array(r.embedding as ArrayBuffer);
      const mine = this.vectors.vector(r.fact_id as number);
      if (!mine || mine.length !== stored.length || mine.some((v, k) => v !== stored[k])) out.push(r.fact_id as number);
    }
    return out.sort((a, b) => a - b);
  }

  stats() {
    const n = (sql: string, ...args: SqlStorageValue[]) => this.sql.exec<{ n: number }>(sql, ...args).one().n;
    const ids = (sql: string) => this.sql.exec(sql + " LIMIT 100").toArray().map((r) => Object.values(r)[0] as number);
    const counts: Record<string, unknown> = {
      facts: n("SELECT count(*) AS n FROM facts"),
      fts: n("SELECT count(*) AS n FROM facts_fts"),
      vectors: n("SELECT count(*) AS n FROM vectors"),
      stale_vectors: n("SELECT count(*) AS n FROM vectors WHERE model IS NOT ?", this.embedder.model),
      vectors_in_memory: this.vectors.size,
      keyword_errors: this.keywordErrors,
    };
    const orphans = {
      fts_without_fact: ids("SELECT rowid FROM facts_fts WHERE rowid NOT IN (SELECT id FROM facts)"),
      vectors_without_fact: ids("SELECT fact_id FROM vectors WHERE fact_id NOT IN (SELECT id FROM facts)"),
      facts_without_fts: ids("SELECT id FROM facts WHERE id NOT IN (SELECT rowid FROM facts_fts)"),
      facts_without_vector: ids("SELECT id FROM facts WHERE id NOT IN (SELECT fact_id FROM vectors)"),
      vectors_out_of_step: this.rowsOutOfStep(SAMPLED_ROWS),
    };
    const byType = new Map(this.sql.exec("SELECT type, count(*) AS n FROM facts GROUP BY type").toArray().map((r) => [r.type, r.n]));
    counts.by_type = Object.fromEntries(TYPES.map((t) => [t, byType.get(t) ?? 0]));
    counts.orphans = orphans;
    counts.consistent = !Object.values(orphans).some((o) => o.length)
      && counts.facts === counts.fts && counts.fts === counts.vectors && counts.vectors === counts.vectors_in_memory;
    return counts;
  }
}

/** A whole number from a var (MEMORY_HISTORY, say): `fallback` when unset; one that is not a
 * number or below `min` is logged and `fallback` used, so a typo does not stop every request. */
export function envCount(value: string | undefined, name: string, fallback: number, min: number): number {
  if (value === undefined || value === "") return fallback;
  const n = Math.trunc(Number(value));
  if (Number.isFinite(n) && n >= min) return n;
  console.error(`${name} must be a whole number of at least ${min}; using ${fallback}`);
  return fallback;
}

/** What each part of the object reaches through: the one State (the matrix is read anew each
 * time, as a reindex replaces it). */
export class Part {
  constructor(readonly state: State) {}
  get ctx() { return this.state.ctx; }
  get sql() { return this.state.sql; }
  get embedder() { return this.state.embedder; }
  get vectors() { return this.state.vectors; }
  get vocab() { return this.state.vocab; }
}
