// Where vectors come from: Workers AI in production, or an HTTP embedder (the Python package's
// `python -m memories embed-server`, the same model the local service runs) for local runs.

import { normalise } from "../storage/vector_math";

export interface Embedder {
  model: string;
  dims: number;
  embed(texts: string[]): Promise<Float32Array[]>;
  waiting?(): Waiting;
}

/** The model's calls in flight now and how long the oldest has waited (GET /health's `embedding`). */
export interface Waiting {
  calls: number;
  waiting_ms: number;
}

/** An embedder that keeps its calls in flight, so /health can say how long the oldest has
 * waited: a client that gave up on a write can tell the model is the slow part (and that the
 * write lands when the model answers). memories/model/embeddings.py's Watched keeps the same. */
export class Watched implements Embedder {
  private started = new Map<number, number>();
  private next = 0;

  constructor(private inner: Embedder) {}

  get model(): string { return this.inner.model; }
  get dims(): number { return this.inner.dims; }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const call = this.next++;
    this.started.set(call, Date.now());
    try {
      return await this.inner.embed(texts);
    } finally {
      this.started.delete(call);
    }
  }

  waiting(): Waiting {
    const started = [...this.started.values()];
    return { calls: started.length, waiting_ms: started.length ? Date.now() - Math.min(...started) : 0 };
  }
}

/** What the memory knows of a Workers AI embedding model (its page on developers.cloudflare.com).
 * `chars`: a text is sent as its longest beginning of at most `chars` code points once put in the
 * tokenizer's normal form (`form`). Each token the tokenizer makes covers at least one of those
 * code points (BERT's wordpiece: a punctuation mark, a CJK character or a piece of a word; a word
 * over 100 characters is one [UNK]; sentencepiece adds one "▁" a word, where a space was), so
 * the text stays within the model's window: bge v1.5 takes 512 tokens, [CLS] and [SEP] included,
 * and 500 leaves room; bge-m3 takes 8,192. `pooling`: the model takes `pooling` (the bge v1.5
 * models, trained with CLS pooling; Workers AI pools by mean unless told). `perCall`: code points
 * a call may carry in all (bge-m3's context window is 60,000 tokens a request). */
export interface AiModel {
  dims: number;
  chars: number;
  form: "NFD" | "NFKC";
  pooling: boolean;
  perCall?: number;
}

const BGE_V15 = { chars: 500, form: "NFD", pooling: true } as const;
export const AI_MODELS: Record<string, AiModel> = {
  "@cf/baai/bge-small-en-v1.5": { dims: 384, ...BGE_V15 },
  "@cf/baai/bge-base-en-v1.5": { dims: 768, ...BGE_V15 },
  "@cf/baai/bge-large-en-v1.5": { dims: 1024, ...BGE_V15 },
  "@cf/baai/bge-m3": { dims: 1024, chars: 8000, form: "NFKC", pooling: false, perCall: 56_000 },
};
/** The numbers that belong to the model (memories/model/models.py, the same table): the duplicate
 * threshold, the review floor and the expansion cut-off, and when and where they were measured
 * (null: not measured, MiniLM's numbers until the dashboard's calibration finds the model's).
 * The environment (DUPLICATE_THRESHOLD, REVIEW_FLOOR) and the memory's own settings win over them. */
export interface ModelNumbers {
  threshold: number;
  floor: number;
  expand: number;
  measured: string | null;
}

const MINILM: ModelNumbers = {
  threshold: 0.97, floor: 0.8, expand: 0.65,
  measured: "2026-11-30 and 2026-12-01 on all-MiniLM-L6-v2: benchmarks/dedup_quality.py (memories/data/"
    + "dedup_pairs.json) for the threshold and floor, docs/recall-quality.md for the expansion cut-off",
};
const NOT_MEASURED: ModelNumbers = { ...MINILM, measured: null };
export const MODEL_NUMBERS: Record<string, ModelNumbers> = {
  "all-MiniLM-L6-v2-onnx-int8": MINILM,  // EMBEDDER=http with the Python package's model
  "@cf/baai/bge-small-en-v1.5": NOT_MEASURED,
  "@cf/baai/bge-base-en-v1.5": NOT_MEASURED,
  "@cf/baai/bge-large-en-v1.5": NOT_MEASURED,
  "@cf/baai/bge-m3": NOT_MEASURED,
};

