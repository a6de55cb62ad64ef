// What a recall reads: the memory's row count comes from FTS5's averages record, one row, not
// count(*) over the facts (a row a fact of the memory, on every recall); the current-only filter
// reads the ids it leaves out, and not a row for every fact the keyword query matches.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { MemoryObject } from "../src/memory";
import { type FactType, TYPES } from "../src/storage/vectors";
import { vectorsById } from "../src/storage/by_key";
import { varint } from "../src/recall/reading";
import { fill, readBy, rowsRead } from "./filled";
import { created } from "./memories";

const env = testEnv as unknown as Env;
const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
const call = (url: string, method = "GET", body?: unknown) =>
  SELF.fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
const stub = (name: string) => env.MEMORY.get(env.MEMORY.idFromName(name));

const rowsReadBy = async (memory: MemoryObject, work: () => unknown) => (await rowsRead(memory.sql, work))[1];

describe("a recall's rows", () => {
  it("counts the memory's facts from FTS5's own record, as count(*) would", async () => {
    const name = `rows-${Math.random().toString(36).slice(2)}`;
    const url = await created(`http://memory.test/memories/${name}`);
    for (let i = 0; i < 600; i += 100) {
      const facts = Array.from({ length: 100 }, (_, k) => ({ text: `Fact number ${i + k} is about item${i + k}.`, force: true }));
      expect((await call(`${url}/facts/batch`, "POST", { facts })).status).toBe(200);
    }
    await call(`${url}/facts/${1}`, "DELETE");
    await runInDurableObject(stub(name), async (memory: MemoryObject) => {
      const reader = (memory as unknown as { reader: { indexedRows(): number; termCounts(t: string[]): { counts: { facts: number }[] } } }).reader;
      const counted = memory.sql.exec<{ n: number }>("SELECT count(*) AS n FROM facts").one().n;
      expect(counted).toBe(599);
      expect(reader.indexedRows()).toBe(counted);
      // a term no fact holds: what is left is the row count itself
      expect(await rowsReadBy(memory, () => reader.termCounts(["zzyzx"]))).toBeLessThan(10);
    });
  }, 30_000);

  it("reads a row more for the current-only filter, and the replaced facts' ids once", async () => {
    const name = `rows-${Math.random().toString(36).slice(2)}`;
    const url = await created(`http://memory.test/memories/${name}`);
    for (let i = 0; i < 600; i += 100) {
      const facts = Array.from({ length: 100 }, (_, k) => ({ text: `Fact number ${i + k} is about item${i + k}.`, force: true }));
      expect((await call(`${url}/facts/batch`, "POST", { facts })).status).toBe(200);
    }
    // The rows of one recall, without the filter (include_stale) and with it (the default).
    const recallRows = () => runInDurableObject(stub(name), async (memory: MemoryObject) => {
      const recall = (includeStale: boolean) => rowsReadBy(memory, async () => {
        const r = await memory.fetch(new Request("http://memory.test/recall", {
          method: "POST", headers, body: JSON.stringify({ query: "fact about item42", log: false, include_stale: includeStale }),
        }));
        expect(r.status).toBe(200);
      });
      await recall(true);  // warm: the vocabulary's first read
      return { without: await recall(true), with: await recall(false) };
    });
    const none = await recallRows();
    expect(none.with - none.without).toBeGreaterThanOrEqual(0);
    expect(none.with - none.without).toBeLessThanOrEqual(4);
    for (let id = 1; id < 600; id += 10) {  // 60 facts replaced (10%), each by the next
      expect((await call(`${url}/facts/${id}`, "PATCH", { superseded_by: id + 1 })).status).toBe(200);
    }
    const tenth = await recallRows();
    expect(tenth.without).toBeLessThanOrEqual(none.without + 4);
    expect(tenth.with - tenth.without).toBeLessThanOrEqual(60 + 4);  // the replaced facts' ids, read once
    // The keyword list left out the replaced facts before taking its depth, as a NOT IN would.
    const kw = async (body: Record<string, unknown>) => ((await (await call(`${url}/recall`, "POST", {
      query: "fact about item42", mode: "keyword", log: false, limit: 100, ...body,
    })).json()) as { results: { fact: { id: number } }[] }).results.map((h) => h.fact.id);
    const all = await kw({ include_stale: true, fusion: { depth: 100 } });
    for (const type of [undefined, "fact"]) {
      expect(await kw({ type, fusion: { depth: 10 } }), type).toEqual(all.filter((id) => id % 10 !== 1).slice(0, 10));
    }
  }, 30_000);

  // What a recall reads at 1,000, 10,000 and 100,000 facts (docs/cloudflare.md has the figures):
  // each term's count is a row of FTS5's own counts (term_counts.ts), where count(*) read a row
  // a fact holding the term; the keyword list is FTS5's own sort (keyword_top.ts), where scoring
  // every match read two rows a match, and a tie at its depth (5,000 facts of one length at 100k)
  // races the id-ordered read; the rescored vectors are read a row an id (by_key.ts).
  for (const size of [1_000, 10_000, 100_000]) {
    it(`reads a row for each term's count, and under 1,500 rows, at ${size} facts`, async () => {
      const name = `rows-${size}-${Math.random().toString(36).slice(2)}`;
      await created(`http://memory.test/memories/${name}`);
      await runInDurableObject(stub(name), async (memory: MemoryObject) => {
        fill(memory, size, { vectors: true });
        const reader = (memory as unknown as { reader: { having(t: string): number } }).reader;
        expect(await rowsReadBy(memory, () => expect(reader.having("fact")).toBe(size))).toBeLessThanOrEqual(1);
        for (const [kind, query] of [["broad", "fact number about apple"], ["narrow", "word42 apple"], ["rare and common", "word42 fact"], ["none", "zzyzx qqq"]]) {
          const [, rows] = await readBy(memory.sql, async () => {
            const r = await memory.fetch(new Request("http://memory.test/recall", { method: "POST", headers, body: JSON.stringify({ query, log: false }) }));
            expect(r.status).toBe(200);
          });
          const counting = rows.filter(([q]) => /count\(\*\)[^]*MATCH/.test(q)).reduce((sum, [, n]) => sum + n, 0);
          const keyword = rows.filter(([q]) => /bm25\(facts_fts\)|ORDER BY rank/.test(q)).reduce((sum, [, n]) => sum + n, 0);
          const total = rows.reduce((sum, [, n]) => sum + n, 0);
          console.log(`${size} facts, ${kind} recall: ${total} rows read, ${keyword} of them the keyword list`);
          expect(counting, kind).toBe(0);  // no count(*) over a MATCH: a term's count is one row
          expect(total, kind).toBeLessThanOrEqual(1_500);
        }
      });
    }, 180_000);
  }

  it("takes a type's keyword list as the rows come, the other types left out: the list the statement gave", async () => {
    const name = `rows-${Math.random().toString(36).slice(2)}`;
    await created(`http://memory.test/memories/${name}`);
    await runInDurableObject(stub(name), async (memory: MemoryObject) => {
      fill(memory, 3_000, { typed: true, vectors: true });
      const reader = (memory as unknown as { reader: { keyword(m: string, t: FactType | null, d: number, h?: Set<number>): [number, number][] } }).reader;
      const statement = (match: string, type: FactType, depth: number, hidden: Set<number>) => memory.sql.exec<{ id: number; s: number }>(
        "SELECT facts_fts.rowid AS id, bm25(facts_fts) AS s FROM facts_fts JOIN facts ON facts.id = facts_fts.rowid"
        + " WHERE facts_fts MATCH ? AND facts.type = ? ORDER BY s, facts_fts.rowid", match, type).toArray()
        .filter((r) => !hidden.has(r.id)).slice(0, depth).map((r) => [r.id, r.s]);
      for (const match of ['"apple" OR "river"', '"fact" OR "word42"', '"word42" OR "apple"', '"fact"', '"zzyzx"']) {
        for (const hidden of [new Set<number>(), new Set(Array.from({ length: 300 }, (_, i) => 3 * i + 1))]) {
          for (const type of TYPES) {
            let got: [number, number][] = [];
            const rows = await rowsReadBy(memory, () => { got = reader.keyword(match, type, 30, hidden); });
            expect(got, `${match} ${type}`).toEqual(statement(match, type, 30, hidden));
            // Every fact holds "fact", all tied: the statement read two rows a match (6,000). The
            // hidden ids (the skills among the first 900 facts) are stepped past in both of the race's reads.
            if (match === '"fact"') expect(rows, `${match} ${type}`).toBeLessThan(hidden.size ? 3_000 : 500);
          }
        }
      }
    });
  }, 60_000);

  it("reads a row for each vector a search rescores", async () => {
    const name = `rows-${Math.random().toString(36).slice(2)}`;
    await created(`http://memory.test/memories/${name}`);
    await runInDurableObject(stub(name), async (memory: MemoryObject) => {
      fill(memory, 1_000, { vectors: true });
      const ids = Array.from({ length: 330 }, (_, i) => 3 * i + 1);  // more than a statement takes
      let got = new Map<number, Float32Array>();
      const rows = await rowsReadBy(memory, () => { got = vectorsById(memory.sql, "vectors", "fact_id", [...ids, 5_000], "t.model = ?", "fake-bow-16"); });
      expect([...got.keys()].sort((a, b) => a - b)).toEqual(ids);  // 5,000 is no fact
      const stored = memory.sql.exec<{ embedding: ArrayBuffer }>("SELECT embedding FROM vectors WHERE fact_id = 301").one().embedding;
      expect([...got.get(301)!]).toEqual([...new Float32Array(stored)]);
      expect(rows).toBe(ids.length + 1);  // a row an id asked (the missing one its lookup): json_each joined, or an IN list, read two
    });
  }, 30_000);

  it("decodes SQLite varints", () => {
    expect(varint(new Uint8Array([0x05]))).toBe(5);
    expect(varint(new Uint8Array([0x81, 0x00]))).toBe(128);
    expect(varint(new Uint8Array([0x84, 0xe5, 0x17, 0xff]))).toBe((4 * 128 + 0x65) * 128 + 0x17);
  });
});
