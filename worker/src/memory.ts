// One memory: a SQLite-backed Durable Object holding facts, their FTS5 index and their vectors,
// serving the contract of docs/memory-api.md as memories/store.py + service.py serve it locally.
// This file answers which route does what and how the object opens; the work is in the parts
// (the same files as memories/): state.ts, reading.ts, writing.ts, searching.ts, review.ts and
// background.ts, around one shared State.

import { DurableObject } from "cloudflare:workers";
import openapi from "../../docs/openapi.json";
import { Background } from "./background";
import { MAX_ID, MAX_LIMIT } from "./facts";
import { HttpError, errorResponse, floatParam, intParam, readJson } from "./http";
import { Reader } from "./reading";
import { Review } from "./review";
import { migrate } from "./schema";
import { Searcher } from "./searching";
import { State } from "./state";
import { textKey } from "./text";
import { Writer } from "./writing";

export class MemoryObject extends DurableObject<Env> {
  private state: State;
  private reader: Reader;
  private writer: Writer;
  private searcher: Searcher;
  private review: Review;
  private background: Background;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.state = new State(ctx, env);
    this.reader = new Reader(this.state);
    this.background = new Background(this.state);
    this.writer = new Writer(this.state, this.reader, this.background);
    this.searcher = new Searcher(this.state, this.reader, this.background);
    this.review = new Review(this.state, this.reader);
    ctx.blockConcurrencyWhile(async () => {
      migrate(this.state.sql, ctx.storage);
      this.foldKeys();
      this.state.loadVectors();
      this.state.vocab.load();
      this.background.startPairs();
      await this.background.fillPairs();
      // Not awaited: a big memory's words take longer to embed than the gate may stay shut.
      void this.background.vocabulary();
    });
  }

  async alarm(): Promise<void> {
    await this.background.fillPairs();
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
    const { reader, writer, searcher, review, state } = this;
    const routes: Record<string, Record<string, () => Promise<unknown> | unknown>> = {
      "/health": { GET: () => reader.health() },
      "/openapi.json": { GET: () => openapi },
      "/facts": {
        GET: () => reader.list(p.get("type") || null, p.get("source") || null, p.get("q") || null,
          intParam(p.get("limit"), "limit", 50, 1, MAX_LIMIT), p.get("cursor") || null),
        POST: async () => writer.addOne(await readJson(request)),
      },
      "/facts/batch": { POST: async () => writer.addBatch(await readJson(request)) },
      "/recall": { POST: async () => searcher.recall(await readJson(request)) },
      "/explain": { POST: async () => searcher.explain(await readJson(request)) },
      "/duplicates": {
        GET: () => review.duplicates(floatParam(p.get("threshold"), "threshold", state.threshold, 0.5, 1.0),
          p.get("type") || null, intParam(p.get("limit"), "limit", 1000, 1, 10_000)),
      },
      "/duplicates/nearest": { GET: () => ({ nearest: review.nearest(p.get("type") || null), floor: state.floor }) },
      "/stats": { GET: () => state.stats() },
      "/reindex": { POST: () => writer.reindex() },
    };
    if (one) {
      const id = BigInt(one[1]) > MAX_ID ? -1 : Number(one[1]);
      routes[path] = one[2]
        ? { GET: () => review.neighbours(id, intParam(p.get("limit"), "limit", 10, 1, MAX_LIMIT)) }
        : {
            GET: () => reader.get(id),
            PATCH: async () => writer.edit(id, await readJson(request)),
            DELETE: () => writer.delete(id),
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
}
