// The object's internals through the Worker, inside workerd with real SQLite Durable Objects.
import { SELF, listDurableObjectIds, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker, { memoryOf } from "../src/index";
import { cleanTime } from "../src/facts";
import type { MemoryObject } from "../src/memory";
import { DEFAULT_BUDGET, type State } from "../src/storage/state";
import { BLOCK, FACT_BITS, MAP_ENTRY_BYTES } from "../src/storage/vectors";
import { created } from "./memories";

const env = testEnv as unknown as Env;  // the bindings of wrangler.jsonc and vitest.config.ts

const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
let n = 0;
const base = () => created(`http://memory.test/memories/unit-${++n}-${Math.random().toString(36).slice(2)}`);
const call = (url: string, method = "GET", body?: unknown) =>
  SELF.fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
const stub = (url: string) => env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2]));
const add = async (url: string, text: string) => ((await (await call(`${url}/facts`, "POST", { text })).json()) as { id: number }).id;
const words = (memory: MemoryObject) => memory.sql.exec<{ word: string }>("SELECT word FROM words ORDER BY id").toArray().map((r) => r.word);

describe("the Worker", () => {
  it("names a memory by path and defaults to one called default", () => {
    expect(memoryOf("/memories/alice/facts/3")).toEqual({ name: "alice", path: "/facts/3" });
    expect(memoryOf("/facts")).toEqual({ name: "default", path: "/facts" });
    expect(memoryOf("/memories/../facts")).toEqual({ name: "default", path: "/memories/../facts" });
  });

  it("refuses a missing or wrong secret, and one that is only a prefix of it", async () => {
    for (const secret of [undefined, "", "test-secre", "test-secret!", "TEST-SECRET"]) {
      const r = await SELF.fetch("http://memory.test/facts", { headers: secret === undefined ? {} : { "x-memory-secret": secret } });
      expect(r.status).toBe(401);
    }
    expect((await SELF.fetch("http://memory.test/health")).status).toBe(200);
  });

  it("answers /health and /openapi.json without the secret itself: no object is woken, let alone created", async () => {
    const names = Array.from({ length: 20 }, (_, i) => `wake-${i}-${Math.random().toString(36).slice(2)}`);
    for (const name of names) {
      for (const secret of [undefined, "wrong"]) {
        const r = await SELF.fetch(`http://memory.test/memories/${name}/health`, { headers: secret ? { "x-memory-secret": secret } : {} });
        expect(r.status).toBe(200);
        expect(await r.json()).toEqual({ ok: true });  // nothing about the memory's facts
      }
    }
    const doc = await SELF.fetch(`http://memory.test/memories/${names[0]}/openapi.json`);
    expect(((await doc.json()) as { openapi: string }).openapi).toMatch(/^3\.1/);
    const post = await SELF.fetch(`http://memory.test/memories/${names[0]}/health`, { method: "POST" });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET"]);
    const made = new Set((await listDurableObjectIds(env.MEMORY)).map((id) => id.toString()));
    expect(names.filter((name) => made.has(env.MEMORY.idFromName(name).toString()))).toEqual([]);
    // Nor is the namespace touched at all: a Worker whose MEMORY throws answers the same.
    const untouchable = { ...env, MEMORY: new Proxy({}, { get: () => { throw new Error("env.MEMORY was used"); } }) } as unknown as Env;
    for (const path of ["/health", "/memories/someone/health", "/openapi.json", "/memories/someone/openapi.json"]) {
      expect((await worker.fetch(new Request(`http://memory.test${path}`), untouchable)).status).toBe(200);
    }
    // With the secret the memory answers, with its count.
    const url = await base();
    await add(url, "Health counts this fact.");
    expect(await (await call(`${url}/health`)).json()).toEqual({ ok: true, facts: 1, model: "fake-bow-16", dims: 16, mode: "hybrid", memory_full: false,
      engine: "worker", embedding: { calls: 0, waiting_ms: 0 } });
    const woken = env.MEMORY.idFromName(new URL(url).pathname.split("/")[2]).toString();
    expect((await listDurableObjectIds(env.MEMORY)).map((id) => id.toString())).toContain(woken);  // the list sees what was made
  });

  it("answers the contract's JSON error, not Cloudflare's error page, when the memory's object fails", async () => {
    for (const failure of [new Error("Durable Object reset because its code was updated."),
      Object.assign(new Error("Durable Object is overloaded."), { overloaded: true })]) {
      const failing = { ...env, MEMORY: { idFromName: (name: string) => name, get: () => ({ fetch: () => Promise.reject(failure) }) } } as unknown as Env;
      for (const [method, body] of [["GET", undefined], ["POST", JSON.stringify({ text: "tea" })]] as const) {
        const r = await worker.fetch(new Request("http://memory.test/memories/alice/facts", { method, headers, body }), failing);
        expect(r.status).toBe(503);
        expect(r.headers.get("content-type")).toMatch(/application\/json/);
        const error = ((await r.json()) as { error: { code: string; message: string } }).error;
        expect(error.code).toBe("memory_unavailable");
        expect(error.message).toMatch(/memory 'alice' could not answer: .*log has the details/);
        expect(r.headers.get("retry-after")).toBe(failure.message.includes("overloaded") ? "1" : null);
      }
    }
  });

  it("answers a name that is not one with a 404 saying what a name is", async () => {
    for (const bad of ["bad%20name", ".hidden", "x".repeat(65)]) {
      const r = await SELF.fetch(`http://memory.test/memories/${bad}/facts`, { headers });
      expect(r.status).toBe(404);
      expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/a name is 1 to 64/);
    }
  });

  it("keeps memories apart: a fact in one is not in another", async () => {
    const [a, b] = [await base(), await base()];
    const id = ((await (await call(`${a}/facts`, "POST", { text: "Only in memory a." })).json()) as { id: number }).id;
    expect((await call(`${a}/facts/${id}`)).status).toBe(200);
    expect((await call(`${b}/facts/${id}`)).status).toBe(404);
  });
});

