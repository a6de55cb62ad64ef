// The pairs kept on write stay exactly the all-pairs answer at the floor (as tests/test_pairs.py).
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { MemoryObject } from "../src/memory";
import { TYPES } from "../src/storage/vectors";
import { created } from "./memories";

const env = testEnv as unknown as Env;
const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
const call = async (url: string, method = "GET", body?: unknown) =>
  SELF.fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
const WORDS = "tea jazz chess Lisbon Anna brother sister moved works loves hates boat".split(" ");

let seed = 7;
const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
const text = () => [...WORDS].sort(() => rand() - 0.5).slice(0, 4).join(" ") + ` note${Math.floor(rand() * 4)}`;

/** Pairs kept vs pairs computed from the matrix at the floor (a pair within 1e-6 of it may round either way). */
function assertExact(memory: MemoryObject): number {
  const kept = new Map(memory.sql.exec("SELECT a, b, score FROM pairs").toArray().map((r) => [`${r.a}-${r.b}`, r.score as number]));
  const want = new Map<string, number>();
  for (const t of TYPES) for (const [s, a, b] of memory.vectors.pairs(t)) if (s >= memory.floor - 1e-6) want.set(`${Math.min(a, b)}-${Math.max(a, b)}`, s);
  for (const [k, s] of want) if (s >= memory.floor + 1e-6) expect(kept.has(k), `missing ${k}`).toBe(true);
  for (const [k, s] of kept) expect(Math.abs(s - want.get(k)!), `stale ${k}`).toBeLessThan(1e-6);
  return kept.size;
}

describe("the pairs table", () => {
  it("stays exact through adds, edits, deletes, undo and reindex", async () => {
    const name = `pairs-${Math.random().toString(36).slice(2)}`;
    const url = await created(`http://memory.test/memories/${name}`);
    const stub = env.MEMORY.get(env.MEMORY.idFromName(name));
    const added = (await (await call(`${url}/facts/batch`, "POST", {
      facts: Array.from({ length: 80 }, () => ({ text: text(), type: TYPES[Math.floor(rand() * 3)] })),
    })).json()) as { results: { id: number; created: boolean; fact: Record<string, unknown> }[] };
    const ids = added.results.filter((r) => r.created).map((r) => r.id);
    expect(await runInDurableObject(stub, assertExact)).toBeGreaterThan(20);
    for (const id of ids.slice(0, 10)) await call(`${url}/facts/${id}`, "PATCH", { text: text() });
    for (const id of ids.slice(10, 16)) await call(`${url}/facts/${id}`, "PATCH", { type: "log" });
    await runInDurableObject(stub, assertExact);
    const gone = [];
    for (const id of ids.slice(20, 30)) gone.push(((await (await call(`${url}/facts/${id}`, "DELETE")).json()) as { fact: Record<string, unknown> }).fact);
    await runInDurableObject(stub, assertExact);
    for (const fact of gone.slice(0, 5)) await call(`${url}/facts`, "POST", fact);  // undo: id and times kept
    await runInDurableObject(stub, assertExact);
    await call(`${url}/reindex`, "POST");
    await runInDurableObject(stub, async (memory: MemoryObject) => {
      while (!memory.pairsReady()) await memory.fillPairs();
      assertExact(memory);
    });
    const dup = (await (await call(`${url}/duplicates?threshold=0.9&limit=10000`)).json()) as { pairs: { score: number }[]; total: number };
    const below = (await (await call(`${url}/duplicates?threshold=0.5&limit=10000`)).json()) as { total: number };
    await runInDurableObject(stub, (memory: MemoryObject) => {
      let n90 = 0;
      let n50 = 0;
      for (const t of TYPES) for (const [s] of memory.vectors.pairs(t)) { n90 += s >= 0.9 ? 1 : 0; n50 += s >= 0.5 ? 1 : 0; }
      expect(dup.total).toBe(n90);
      expect(below.total).toBe(n50);
    });
  });

  it("fills in the pairs of facts stored before the table, slice by slice", async () => {
    const name = `fill-${Math.random().toString(36).slice(2)}`;
    const url = await created(`http://memory.test/memories/${name}`);
    const stub = env.MEMORY.get(env.MEMORY.idFromName(name));
    await call(`${url}/facts/batch`, "POST", { facts: Array.from({ length: 60 }, () => ({ text: text() })) });
    await runInDurableObject(stub, async (memory: MemoryObject) => {
      const before = assertExact(memory);
      memory.sql.exec("DELETE FROM meta");  // as a memory from before migration 2
      (memory as unknown as { startPairs(): void }).startPairs();
      expect(memory.pairsReady()).toBe(false);
      while (!memory.pairsReady()) await memory.fillPairs();
      expect(assertExact(memory)).toBe(before);
    });
  });

  it("answers 503 building, saying how far, while the fill has not caught up: no all-pairs loop meanwhile", async () => {
    const name = `building-${Math.random().toString(36).slice(2)}`;
    const url = await created(`http://memory.test/memories/${name}`);
    const stub = env.MEMORY.get(env.MEMORY.idFromName(name));
    const added = (await (await call(`${url}/facts/batch`, "POST", { facts: Array.from({ length: 30 }, () => ({ text: text() })) })).json()) as
      { results: { id: number; created: boolean }[] };
    const ids = added.results.filter((r) => r.created).map((r) => r.id);
    await runInDurableObject(stub, (memory: MemoryObject) => {
      memory.sql.exec("DELETE FROM meta WHERE key = 'pairs_floor'");  // as a memory from before the table
      (memory as unknown as { startPairs(): void }).startPairs();
      memory.sql.exec("UPDATE meta SET value = ? WHERE key = 'pairs_upto'", ids[9]);  // ten facts in
      memory.vectors.pairs = () => { throw new Error("the all-pairs loop ran"); };
    });
    for (const path of ["/duplicates", "/duplicates?threshold=0.8", "/duplicates/nearest", "/duplicates/nearest?type=fact"]) {
      const r = await call(`${url}${path}`);
      expect(r.status).toBe(503);
      expect(r.headers.get("retry-after")).toBe("5");
      expect(await r.json()).toEqual({ error: { code: "building",
        message: `the near-duplicate pairs are still being built (10 of ${ids.length} facts): try again in a few seconds` } });
    }
    await runInDurableObject(stub, (memory: MemoryObject) => { delete (memory.vectors as Partial<typeof memory.vectors>).pairs; });
    expect((await call(`${url}/duplicates?threshold=0.5`)).status).toBe(200);  // below the floor every pair is computed, as ever
    await runInDurableObject(stub, async (memory: MemoryObject) => {
      while (!memory.pairsReady()) await memory.fillPairs();
    });
    expect((await call(`${url}/duplicates`)).status).toBe(200);
    expect((await call(`${url}/duplicates/nearest`)).status).toBe(200);
  });
});
