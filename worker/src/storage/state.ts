// What the object holds of its storage (memories/storage/state.py): the SQLite handle and its meta
// table, the model, the fact matrix and the vocabulary (read from their stored blocks,
// code_blocks.ts, or built from the tables), how a write changes them, and whether the two still
// agree (stats). One State is shared by the parts of the object (reading.ts, writing.ts,
// reindexing.ts, searching.ts, background.ts, review.ts), so each sees the same matrix.

import { type Stamp, readCodes, readStamp, storeCodes, writeStamp } from "./code_blocks";
import { vectorsById } from "./by_key";
import { type Embedder, type ModelNumbers, RateLimited, makeEmbedder, numbersFor } from "../model/embedder";
import { HttpError } from "../serving/http";
import { type Fusion } from "../recall/ranking";
import { DEFAULT as PROPOSE, type Mode } from "../writes/replace_at_once";
import { type ReviewSetting, defaultReview, isDefault } from "../review/reviewing";
import { type Sources, processNumbers } from "../model/settings";
import { TextVectors } from "../recall/text_vectors";
import { BLOCK, FACT_BITS, type FactType, TYPES, VectorIndex } from "./vectors";
import { Vocabulary } from "./vocabulary";

const SAMPLED_ROWS = 256;  // matrix rows /stats compares with the table
// What the vectors and words in memory may take (MEMORY_BUDGET_BYTES): an object's isolate has
// 128 MB, and a request needs the rest (its body, a batch's vectors, SQLite's results). The
// lifecycle adds nothing held here: which facts are current is read from the table each request
// (lifecycle.ts `hidden`), and the proposals live in their table.
export const DEFAULT_BUDGET = 100 * 2 ** 20;
const MIB = 2 ** 20;

export class State {
  sql: SqlStorage;
  vectors: VectorIndex;
  vocab: Vocabulary;
  embedder: Embedder;
  textVectors = new TextVectors();  // the texts recall embeds, kept (text_vectors.ts)
  // The duplicate threshold, the review floor and the expansion cut-off (in `shipped`): the
  // model's (embedder.ts MODEL_NUMBERS) unless the environment or the memory's own settings say.
  numbers: ModelNumbers;
  thresholdSetting: number;  // this process's: the environment's or the model's
  ownThreshold: number | null = null;  // the memory's own (PUT /settings), which wins
  sources: Sources;
  floor: number;  // pairs at or above it are kept on write (the pairs table), as state.py's
  keywordErrors = 0;  // FTS5 searches that failed since the object started (recall went on by vector)
  budget: number;  // bytes the vectors and words in memory may take
  // Why the vectors and words are not in memory (they would take more than the budget), or null.
  // Such a memory serves keyword recall, the facts, get, delete and export, and answers vector
  // work with 507 `memory_full` (`full`), until deletes bring it under the budget (`load`).
  full: string | null = null;
  private fullBytes = 0;  // what its vectors and words would take, when `full`
  // What recall and explain use when a request sends no fusion: the memory's own settings
  // (meta 'settings', PUT /settings) over the shipped default.
  readonly shipped: Fusion;
  fusion: Fusion;
  review: ReviewSetting = defaultReview();  // the memory's own (reviewing.ts)
  proposals: Mode = PROPOSE;  // the memory's own (replace_at_once.ts)

  constructor(readonly ctx: DurableObjectState, env: Env) {
    this.sql = ctx.storage.sql;
    this.embedder = makeEmbedder(env);
    this.numbers = numbersFor(this.embedder.model);  // the model's own unless the environment says (settings.ts)
    [this.thresholdSetting, this.floor, this.shipped, this.sources] = processNumbers(env, this.numbers);
    this.fusion = this.shipped;
    this.budget = envCount(env.MEMORY_BUDGET_BYTES, "MEMORY_BUDGET_BYTES", DEFAULT_BUDGET, 1);
    this.vocab = new Vocabulary(this.sql, this.embedder.model, this.embedder.dims);
    this.vectors = this.factIndex();
  }