describe("writes", () => {
  it("stores one row for many concurrent identical posts: the check runs again after the await", async () => {
    const url = await base();
    const responses = await Promise.all(Array.from({ length: 20 }, () => call(`${url}/facts`, "POST", { text: "Same fact, many times." })));
    const ids = new Set(await Promise.all(responses.map(async (r) => ((await r.json()) as { id: number }).id)));
    expect(ids.size).toBe(1);
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    const stats = (await (await call(`${url}/stats`)).json()) as { facts: number; consistent: boolean };
    expect(stats).toMatchObject({ facts: 1, consistent: true });
  });

  it("rolls back a whole batch, row, FTS entry, vector and matrix, when one fact fails", async () => {
    const url = await base();
    const first = ((await (await call(`${url}/facts`, "POST", { text: "The first fact." })).json()) as { id: number }).id;
    const r = await call(`${url}/facts/batch`, "POST", { facts: [{ text: "A brand new fact." }, { text: "Another one.", id: first }] });
    expect(r.status).toBe(409);
    const stats = (await (await call(`${url}/stats`)).json()) as Record<string, unknown>;
    expect(stats).toMatchObject({ facts: 1, fts: 1, vectors: 1, vectors_in_memory: 1, consistent: true });
    // expand 0: the fake embedder puts "new" and "first" in one bucket, so expansion would match.
    const body = { query: "brand new", debug: true, fusion: { expand: 0 } };
    const recall = (await (await call(`${url}/recall`, "POST", body)).json()) as { kw: unknown[] };
    expect(recall.kw).toHaveLength(0);
    await runInDurableObject(stub(url), (memory: MemoryObject) => {  // nor did its words stay
      expect(words(memory)).toEqual(["first", "fact"]);
      expect(memory.vocab.held()).toEqual(["first", "fact"]);
    });
  });

  it("says in /stats when a matrix row disagrees with its table row, and when keyword search failed", async () => {
    const url = await base();
    const a = await add(url, "Anna lives in Lisbon.");
    const b = await add(url, "Tomas keeps bees.");
    const stats = async () => (await (await call(`${url}/stats`)).json()) as { consistent: boolean; keyword_errors: number;
      orphans: { vectors_out_of_step: number[] } };
    expect(await stats()).toMatchObject({ consistent: true, keyword_errors: 0, orphans: { vectors_out_of_step: [] } });
    await runInDurableObject(stub(url), (memory: MemoryObject) => {  // as a snapshot pairing them wrongly would leave it
      const va = memory.vectors.vector(a)!, vb = memory.vectors.vector(b)!;
      memory.vectors.put(a, "fact", vb);
      memory.vectors.put(b, "fact", va);
      const exec = memory.sql.exec.bind(memory.sql);
      memory.sql.exec = ((query: string, ...args: SqlStorageValue[]) => {  // a damaged FTS index
        if (query.includes("bm25")) throw new Error("database disk image is malformed");
        return exec(query, ...args);
      }) as typeof memory.sql.exec;
    });
    const hits = (await (await call(`${url}/recall`, "POST", { query: "Tomas bees", log: false })).json()) as { results: { via: string }[] };
    expect(hits.results.every((h) => h.via === "vec")).toBe(true);
    const after = await stats();
    expect(after.consistent).toBe(false);
    expect(after.orphans.vectors_out_of_step).toEqual([a, b].sort((x, y) => x - y));
    expect(after.keyword_errors).toBe(1);
  });

  it("changes the matrix only at the end of the write's transaction, and not when the write fails", async () => {
    const url = await base();
    await add(url, "The first fact.");
    const during: number[] = [];
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const addWords = memory.vocab.add.bind(memory.vocab);
      memory.vocab.add = (w: string[], v: Float32Array[]) => {  // the batch's last statement fails
        during.push(memory.vectors.size);
        memory.vocab.add = addWords;
        throw new Error("disk full");
      };
    });
    const r = await call(`${url}/facts/batch`, "POST", { facts: [{ text: "A brand new fact." }, { text: "Another one entirely." }] });
    expect(r.status).toBe(500);
    expect(during).toEqual([1]);  // inside the transaction the matrix had not changed
    await runInDurableObject(stub(url), (memory: MemoryObject) => expect(memory.vectors.size).toBe(1));
    expect(await (await call(`${url}/stats`)).json()).toMatchObject({ facts: 1, vectors_in_memory: 1, consistent: true });
  });

  it("rolls back a write whose change to the matrix fails, and reads the matrix back from storage", async () => {
    const url = await base();
    await add(url, "The first fact.");
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const load = memory.vocab.load.bind(memory.vocab);
      memory.vocab.load = () => {  // the last step of the write's transaction, after the matrix took its row
        memory.vocab.load = load;
        throw new Error("read failed");
      };
    });
    expect((await call(`${url}/facts`, "POST", { text: "Zebras graze at dawn." })).status).toBe(500);
    const listed = (await (await call(`${url}/facts`)).json()) as { facts: { text: string }[] };
    expect(listed.facts.map((f) => f.text)).toEqual(["The first fact."]);  // nothing of it committed
    expect(await (await call(`${url}/stats`)).json()).toMatchObject({ facts: 1, vectors_in_memory: 1, consistent: true });
    await runInDurableObject(stub(url), (memory: MemoryObject) => expect(memory.vocab.held()).toEqual(["first", "fact"]));
    expect((await call(`${url}/facts`, "POST", { text: "Zebras graze at dawn." })).status).toBe(201);
    const found = (await (await call(`${url}/recall`, "POST", { query: "zebras graze at dawn", mode: "vector" })).json()) as { results: { fact: { text: string } }[] };
    expect(found.results[0].fact.text).toBe("Zebras graze at dawn.");
  });

  it("dedups and pairs a batch's facts against those stored earlier in it", async () => {
    const url = await base();
    const body = (await (await call(`${url}/facts/batch`, "POST", {
      facts: [{ text: "Mara likes green tea." }, { text: "Mara likes green tea!" }, { text: "Mara likes green tea daily." }],
    })).json()) as { results: { id: number; created: boolean; duplicate?: { match: string; score: number } }[] };
    const [first, second, third] = body.results;
    expect(second).toMatchObject({ id: first.id, created: false, duplicate: { match: "near", score: 1 } });
    expect(third.created).toBe(true);
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expect(memory.sql.exec("SELECT a, b FROM pairs").toArray()).toEqual([{ a: first.id, b: third.id }]);
      expect(memory.vectors.size).toBe(2);
    });
  });

  it("deletes the row, its FTS entry and its vector together", async () => {
    const url = await base();
    const id = ((await (await call(`${url}/facts`, "POST", { text: "Pixel is the owner's cat." })).json()) as { id: number }).id;
    expect((await call(`${url}/facts/${id}`, "DELETE")).status).toBe(200);
    const stub = env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2]));
    await runInDurableObject(stub, (memory: MemoryObject) => {
      const count = (sql: string) => memory.sql.exec<{ n: number }>(sql).one().n;
      expect(count("SELECT count(*) AS n FROM facts")).toBe(0);
      expect(count("SELECT count(*) AS n FROM facts_fts")).toBe(0);
      expect(count("SELECT count(*) AS n FROM vectors")).toBe(0);
      expect(memory.vectors.size).toBe(0);
    });
  });
});

