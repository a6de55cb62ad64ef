// One memory: a SQLite-backed Durable Object holding facts, their FTS5 index and their vectors,
// serving the contract of docs/memory-api.md as memories/store.py + service.py serve it locally.
//
// Every write changes row, FTS entry and vector inside one `transactionSync`. The object runs one
// event at a time, but an `await` (the embedding) opens its input gate to other requests, so
// every check that decides a write (duplicate? does the id still exist?) runs again inside the
// synchronous transaction, after the last await.

import { DurableObject } from "cloudflare:workers";
import openapi from "../../docs/openapi.json";
import { distinct } from "./dedup";
import { type Embedder, makeEmbedder } from "./embedder";
import {
  HttpError, boolParam, choiceParam, errorResponse, floatParam, intParam, invalid, notFound, optionalStr, readJson,
  tooLarge, wellFormed,
} from "./http";
import {
  DEFAULT, type Fused, type Fusion, METHODS, PRESETS, expand, expandableTerms, expansionKept, fuse, idf, information, infoTerms,
  match as matchOf, matchTerms, quote, rerank, rerankPlan, score, terms, via, vocabularyWords,
} from "./recall";
import { migrate } from "./schema";
import { strip, textKey } from "./text";
import { type FactType, TYPES, VectorIndex, dot } from "./vectors";
import { Vocabulary } from "./vocabulary";

const MAX_TEXT = 8000;
const MAX_SOURCE = 200;
const MAX_QUERY = 32_000;
const MAX_LIMIT = 100;
const MAX_RERANK = 20;  // facts a recall embeds again: each is model time
const MAX_BATCH = 100;
const DEFAULT_THRESHOLD = 0.97;
const NEAR_CANDIDATES = 10;  // same-type neighbours over the threshold that dedup looks at
// Pairs at or above this cosine are kept on write (the pairs table), as store.py's DEFAULT_FLOOR.
const DEFAULT_FLOOR = 0.8;
// The pairs of facts stored before the table are filled in slices of about this many
// multiply-adds (a second or two of JavaScript), one slice per alarm, so no event runs long.
const FILL_WORK = 1e9;
const MAX_ID = 2n ** 63n - 1n;
// hybrid fuses both lists; keyword and vector answer from one (the agent's search modes).
const MODES = ["hybrid", "keyword", "vector"] as const;
type Mode = (typeof MODES)[number];

interface Fact {
  id: number;
  text: string;
  type: FactType;
  source: string;
  created_at: string;
  updated_at: string;
}

type Row = Record<string, SqlStorageValue>;
const FACT_COLUMNS = "id, text, type, source, created_at, updated_at";
const asFact = (r: Row): Fact => ({
  id: r.id as number, text: r.text as string, type: r.type as FactType, source: r.source as string,
  created_at: r.created_at as string, updated_at: r.updated_at as string,
});

const chars = (s: string) => [...s].length;  // Python's len(): code points, not UTF-16 units

function cleanText(text: unknown): string {
  if (typeof text !== "string") throw invalid("text must be a string");
  const t = strip(wellFormed(text, "text"));
  if (!t) throw invalid("text is empty");
  if (chars(t) > MAX_TEXT) throw tooLarge(`text is ${chars(t)} characters; the limit is ${MAX_TEXT}`);
  return t;
}

function cleanType(type: unknown): FactType {
  if (!TYPES.includes(type as FactType)) throw invalid(`type must be one of ${TYPES.join(", ")}`);
  return type as FactType;
}

function cleanSource(source: unknown): string {
  if (typeof source !== "string") throw invalid("source must be a string");
  if (chars(wellFormed(source, "source")) > MAX_SOURCE) throw tooLarge(`source is longer than ${MAX_SOURCE} characters`);
  return strip(source);
}

function cleanId(value: unknown): number | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) throw invalid("id must be a positive whole number");
  return value;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/** An ISO-8601 time as the store writes it (UTC, microseconds, Z), as clean_time() in store.py. */
export function cleanTime(value: unknown, name: string): string | null {
  if (value === undefined || value === null) return null;
  const m = ISO.exec(String(value));
  if (!m) throw invalid(`${name} is not an ISO-8601 time`);
  const [, y, mo, d, h, mi, s = "0", frac = "", zone] = m;
  if (!zone) throw invalid(`${name} needs a time zone (end it in Z for UTC)`);
  const offset = zone.toUpperCase() === "Z" ? 0 : (zone[0] === "-" ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi) - offset, Number(s), 0);
  const fields = [Number(mo) <= 12, Number(d) <= 31, Number(h) < 24, Number(mi) < 60, Number(s) < 60];
  if (fields.includes(false) || Number.isNaN(date.getTime())) throw invalid(`${name} is not an ISO-8601 time`);
  return stamp(date, frac.padEnd(6, "0"));
}

function stamp(date: Date, micros?: string): string {
  const iso = date.toISOString();  // YYYY-MM-DDTHH:MM:SS.mmmZ
  return iso.slice(0, 19) + "." + (micros ?? iso.slice(20, 23) + "000") + "Z";
}

const encodeCursor = (f: Fact) => btoa(`${f.created_at}|${f.id}`).replaceAll("+", "-").replaceAll("/", "_");

function decodeCursor(cursor: string): [string, number] {
  try {
    const text = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
    const at = text.lastIndexOf("|");
    const id = text.slice(at + 1);
    if (at < 0 || !/^\d+$/.test(id) || BigInt(id) > MAX_ID) throw new Error();
    return [text.slice(0, at), Number(id)];
  } catch {
    throw invalid("cursor is not one this service gave out");
  }
}

const blob = (v: Float32Array) => v.slice().buffer;  // little-endian float32, as store.py writes it

/** A vocabulary word OR-ed into the keyword query: the query term it came from, their cosine
 * and how many facts hold it (store.py `_expansions`). */
interface Expansion {
  word: string;
  term: string;
  cosine: number;
  facts: number;
}

const shown = (expansions: Expansion[]) => expansions.map(({ word, term, cosine }) => ({ word, term, cosine }));