  /** An empty index of the facts' codes, whose exact vectors it reads from the vectors table. */
  factIndex(): VectorIndex {
    const { model, dims } = this.embedder;
    return new VectorIndex(dims, (ids) => vectorsById(this.sql, "vectors", "fact_id", ids,
      "t.model = ? AND t.dims = ?", model, dims), FACT_BITS);
  }

  /** What `facts` fact rows and `words` words take, held anew. */
  private bytesAnew(facts: number, words: number): number {
    return this.factIndex().bytesWith(facts) + this.vocab.newIndex().bytesWith(words);
  }

  meta(key: string): SqlStorageValue | null {
    const rows = this.sql.exec("SELECT value FROM meta WHERE key = ?", key).toArray();
    return rows.length ? rows[0].value : null;
  }

  setMeta(key: string, value: SqlStorageValue): void {
    this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value);
  }

  /** The duplicate threshold writes use: the memory's own, else this process's. */
  get threshold(): number {
    return this.ownThreshold ?? this.thresholdSetting;
  }

  /** The memory's own settings as stored and recorded in the history: the recall settings (those
   * stored in it, or the shipped default), `threshold` when it has its own, and `review` and
   * `proposals` when they are not the default. */
  settings(): Record<string, unknown> {
    return {
      ...this.fusion,
      ...(this.ownThreshold === null ? {} : { threshold: this.ownThreshold }),
      ...(isDefault(this.review) ? {} : { review: { ...this.review, trusted: [...this.review.trusted] } }),
      ...(this.proposals === PROPOSE ? {} : { proposals: this.proposals }),
    };
  }

  /** Recall and dedup with `stored` from now on (the fields this version knows; null: the shipped). */
  useSettings(stored: Record<string, unknown> | null): void {
    const known = Object.keys(this.shipped);
    this.fusion = { ...this.shipped, ...Object.fromEntries(Object.entries(stored ?? {}).filter(([k]) => known.includes(k))) };
    this.ownThreshold = typeof stored?.threshold === "number" ? stored.threshold : null;
    const review = (stored?.review ?? {}) as Partial<ReviewSetting>;
    this.review = { ...defaultReview(), ...review };
    this.review.trusted = [...this.review.trusted];
    this.proposals = (stored?.proposals as Mode | undefined) || PROPOSE;
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

  // -- what memory holds -----------------------------------------------------------------

  /** The vectors and words into memory, or neither when they would pass the budget, counted
   * before anything is read (from the stored blocks' stamp, else the tables): starting never
   * loads more than the budget. Read from the stored blocks when they are in step with the
   * tables, else built from the tables and stored anew (a memory from before them, another model). */
  load(): void {
    const { model, dims } = this.embedder;
    const stamp = readStamp(this.sql, model, dims);
    if (stamp && !this.fits(stamp.facts, stamp.words)) return;
    if (stamp && !stamp.stale && this.readStored(stamp)) return;
    this.rebuild();
  }

  /** Every vector and word read from the tables, and the blocks stored anew (a start whose blocks
   * are missing or out of step, a reindex); or neither, past the budget, with the counts stamped
   * so the next start need not count again. */
  rebuild(): void {
    const n = (sql: string, ...args: SqlStorageValue[]) => this.sql.exec<{ n: number }>(sql, ...args).one().n;
    const { model, dims } = this.embedder;
    const facts = n("SELECT count(*) AS n FROM vectors WHERE model = ? AND dims = ?", model, dims);
    const words = n("SELECT count(*) AS n FROM words WHERE model = ?", model);
    if (!this.fits(facts, words)) {
      this.ctx.storage.transactionSync(() => writeStamp(this.sql, { model, dims, facts, words, stale: true }));
      return;
    }
    this.vectors = this.factIndex();
    const rows = this.sql.exec(
      "SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id WHERE v.model = ? AND v.dims = ?", model, dims);
    for (const r of rows) this.vectors.put(r.fact_id as number, r.type as FactType, new Float32Array(r.embedding as ArrayBuffer));
    this.vocab.reload();
    this.ctx.storage.transactionSync(() => this.storeChanged());
  }

  /** Whether `facts` facts and `words` words fit in the budget; if not, the memory holds none
   * and says why (`full`). */
  private fits(facts: number, words: number): boolean {
    const need = this.bytesAnew(facts, words);
    if (need <= this.budget) {
      this.full = null;
      return true;
    }
    this.fullBytes = need;
    this.full = `this memory's ${facts} vectors and ${words} words would take ${mib(need)} of memory, past its budget of `
      + `${mib(this.budget)}: it answers keyword recall, lists, gets, deletes and exports its facts, but stores none and finds `
      + `none by meaning. ${this.wayOut()}`;
    this.vectors = this.factIndex();
    this.vocab.empty();
    return false;
  }

  /** The indexes from the stored blocks, if they are in step with the tables (code_blocks.ts). */
  private readStored(stamp: Stamp): boolean {
    const vectors = this.factIndex(), vocab = this.vocab.newIndex();
    if (!readCodes(this.sql, stamp, vectors, vocab)) return false;
    this.vectors = vectors;
    this.vocab.use(vocab);
    return true;
  }

  /** Store the blocks the indexes changed, inside the caller's transaction; nothing while full
   * (the indexes hold nothing then). */
  private storeChanged(): void {
    if (!this.full) storeCodes(this.sql, this.embedder.model, this.embedder.dims, this.vectors, this.vocab.index);
  }

  /** A write and what it changes in memory, in one transaction: `write` (the SQL, and every
   * check that may refuse it), then `apply` (the change to the indexes), then the blocks that
   * changed stored. Should the transaction fail once `apply` has begun, memory is read again from
   * what storage rolled back to. */
  transact<T>(write: () => T, apply: (done: T) => void): T {
    let applied = false;
    try {
      return this.ctx.storage.transactionSync(() => {
        const done = write();
        applied = true;
        apply(done);
        this.storeChanged();
        return done;
      });
    } catch (e) {
      if (applied) this.load();
      throw e;
    }
  }

  /** A fact's vector gone, inside its delete: out of the index; or, while full (nothing is
   * held), off the stamp's count if it was of this model (`counted`), the blocks now behind the
   * table until a load builds them again. */
  forget(id: number, counted: boolean): void {
    if (!this.full) return this.vectors.remove(id);
    if (!counted) return;
    const { model, dims } = this.embedder;
    const stamp = readStamp(this.sql, model, dims);
    if (stamp) writeStamp(this.sql, { model, dims, facts: stamp.facts - 1, words: stamp.words, stale: true });
  }

  /** What the owner can do about a full memory. */
  private wayOut(): string {
    return "Delete facts, or move some to another memory by name (python -m memories export --url <this memory>, "
      + "then import --url <the Worker>/memories/<another name>).";
  }

  /** The bytes the vectors, the words and recall's kept text vectors in memory take (exact for
   * the arrays, a bound for the maps). */
  memoryBytes(): { vectors: number; vocabulary: number; text_vectors: number } {
    return { vectors: this.vectors.bytes(), vocabulary: this.vocab.bytes(), text_vectors: this.textVectors.bytes() };
  }

  /** About how many facts of this model fit in the budget: those held, and as many again as the
   * room left takes at what a fact costs now (its row and its share of the words). */
  capacity(facts: number): number {
    const { vectors, vocabulary } = this.memoryBytes();
    const held = this.full ? this.fullBytes : vectors + vocabulary;  // (full: none is in memory)
    const words = this.full ? facts : this.vocab.size;
    const ratio = facts ? words / facts : 1;  // varied text: about a new word a fact
    // A fact's row: its code, lo, step and err, id, type and map entry; a word's: the same but the map entry.
    const row = this.factIndex().bytesWith(BLOCK) / BLOCK;
    const wordRow = this.vocab.newIndex().bytesWith(BLOCK) / BLOCK;
    const perFact = row + ratio * wordRow;
    return Math.max(0, Math.floor(facts + (this.budget - held) / perFact));
  }

  /** 507 `memory_full` unless `facts` more facts and `words` more words fit in the budget. */
  ensureRoom(facts: number, words: number): void {
    if (this.full) throw this.fullError();
    const need = this.vectors.bytesWith(facts) + this.vocab.bytesWith(words);
    if (need <= this.budget) return;
    const held = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM facts").one().n - Math.max(0, facts - 1);  // not the batch's own
    throw new HttpError(507, "memory_full", `this memory holds ${held} facts, and ${facts === 1 ? "this fact" : `these ${facts} facts`} `
      + `would take its vectors and words past its memory budget of ${mib(this.budget)} (about ${this.capacity(held)} facts of `
      + `${this.embedder.model}): nothing was stored. ${this.wayOut()}`);
  }

  /** 507 `memory_full` unless `facts` facts and `words` would fit in the budget in place of what
   * is held now (a reindex). */
  ensureRoomAnew(facts: number, words: string[]): void {
    const need = this.bytesAnew(facts, words.length);
    if (need <= this.budget) return;
    throw new HttpError(507, "memory_full", `this memory's ${facts} facts and ${words.length} words would take ${mib(need)} of `
      + `memory with ${this.embedder.model}, past its budget of ${mib(this.budget)}: nothing was reindexed. ${this.wayOut()}`);
  }

  /** The 507 of vector work in a memory whose vectors are not in memory. */
  fullError(): HttpError {
    return new HttpError(507, "memory_full", this.full ?? "");
  }

  /** The model's vectors of `texts`; its failure is the contract's 503. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    try {
      return await this.embedder.embed(texts);
    } catch (e) {
      // Workers AI's rate limit after its retries (embedder.ts): say so, and when to come back.
      const headers: Record<string, string> = e instanceof RateLimited ? { "Retry-After": "60" } : {};
      throw new HttpError(503, "model_unavailable", `the embedding model failed: ${(e as Error).message}`, {}, headers);
    }
  }

  // -- consistency ----------------------------------------------------------------------

  /** Of `sample` facts drawn at random from the index, those whose row there is not the code of
   * their vector in the table (state.py `_rows_out_of_step`): a sample, so /stats stays cheap. */
  private rowsOutOfStep(sample: number): number[] {
    const held = [...this.vectors.row.keys()];
    const from = Math.max(0, held.length - sample);
    for (let i = held.length - 1; i >= from; i--) {  // the last `sample` places of a Fisher-Yates shuffle
      const j = Math.floor(Math.random() * (i + 1));
      [held[i], held[j]] = [held[j], held[i]];
    }
    const drawn = held.slice(from);
    const out: number[] = [];
    for (const [id, vector] of vectorsById(this.sql, "vectors", "fact_id", drawn, "t.model = ?", this.embedder.model)) {
      if (!this.vectors.holds(id, vector)) out.push(id);
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
    const bytes = this.memoryBytes();
    counts.memory_bytes = bytes.vectors + bytes.vocabulary + bytes.text_vectors;
    counts.memory_parts = bytes;
    counts.memory_budget = this.budget;
    counts.capacity_facts = this.capacity(counts.facts as number);
    counts.memory_full = this.full !== null;
    if (this.full) counts.warning = this.full;
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
      && counts.facts === counts.fts && counts.fts === counts.vectors && (this.full !== null || counts.vectors === counts.vectors_in_memory);
    return counts;
  }
}

const mib = (bytes: number) => `${(bytes / MIB).toFixed(1)} MiB`;

/** A vector as its row stores it: little-endian float32 (state.py `to_blob`), for writing.ts and reindexing.ts. */
export const toBlob = (v: Float32Array) => v.slice().buffer;

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
