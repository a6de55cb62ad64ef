// What a batch write reads: each fact's proposals need only its closest few rows down to PROPOSE,
// as a lone fact's do, not every row that far (writing.ts `top`), so a batch of n facts reads no
// more than n lone writes, and gives each fact the same proposals.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { MemoryObject } from "../src/memory";
import { readBy } from "./filled";
import { created } from "./memories";

const env = testEnv as unknown as Env;
const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
const call = (url: string, method = "GET", body?: unknown) =>
  SELF.fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
const stub = (name: string) => env.MEMORY.get(env.MEMORY.idFromName(name));
const WORDS = "apple river mountain coffee garden window silver purple ocean forest planet rocket violin basket candle mirror pencil ladder tunnel castle".split(" ");
let seed = 7;
const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const sentence = (n: number) => `The owner keeps ${Array.from({ length: 5 }, () => WORDS[Math.floor(random() * 20)]).join(" ")} thing${n}.`;

/** A memory of 400 facts of a few words each, many of them between PROPOSE and the floor for a new one. */
async function crowded(): Promise<[string, string]> {
  const name = `batch-rows-${Math.random().toString(36).slice(2)}`;
  const url = await created(`http://memory.test/memories/${name}`);
  for (let i = 0; i < 400; i += 100) {
    seed = 7 + i;
    const facts = Array.from({ length: 100 }, (_, k) => ({ text: sentence(i + k), force: true }));
    expect((await call(`${url}/facts/batch`, "POST", { facts })).status).toBe(200);
  }
  return [name, url];
}

/** The vector rows `send` reads in the object, and the proposals' ids of each fact it wrote. */
async function written(name: string, send: (fetch: (body: unknown, path: string) => Promise<Response>) => Promise<unknown[]>) {
  return runInDurableObject(stub(name), async (memory: MemoryObject) => {
    const post = (body: unknown, path: string) =>
      memory.fetch(new Request(`http://memory.test${path}`, { method: "POST", headers, body: JSON.stringify(body) }));
    const [answers, each] = await readBy(memory.sql, () => send(post));
    const rows = each.filter(([q]) => /(FROM|JOIN) vectors\b/.test(q)).reduce((sum, [, n]) => sum + n, 0);
    return { rows, proposals: (answers as { conflicts?: { id: number }[] }[]).map((a) => (a.conflicts ?? []).map((c) => c.id)) };
  });
}

describe("a batch write's rows", () => {
  it("reads no more than its facts written one by one, and gives each the same proposals", async () => {
    seed = 99;
    const texts = Array.from({ length: 20 }, (_, k) => sentence(1000 + k));
    const [batchName] = await crowded();
    const [aloneName] = await crowded();
    const batch = await written(batchName, async (post) => {
      const r = await post({ facts: texts.map((text) => ({ text })) }, "/facts/batch");
      expect(r.status).toBe(200);
      return ((await r.json()) as { results: unknown[] }).results;
    });
    const alone = await written(aloneName, async (post) => {
      const out = [];
      for (const text of texts) {
        const r = await post({ text }, "/facts");
        expect(r.status).toBeLessThan(300);
        out.push(await r.json());
      }
      return out;
    });
    expect(alone.proposals.flat().length).toBeGreaterThan(0);
    expect(batch.proposals).toEqual(alone.proposals);
    // (every row down to PROPOSE for each fact of the batch, as before: 7,554 rows against 7,150)
    expect(batch.rows).toBeLessThanOrEqual(alone.rows);
  }, 60_000);
});