/** The model's row; a model without one gets MiniLM's numbers, not measured. */
export const numbersFor = (model: string): ModelNumbers => MODEL_NUMBERS[model] ?? NOT_MEASURED;

/** Texts a Workers AI embedding call takes at most. */
export const AI_MAX_TEXTS = 100;

/** Waits between tries of a call Workers AI refused for its rate limit or a passing fault: five
 * tries in about 7.5 s in all, well within a request's time (a Worker's wall time is not limited
 * while its client waits). Each wait is jittered by up to a quarter, so a burst does not retry in step. */
export const AI_RETRY_MS = [250, 750, 2000, 4500];

export function makeEmbedder(env: Env): Embedder {
  const kind = env.EMBEDDER ?? "ai";
  if (kind === "http") {
    if (!env.EMBEDDER_URL) throw new Error("EMBEDDER=http needs EMBEDDER_URL");
    return new Watched(new HttpEmbedder(env.EMBEDDER_URL, env.MEMORY_SECRET, env.EMBED_MODEL, Number(env.EMBED_DIMS)));
  }
  const model = env.EMBED_MODEL || "@cf/baai/bge-base-en-v1.5";
  if (!model.startsWith("@cf/baai/bge-") || !(model in AI_MODELS)) throw new Error(`EMBED_MODEL ${model} is not a known @cf/baai/bge-* model`);
  return new Watched(new AiEmbedder(env.AI, model, AI_MODELS[model]));
}

/** The longest beginning of `text`, in whole code points, that is at most `limit` code points in
 * normal form `form`: what the model is sent of a long text (its vector is its beginning's). */
export function head(text: string, limit: number, form: "NFD" | "NFKC"): string {
  const length = (s: string) => [...s.normalize(form)].length;
  let points = [...text];
  if (points.length > limit) points = points.slice(0, limit);
  for (let over = length(points.join("")) - limit; over > 0; over = length(points.join("")) - limit) {
    points = points.slice(0, points.length - Math.ceil(over / 18));  // a code point becomes at most 18 in NFKC
  }
  return points.join("");
}

/** Workers AI refused for its rate limit (or the account's daily allocation) on every try. */
export class RateLimited extends Error {}

type Fault = "rate" | "daily" | "transient" | "other";

/** What kind of refusal an error from `AI.run` is (developers.cloudflare.com/workers-ai/platform/errors):
 * 3040 (429, out of capacity) and any 429 or "rate limit" are the rate limit; 3036 (429) is the
 * account's daily free allocation, which no retry within a request outlasts; 3007 (408, timeout),
 * a 5xx, an internal error or a lost connection pass. Anything else (a 400) is not tried again. */
export function faultOf(e: unknown): Fault {
  // By the message: the binding throws every refusal as an InferenceUpstreamError, a malformed
  // input (5006) as much as the rate limit.
  const err = e as Error;
  const text = err?.message ?? String(e);
  if (/\b3036\b|daily free allocation/i.test(text)) return "daily";
  if (/\b3040\b|\b429\b|rate.?limit|too many requests|capacity/i.test(text)) return "rate";
  if (err?.name === "AiInternalError" || /\b3007\b|\b5\d\d\b|timeout|timed out|internal server error|network connection lost/i.test(text)) return "transient";
  return "other";
}

export class AiEmbedder implements Embedder {
  dims: number;

  constructor(private ai: Ai, public model: string, private spec: AiModel, private retryMs: number[] = AI_RETRY_MS) {
    this.dims = spec.dims;
  }