/** What reranking the fused top did (recall's debug "rerank"): the shared words, the query
 * without them and each reranked fact's text without them with its cosine there. */
interface Reranked {
  shared: string[];
  query: string;
  facts: { id: number; text: string; cosine: number }[];
}

export class MemoryObject extends DurableObject<Env> {
  sql: SqlStorage;
  vectors = new VectorIndex(0);
  vocab: Vocabulary;
  private building: Promise<void> | null = null;  // the vocabulary's first build, while it runs
  embedder: Embedder;
  threshold: number;
  floor: number;
  fusion: Fusion = DEFAULT;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.embedder = makeEmbedder(env);
    this.threshold = Number(env.DUPLICATE_THRESHOLD || DEFAULT_THRESHOLD);
    this.floor = Number(env.REVIEW_FLOOR || DEFAULT_FLOOR);
    this.vocab = new Vocabulary(this.sql, this.embedder.model, this.embedder.dims);
    ctx.blockConcurrencyWhile(async () => {
      migrate(this.sql, ctx.storage);
      this.foldKeys();
      this.loadVectors();
      this.vocab.load();
      this.startPairs();
      await this.fillPairs();
      // Not awaited: a big memory's words take longer to embed than the gate may stay shut.
      void this.vocabulary();
    });
  }

  async alarm(): Promise<void> {
    await this.fillPairs();
  }

  /** Exact-dedup keys written before they were case-folded as Python does (lower case then:
   * "Straße" kept "straße"), computed again once, in one transaction. */
  private foldKeys(): void {
    if (this.meta("text_keys") === "casefold") return;
    this.ctx.storage.transactionSync(() => {
      const rows = this.sql.exec<{ id: number; text: string; text_key: string }>("SELECT id, text, text_key FROM facts").toArray();
      for (const r of rows) {
        if (textKey(r.text) !== r.text_key) this.sql.exec("UPDATE facts SET text_key = ? WHERE id = ?", textKey(r.text), r.id);
      }
      this.setMeta("text_keys", "casefold");
    });
  }

  private meta(key: string): SqlStorageValue | null {
    const rows = this.sql.exec("SELECT value FROM meta WHERE key = ?", key).toArray();
    return rows.length ? rows[0].value : null;
  }

  private setMeta(key: string, value: SqlStorageValue): void {
    this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, value);
  }

  /** Pairs at another floor (or none yet: a memory from before the table) start again: every
   * fact up to the newest now is to be filled in; facts written from now on bring their own. */
  private startPairs(restart = false): void {
    if (!restart && this.meta("pairs_floor") === this.floor) return;
    this.ctx.storage.transactionSync(() => this.resetPairs());
  }

  private resetPairs(): void {
    this.sql.exec("DELETE FROM pairs");
    this.setMeta("pairs_floor", this.floor);
    this.setMeta("pairs_upto", 0);
    this.setMeta("pairs_target", this.sql.exec<{ n: number }>("SELECT coalesce(max(id), 0) AS n FROM facts").one().n);
  }

  /** Every pair at the floor is in the table (the fill has caught up). */
  pairsReady(): boolean {
    return this.meta("pairs_floor") === this.floor && (this.meta("pairs_upto") as number) >= (this.meta("pairs_target") as number);
  }

  /** One slice of the fill: each fact, in id order, with the same-type facts of smaller ids (a
   * fact written meanwhile paired itself with everything when it was written). */
  async fillPairs(): Promise<void> {
    if (this.pairsReady() || this.meta("pairs_floor") !== this.floor) return;
    const upto = this.meta("pairs_upto") as number;
    const target = this.meta("pairs_target") as number;
    const count = Math.max(1, Math.floor(FILL_WORK / Math.max(1, this.vectors.size * this.vectors.dims)));
    const rows = this.sql.exec("SELECT id, type FROM facts WHERE id > ? AND id <= ? ORDER BY id LIMIT ?", upto, target, count).toArray();
    this.ctx.storage.transactionSync(() => {
      for (const r of rows) {
        const id = r.id as number;
        const v = this.vectors.vector(id);
        if (v) this.storePairs(id, r.type as FactType, this.vectors.scores(v, r.type as FactType), (other) => other < id);
      }
      this.setMeta("pairs_upto", rows.length < count ? target : (rows[rows.length - 1].id as number));
    });
    if (!this.pairsReady()) await this.ctx.storage.setAlarm(Date.now() + 10);
  }

  /** A fact's same-type neighbours at or above the floor, from its row of cosines, into pairs. */
  private storePairs(id: number, type: FactType, row: Float64Array, keep: (other: number) => boolean = () => true): void {
    const { ids } = this.vectors;
    for (let i = 0; i < row.length; i++) {
      const other = ids[i];
      if (row[i] >= this.floor && other !== id && keep(other)) {
        this.sql.exec("INSERT OR REPLACE INTO pairs (a, b, type, score) VALUES (?, ?, ?, ?)", Math.min(id, other), Math.max(id, other), type, row[i]);
      }
    }
  }

  /** The vocabulary of a memory from before it, or of one whose words another model embedded:
   * every word of the facts, once; from then on each write adds its own (store.py
   * `_build_vocabulary`). A recall that expands waits for it, and starts it again if the model
   * was down the last time. */
  private vocabulary(): Promise<void> {
    if (this.meta("words_model") === this.embedder.model) return Promise.resolve();
    this.building ??= this.buildVocabulary()
      .catch((e) => console.error("could not build the vocabulary", e))
      .finally(() => { this.building = null; });
    return this.building;
  }

  private async buildVocabulary(): Promise<void> {
    const words = await this.embedLacking(() => this.factWords());
    this.ctx.storage.transactionSync(() => this.rebuildVocabulary(words));
    this.vocab.reload();
  }

  /** Every word of the facts, each once (the vocabulary a rebuild writes). */
  private factWords(): string[] {
    return [...new Set(this.sql.exec<{ text: string }>("SELECT text FROM facts ORDER BY id").toArray().flatMap((r) => vocabularyWords(r.text)))];
  }

  /** The vocabulary as the facts' words, inside a write (then `vocab.reload`). */
  private rebuildVocabulary(vectors: Map<string, Float32Array>): void {
    const words = this.factWords();
    this.vocab.clear();
    this.vocab.add(words, words.map((w) => vectors.get(w)!));
    this.setMeta("words_model", this.embedder.model);
  }

  private loadVectors(): void {
    this.vectors = new VectorIndex(this.embedder.dims);
    const rows = this.sql.exec(
      "SELECT v.fact_id, f.type, v.embedding FROM vectors v JOIN facts f ON f.id = v.fact_id WHERE v.model = ? AND v.dims = ?",
      this.embedder.model, this.embedder.dims,
    );
    for (const r of rows) this.vectors.put(r.fact_id as number, r.type as FactType, new Float32Array(r.embedding as ArrayBuffer));
  }

  async fetch(request: Request): Promise<Response> {
    try {
      return await this.route(request);
    } catch (e) {
      if (e instanceof HttpError) return errorResponse(e);
      console.error("unexpected error", request.method, new URL(request.url).pathname, e);
      return errorResponse(new HttpError(500, "internal", "the memory failed unexpectedly; its log has the details"));
    }
  }

  private async route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    // The Worker strips the memory's name: what reaches us is the contract's own path.
    const path = url.pathname;
    const method = request.method === "HEAD" ? "GET" : request.method;
    const p = url.searchParams;
    const one = /^\/facts\/(\d+)(\/neighbours)?$/.exec(path);
    const routes: Record<string, Record<string, () => Promise<unknown> | unknown>> = {
      "/health": { GET: () => this.health() },
      "/openapi.json": { GET: () => openapi },
      "/facts": {
        GET: () => this.list(p.get("type") || null, p.get("source") || null, p.get("q") || null,
          intParam(p.get("limit"), "limit", 50, 1, MAX_LIMIT), p.get("cursor") || null),
        POST: async () => this.addOne(await readJson(request)),
      },
      "/facts/batch": { POST: async () => this.addBatch(await readJson(request)) },
      "/recall": { POST: async () => this.recall(await readJson(request)) },
      "/explain": { POST: async () => this.explain(await readJson(request)) },
      "/duplicates": {
        GET: () => this.duplicates(floatParam(p.get("threshold"), "threshold", this.threshold, 0.5, 1.0),
          p.get("type") || null, intParam(p.get("limit"), "limit", 1000, 1, 10_000)),
      },
      "/duplicates/nearest": { GET: () => ({ nearest: this.nearest(p.get("type") || null), floor: this.floor }) },
      "/stats": { GET: () => this.stats() },
      "/reindex": { POST: () => this.reindex() },
    };
    if (one) {
      const id = BigInt(one[1]) > MAX_ID ? -1 : Number(one[1]);
      routes[path] = one[2]
        ? { GET: () => this.neighbours(id, intParam(p.get("limit"), "limit", 10, 1, MAX_LIMIT)) }
        : {
            GET: () => this.get(id),
            PATCH: async () => this.edit(id, await readJson(request)),
            DELETE: () => this.delete(id),
          };
    }
    const handlers = routes[path];
    if (!handlers) throw new HttpError(404, "not_found", `no route ${request.method} ${path}`);
    const handler = handlers[method];
    if (!handler) {
      const e = new HttpError(405, "method_not_allowed", `${request.method} is not allowed on ${path}`);
      return errorResponse(e, { Allow: Object.keys(handlers).join(", ") });
    }
    const result = await handler();
    if (result instanceof Response) return result;
    return Response.json(result);
  }

  // -- reads ----------------------------------------------------------------------------

  health() {
    return { ok: true, facts: this.count(), model: this.embedder.model, dims: this.embedder.dims, mode: "hybrid" };
  }

  count(): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM facts").one().n;
  }

  get(id: number): Fact {
    const rows = this.sql.exec(`SELECT ${FACT_COLUMNS} FROM facts WHERE id = ?`, id).toArray();
    if (!rows.length) throw notFound(`no fact with id ${id < 0 ? "past 2^63" : id}`);
    return asFact(rows[0]);
  }

  private getMany(ids: Iterable<number>): Map<number, Fact> {
    const out = new Map<number, Fact>();
    const all = [...new Set(ids)];
    // A Durable Object binds at most 100 parameters a statement.
    for (let i = 0; i < all.length; i += 100) {
      const part = all.slice(i, i + 100);
      const rows = this.sql.exec(`SELECT ${FACT_COLUMNS} FROM facts WHERE id IN (${part.map(() => "?").join(",")})`, ...part);
      for (const r of rows) out.set(r.id as number, asFact(r));
    }
    return out;
  }

  list(type: string | null, source: string | null, q: string | null, limit: number, cursor: string | null) {
    const where: string[] = [];
    const args: SqlStorageValue[] = [];
    if (type) { where.push("type = ?"); args.push(cleanType(type)); }
    if (source) { where.push("source = ?"); args.push(wellFormed(source, "source")); }
    if (q) {
      // No fact is longer than MAX_TEXT, so no longer substring can match (and SQLite caps a LIKE pattern).
      if (chars(q) > MAX_TEXT) throw invalid(`q is ${chars(q)} characters; the limit is ${MAX_TEXT}, the longest a fact can be`);
      wellFormed(q, "q");
      // instr, not LIKE: the object's SQLite caps a LIKE pattern at 50 bytes. lower() folds ASCII
      // only, as LIKE does, so both memories match the same facts.
      where.push("instr(lower(text), lower(?)) > 0");
      args.push(q);
    }
    const filters = where.join(" AND ") || "1";
    let pageWhere = filters;
    const pageArgs = [...args];
    if (cursor) {
      const [createdAt, id] = decodeCursor(cursor);
      pageWhere += " AND (created_at < ? OR (created_at = ? AND id < ?))";
      pageArgs.push(createdAt, createdAt, id);
    }
    const total = this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM facts WHERE ${filters}`, ...args).one().n;
    const rows = this.sql.exec(
      `SELECT ${FACT_COLUMNS} FROM facts WHERE ${pageWhere} ORDER BY created_at DESC, id DESC LIMIT ?`, ...pageArgs, limit + 1,
    ).toArray();
    const facts = rows.slice(0, limit).map(asFact);
    return { facts, next_cursor: rows.length > limit ? encodeCursor(facts[facts.length - 1]) : null, total };
  }

  // -- writes ---------------------------------------------------------------------------

  private async embed(texts: string[]): Promise<Float32Array[]> {
    try {
      return await this.embedder.embed(texts);
    } catch (e) {
      throw new HttpError(503, "model_unavailable", `the embedding model failed: ${(e as Error).message}`);
    }
  }

  /** Vectors of words, each word embedded alone, in calls of their own. */
  private async embedWords(words: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < words.length; i += MAX_BATCH) out.push(...(await this.embed(words.slice(i, i + MAX_BATCH))));
    return out;
  }

  /** `have` with a vector for each of `words()`, read again after each await: a write that lands
   * meanwhile, or a reindex, may change what is lacking. Nothing lacks when it returns, so a
   * transaction right after it finds every vector it needs. */
  private async embedLacking(words: () => string[], have = new Map<string, Float32Array>()): Promise<Map<string, Float32Array>> {
    for (let lacking = words().filter((w) => !have.has(w)); lacking.length; lacking = words().filter((w) => !have.has(w))) {
      const vectors = await this.embedWords(lacking);
      lacking.forEach((w, i) => have.set(w, vectors[i]));
    }
    return have;
  }

  /** The texts' vectors, and those of their words the vocabulary lacks, in a call of their own
   * (store.py `_embed_facts`). */
  private async embedFacts(texts: string[]): Promise<[Float32Array[], Map<string, Float32Array>]> {
    const missing = () => this.vocab.missing(texts);
    const [vectors, words] = await Promise.all([this.embed(texts), this.embedLacking(missing)]);
    return [vectors, await this.embedLacking(missing, words)];  // whatever went missing during the other call
  }

  /** The new words of stored texts into the vocabulary, inside their write (store.py `_add_words`). */
  private addWords(texts: string[], vectors: Map<string, Float32Array>): void {
    const words = this.vocab.missing(texts);
    this.vocab.add(words, words.map((w) => vectors.get(w)!));
  }

  private exactDuplicate(text: string, type: FactType, exclude: number | null = null): [number, string, number] | null {
    const rows = this.sql.exec("SELECT id FROM facts WHERE type = ? AND text_key = ? AND id IS NOT ? LIMIT 1", type, textKey(text), exclude).toArray();
    return rows.length ? [rows[0].id as number, "exact", 1.0] : null;
  }

  /** [existing id, "exact" or "near", score] of a fact this one would duplicate. */
  private findDuplicate(text: string, type: FactType, vector: Float32Array, exclude: number | null = null,
    row: Float64Array | null = null): [number, string, number] | null {
    const exact = this.exactDuplicate(text, type, exclude);
    if (exact) return exact;
    // The nearest same-type facts at or above the threshold, best first; the first that does not
    // differ in a number, date, name or negation is the duplicate (dedup.ts says why). A row of
    // cosines already computed (for the pairs) gives the same candidates without a second scan.
    const near = (row ? this.over(row, this.threshold) : this.vectors.search(vector, type, NEAR_CANDIDATES, exclude))
      .filter(([, s]) => s >= this.threshold);
    if (!near.length) return null;
    const texts = this.getMany(near.map(([id]) => id));
    const same = near.find(([id]) => texts.has(id) && distinct(text, texts.get(id)!.text) === null);
    return same ? [same[0], "near", same[1]] : null;
  }

  /** The NEAR_CANDIDATES best [id, cosine] of a row at or above `min`, ties by id, as search orders them. */
  private over(row: Float64Array, min: number): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < row.length; i++) if (row[i] >= min) out.push([this.vectors.ids[i], row[i]]);
    return out.sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, NEAR_CANDIDATES);
  }

  private async addOne(data: Record<string, unknown>): Promise<Response> {
    const [r] = await this.addMany([data]);
    return Response.json(r.body, { status: r.status });
  }

  private async addBatch(data: Record<string, unknown>) {
    const facts = data.facts;
    if (!Array.isArray(facts) || facts.some((f) => typeof f !== "object" || f === null || Array.isArray(f))) {
      throw invalid("facts must be a list of objects");
    }
    if (facts.length > MAX_BATCH) throw tooLarge(`a batch holds at most ${MAX_BATCH} facts`);
    return { results: (await this.addMany(facts)).map((r) => r.body) };
  }

  /** Store facts with dedup on write: each fact all or nothing, the batch one transaction. */
  private async addMany(items: Record<string, unknown>[]) {
    const clean = items.map((i) => ({
      text: cleanText(i.text),
      type: cleanType(i.type ?? "fact"),
      source: cleanSource(i.source ?? ""),
      created_at: cleanTime(i.created_at, "created_at"),
      updated_at: cleanTime(i.updated_at, "updated_at"),
      id: cleanId(i.id),
    }));
    const [vectors, words] = clean.length ? await this.embedFacts(clean.map((c) => c.text)) : [[], new Map()];
    // After the await: other writes may have landed meanwhile, so every check is made here.
    const added: number[] = [];
    const stored: string[] = [];
    try {
      const results = this.ctx.storage.transactionSync(() => {
        const out = clean.map((c, i) => {
          // One scan of the type's rows serves the dedup check and the pairs (earlier facts of the
          // batch are in the matrix already).
          const row = this.vectors.scores(vectors[i], c.type);
          const dup = this.findDuplicate(c.text, c.type, vectors[i], null, row);
          if (dup) {
            const fact = this.get(dup[0]);
            return { status: 200, body: { id: fact.id, created: false, duplicate: { match: dup[1], score: round6(dup[2]) }, fact } };
          }
          const created = c.created_at ?? stamp(new Date());
          const updated = c.updated_at ?? created;
          if (c.id !== null && this.sql.exec("SELECT 1 FROM facts WHERE id = ?", c.id).toArray().length) {
            throw new HttpError(409, "id_taken", `fact id ${c.id} is in use by another fact`);
          }
          const id = this.sql.exec<{ id: number }>(
            "INSERT INTO facts (id, text, text_key, type, source, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
            c.id, c.text, textKey(c.text), c.type, c.source, created, updated,
          ).one().id;
          this.sql.exec("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", id, c.text);
          this.sql.exec("INSERT INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
            id, this.embedder.model, vectors[i].length, blob(vectors[i]));
          this.storePairs(id, c.type, row);
          this.vectors.put(id, c.type, vectors[i]);  // later facts of the batch dedup against it
          added.push(id);
          stored.push(c.text);
          const fact: Fact = { id, text: c.text, type: c.type, source: c.source, created_at: created, updated_at: updated };
          return { status: 201, body: { id, created: true, fact } };
        });
        this.addWords(stored, words);
        return out;
      });
      this.vocab.load();
      return results;
    } catch (e) {
      for (const id of added) this.vectors.remove(id);  // the transaction rolled back: so does the matrix
      throw e;
    }
  }

  private async edit(id: number, data: Record<string, unknown>): Promise<Fact> {
    const old = this.get(id);
    const text = "text" in data ? cleanText(data.text) : null;
    const type = "type" in data ? cleanType(data.type) : null;
    const source = "source" in data ? cleanSource(data.source) : null;
    let [[vector], words] = text !== null && text !== old.text ? await this.embedFacts([text]) : [[null], new Map()];
    let current = this.get(id);  // after the await: it may have changed or gone
    if (text !== null && text !== current.text && vector === null) {
      [[vector], words] = await this.embedFacts([text]);  // the text changed under us since we looked
      current = this.get(id);
    }
    const next = { text: text ?? current.text, type: type ?? current.type, source: source ?? current.source };
    const reembed = next.text !== current.text;
    if (reembed && vector === null) throw new HttpError(503, "model_unavailable", "the fact changed while this edit was made: try again");
    const v = reembed ? vector! : this.vectors.vector(id);
    // One row of cosines serves the duplicate check and the fact's new pairs.
    const row = (reembed || next.type !== current.type) && v ? this.vectors.scores(v, next.type) : null;
    if (row && this.vectors.row.has(id)) row[this.vectors.row.get(id)!] = -Infinity;  // not its own duplicate
    if (row) {
      const dup = this.findDuplicate(next.text, next.type, v!, id, row);
      if (dup) {
        const existing = this.get(dup[0]);
        throw new HttpError(409, "duplicate", `this edit would duplicate fact ${existing.id} (${dup[1]} match, score ${dup[2].toFixed(3)})`,
          { existing, match: dup[1], score: dup[2] });
      }
    }
    const updated = stamp(new Date());
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("UPDATE facts SET text = ?, text_key = ?, type = ?, source = ?, updated_at = ? WHERE id = ?",
        next.text, textKey(next.text), next.type, next.source, updated, id);
      if (reembed) {
        this.sql.exec("DELETE FROM facts_fts WHERE rowid = ?", id);
        this.sql.exec("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", id, next.text);
        this.sql.exec("INSERT OR REPLACE INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
          id, this.embedder.model, v!.length, blob(v!));
        this.addWords([next.text], words);
      }
      if (row) {  // its pairs are those of its new text and type
        this.sql.exec("DELETE FROM pairs WHERE a = ? OR b = ?", id, id);
        this.storePairs(id, next.type, row);
      }
    });
    if (v) this.vectors.put(id, next.type, reembed ? v : v.slice());
    this.vocab.load();
    return { id, ...next, created_at: current.created_at, updated_at: updated };
  }

  delete(id: number) {
    const fact = this.get(id);
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM facts WHERE id = ?", id);
      this.sql.exec("DELETE FROM facts_fts WHERE rowid = ?", id);
      this.sql.exec("DELETE FROM vectors WHERE fact_id = ?", id);
      this.sql.exec("DELETE FROM pairs WHERE a = ? OR b = ?", id, id);
    });
    this.vectors.remove(id);
    return { deleted: id, fact };
  }

  private async reindex() {
    const rows = this.sql.exec("SELECT id, text, type FROM facts ORDER BY id").toArray();
    const vectors: Float32Array[] = [];
    for (let i = 0; i < rows.length; i += MAX_BATCH) vectors.push(...(await this.embed(rows.slice(i, i + MAX_BATCH).map((r) => r.text as string))));
    const words = await this.embedLacking(() => this.factWords());  // the last await
    // Facts written while we embedded have their own fresh vectors already; rebuild the rest.
    this.ctx.storage.transactionSync(() => {
      this.sql.exec("DELETE FROM facts_fts");
      this.sql.exec("INSERT INTO facts_fts (rowid, text) SELECT id, text FROM facts");
      rows.forEach((r, i) => {
        const now = this.sql.exec("SELECT text FROM facts WHERE id = ?", r.id).toArray()[0];
        if (now && now.text === r.text) {
          this.sql.exec("INSERT OR REPLACE INTO vectors (fact_id, model, dims, embedding) VALUES (?, ?, ?, ?)",
            r.id, this.embedder.model, vectors[i].length, blob(vectors[i]));
        }
      });
      this.sql.exec("DELETE FROM vectors WHERE fact_id NOT IN (SELECT id FROM facts)");
      this.resetPairs();  // every vector may have changed: the pairs are filled in again
      this.rebuildVocabulary(words);
    });
    this.loadVectors();
    this.vocab.reload();
    await this.fillPairs();
    const n = this.count();
    return { facts: n, fts: n, vectors: this.vectors.size, model: this.embedder.model };
  }

  // -- recall ---------------------------------------------------------------------------

  private checkQuery(query: unknown, type: string | null): string {
    if (typeof query !== "string" || !strip(query)) throw invalid("query is empty");
    if (chars(query) > MAX_QUERY) throw tooLarge(`query is ${chars(query)} characters; the limit is ${MAX_QUERY}`);
    if (type !== null) cleanType(type);
    return wellFormed(query, "query");
  }

  /** The query's vector, its expandable terms' vectors (hybrid recall only; a term the vocabulary
   * holds keeps its stored vector) and a warning when the model is down (store.py `_embed_query`). */
  private async embedQuery(query: string, f: Fusion, mode: Mode): Promise<[Float32Array | null, Float32Array[] | null, string | null]> {
    const asked = mode === "hybrid" ? expandableTerms(f, query) : [];
    try {
      if (asked.length) await this.vocabulary();  // a memory from before it: its words first
      const stored = this.vocab.vectors(asked);
      const lacking = asked.filter((t) => !stored.has(t));
      // One model call: a text's vector does not depend on the others in its batch.
      const [qvec, ...fresh] = await this.embedder.embed([query, ...lacking]);
      lacking.forEach((t, i) => stored.set(t, fresh[i]));
      return [qvec, asked.length ? asked.map((t) => stored.get(t)!) : null, null];
    } catch (e) {
      return [null, null, `the embedding model failed (${(e as Error).message}): keyword-only recall`];
    }
  }

  /** Vocabulary words close to the query's terms (recall.ts `expand`), with how many facts hold
   * each; a word no fact holds any more, or too many (`expansionKept`), is left out (store.py `_expansions`). */
  private expansions(query: string, termVectors: Float32Array[] | null, f: Fusion): Expansion[] {
    if (!termVectors || !f.expand) return [];
    return expand(terms(query, f.alias_self), this.vocab.closest(termVectors), f.expand)
      .map(([word, term, cosine]) => ({ word, term, cosine, facts: this.having(word) }))
      .filter((e) => expansionKept(e.facts));
  }

  private having(term: string): number {
    return this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM facts_fts WHERE facts_fts MATCH ?", quote(term)).one().n;
  }

  /** Top `depth` by BM25 as [id, bm25], lower (better) first. */
  private keyword(match: string, type: FactType | null, depth: number): [number, number][] {
    if (!match) return [];
    try {
      const rows = type
        ? this.sql.exec("SELECT facts_fts.rowid AS id, bm25(facts_fts) AS s FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid"
            + " WHERE facts_fts MATCH ? AND facts.type = ? ORDER BY s, facts_fts.rowid LIMIT ?", match, type, depth)
        : this.sql.exec("SELECT rowid AS id, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ? ORDER BY s, rowid LIMIT ?", match, depth);
      return rows.toArray().map((r) => [r.id as number, r.s as number]);
    } catch {
      return [];  // the builder quotes every term, so this should not happen: keep the vector list
    }
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

  private fusionParam(data: Record<string, unknown>): Fusion {
    const raw = data.fusion;
    if (raw === undefined || raw === null) return this.fusion;
    if (typeof raw !== "object" || Array.isArray(raw)) throw invalid("fusion must be an object");
    const r = raw as Record<string, unknown>;
    const unknown = Object.keys(r).filter((k) => !["preset", ...Object.keys(DEFAULT)].includes(k)).sort();
    // A lone surrogate written as \\udXXX, as Python's backslashreplace writes it: the message stays valid text.
    const escaped = unknown.join(", ").replace(/\p{Surrogate}/gu, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
    if (unknown.length) throw invalid(`unknown fusion settings: ${escaped}`);
    const base = "preset" in r ? PRESETS[choiceParam(r.preset, "fusion.preset", "default", Object.keys(PRESETS))] : this.fusion;
    return {
      k: intParam(r.k, "fusion.k", base.k, 0, 1000),
      depth: intParam(r.depth, "fusion.depth", base.depth, 1, 1000),
      kw_weight: floatParam(r.kw_weight, "fusion.kw_weight", base.kw_weight, 0, 10),
      vec_weight: floatParam(r.vec_weight, "fusion.vec_weight", base.vec_weight, 0, 10),
      phrases: boolParam(r.phrases, "fusion.phrases", base.phrases),
      method: choiceParam(r.method, "fusion.method", base.method, METHODS),
      alias_self: boolParam(r.alias_self, "fusion.alias_self", base.alias_self),
      expand: floatParam(r.expand, "fusion.expand", base.expand, 0, 1),
      rerank: intParam(r.rerank, "fusion.rerank", base.rerank, 0, MAX_RERANK),
    };
  }

  /** The keyword list, the vector list, every fused hit best first and the query's information
   * (method "info"): the candidates this object finds, ranked by recall.ts `fuse` (synchronous:
   * no write can land between). `match` holds the `expansions` (see `plan`). */
  private rank(query: string, match: string, expansions: Expansion[], qvec: Float32Array | null, type: FactType | null, f: Fusion,
    mode: Mode = "hybrid") {
    const kw = mode === "vector" ? [] : this.keyword(match, type, f.depth);
    const vec = mode !== "keyword" && qvec && this.vectors.size ? this.vectors.search(qvec, type, f.depth) : [];
    const words = expansions.map((e) => e.word);
    const { counts, info } = kw.length ? this.termCounts(infoTerms(f, query, words), expansions) : { counts: [], info: null };
    return { kw, vec, info, counts, fused: fuse(kw.map(([id, s]) => [id, -s]), vec, f, info) };
  }

  /** The FTS5 query and the expansions in it, hybrid recall only (store.py `_plan`). */
  private plan(query: string, termVectors: Float32Array[] | null, f: Fusion, mode: Mode = "hybrid") {
    if (mode === "vector") return { match: "", expansions: [] };
    const expansions = mode === "hybrid" ? this.expansions(query, termVectors, f) : [];
    return { match: matchOf(f, query, expansions.map((e) => e.word)), expansions };
  }

  /** Each query term with how many facts hold it and its IDF, as bm25() weighs it, and the
   * query's information, their sum (store.py `_term_counts`). An expansion word says its term. */
  private termCounts(queryTerms: string[], expansions: Expansion[] = []) {
    if (!queryTerms.length) return { counts: [], info: null };
    const rows = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM facts").one().n;
    const known = new Map(expansions.map((e) => [e.word, e]));
    const having = queryTerms.map((term) => known.get(term)?.facts ?? this.having(term));
    const counts = queryTerms.map((term, i) => ({
      term, facts: having[i], idf: idf(rows, having[i]), ...(known.has(term) ? { from: known.get(term)!.term } : {}),
    }));
    return { counts, info: information(rows, having) };
  }

  /** recall.ts `rerank` over the fused top `f.rerank`, and what it did (null when nothing), as
   * store.py `_rerank`. `facts` holds the top's rows, read before: the model call is the one
   * await, and after it nothing is read, only reordered. The model failing leaves the order. */
  private async rerankTop(query: string, fused: Fused[], f: Fusion, facts: Map<number, Fact>): Promise<[Fused[], Reranked | null]> {
    const head = fused.slice(0, f.rerank);
    const plan = rerankPlan(query, head.map((h) => facts.get(h.id)!.text), f.alias_self);
    if (!plan) return [fused, null];
    let vectors: Float32Array[];
    try {
      vectors = await this.embedder.embed([plan.query, ...plan.facts]);  // one call, as the query's
    } catch (e) {
      console.error("reranking failed; the fused order stands", e);
      return [fused, null];
    }
    const cosines = vectors.slice(1).map((v) => dot(v, vectors[0]));
    const done = {
      shared: plan.shared, query: plan.query, facts: head.map((h, i) => ({ id: h.id, text: plan.facts[i], cosine: cosines[i] })),
    };
    return [[...rerank(head, cosines), ...fused.slice(head.length)], done];
  }

  private async recall(data: Record<string, unknown>) {
    const type = optionalStr(data, "type");
    const query = this.checkQuery(data.query, type);
    const limit = intParam(data.limit, "limit", 15, 1, MAX_LIMIT);
    const debug = data.debug ?? false;
    if (typeof debug !== "boolean") throw invalid("debug must be true or false");
    const f = this.fusionParam(data);
    let mode = choiceParam(data.mode, "mode", "hybrid", MODES);
    const [qvec, termVectors, warning] = mode === "keyword" ? [null, null, null] : await this.embedQuery(query, f, mode);
    if (!qvec && mode !== "keyword") mode = "keyword";  // the model is down: say so, answer by words
    // From here to the rerank nothing awaits, so the ranking and the rows it names are one
    // consistent view; the rerank's model call only reorders rows already read.
    const started = performance.now();
    const { match, expansions } = this.plan(query, termVectors, f, mode);
    const { kw, vec, info, counts, fused: all } = this.rank(query, match, expansions, qvec, type as FactType | null, f, mode);
    const top = all.slice(0, Math.max(limit, mode === "hybrid" ? f.rerank : 0));
    const wanted = new Set(top.map((h) => h.id));
    let marked = new Map<number, string>();
    if (debug) {
      for (const [id] of [...kw, ...vec]) wanted.add(id);
      marked = new Map(this.matching(match, kw.map(([id]) => id), true));
    }
    const facts = this.getMany(wanted);
    // Ranking and reading the rows, without the embedding (on Cloudflare the clock only moves
    // between I/O, so there it reads 0; locally it is real).
    const rankMs = performance.now() - started;
    const [ranked, reranked] = mode === "hybrid" ? await this.rerankTop(query, top, f, facts) : [top, null];
    const fused = ranked.slice(0, limit);
    const bm25 = new Map(kw);
    const cosine = new Map(vec);
    const out: Record<string, unknown> = {
      results: fused.map((h) => ({
        fact: facts.get(h.id), score: score(h), via: via(h.kw_rank, h.vec_rank), kw_rank: h.kw_rank, vec_rank: h.vec_rank,
        bm25: bm25.get(h.id) ?? null, cosine: cosine.get(h.id) ?? null, parts: { kw: h.kw_part, vec: h.vec_part, rerank: h.rerank_part },
      })),
      mode: warning ? "keyword-only" : mode,
    };
    if (warning) out.warning = warning;
    if (debug) {
      out.kw = kw.map(([id, s], i) => ({ fact: facts.get(id), rank: i + 1, bm25: s, highlighted: marked.get(id) ?? facts.get(id)!.text }));
      out.vec = vec.map(([id, s], i) => ({ fact: facts.get(id), rank: i + 1, cosine: s }));
      out.match = match;
      out.expansions = shown(expansions);
      out.rerank = reranked;
      out.information = info;
      out.terms = counts;
      out.fusion = f;
      out.timing = { rank_ms: rankMs };
    }
    return out;
  }

  private async explain(data: Record<string, unknown>) {
    const type = optionalStr(data, "type");
    const query = this.checkQuery(data.query, type);
    const id = intParam(data.id, "id", 0, 1, Number.MAX_SAFE_INTEGER);
    const f = this.fusionParam(data);
    this.get(id);  // an unknown id is a 404 before the model spends time on the query
    const [qvec, termVectors, warning] = await this.embedQuery(query, f, "hybrid");
    const fact = this.get(id);  // again after the await: it may have been deleted meanwhile
    const { match, expansions } = this.plan(query, termVectors, f);
    const queryTerms = new Set(this.tokens(matchTerms(match).join(" ")));
    const factTerms = this.sql.exec<{ term: string }>("SELECT term FROM fts_terms WHERE doc = ? ORDER BY offset", id).toArray().map((r) => r.term);
    let bm25: number | null = null;
    let kwRank: number | null = null;
    if (match) {
      // rowid checked here too: see `matching` on the object's SQLite and rowid constraints.
      const row = this.sql.exec("SELECT rowid AS id, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ? AND rowid = ?", match, id)
        .toArray().find((r) => r.id === id);
      if (row && (!type || fact.type === type)) {
        bm25 = row.s as number;
        const [typeSql, typeArgs] = type ? [" AND facts.type = ?", [type]] : ["", []];
        kwRank = 1 + this.sql.exec<{ n: number }>(
          "SELECT count(*) AS n FROM (SELECT bm25(facts_fts) AS s, facts_fts.rowid AS id FROM facts_fts"
            + ` JOIN facts ON facts.id = facts_fts.rowid WHERE facts_fts MATCH ?${typeSql}) WHERE s < ? OR (s = ? AND id < ?)`,
          match, ...typeArgs, bm25, bm25, id,
        ).one().n;
      }
    }
    const [vecRank, cosine] = qvec ? this.vectors.rankOf(qvec, id, type as FactType | null) : [null, null];
    const { fused: all, info } = this.rank(query, match, expansions, qvec, type as FactType | null, f);
    // As recall reranks (hybrid): the top's rows read before the model call, nothing after it.
    const top = qvec ? this.getMany(all.slice(0, f.rerank).map((h) => h.id)) : new Map<number, Fact>();
    const [fused] = qvec ? await this.rerankTop(query, all, f, top) : [all];
    const at = fused.findIndex((h) => h.id === id);
    const hit = at >= 0 ? fused[at] : null;
    const parts = hit ? { kw: hit.kw_part, vec: hit.vec_part, rerank: hit.rerank_part } : { kw: 0, vec: 0, rerank: 0 };
    const out: Record<string, unknown> = {
      fact, match, query_terms: [...queryTerms].sort(), fact_terms: factTerms,
      matched_terms: [...queryTerms].filter((t) => factTerms.includes(t)).sort(),
      bm25, kw_rank: kwRank, cosine, vec_rank: vecRank, depth: f.depth,
      kw_contribution: parts.kw, vec_contribution: parts.vec, rerank_contribution: parts.rerank,
      score: parts.kw + parts.vec + parts.rerank, information: info, expansions: shown(expansions), fused_rank: hit ? at + 1 : null, fusion: f,
    };
    if (warning) out.warning = warning;
    return out;
  }

  // -- curation -------------------------------------------------------------------------

  private types(type: string | null): FactType[] {
    return type ? [cleanType(type)] : [...TYPES];
  }

  duplicates(threshold: number, type: string | null, limit: number) {
    const types = this.types(type);
    if (threshold >= this.floor && this.pairsReady()) {  // the pairs kept on write
      const where = `score >= ? AND type IN (${types.map(() => "?").join(",")})`;
      const total = this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM pairs WHERE ${where}`, threshold, ...types).one().n;
      const rows = this.sql.exec(`SELECT score, a, b FROM pairs WHERE ${where} ORDER BY score DESC, a, b LIMIT ?`, threshold, ...types, limit).toArray();
      const facts = this.getMany(rows.flatMap((r) => [r.a as number, r.b as number]));
      return { pairs: rows.map((r) => ({ a: facts.get(r.a as number), b: facts.get(r.b as number), score: r.score })), total, threshold };
    }
    const found: [number, number, number][] = [];
    for (const t of types) for (const p of this.vectors.pairs(t)) if (p[0] >= threshold) found.push([p[0], Math.min(p[1], p[2]), Math.max(p[1], p[2])]);
    found.sort((x, y) => y[0] - x[0] || x[1] - y[1] || x[2] - y[2]);
    const top = found.slice(0, limit);
    const facts = this.getMany(top.flatMap(([, a, b]) => [a, b]));
    return { pairs: top.map(([s, a, b]) => ({ a: facts.get(a), b: facts.get(b), score: s })), total: found.length, threshold };
  }

  /** Each fact's nearest same-type cosine, for the histogram: from the pairs kept on write, so
   * facts whose nearest is below the floor are not listed (as store.py's `nearest`). */
  nearest(type: string | null) {
    const types = this.types(type);
    if (this.pairsReady()) {
      // Two grouped scans, each in index order (the table's key, then pairs_b, which covers it).
      const marks = types.map(() => "?").join(",");
      const best = new Map<number, number>();
      for (const side of ["a", "b"]) {
        for (const r of this.sql.exec(`SELECT ${side} AS id, max(score) AS s FROM pairs WHERE type IN (${marks}) GROUP BY ${side}`, ...types)) {
          if (!(best.get(r.id as number)! >= (r.s as number))) best.set(r.id as number, r.s as number);
        }
      }
      return [...best].sort((x, y) => x[0] - y[0]).map(([id, score]) => ({ id, score }));
    }
    const best = new Map<number, number>();
    for (const t of this.types(type)) {
      for (const [s, a, b] of this.vectors.pairs(t)) {
        if (!(best.get(a)! >= s)) best.set(a, s);
        if (!(best.get(b)! >= s)) best.set(b, s);
      }
    }
    return [...best].filter(([, score]) => score >= this.floor).map(([id, score]) => ({ id, score }));
  }

  neighbours(id: number, limit: number) {
    this.get(id);
    const v = this.vectors.vector(id);
    if (!v) return { neighbours: [] };
    const near = this.vectors.search(v.slice(), null, limit, id);
    const facts = this.getMany(near.map(([i]) => i));
    return { neighbours: near.map(([i, s]) => ({ fact: facts.get(i), cosine: s })) };
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
    };
    const orphans = {
      fts_without_fact: ids("SELECT rowid FROM facts_fts WHERE rowid NOT IN (SELECT id FROM facts)"),
      vectors_without_fact: ids("SELECT fact_id FROM vectors WHERE fact_id NOT IN (SELECT id FROM facts)"),
      facts_without_fts: ids("SELECT id FROM facts WHERE id NOT IN (SELECT rowid FROM facts_fts)"),
      facts_without_vector: ids("SELECT id FROM facts WHERE id NOT IN (SELECT fact_id FROM vectors)"),
    };
    const byType = new Map(this.sql.exec("SELECT type, count(*) AS n FROM facts GROUP BY type").toArray().map((r) => [r.type, r.n]));
    counts.by_type = Object.fromEntries(TYPES.map((t) => [t, byType.get(t) ?? 0]));
    counts.orphans = orphans;
    counts.consistent = !Object.values(orphans).some((o) => o.length)
      && counts.facts === counts.fts && counts.fts === counts.vectors && counts.vectors === counts.vectors_in_memory;
    return counts;
  }
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
