// One memory: a SQLite-backed Durable Object holding facts, their FTS5 index and their vectors,
// serving the contract of docs/memory-api.md as memories/store.py + service.py serve it locally.
// This file answers which route does what and how the object opens; the work is in the parts
// (the same files as memories/): state.ts, reading.ts, writing.ts, reindexing.ts, searching.ts,
// review.ts, conflicts.ts, undo.ts, background.ts, history.ts and recall_log.ts, around one shared State.

import { DurableObject } from "cloudflare:workers";
import openapi from "../../docs/openapi.json";
import { Background } from "./storage/background";
import { Conflicts } from "./review/conflicts";
import { directory, noMemory } from "./serving/directory";
import { MAX_BATCH, MAX_FACT_ID, MAX_ID, MAX_LIMIT, chars, stamp } from "./facts";
import { forget } from "./review/forgetting";
import { IDLE_SECONDS, OneImport, importFields } from "./serving/one_import";
import { CONTENT_TYPE as METRICS_TYPE, type Held, Metrics, routeOf } from "./serving/metrics";
import { DEFAULT_KEEP as HISTORY_KEEP, History, MAX_NOTE, cleanClient } from "./review/history";
import { HttpError, boolParam, errorResponse, floatParam, intParam, invalid, notFound, readJson, strictBool, tooLarge, wellFormed } from "./serving/http";
import { Reader } from "./recall/reading";
import { DEFAULT_KEEP as RECALL_LOG_KEEP, RecallLog } from "./recall/recall_log";
import { reindex } from "./storage/reindexing";
import { DEFAULT as PROPOSE, cleanMode } from "./writes/replace_at_once";
import { Review } from "./review/near_duplicates";
import { cleanReview, isDefault } from "./review/reviewing";
import { migrate } from "./storage/schema";
import { Searcher, fusionParam } from "./recall/searching";
import { settingsAnswer } from "./model/settings";
import { State, envCount } from "./storage/state";
import { textKey } from "./text";
import { Undo } from "./review/undo";
import { Writer } from "./writes/writing";