// The fake embedder hashes each word into one of 16 buckets: words alike in it ("boss" and
// "manager" share one) have cosine 1, others 0.
describe("the vocabulary", () => {
  it("grows with each write, rebuilds on reindex and is built once for a memory from before it", async () => {
    const url = await base();
    const id = await add(url, "Mara's manager is Ines.");
    await call(`${url}/facts/batch`, "POST", { facts: [{ text: "Mara's manager is Ines." }, { text: "Ines drinks tea, 42 cups." }] });
    await call(`${url}/facts/${id}`, "PATCH", { text: "Mara's manager is Ines Okafor." });
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expect(words(memory)).toEqual(["mara", "manager", "ines", "drinks", "tea", "cups", "okafor"]);
      expect(memory.vocab.held()).toEqual(words(memory));
    });
    await call(`${url}/facts/${id}`, "DELETE");  // a word stays when its fact goes...
    await call(`${url}/reindex`, "POST");  // ...until a reindex
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expect(words(memory)).toEqual(["ines", "drinks", "tea", "cups"]);
      expect(memory.vocab.held()).toEqual(words(memory));
      memory.sql.exec("DELETE FROM words");  // as a memory from before the table
      memory.sql.exec("DELETE FROM meta WHERE key = 'words_model'");
      memory.vocab.reload();
    });
    await call(`${url}/recall`, "POST", { query: "who drinks tea" });
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expect(words(memory)).toEqual(["ines", "drinks", "tea", "cups"]);
      expect(memory.vocab.held()).toEqual(words(memory));
    });
  });

  it("folds the exact-dedup keys of an older memory once, as Python does", async () => {
    const url = await base();
    const id = await add(url, "Kai lives on Hauptstraße.");
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      // As a memory from before: its key lower-cased, no mark that keys were folded.
      memory.sql.exec("UPDATE facts SET text_key = 'kai lives on hauptstraße.' WHERE id = ?", id);
      memory.sql.exec("DELETE FROM meta WHERE key = 'text_keys'");
      (memory as unknown as { foldKeys(): void }).foldKeys();
      expect(memory.sql.exec("SELECT text_key FROM facts WHERE id = ?", id).one().text_key).toBe("kai lives on hauptstrasse.");
    });
    const again = (await (await call(`${url}/facts`, "POST", { text: "KAI LIVES ON HAUPTSTRASSE." })).json()) as { id: number; created: boolean };
    expect(again).toMatchObject({ id, created: false });
  });

  it("embeds only the query terms the memory does not already hold", async () => {
    const url = await base();
    await add(url, "Mara's manager is Petra.");
    const sent: string[][] = [];
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const embed = memory.embedder.embed.bind(memory.embedder);
      memory.embedder.embed = (texts: string[]) => (sent.push(texts), embed(texts));
    });
    await call(`${url}/recall`, "POST", { query: "mara manager" });
    expect(sent).toEqual([["mara manager"]]);  // both words are stored
    sent.length = 0;
    await call(`${url}/recall`, "POST", { query: "Who is Mara's boss?" });
    expect(sent).toEqual([["Who is Mara's boss?", "boss"]]);  // in the query's own call
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expect(memory.vocab.vectors(["manager", "boss"]).has("boss")).toBe(false);
      expect(memory.vocab.vectors(["manager"]).get("manager")).toHaveLength(memory.embedder.dims);
    });
  });

  it("expands a query term to the memory's close words, in hybrid recall and explain", async () => {
    const url = await base();
    const manager = await add(url, "Mara's manager is Petra.");
    await add(url, "Mara likes tea.");
    type Body = { match: string; expansions: unknown[]; terms: unknown[]; results: { fact: { id: number } }[] };
    const recall = async (extra: object = {}) =>
      (await (await call(`${url}/recall`, "POST", { query: "Who is Mara's boss?", debug: true, ...extra })).json()) as Body;
    const body = await recall();
    expect(body.expansions).toEqual([{ word: "manager", term: "boss", cosine: expect.closeTo(1, 6) }]);
    expect(body.match).toBe('"mara" OR "boss" OR "manager"');
    expect(body.terms).toContainEqual({ term: "manager", facts: 1, idf: expect.any(Number), from: "boss" });
    expect(body.results[0].fact.id).toBe(manager);
    const why = (await (await call(`${url}/explain`, "POST", { query: "Who is Mara's boss?", id: manager })).json()) as Body;
    expect(why.expansions).toEqual(body.expansions);
    expect(why.match).toBe(body.match);
    for (const extra of [{ fusion: { expand: 0 } }, { fusion: { preset: "seed" } }, { mode: "keyword" }]) {
      const off = await recall(extra);
      expect(off.expansions).toEqual([]);
      expect(off.match).toBe('"mara" OR "boss"');
    }
    expect((await call(`${url}/recall`, "POST", { query: "x", fusion: { expand: 1.5 } })).status).toBe(422);
    await call(`${url}/facts/${manager}`, "DELETE");
    expect((await recall()).expansions).toEqual([]);  // no fact holds "manager" any more
  });
});

