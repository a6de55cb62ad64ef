// How many facts hold a term and how many facts there are (src/storage/term_counts.ts): the stemmer is
// FTS5's own on every English word of the model's vocabulary, and the counts stay what count(*)
// reads through every kind of write.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import tokenizer from "../../memories/model/tokenizer.json";
import type { MemoryObject } from "../src/memory";
import { factCount, having, stem } from "../src/storage/term_counts";
import { created } from "./memories";

const env = testEnv as unknown as Env;
const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
const call = (url: string, method = "GET", body?: unknown) =>
  SELF.fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
const stub = (name: string) => env.MEMORY.get(env.MEMORY.idFromName(name));

describe("the stemmer", () => {
  it("stems every English word of the model's vocabulary as FTS5's porter tokenizer does", async () => {
    const words = Object.keys((tokenizer as { model: { vocab: Record<string, number> } }).model.vocab).filter((w) => /^[a-z]+$/.test(w));
    expect(words.length).toBeGreaterThan(20_000);
    // and some made-up ones: digits, doubled letters, y, the rules' edges
    words.push("item42", "42nd", "hopping", "hoping", "filing", "failing", "agreed", "feed", "sky", "happy", "ponies", "caresses",
      "conditional", "rationalize", "generalizations", "oscillators", "yyy", "aaa", "ed", "ing", "bled", "sized", "fizzed", "x".repeat(70));
    const name = `stem-${Math.random().toString(36).slice(2)}`;
    await created(`http://memory.test/memories/${name}`);
    await runInDurableObject(stub(name), (memory: MemoryObject) => {
      const wrong: string[] = [];
      for (let i = 0; i < words.length; i += 2000) {
        const part = words.slice(i, i + 2000);
        const fts = memory.tokens(part.join(" "));
        expect(fts.length).toBe(part.length);
        part.forEach((w, k) => { if (stem(w) !== fts[k]) wrong.push(`${w}: ${stem(w)} against ${fts[k]}`); });
      }
      expect(wrong).toEqual([]);
    });
  }, 60_000);
});

describe("the counts", () => {
  it("are count(*)'s through adds, edits, deletes, undo, restore, forget, a type's change and reindex", async () => {
    const name = `counts-${Math.random().toString(36).slice(2)}`;
    const url = await created(`http://memory.test/memories/${name}`);
    const texts = ["Mara runs the Lisbon office.", "Mara's runner beans grow in the garden.", "The office opens at nine.",
      "Running the build takes nine minutes.", "Café Lisboa serves pastéis de nata.", "The gardener comes on Mondays."];
    const ids: number[] = [];
    for (const text of texts) ids.push((await (await call(`${url}/facts`, "POST", { text, force: true })).json() as { id: number }).id);
    const batch = await call(`${url}/facts/batch`, "POST", { facts: [{ text: "Skills: run the tests before a release.", type: "skill" },
      { text: "Ran the nightly import at 02:00.", type: "log" }] });
    expect(batch.status).toBe(200);
    const check = async (when: string) => {
      await runInDurableObject(stub(name), (memory: MemoryObject) => {
        const sql = memory.sql;
        const n = (q: string, ...b: SqlStorageValue[]) => sql.exec<{ n: number }>(q, ...b).one().n;
        for (const term of ["run", "runs", "running", "runner", "office", "nine", "garden", "gardener", "mara", "café", "pastéis",
          "tests", "import", "02", "zzyzx", "the"]) {
          expect(having(sql, term), `${when}: ${term}`).toBe(n("SELECT count(*) AS n FROM facts_fts WHERE facts_fts MATCH ?", `"${term}"`));
        }
        for (const type of ["fact", "skill", "log"] as const) expect(factCount(sql, type), `${when}: ${type}`).toBe(n("SELECT count(*) AS n FROM facts WHERE type = ?", type));
        expect(factCount(sql), when).toBe(n("SELECT count(*) AS n FROM facts"));
      });
      const all = (await (await call(`${url}/facts`)).json()) as { total: number };
      const skills = (await (await call(`${url}/facts?type=skill`)).json()) as { total: number; facts: unknown[] };
      const current = (await (await call(`${url}/facts?status=current&type=fact`)).json()) as { total: number; facts: unknown[] };
      expect(skills.total, when).toBe(skills.facts.length);
      expect(current.total, when).toBe(current.facts.length);
      return all.total;
    };
    expect(await check("added")).toBe(8);
    expect((await call(`${url}/facts/${ids[0]}`, "PATCH", { text: "Mara manages the Porto office." })).status).toBe(200);
    expect((await call(`${url}/facts/${ids[2]}`, "PATCH", { type: "skill" })).status).toBe(200);
    expect(await check("edited")).toBe(8);
    const deleted = await call(`${url}/facts/${ids[3]}`, "DELETE");
    expect(deleted.status).toBe(200);
    expect(await check("deleted")).toBe(7);
    const entry = ((await (await call(`${url}/history?fact_id=${ids[3]}&op=delete`)).json()) as { entries: { id: number }[] }).entries[0].id;
    expect((await call(`${url}/history/${entry}/undo`, "POST")).status).toBe(200);
    expect(await check("undone")).toBe(8);
    expect((await call(`${url}/facts/batch`, "POST", { restore: true, facts: [{ id: 500, text: "Restored: the runners meet at nine.",
      created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z" }] })).status).toBe(200);
    expect(await check("restored")).toBe(9);
    expect((await call(`${url}/facts/${ids[1]}`, "DELETE")).status).toBe(200);
    expect((await call(`${url}/history?fact_id=${ids[1]}`, "DELETE")).status).toBe(200);
    expect(await check("forgotten")).toBe(8);
    expect((await call(`${url}/facts/${ids[4]}`, "PATCH", { superseded_by: ids[5] })).status).toBe(200);
    expect((await call(`${url}/reindex`, "POST")).status).toBe(200);
    expect(await check("reindexed")).toBe(8);
  }, 60_000);
});
