// Workers AI within its documented limits, against the fake binding of fake_ai.ts: a long text is
// sent as its beginning, never an empty text, at most 100 texts a call, `pooling: "cls"` for the
// bge v1.5 models, bge-m3's `response` read and checked, the rate limit retried and then named.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AI_MODELS, AI_RETRY_MS, AiEmbedder, RateLimited, faultOf, head, makeEmbedder } from "../src/model/embedder";
import type { MemoryObject } from "../src/memory";
import type { State } from "../src/storage/state";
import { FakeAi, bagOfWords } from "./fake_ai";
import { created } from "./memories";

const env = testEnv as unknown as Env;
const BASE = "@cf/baai/bge-base-en-v1.5";
const FAST = [1, 1, 1, 1];  // the retries' waits, shortened
const ai = (fake: FakeAi, model = BASE, retry = FAST) => new AiEmbedder(fake as unknown as Ai, model, AI_MODELS[model], retry);
const LONG = ("The owner keeps bees on the roof of the old mill. ".repeat(12) + "Coffee beans come from Kenya. ".repeat(300)).slice(0, 8000);
const nfd = (s: string) => [...s.normalize("NFD")].length;

describe("a long text", () => {
  it("is sent as its first 500 code points, which no tokenizer makes more than 512 tokens of", async () => {
    expect(head(LONG, 500, "NFD")).toBe(LONG.slice(0, 500));
    const fake = new FakeAi();
    const [v] = await ai(fake).embed([LONG]);  // the fake refuses a text over 512 tokens
    expect(fake.calls[0].input.text).toEqual([LONG.slice(0, 500)]);
    expect(Array.from(v)).toEqual(Array.from(Float32Array.from(bagOfWords(LONG.slice(0, 500), 768))));
    await expect(new FakeAi().run(BASE, { text: [LONG] })).rejects.toThrow(/over the model's 512/);  // the fake does refuse it
  });

  it("counts code points in normal form, and never splits a character", () => {
    const hangul = "한".repeat(400);  // each syllable is three jamo in NFD
    const cut = head(hangul, 500, "NFD");
    expect(nfd(cut)).toBeLessThanOrEqual(500);
    expect(cut.length).toBe(166);
    const emoji = "🐝".repeat(600);  // two UTF-16 units each
    expect(head(emoji, 500, "NFD")).toBe("🐝".repeat(500));
    const ligatures = "ﬃ".repeat(5000);  // three code points each in NFKC (bge-m3's form)
    expect([...head(ligatures, 8000, "NFKC").normalize("NFKC")].length).toBeLessThanOrEqual(8000);
    expect(head("short", 500, "NFD")).toBe("short");
  });

  it("is stored whole and found by its words; its vector is its beginning's", async () => {
    const url = await created(`http://memory.test/memories/long-${Math.random().toString(36).slice(2)}`);
    const fake = new FakeAi({ "fake-bow-16": 16 });
    await runInDurableObject(env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2])), (memory: MemoryObject) => {
      (memory as unknown as { state: State }).state.embedder = new AiEmbedder(fake as unknown as Ai, "fake-bow-16", { ...AI_MODELS[BASE], dims: 16 }, FAST);
    });
    const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
    const r = await SELF.fetch(`${url}/facts`, { method: "POST", headers, body: JSON.stringify({ text: LONG }) });
    expect(r.status).toBe(201);
    const id = ((await r.json()) as { id: number }).id;
    expect(((await (await SELF.fetch(`${url}/facts/${id}`, { headers })).json()) as { text: string }).text).toBe(LONG);
    const found = (await (await SELF.fetch(`${url}/recall`, { method: "POST", headers, body: JSON.stringify({ query: "kenya", mode: "keyword" }) })).json()) as { results: unknown[] };
    expect(found.results).toHaveLength(1);
    expect(fake.calls.flatMap((c) => c.input.text).every((t) => t.length > 0 && nfd(t) <= 500)).toBe(true);
  });
});