describe("reranking", () => {
  type Hit = { fact: { id: number }; score: number; parts: { kw: number; vec: number; rerank: number } };
  type Body = { results: Hit[]; rerank: { shared: string[]; query: string; facts: { id: number; text: string; cosine: number }[] } | null };

  it("ranks the fused top again without the words it shares, in one more model call, and explain agrees", async () => {
    const url = await base();
    const texts = ["Cosima Jaramillo works as a glazier.", "Cosima Jaramillo is Freya Jaramillo's sister.", "Cosima Jaramillo reports to Ulla Pereira."];
    const ids = [];
    for (const text of texts) ids.push(await add(url, text));
    const sent: string[][] = [];
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const embed = memory.embedder.embed.bind(memory.embedder);
      memory.embedder.embed = (texts: string[]) => (sent.push(texts), embed(texts));
    });
    const query = "who is cosima jaramillo's boss";
    const recall = async (extra: object = {}) =>
      (await (await call(`${url}/recall`, "POST", { query, debug: true, ...extra })).json()) as Body;

    const body = await recall();
    const withRerank = sent.length;
    expect(body.rerank).not.toBeNull();
    expect(body.rerank!.shared).toEqual(["cosima", "jaramillo"]);
    expect(body.rerank!.query).toBe("who is  's boss");
    const without = new Map([[ids[0], "works as a glazier."], [ids[1], "is Freya 's sister."], [ids[2], "reports to Ulla Pereira."]]);
    expect(body.rerank!.facts.map((f) => f.text)).toEqual(body.rerank!.facts.map((f) => without.get(f.id)));
    expect(new Set(body.rerank!.facts.map((f) => f.id))).toEqual(new Set(ids));
    expect(sent).toContainEqual(["who is  's boss", ...body.rerank!.facts.map((f) => f.text)]);  // the plan's texts, one call
    const best = Math.max(...body.rerank!.facts.map((f) => f.cosine));
    expect(best).toBeGreaterThan(0);
    for (const hit of body.results) {
      const cosine = body.rerank!.facts.find((f) => f.id === hit.fact.id)!.cosine;
      expect(hit.parts.rerank).toBeCloseTo(0.5 * cosine / best, 12);
      expect(hit.score).toBe(hit.parts.kw + hit.parts.vec + hit.parts.rerank);
    }
    const top = body.results[0];
    const why = (await (await call(`${url}/explain`, "POST", { query, id: top.fact.id })).json()) as Record<string, number>;
    expect(why).toMatchObject({ fused_rank: 1, rerank_contribution: top.parts.rerank, score: top.score });

    sent.length = 0;
    await runInDurableObject(stub(url), (memory: MemoryObject) => (memory as unknown as { state: { textVectors: { clear(): void } } }).state.textVectors.clear());  // else the query is held: no call
    const off = await recall({ fusion: { rerank: 0 } });
    expect(off.rerank).toBeNull();
    expect(off.results.map((h) => h.parts.rerank)).toEqual([0, 0, 0]);
    off.results.forEach((h) => expect(h.score).toBe(h.parts.kw + h.parts.vec));
    expect(withRerank).toBe(sent.length + 1);
    for (const bad of [-1, 21, 1.5, "five"]) expect((await call(`${url}/recall`, "POST", { query, fusion: { rerank: bad } })).status).toBe(422);
  });

  it("does nothing with fewer than two facts, no shared word or nothing left of the query, and outside hybrid recall", async () => {
    const url = await base();
    await add(url, "Cosima Jaramillo works as a glazier.");
    expect(((await (await call(`${url}/recall`, "POST", { query: "cosima's boss", debug: true })).json()) as Body).rerank).toBeNull();
    await add(url, "Cosima Jaramillo is Freya Jaramillo's sister.");
    for (const body of [{ query: "cosima jaramillo" }, { query: "glazier sister" }, { query: "cosima's boss", mode: "keyword" },
      { query: "cosima's boss", mode: "vector" }]) {
      const r = (await (await call(`${url}/recall`, "POST", { ...body, debug: true })).json()) as Body;
      expect(r.rerank).toBeNull();
      r.results.forEach((h) => expect(h.parts.rerank).toBe(0));
    }
  });

  it("keeps the fused order when the model fails during the rerank", async () => {
    const url = await base();
    await add(url, "Cosima Jaramillo works as a glazier.");
    await add(url, "Cosima Jaramillo reports to Ulla Pereira.");
    const query = "who is cosima's boss";
    const fused = (await (await call(`${url}/recall`, "POST", { query, fusion: { rerank: 0 } })).json()) as Body;
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      (memory as unknown as { state: { textVectors: { clear(): void } } }).state.textVectors.clear();  // the query's vector held would make the rerank's call the first
      const embed = memory.embedder.embed.bind(memory.embedder);
      let calls = 0;
      memory.embedder.embed = (texts: string[]) => (++calls === 2 ? Promise.reject(new Error("down")) : embed(texts));
    });
    const r = (await (await call(`${url}/recall`, "POST", { query, debug: true })).json()) as Body & { mode: string };
    expect(r).toMatchObject({ mode: "hybrid", rerank: null });
    expect(r.results.map((h) => [h.fact.id, h.score])).toEqual(fused.results.map((h) => [h.fact.id, h.score]));
  });
});