  /** Each text's vector, in calls of at most AI_MAX_TEXTS texts (and `perCall` code points). */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const sent = texts.map((t) => head(t, this.spec.chars, this.spec.form));
    // The model refuses an empty text, and the memory never asks for one (no fact, query or word
    // is empty; the rerank leaves out a text with nothing left in it): one here is a bug.
    if (sent.some((t) => !t)) throw new Error("an empty text cannot be embedded");
    const out: Float32Array[] = [];
    for (const call of this.calls(sent)) out.push(...(await this.run(call)));
    return out;
  }

  private calls(texts: string[]): string[][] {
    const calls: string[][] = [];
    let call: string[] = [];
    let size = 0;
    for (const t of texts) {
      const n = this.spec.perCall ? [...t.normalize(this.spec.form)].length : 0;
      if (call.length === AI_MAX_TEXTS || (this.spec.perCall && call.length && size + n > this.spec.perCall)) {
        calls.push(call);
        call = [];
        size = 0;
      }
      call.push(t);
      size += n;
    }
    if (call.length) calls.push(call);
    return calls;
  }

  /** One call, tried again after the rate limit or a passing fault (AI_RETRY_MS), its answer
   * checked: as many vectors as texts, each as wide as the model's, every number finite. */
  private async run(texts: string[]): Promise<Float32Array[]> {
    const input: Record<string, unknown> = { text: texts };
    if (this.spec.pooling) input.pooling = "cls";
    else input.truncate_inputs = true;  // bge-m3: cut what is still too long rather than fail (never, by `chars`)
    const started = Date.now();
    for (let attempt = 0; ; attempt++) {
      let out: { data?: unknown; response?: unknown };
      try {
        out = (await this.ai.run(this.model as keyof AiModels, input as never)) as typeof out;
      } catch (e) {
        const fault = faultOf(e);
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        if (fault === "daily") throw new RateLimited(`Workers AI refused: the account's daily allocation is used up (${(e as Error).message})`);
        if (attempt >= this.retryMs.length || (fault !== "rate" && fault !== "transient")) {
          if (fault === "rate") {
            throw new RateLimited(`Workers AI's rate limit: refused ${attempt + 1} times over ${seconds} s (${(e as Error).message}); try again in a minute`);
          }
          throw e;
        }
        await new Promise((r) => setTimeout(r, this.retryMs[attempt] * (1 + Math.random() / 4)));
        continue;
      }
      return this.checked(out, texts.length);
    }
  }

  private checked(out: { data?: unknown; response?: unknown }, count: number): Float32Array[] {
    const rows = out?.data ?? out?.response;  // bge-m3 may answer in `response`
    if (!Array.isArray(rows) || rows.length !== count) {
      throw new Error(`Workers AI answered ${Array.isArray(rows) ? rows.length : "no"} vectors for ${count} texts`);
    }
    for (const row of rows) {
      if (!Array.isArray(row) || row.length !== this.dims || !row.every((x) => typeof x === "number" && Number.isFinite(x))) {
        throw new Error(`Workers AI answered a vector that is not ${this.dims} finite numbers wide (${this.model})`);
      }
    }
    return (rows as number[][]).map(normalise);
  }
}

class HttpEmbedder implements Embedder {
  constructor(private url: string, private secret: string, public model: string, public dims: number) {}

  async embed(texts: string[]): Promise<Float32Array[]> {
    const r = await fetch(this.url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-memory-secret": this.secret },
      body: JSON.stringify({ texts }),
      signal: AbortSignal.timeout(30_000),
    });
    if (!r.ok) throw new Error(`embedder answered ${r.status}`);
    const body = (await r.json()) as { model: string; dims: number; vectors: number[][] };
    if (body.model !== this.model) throw new Error(`embedder serves ${body.model}, this memory uses ${this.model}`);
    // As the embedder sent them (already unit length): the same bits the Python service stores.
    return body.vectors.map((v) => Float32Array.from(v));
  }
}