describe("a call", () => {
  it("holds at most 100 texts: more are split and joined in order", async () => {
    const fake = new FakeAi();
    const texts = Array.from({ length: 250 }, (_, i) => `fact number ${i} about word${i}`);
    const vectors = await ai(fake).embed(texts);
    expect(fake.calls.map((c) => c.input.text.length)).toEqual([100, 100, 50]);
    expect(vectors).toHaveLength(250);
    expect(Array.from(vectors[173])).toEqual(Array.from(Float32Array.from(bagOfWords(texts[173], 768))));
  });

  it("asks for CLS pooling from the bge v1.5 models, and bge-m3 to truncate rather than fail", async () => {
    const fake = new FakeAi();
    await ai(fake).embed(["tea"]);
    await ai(fake, "@cf/baai/bge-small-en-v1.5").embed(["tea"]);
    await ai(fake, "@cf/baai/bge-m3").embed(["tea"]);
    expect(fake.calls.map((c) => [c.input.pooling, c.input.truncate_inputs])).toEqual([["cls", undefined], ["cls", undefined], [undefined, true]]);
  });

  it("never sends an empty text", async () => {
    const fake = new FakeAi();
    await expect(ai(fake).embed(["tea", ""])).rejects.toThrow(/empty/);
    expect(fake.calls).toEqual([]);
  });

  it("reads bge-m3's vectors from data or response, and checks their count and width", async () => {
    const fake = new FakeAi();
    const m3 = ai(fake, "@cf/baai/bge-m3");
    fake.answer = (texts, dims) => ({ shape: [texts.length, dims], response: texts.map((t) => bagOfWords(t, dims)) });
    expect((await m3.embed(["tea", "coffee"])).map((v) => v.length)).toEqual([1024, 1024]);
    fake.answer = (texts, dims) => ({ data: texts.slice(1).map((t) => bagOfWords(t, dims)) });
    await expect(m3.embed(["tea", "coffee"])).rejects.toThrow(/1 vectors for 2 texts/);
    fake.answer = (texts) => ({ data: texts.map((t) => bagOfWords(t, 768)) });
    await expect(m3.embed(["tea"])).rejects.toThrow(/not 1024 finite numbers wide/);
    fake.answer = (texts, dims) => ({ data: texts.map(() => new Array(dims).fill(Number.NaN)) });
    await expect(m3.embed(["tea"])).rejects.toThrow(/finite/);
    fake.answer = () => ({ request_id: "queued" });
    await expect(m3.embed(["tea"])).rejects.toThrow(/no vectors/);
  });

  it("stores nothing when the model answers the wrong width", async () => {
    const url = await created(`http://memory.test/memories/width-${Math.random().toString(36).slice(2)}`);
    const fake = new FakeAi({ "fake-bow-16": 16 });
    fake.answer = (texts) => ({ data: texts.map((t) => bagOfWords(t, 8)) });
    const stub = env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2]));
    await runInDurableObject(stub, (memory: MemoryObject) => {
      (memory as unknown as { state: State }).state.embedder = new AiEmbedder(fake as unknown as Ai, "fake-bow-16", { ...AI_MODELS[BASE], dims: 16 }, FAST);
    });
    const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
    const r = await SELF.fetch(`${url}/facts`, { method: "POST", headers, body: JSON.stringify({ text: "The owner drinks tea." }) });
    expect(r.status).toBe(503);
    expect(((await r.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "model_unavailable" });
    await runInDurableObject(stub, (memory: MemoryObject) => {
      expect(memory.sql.exec("SELECT count(*) AS n FROM facts").one().n).toBe(0);
      expect(memory.vectors.size).toBe(0);
    });
  });

  it("knows a model from its name only if it is one this memory has limits for", () => {
    expect(() => makeEmbedder({ ...env, EMBEDDER: "ai", EMBED_MODEL: "@cf/baai/bge-unknown" })).toThrow(/not a known/);
    expect(makeEmbedder({ ...env, EMBEDDER: "ai", EMBED_MODEL: "@cf/baai/bge-large-en-v1.5" }).dims).toBe(1024);
  });
});