describe("helpers", () => {
  it("stems as the index does, leaving no probe row behind", async () => {
    await created("http://memory.test/memories/stems");
    const stub = env.MEMORY.get(env.MEMORY.idFromName("stems"));
    await runInDurableObject(stub, (memory: MemoryObject) => {
      expect(memory.tokens("The owner's sisters are running")).toEqual(["the", "owner", "s", "sister", "ar", "run"]);
      // One probe after another: none may see an earlier probe's terms.
      expect(memory.tokens("The owner's wife is called Mara.")).toEqual(["the", "owner", "s", "wife", "is", "call", "mara"]);
      expect(memory.tokens("living")).toEqual(["live"]);
      expect(memory.tokens("wife")).toEqual(["wife"]);
      expect(memory.sql.exec<{ n: number }>("SELECT count(*) AS n FROM probe").one().n).toBe(0);
    });
  });

  it("writes times as the Python store does: UTC, microseconds, Z", () => {
    expect(cleanTime("2024-03-05T10:00:00+02:00", "t")).toBe("2024-03-05T08:00:00.000000Z");
    expect(cleanTime("2024-03-05T10:00:00.123456Z", "t")).toBe("2024-03-05T10:00:00.123456Z");
    expect(() => cleanTime("2024-03-05T10:00:00", "t")).toThrow(/time zone/);
    expect(() => cleanTime("yesterday", "t")).toThrow(/ISO-8601/);
  });
});

