// Which names are memories: only those created (PUT /memories/NAME), listed by the directory
// object (GET /memories); any other name is a 404 that names the memories there are.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { MemoryObject } from "../src/memory";
import { migrate } from "../src/storage/schema";

const env = testEnv as unknown as Env;
const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
const fresh = (what: string) => `${what}-${Math.random().toString(36).slice(2)}`;
const call = (path: string, method = "GET", body?: unknown) =>
  SELF.fetch(`http://memory.test${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
const listed = async () => ((await (await call("/memories")).json()) as { memories: string[] }).memories;
type Failure = { error: { code: string; message: string; memories: string[] } };

describe("the directory of memories", () => {
  it("creates a memory only with PUT: 201, then 200, and lists it", async () => {
    const name = fresh("made");
    const first = await call(`/memories/${name}`, "PUT");
    expect([first.status, await first.json()]).toEqual([201, { name, created: true }]);
    const again = await call(`/memories/${name}`, "PUT");
    expect([again.status, await again.json()]).toEqual([200, { name, created: false }]);
    expect(await listed()).toContain(name);
    expect((await call(`/memories/${name}/facts`, "POST", { text: "The owner waters the ferns." })).status).toBe(201);
    expect((await (await call(`/memories/${name}/health`)).json()) as object).toMatchObject({ facts: 1 });
    const names = await listed();
    expect(names).toEqual([...names].sort());  // code point order, as serve --dir lists its files
  });

  it("answers a name that is no memory with a 404 naming those there are, for reads and writes, and creates nothing", async () => {
    const [kept, typo] = [fresh("kept"), fresh("typo")];
    await call(`/memories/${kept}`, "PUT");
    for (const [method, path, body] of [["GET", "/facts"], ["POST", "/facts", { text: "Lost fact." }], ["POST", "/recall", { query: "x" }],
      ["GET", "/health"], ["GET", "/stats"], ["PUT", "/settings", { fusion: { k: 10 } }]] as const) {
      const r = await call(`/memories/${typo}${path}`, method, body);
      expect(r.status).toBe(404);
      const { error } = (await r.json()) as Failure;
      expect(error.code).toBe("no_memory");
      expect(error.memories).toContain(kept);
      expect(error.message).toContain(`no memory named '${typo}'`);
      expect(error.message).toContain(kept);
      expect(error.message).toContain(`PUT /memories/${typo}`);
    }
    expect(await listed()).not.toContain(typo);
    await runInDurableObject(env.MEMORY.get(env.MEMORY.idFromName(typo)), (_: MemoryObject, ctx: DurableObjectState) => {
      expect(ctx.storage.sql.exec("SELECT name FROM sqlite_master WHERE name IN ('facts', 'meta')").toArray()).toEqual([]);  // nothing written
    });
    // The contract is no memory's: it is served at any name.
    expect((await call(`/memories/${typo}/openapi.json`)).status).toBe(200);
    // Public without the secret, as before: up, and nothing more.
    expect(await (await SELF.fetch(`http://memory.test/memories/${typo}/health`)).json()).toEqual({ ok: true });
  });

  it("treats the root as the memory default, which must be created too", async () => {
    const r = await call("/facts");
    expect(r.status).toBe(404);
    expect(((await r.json()) as Failure).error.message).toContain("no memory named 'default'");
  });

  it("needs the secret to list or create, and answers other methods with 405", async () => {
    expect((await SELF.fetch("http://memory.test/memories")).status).toBe(401);
    expect((await SELF.fetch("http://memory.test/memories/nosecret", { method: "PUT" })).status).toBe(401);
    const post = await call("/memories", "POST");
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET"]);
    const get = await call(`/memories/${fresh("one")}`);
    expect([get.status, get.headers.get("allow")]).toEqual([405, "PUT"]);
    const bad = await call("/memories/bad%20name", "PUT");
    expect(bad.status).toBe(404);
    expect(((await bad.json()) as Failure).error.message).toMatch(/a name is 1 to 64/);
  });

  it("keeps a memory made before creates were: an object holding facts is a memory, and is listed on first sight", async () => {
    const name = fresh("before");
    const stub = env.MEMORY.get(env.MEMORY.idFromName(name));
    // What such an object holds: the schema and a fact, no mark of a create, and the directory never told.
    const answer = await runInDurableObject(stub, async (_: MemoryObject, ctx: DurableObjectState) => {
      migrate(ctx.storage.sql, ctx.storage);
      ctx.storage.sql.exec("INSERT INTO facts (text, text_key, type, source, created_at, updated_at) VALUES (?, ?, 'fact', '', ?, ?)",
        "The owner keeps bees.", "the owner keeps bees.", "2025-01-01T00:00:00.000000Z", "2025-01-01T00:00:00.000000Z");
      ctx.storage.sql.exec("DELETE FROM meta");
      expect(await listed()).not.toContain(name);
      const r = await (await restart(ctx)).fetch(new Request("http://memory/facts", { headers }));
      return [r.status, ((await r.json()) as { total: number }).total];
    });
    expect(answer).toEqual([200, 1]);
    expect(await listed()).toContain(name);
    await runInDurableObject(stub, (_: MemoryObject, ctx: DurableObjectState) => {
      // Marked now: it stays a memory once its facts and history are gone.
      expect(ctx.storage.sql.exec("SELECT key FROM meta WHERE key IN ('created', 'listed') ORDER BY key").toArray()).toEqual(
        [{ key: "created" }, { key: "listed" }]);
    });
  });

  it("answers 503 memory_unavailable, not a 404, when the directory fails", async () => {
    const broken = { ...env, DIRECTORY: { idFromName: () => "x", get: () => ({ names: () => Promise.reject(new Error("reset")) }) } };
    const r = await worker.fetch(new Request("http://memory.test/memories", { headers }), broken as unknown as Env);
    expect(r.status).toBe(503);
    expect(((await r.json()) as Failure).error.message).toMatch(/the memories' directory could not answer/);
  });
});

/** A new MemoryObject on the object's own storage, as after an eviction, once it has opened. */
async function restart(ctx: DurableObjectState): Promise<MemoryObject> {
  let started: unknown;
  Object.assign(ctx, { blockConcurrencyWhile: (work: () => Promise<unknown>) => (started = work()) });
  try {
    const memory = new MemoryObject(ctx, env);
    await started;
    return memory;
  } finally {
    delete (ctx as Partial<DurableObjectState>).blockConcurrencyWhile;
  }
}