describe("the rate limit", () => {
  it("tells the rate limit, the daily allocation, passing faults and the rest apart", () => {
    expect(faultOf(new Error("3040: Capacity temporarily exceeded, please try again."))).toBe("rate");
    expect(faultOf(new Error("AiError: 429 Too Many Requests"))).toBe("rate");
    expect(faultOf(new Error("3036: You have used up your daily free allocation of 10,000 neurons."))).toBe("daily");
    expect(faultOf(new Error("3007: Request timeout"))).toBe("transient");
    expect(faultOf(Object.assign(new Error("upstream said 502"), { name: "InferenceUpstreamError" }))).toBe("transient");
    expect(faultOf(new Error("5007: No such model"))).toBe("other");
    expect(faultOf(new Error("3006: Request is too large"))).toBe("other");
  });

  it("is tried again with backoff, and a call that gets through answers", async () => {
    const fake = new FakeAi();
    fake.refusals = 3;
    expect(await ai(fake).embed(["tea"])).toHaveLength(1);
    expect(fake.calls).toHaveLength(1);
  });

  it("waits between tries, within a bound", async () => {
    const fake = new FakeAi();
    fake.refusals = 2;
    const started = Date.now();
    await ai(fake, BASE, [40, 80]).embed(["tea"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(120);
    expect(AI_RETRY_MS.reduce((a, b) => a + b) * 1.25).toBeLessThan(10_000);  // all the waits, jittered
  });

  it("still refusing after every try is a RateLimited that says so; the daily allocation and other errors are not retried", async () => {
    const fake = new FakeAi();
    fake.perMinute = 0;
    await expect(ai(fake).embed(["tea"])).rejects.toSatisfy((e) => e instanceof RateLimited && /rate limit: refused 5 times/.test((e as Error).message));
    const daily = new FakeAi();
    daily.refusals = 1;
    daily.refusal = "3036: You have used up your daily free allocation of 10,000 neurons.";
    await expect(ai(daily).embed(["tea"])).rejects.toThrow(/daily allocation/);
    expect(daily.refusals).toBe(0);  // refused once, not tried again
    const other = new FakeAi();
    other.refusals = 1;
    other.refusal = "5007: No such model";
    await expect(ai(other).embed(["tea"])).rejects.toThrow(/5007/);  // a second try would have got through
  });

  it("a write answers 503 naming the rate limit, with Retry-After; a recall falls back to keywords and says why", async () => {
    const url = await created(`http://memory.test/memories/rate-${Math.random().toString(36).slice(2)}`);
    const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
    const first = await SELF.fetch(`${url}/facts`, { method: "POST", headers, body: JSON.stringify({ text: "The owner drinks tea." }) });
    expect(first.status).toBe(201);
    const fake = new FakeAi({ "fake-bow-16": 16 });
    fake.perMinute = 0;
    await runInDurableObject(env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2])), (memory: MemoryObject) => {
      (memory as unknown as { state: State }).state.embedder = new AiEmbedder(fake as unknown as Ai, "fake-bow-16", { ...AI_MODELS[BASE], dims: 16 }, FAST);
    });
    const r = await SELF.fetch(`${url}/facts`, { method: "POST", headers, body: JSON.stringify({ text: "The owner drinks coffee." }) });
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe("60");
    const error = ((await r.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("model_unavailable");
    expect(error.message).toMatch(/Workers AI's rate limit/);
    const recall = (await (await SELF.fetch(`${url}/recall`, { method: "POST", headers, body: JSON.stringify({ query: "tea" }) })).json()) as
      { mode: string; warning: string; results: unknown[] };
    expect(recall.mode).toBe("keyword-only");
    expect(recall.warning).toMatch(/rate limit/);
    expect(recall.results).toHaveLength(1);
  });
});

describe("the rerank on Workers AI", () => {
  it("sends no empty text: a fact that is only the shared words is left out, its cosine 0", async () => {
    const url = await created(`http://memory.test/memories/rerank-${Math.random().toString(36).slice(2)}`);
    const fake = new FakeAi({ "fake-bow-16": 16 });
    await runInDurableObject(env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2])), (memory: MemoryObject) => {
      (memory as unknown as { state: State }).state.embedder = new AiEmbedder(fake as unknown as Ai, "fake-bow-16", { ...AI_MODELS[BASE], dims: 16 }, FAST);
    });
    const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
    const texts = ["Cosima Jaramillo", "Cosima Jaramillo works as a glazier.", "Cosima Jaramillo reports to Ulla Pereira."];
    for (const text of texts) expect((await SELF.fetch(`${url}/facts`, { method: "POST", headers, body: JSON.stringify({ text }) })).status).toBe(201);
    const body = (await (await SELF.fetch(`${url}/recall`, { method: "POST", headers, body: JSON.stringify({ query: "who is cosima jaramillo's boss", debug: true }) })).json()) as
      { mode: string; rerank: { facts: { text: string; cosine: number }[] } | null };
    expect(body.mode).toBe("hybrid");
    expect(body.rerank!.facts.find((f) => f.text === "")).toMatchObject({ cosine: 0 });
    expect(fake.calls.flatMap((c) => c.input.text)).not.toContain("");
    expect(fake.calls.at(-1)!.input.text).toEqual(["who is  's boss", ...body.rerank!.facts.map((f) => f.text).filter((t) => t)]);
  });
});