// What memory holds against MEMORY_BUDGET_BYTES (state.ts): workerd does not enforce 128 MB
// locally, so these set the budget and check the accounting and what it refuses.
describe("the memory budget", () => {
  const stateOf = (memory: MemoryObject) => (memory as unknown as { state: State }).state;
  const json = async (r: Response) => (await r.json()) as Record<string, any>;

  it("counts the bytes of vectors and words as their arrays hold them, and says so in /stats", async () => {
    const url = await base();
    await add(url, "Mara's manager is Ines.");
    await add(url, "Ines drinks tea.");
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const { vectors, vocab } = memory;
      const arrays = (i: typeof vectors) => [...i.codes, ...i.params].reduce((s, b) => s + b.byteLength, 0) + i.ids.byteLength + i.types.byteLength;
      expect(vectors.bytes()).toBe(arrays(vectors) + vectors.size * MAP_ENTRY_BYTES);
      expect(vectors.codes.map((b) => b.byteLength)).toEqual([BLOCK * 16 * FACT_BITS / 8]);  // 16 dims, 4 bits each
      expect(vectors.params.map((b) => b.byteLength)).toEqual([BLOCK * 3 * 4]);
      expect(vocab.index.row.size).toBe(0);  // append-only: no map, and no word strings in memory
      expect(vocab.bytes()).toBe(arrays(vocab.index));
    });
    const stats = await json(await call(`${url}/stats`));
    expect(stats.memory_parts.vectors + stats.memory_parts.vocabulary + stats.memory_parts.text_vectors).toBe(stats.memory_bytes);
    expect(stats.memory_budget).toBe(DEFAULT_BUDGET);
    expect(stats.capacity_facts).toBeGreaterThan(100_000);
    expect(stats.memory_full).toBe(false);
  });

  it("refuses the write that would pass it with 507, keeps what was stored, and starts without its vectors past it", async () => {
    const url = await base();
    const first = await add(url, "Mara's manager is Ines.");
    await add(url, "Ines drinks tea.");
    let budget = 0;
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const state = stateOf(memory);
      const { vectors, vocabulary } = state.memoryBytes();
      budget = state.budget = vectors + vocabulary + 1;  // no room for another fact
    });
    const refused = await call(`${url}/facts`, "POST", { text: "Okafor plays the cello on Sundays." });
    expect(refused.status).toBe(507);
    const error = (await json(refused)).error;
    expect(error.code).toBe("memory_full");
    expect(error.message).toMatch(/holds 2 facts.*budget.*Delete facts, or move some to another memory by name/);
    const batch = await call(`${url}/facts/batch`, "POST", { facts: [{ text: "Ines drinks tea." }, { text: "A brand new fact here." }] });
    expect(batch.status).toBe(507);  // all or nothing: the batch stored none
    const again = await json(await call(`${url}/facts`, "POST", { text: "Ines drinks tea." }));
    expect(again.created).toBe(false);  // a duplicate takes no room
    expect((await json(await call(`${url}/facts`))).total).toBe(2);

    await runInDurableObject(stub(url), (memory: MemoryObject) => {  // as a start with less room than its data
      const state = stateOf(memory);
      state.budget = 1000;
      state.load();
      expect(memory.vectors.size).toBe(0);
      expect(memory.vocab.held()).toEqual([]);
    });
    const health = await json(await call(`${url}/health`));
    expect(health).toMatchObject({ facts: 2, mode: "keyword-only", memory_full: true });
    expect(health.warning).toMatch(/past its budget/);
    const stats = await json(await call(`${url}/stats`));
    expect(stats).toMatchObject({ memory_full: true, memory_budget: 1000, vectors: 2, vectors_in_memory: 0, consistent: true });
    expect(stats.capacity_facts).toBeLessThan(2);  // what it holds does not fit
    const recall = await json(await call(`${url}/recall`, "POST", { query: "who drinks tea" }));
    expect(recall.mode).toBe("keyword-only");
    expect(recall.warning).toMatch(/memory_full/);
    expect(recall.results.map((r: { fact: { text: string } }) => r.fact.text)).toEqual(["Ines drinks tea."]);
    expect((await call(`${url}/facts`, "POST", { text: "Anything at all." })).status).toBe(507);
    expect((await call(`${url}/facts/${first}`, "PATCH", { text: "Mara's boss is Ines." })).status).toBe(507);
    expect((await call(`${url}/facts/${first}`, "PATCH", { source: "chat" })).status).toBe(200);
    expect((await call(`${url}/facts/${first}/neighbours`)).status).toBe(507);
    expect((await call(`${url}/duplicates?threshold=0.5`)).status).toBe(507);
    expect((await call(`${url}/reindex`, "POST")).status).toBe(507);
    expect((await json(await call(`${url}/facts/${first}`))).source).toBe("chat");
    expect((await json(await call(`${url}/facts?limit=100`))).facts).toHaveLength(2);  // export works without the vectors

    await runInDurableObject(stub(url), (memory: MemoryObject) => { stateOf(memory).budget = budget; });
    expect((await call(`${url}/facts/${first}`, "DELETE")).status).toBe(200);  // a delete that brings it under reloads
    expect(await json(await call(`${url}/health`))).toMatchObject({ facts: 1, mode: "hybrid", memory_full: false });
    await runInDurableObject(stub(url), (memory: MemoryObject) => { expect(memory.vectors.size).toBe(1); });
    expect((await call(`${url}/facts`, "POST", { text: "Mara's manager is Ines." })).status).toBe(201);  // its words are held: room for its row
  });
});
