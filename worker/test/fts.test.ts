// FTS5 in the object's SQLite, as recall uses it.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { expect, it } from "vitest";
import type { MemoryObject } from "../src/memory";
import { created } from "./memories";

const env = testEnv as unknown as Env;  // the bindings of wrangler.jsonc and vitest.config.ts

it("matching() returns only the rows asked for, even for one id", async () => {
  // The object's SQLite returns every match for `MATCH ... AND rowid IN (?)` with one value
  // (seen with workerd 2026-11-02): a chained question once ranked the wrong fact first.
  await created("http://memory.test/memories/fts-in");
  const stub = env.MEMORY.get(env.MEMORY.idFromName("fts-in"));
  await runInDurableObject(stub, (memory: MemoryObject) => {
    memory.sql.exec("INSERT INTO facts_fts (rowid, text) VALUES (3, 'Priya lives in Lisbon'), (5, 'Mara works as a nurse')");
    const ids = (match: string, wanted: number[]) => memory.matching(match, wanted).map(([id]) => id);
    expect(ids('"living"', [5])).toEqual([]);
    expect(ids('"living"', [5, 7])).toEqual([]);
    expect(ids('"living"', [3, 5])).toEqual([3]);
    expect(ids('"nurse" OR "lisbon"', [3, 5]).sort()).toEqual([3, 5]);
  });
});

it("explain gives no BM25 to a fact the query does not match", async () => {
  const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
  const base = await created("http://memory.test/memories/fts-explain");
  const post = async (path: string, body: unknown) =>
    (await (await SELF.fetch(`${base}${path}`, { method: "POST", headers, body: JSON.stringify(body) })).json()) as Record<string, unknown>;
  await post("/facts", { text: "Priya lives in Lisbon." });
  const mara = (await post("/facts", { text: "Mara works as a nurse." })).id;
  const why = await post("/explain", { query: "who is living in lisbon", id: mara });
  expect(why).toMatchObject({ bm25: null, kw_rank: null });
});
