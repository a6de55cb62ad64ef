// The keyword list by FTS5's own sort (src/recall/keyword_top.ts) is the list the old query gave,
// `ORDER BY bm25(facts_fts), rowid` over every match, ids and scores, ties by id, with facts
// hidden; and it reads about the rows it returns where the old query read two rows a match.
import { env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { keywordTop } from "../src/recall/keyword_top";
import type { MemoryObject } from "../src/memory";
import { quote } from "../src/recall/ranking";
import { fill, rowsRead } from "./filled";
import { created } from "./memories";

const env = testEnv as unknown as Env;
const stub = (name: string) => env.MEMORY.get(env.MEMORY.idFromName(name));
/** The list as reading.ts `keyword` read it before: every match scored and sorted in the statement. */
function scoringEvery(sql: SqlStorage, match: string, depth: number, hidden: Set<number>): [number, number][] {
  const rows = sql.exec<{ id: number; s: number }>("SELECT rowid AS id, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ?"
    + " ORDER BY s, rowid LIMIT ?", match, depth + hidden.size);
  const kept: [number, number][] = [];
  for (const r of rows) {
    if (hidden.has(r.id)) continue;
    kept.push([r.id, r.s]);
    if (kept.length === depth) break;
  }
  return kept;
}

const or = (...words: string[]) => words.map(quote).join(" OR ");
const QUERIES: [string, string][] = [
  ["broad", or("fact", "number", "about", "apple")],
  ["narrow", or("word42", "apple")],
  ["rare and common", or("word42", "fact")],
  ["one word every fact holds", quote("fact")],
  ["two middling words", or("river", "coffee")],
  ["a phrase", `"about apple" OR ${quote("word7")}`],
  ["none", or("zzyzx", "qqq")],
];

/** Hidden sets as a recall makes them: none, replaced (every tenth), the unreviewed (a block of
 * ids, the best-scored ones among them), and a third of the facts. */
function hiddenSets(n: number): [string, Set<number>][] {
  let seed = 3;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  return [
    ["none", new Set()],
    ["replaced", new Set(ids.filter((id) => id % 10 === 1))],
    ["pending", new Set(ids.filter((id) => id <= 400 || id % 20 === 0 && id <= 2_000))],
    ["a third", new Set(ids.filter(() => random() < 1 / 3))],
  ];
}

describe("the keyword list by FTS5's own sort", () => {
  for (const [size, varied] of [[1_000, false], [1_000, true], [10_000, false], [10_000, true]] as const) {
    it(`is the list scoring every match gave, at ${size} facts${varied ? " of varied lengths" : " of one length"}`, async () => {
      const name = `kt-${size}-${Math.random().toString(36).slice(2)}`;
      await created(`http://memory.test/memories/${name}`);
      await runInDurableObject(stub(name), async (memory: MemoryObject) => {
        fill(memory, size, { varied, seed: 7 });
        const sql = memory.sql;
        for (const [kind, match] of QUERIES) {
          for (const [hiddenKind, hidden] of hiddenSets(size)) {
            for (const depth of [1, 10, 30, 100]) {
              const [before, readBefore] = await rowsRead(sql, () => scoringEvery(sql, match, depth, hidden));
              const [after, readAfter] = await rowsRead(sql, () => keywordTop(sql, match, depth, hidden));
              expect(after, `${kind}, ${hiddenKind} hidden, depth ${depth}`).toEqual(before);
              if (depth === 30 && hiddenKind !== "a third") {
                console.log(`${size} facts${varied ? " (varied)" : ""}, ${kind}, ${hiddenKind} hidden: ${readBefore} rows read before, ${readAfter} now`);
              }
              if (kind !== "none" && before.length === depth && hiddenKind === "none") expect(readAfter, `${kind}, depth ${depth}`).toBeLessThanOrEqual(Math.max(readBefore / 2, 3 * depth));
            }
          }
        }
      });
    }, 120_000);
  }

  it("takes a tie past the depth by id, in FTS5's order of ties", async () => {
    const name = `kt-ties-${Math.random().toString(36).slice(2)}`;
    await created(`http://memory.test/memories/${name}`);
    await runInDurableObject(stub(name), async (memory: MemoryObject) => {
      const { sql, ctx } = memory as unknown as { sql: SqlStorage; ctx: DurableObjectState };
      // Ids written out of order and far apart, two lengths: two tied groups.
      const ids = Array.from({ length: 300 }, (_, i) => ((i * 7919) % 300) * 1_000 + 5);
      ctx.storage.transactionSync(() => {
        for (const [k, id] of ids.entries()) {
          const text = k % 3 ? `alpha beta gamma ${k}` : `alpha beta ${k}`;
          sql.exec("INSERT INTO facts (id, text, text_key, type, created_at, updated_at) VALUES (?, ?, ?, 'fact', ?, ?)",
            id, text, text, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z");
          sql.exec("INSERT INTO facts_fts (rowid, text) VALUES (?, ?)", id, text);
        }
      });
      for (const match of [quote("alpha"), or("alpha", "gamma"), or("beta", "gamma")]) {
        // What keyword_top.ts weighs its race on: the object's sort gives a tie in id order (the
        // ids were written out of order). Its lists do not depend on it (the test below).
        const ranked = sql.exec<{ id: number; s: number }>("SELECT rowid AS id, rank AS s FROM facts_fts WHERE facts_fts MATCH ?"
          + " AND rank MATCH 'bm25()' ORDER BY rank", match).toArray();
        expect(ranked.every((r, i) => i === 0 || ranked[i - 1].s < r.s || ranked[i - 1].id < r.id), match).toBe(true);
        for (const hidden of [new Set<number>(), new Set(ids.slice(0, 50)), new Set(ids.filter((id) => id < 100_000))]) {
          for (const depth of [1, 5, 30, 99, 100, 101, 250, 400]) {
            expect(keywordTop(sql, match, depth, hidden), `${match} depth ${depth}`).toEqual(scoringEvery(sql, match, depth, hidden));
          }
        }
      }
    });
  });

  it("takes a tie past the depth by id, in any order of ties", () => {
    // FTS5's sort gives ties in no promised order: a stand-in for the object's SQL gives them
    // shuffled, and the list is still the one sorted by (score, id).
    let seed = 11, inIdOrder = 0;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let trial = 0; trial < 300; trial++) {
      const n = 1 + Math.floor(random() * 400);
      const kinds = 1 + Math.floor(random() * 6);  // few distinct scores: large ties
      const rows = Array.from({ length: n }, (_, i) => ({ id: 1 + i * (1 + Math.floor(random() * 3)), s: -1 - Math.floor(random() * kinds) / 2 }));
      const hidden = new Set(rows.filter(() => random() < [0, 0.1, 0.5, 0.9][trial % 4]).map((r) => r.id));
      const depth = 1 + Math.floor(random() * 60);
      const byRank = rows.map((r) => ({ ...r, k: random() })).sort((a, b) => a.s - b.s || a.k - b.k).map(({ id, s }) => ({ id, s }));
      const byRowid = [...rows].sort((a, b) => a.id - b.id);
      let read = 0;
      const counted = (list: typeof rows) => ({ *[Symbol.iterator]() { for (const r of list) { read += 1; yield r; } } });
      const fake = { exec: (q: string) => q.includes("ORDER BY rank") ? counted(byRank) : (inIdOrder += 1, counted(byRowid)) } as unknown as SqlStorage;
      const want = [...rows].filter((r) => !hidden.has(r.id)).sort((a, b) => a.s - b.s || a.id - b.id).slice(0, depth).map((r) => [r.id, r.s]);
      expect(keywordTop(fake, "m", depth, hidden), `trial ${trial}`).toEqual(want);
      expect(read, `trial ${trial}`).toBeLessThanOrEqual(2 * n);
    }
    expect(inIdOrder).toBeGreaterThan(20);  // the tie found in id order, not only taken whole
  });
});