export class MemoryObject extends DurableObject<Env> {
  private state: State;
  private reader: Reader;
  private writer: Writer;
  private conflicts: Conflicts;
  private undoing: Undo;
  private searcher: Searcher;
  private review: Review;
  private background: Background;
  readonly history: History;  // (worker/test/ sets their `keep`)
  readonly recallLog: RecallLog;
  private metrics = new Metrics();  // since this object started (metrics.ts)
  private imports: OneImport;  // the import running into this memory (one_import.ts)
  private exists = false;  // see `existed`: until then every request but /openapi.json is a 404
  private listed = false;  // the directory has this memory's name (directory.ts)

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.state = new State(ctx, env);
    this.reader = new Reader(this.state);
    this.background = new Background(this.state);
    // Entries kept: how far back undo reaches; recalls kept, 0 logs none.
    this.history = new History(this.state, envCount(env.MEMORY_HISTORY, "MEMORY_HISTORY", HISTORY_KEEP, 1));
    this.recallLog = new RecallLog(this.state, envCount(env.MEMORY_RECALL_LOG, "MEMORY_RECALL_LOG", RECALL_LOG_KEEP, 0));
    this.writer = new Writer(this.state, this.reader, this.history);
    this.conflicts = new Conflicts(this.state, this.reader, this.history, this.writer);
    this.undoing = new Undo(this.state, this.reader, this.history, this.writer, this.conflicts);
    this.searcher = new Searcher(this.state, this.reader, this.background);
    this.review = new Review(this.state, this.reader);
    this.imports = new OneImport(envCount(env.MEMORY_IMPORT_IDLE_SECONDS, "MEMORY_IMPORT_IDLE_SECONDS", IDLE_SECONDS, 1));
    ctx.blockConcurrencyWhile(async () => {
      // A name that is no memory gets a 404 and nothing is written: its object stays without storage.
      if (existed(this.state.sql)) await this.open();
    });
  }

  private async open(): Promise<void> {
    migrate(this.state.sql, this.ctx.storage);
    // The mark of an explicit create, also written for a memory made before creates were (it held
    // facts or history): it stays a memory when all it held is gone.
    if (this.state.meta("created") === null) this.state.setMeta("created", stamp(new Date()));
    this.exists = true;
    this.listed = this.state.meta("listed") !== null;
    this.foldKeys();
    const settings = this.state.meta("settings");
    this.state.useSettings(settings ? JSON.parse(settings as string) : null);
    this.state.load();  // nothing past the budget: such a memory starts without its vectors
    this.background.startPairs();
    await this.background.fillPairs();
    // Not awaited: a big memory's words take longer to embed than the gate may stay shut.
    void this.background.vocabulary();
  }

  /** PUT /memories/NAME (index.ts): makes this object a memory; true when it was not one before. */
  async create(): Promise<boolean> {
    const created = !this.exists;
    // No await before the gate shuts: a second create waits behind it and finds the memory made.
    if (created) await this.ctx.blockConcurrencyWhile(() => this.open());
    await this.list();
    return created;
  }

  /** Tells the directory this memory's name, once; a failure is tried again on the next request. */
  private async list(): Promise<void> {
    const name = this.ctx.id.name;
    if (this.listed || name === undefined) return;  // (an object reached by a bare id has no name to list)
    try {
      await directory(this.env).add(name);
      this.state.setMeta("listed", name);
      this.listed = true;
    } catch (e) {
      console.error(`memory ${name}: the directory could not list it`, e);
    }
  }

  async alarm(): Promise<void> {
    if (this.exists) await this.background.fillPairs();
  }

  /** Exact-dedup keys written before they were case-folded as Python does (lower case then:
   * "Straße" kept "straße"), computed again once, in one transaction. */
  private foldKeys(): void {
    if (this.state.meta("text_keys") === "casefold") return;
    this.ctx.storage.transactionSync(() => {
      const rows = this.state.sql.exec<{ id: number; text: string; text_key: string }>("SELECT id, text, text_key FROM facts").toArray();
      for (const r of rows) {
        if (textKey(r.text) !== r.text_key) this.state.sql.exec("UPDATE facts SET text_key = ? WHERE id = ?", textKey(r.text), r.id);
      }
      this.state.setMeta("text_keys", "casefold");
    });
  }

  // The object's state and steps that worker/test/ reaches into, as they were before the split.
  get sql() { return this.state.sql; }
  get vectors() { return this.state.vectors; }
  get vocab() { return this.state.vocab; }
  get embedder() { return this.state.embedder; }
  get floor() { return this.state.floor; }
  private startPairs(): void { this.background.startPairs(); }
  pairsReady(): boolean { return this.state.pairsReady(); }
  fillPairs(): Promise<void> { return this.background.fillPairs(); }
  matching(match: string, ids: number[], highlight = false) { return this.reader.matching(match, ids, highlight); }
  tokens(text: string): string[] { return this.reader.tokens(text); }

  async fetch(request: Request): Promise<Response> {
    if (!this.exists) {
      if (new URL(request.url).pathname === "/openapi.json") return Response.json(openapi);  // the contract, not the memory
      return errorResponse(noMemory(this.ctx.id.name ?? "", await directory(this.env).names()));
    }
    await this.list();  // a memory made before the directory: listed on first sight
    this.recallLog.flush();  // the recalls answered before this request are in the log for it
    const started = performance.now();
    let response: Response;
    try {
      response = await this.route(request);
    } catch (e) {
      if (!(e instanceof HttpError)) console.error("unexpected error", request.method, new URL(request.url).pathname, e);
      response = errorResponse(e instanceof HttpError ? e
        : new HttpError(500, "internal", "the memory failed unexpectedly; its log has the details"));
    }
    const route = routeOf(new URL(request.url).pathname);
    if (route) this.metrics.observe(route, request.method, response.status, (performance.now() - started) / 1000);
    return response;
  }

  /** What /metrics says the memory holds now (metrics.py `held`). */
  private held(): Held {
    const total = (status: string | null, reviewed: boolean | null = null) =>
      this.reader.list(null, null, null, 1, null, null, null, status, null, reviewed).total;
    const bytes = this.state.memoryBytes();
    return { facts: { current: total("current"), replaced: total("replaced"), expired: total("expired") },
      unreviewed: total(null, false), conflicts: this.review.conflicts(1, null).total,
      bytes: bytes.vectors + bytes.vocabulary + bytes.text_vectors };
  }

  private async route(request: Request): Promise<Response> {
    const url = new URL(request.url);
    // The Worker strips the memory's name: what reaches us is the contract's own path.
    const path = url.pathname;
    const method = request.method === "HEAD" ? "GET" : request.method;
    const p = url.searchParams;
    const one = /^\/facts\/(\d+)(\/neighbours)?$/.exec(path);
    const entry = /^\/(?:history\/(\d+)(\/undo)?|recalls\/(\d+))$/.exec(path);
    const { reader, writer, conflicts, undoing, searcher, review, state, history, recallLog } = this;
    // Who asks (X-Memory-Client), for the history and the recall log: read by the routes that record.
    const client = () => cleanClient(request.headers.get("x-memory-client"));
    // Why, in the history (the dashboard's "merged into #7"): PATCH and DELETE of a fact.
    const note = () => {
      const why = p.get("note") || "";
      if (chars(why) > MAX_NOTE) throw invalid(`note is longer than ${MAX_NOTE} characters`);
      return wellFormed(why, "note");
    };
    const factId = () => { const id = p.get("fact_id"); return id === null ? null : intParam(id, "fact_id", 0, 1, MAX_FACT_ID); };
    const routes: Record<string, Record<string, () => Promise<unknown> | unknown>> = {
      "/health": { GET: () => reader.health() },
      "/openapi.json": { GET: () => openapi },
      "/facts": {
        GET: () => reader.list(p.get("type") || null, p.get("source") || null, p.get("q") || null,
          intParam(p.get("limit"), "limit", 50, 1, MAX_LIMIT), p.get("cursor") || null, idList(p.get("ids")),
          p.get("order") || null, p.get("status"), p.get("as_of") || null,
          p.get("reviewed") ? queryBool(p.get("reviewed"), "reviewed") : null, p.get("client"), p.get("source_prefix") || null),
        POST: async () => writer.addOne(await readJson(request), client()),
      },
      "/facts/batch": {
        POST: async () => {
          const data = await readJson(request);
          const [importId, done] = importFields(data);
          const who = client();
          return this.imports.batch(importId, done, who, data.dry_run === true, () => writer.addBatch(data, () => who));
        },
      },
      "/facts/review": {
        POST: async () => {
          const data = await readJson(request);
          return writer.review(data.ids, client());
        },
      },
      "/recall": { POST: async () => this.recall(await readJson(request), client) },
      "/explain": { POST: async () => searcher.explain(await readJson(request)) },
      "/duplicates": {
        GET: () => review.duplicates(floatParam(p.get("threshold"), "threshold", state.threshold, 0.5, 1.0),
          p.get("type") || null, intParam(p.get("limit"), "limit", 1000, 1, 10_000)),
      },
      "/duplicates/nearest": { GET: () => ({ nearest: review.nearest(p.get("type") || null), floor: state.floor }) },
      "/conflicts": {
        GET: () => {
          const [every, done] = [queryBool(p.get("all"), "all"), queryBool(p.get("done"), "done")];
          if (every && done) throw invalid("all and done are two lists: ask for one");
          return review.conflicts(intParam(p.get("limit"), "limit", 50, 1, MAX_LIMIT), p.get("cursor") || null, every, done);
        },
      },
      "/conflicts/restore": {
        POST: async () => {
          const pairs = (await readJson(request)).conflicts;
          if (Array.isArray(pairs) && pairs.length > MAX_BATCH) throw tooLarge(`a restore holds at most ${MAX_BATCH} pairs`);
          return conflicts.restorePairs(pairs, client());
        },
      },
      "/conflicts/resolve": { POST: async () => conflicts.resolve(await readJson(request), client()) },
      "/stats": { GET: () => ({ ...state.stats(), history: history.status() }) },
      "/metrics": { GET: () => new Response(this.metrics.text(this.held()), { headers: { "content-type": METRICS_TYPE } }) },
      "/reindex": { POST: () => reindex(state, reader, this.background) },
      "/history": {
        GET: () => {
          const limit = intParam(p.get("limit"), "limit", 50, 1, MAX_LIMIT);
          return history.entries(limit, p.get("cursor") || null, p.get("op") || null, p.get("client"), factId());
        },
        DELETE: () => {
          if (p.get("fact_id") === null) throw invalid("fact_id is required: the fact whose entries to forget");
          return { deleted: forget(state, recallLog, factId()!) };
        },
      },
      "/recalls": {
        GET: () => {
          const [limit, fid] = [intParam(p.get("limit"), "limit", 50, 1, MAX_LIMIT), factId()];
          return recallLog.entries(limit, p.get("cursor") || null, p.get("client"), p.get("q") || null, queryBool(p.get("empty"), "empty"), fid);
        },
        DELETE: () => ({ deleted: recallLog.clear() }),
      },
      "/settings": {
        GET: () => this.settings(),
        PUT: async () => {
          const data = await readJson(request);
          this.putSettings(data, client());
          return this.settings();
        },
      },
    };
    if (one) {
      const id = BigInt(one[1]) > MAX_ID ? -1 : Number(one[1]);
      routes[path] = one[2]
        ? { GET: () => review.neighbours(id, intParam(p.get("limit"), "limit", 10, 1, MAX_LIMIT)) }
        : {
            GET: () => reader.get(id),
            PATCH: async () => writer.edit(id, await readJson(request), client(), note()),
            DELETE: () => writer.delete(id, client(), note()),
          };
    }
    if (entry) {
      const id = () => {  // (service.py `entry_id`)
        const n = BigInt(entry[1] ?? entry[3]);
        if (n > BigInt(MAX_FACT_ID)) throw notFound(`no entry with id ${n}`);
        return Number(n);
      };
      routes[path] = entry[3] ? { GET: () => recallLog.entry(id()) }
        : entry[2] ? {
          POST: async () => {  // a body is optional: {"force": true} undoes over a later write
            const body = (await request.clone().arrayBuffer()).byteLength ? await readJson(request) : {};
            return undoing.undo(id(), client(), strictBool(body.force, "force"));
          },
        }
        : { GET: () => history.entry(id()) };
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

  /** A recall, and its line in the recall log unless it says `"log": false` (store.py `recall`):
   * with the fusion it used and `ms` the whole recall, the model included (on Cloudflare the clock
   * moves only across I/O, so a recall without a model call logs 0). */
  private async recall(data: Record<string, unknown>, client: () => string) {
    const asked = this.searcher.asked(data);
    const log = boolParam(data.log, "log", true);
    const who = client();
    const started = performance.now();
    const answer = await this.searcher.recall(asked);
    if (log) this.recallLog.add(who, asked.query, asked.type, asked.limit, asked.fusion, answer, performance.now() - started);
    return answer;
  }

  /** The memory's own recall settings, the shipped ones, which differ, and the thresholds in use (store.py `settings`). */
  private settings() {
    return settingsAnswer(this.state);
  }

  /** PUT /settings: `fusion` as recall takes it, a preset and single settings over the shipped
   * default, the memory's own duplicate `threshold`, its `review` and `proposals` settings (service.py
   * `put_settings`), stored by writing.ts `setSettings`; what the body leaves out stays as it is. */
  private putSettings(data: Record<string, unknown>, client = ""): void {
    const known = ["fusion", "threshold", "review", "proposals"];
    if (!known.some((k) => k in data)) {
      throw invalid("fusion, threshold, review or proposals is required: the recall settings, as recall's fusion "
        + "takes them, the memory's own duplicate threshold, its review setting, and/or its proposals setting");
    }
    const unknown = Object.keys(data).filter((k) => !known.includes(k)).sort();
    // A lone surrogate written as \udXXX, as Python's backslashreplace writes it.
    const escaped = unknown.join(", ").replace(/\p{Surrogate}/gu, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
    if (unknown.length) throw invalid(`unknown settings: ${escaped}`);
    // Without fusion, the memory's as they are; threshold null: the process's again (the model's or the environment's).
    const fusion: Record<string, unknown> = "fusion" in data ? { ...fusionParam(data, this.state.shipped) } : { ...this.state.fusion };
    if (data.threshold === "") throw invalid("threshold must be a number");
    const own = !("threshold" in data) ? this.state.ownThreshold
      : data.threshold === null ? null : floatParam(data.threshold, "threshold", 0, this.state.floor, 1.0);
    const review = "review" in data ? cleanReview(data.review, this.state.review) : this.state.review;  // stored unless the default
    const proposals = "proposals" in data ? cleanMode(data.proposals) : this.state.proposals;  // the same
    this.writer.setSettings({ ...fusion, ...(own === null ? {} : { threshold: own }), ...(isDefault(review) ? {} : { review }),
      ...(proposals === PROPOSE ? {} : { proposals }) }, client);
  }
}

/** `ids`: up to 100 fact ids, comma-separated (service.py `id_list`). */
function idList(value: string | null): number[] | null {
  if (value === null) return null;
  const parts = value.split(",");
  if (parts.length > MAX_LIMIT) throw invalid(`ids holds at most ${MAX_LIMIT} ids`);
  return parts.map((part) => intParam(part, "ids", 0, 1, MAX_FACT_ID));
}

/** A query string's true or false (absent: false), as service.py's `query_bool`. */
function queryBool(value: string | null, name: string): boolean {
  if (value === null || value === "" || value === "false" || value === "0") return false;
  if (value === "true" || value === "1") return true;
  throw invalid(`${name} must be true or false`);
}

/** Whether this object is a memory: created (meta `created`), or made before creates were and
 * holding a fact or a history entry. Reads only (a row, for a memory): a name that is none leaves
 * no storage behind. */
function existed(sql: SqlStorage): boolean {
  const any = (query: string) => {
    try {
      return sql.exec(query).toArray().length > 0;
    } catch (e) {
      if (/no such table/.test(String(e))) return false;  // an object that is none, or of an older schema
      throw e;
    }
  };
  return any("SELECT 1 FROM meta WHERE key = 'created'") || any("SELECT 1 FROM facts LIMIT 1") || any("SELECT 1 FROM history LIMIT 1");
}
