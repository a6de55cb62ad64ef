// The fact lifecycle (contract v4): lifecycle.ts's `differences` against tests/golden/lifecycle.json,
// which tests/test_lifecycle.py checks memories/writes/lifecycle.py against, and the object's routes:
// supersedes, as_of and include_stale, proposals, the contradictions queue, resolve, PATCH of the
// validity, and undo of each. The embedder is vitest.config.ts's bag of words (fake_ai.ts
// `bagOfWords`), so the cosines the tests expect are computed here the same way.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import golden from "../../tests/golden/lifecycle.json";
import { type Differs, PROPOSE, PROPOSE_CANDIDATES, PROPOSE_MOST, differences, proposals } from "../src/writes/lifecycle";
import type { MemoryObject } from "../src/memory";
import { MIGRATIONS, migrate } from "../src/storage/schema";
import { bagOfWords } from "./fake_ai";
import { created } from "./memories";

const env = testEnv as unknown as Env;
const cases = (golden as unknown as { cases: { old: string; new: string; differs: Differs }[] }).cases;

type Fact = { id: number; text: string; type: string; source: string; created_at: string; updated_at: string;
  valid_until: string | null; superseded_by: number | null };
type Proposal = { id: number; fact: Fact; score: number; differs: Differs };
type Added = { id: number; created: boolean; fact: Fact; conflicts?: Proposal[]; duplicate?: { match: string; score: number } };
type Entry = { id: number; op: string; fact_id: number | null; before: Record<string, unknown> | null;
  after: Record<string, unknown> | null; note: string; undone_by: number | null };
type Hit = { fact: Fact; current: boolean; kw_rank: number | null; vec_rank: number | null };
type Queue = { conflicts: { id: number; old: Fact; new: Fact; score: number; differs: Differs; resolution: string | null }[];
  next_cursor: string | null; total: number };

let n = 0;
const base = () => created(`http://memory.test/memories/life-${++n}-${Math.random().toString(36).slice(2)}`);
const call = (url: string, method = "GET", body?: unknown) => SELF.fetch(url, {
  method, headers: { "x-memory-secret": "test-secret", "content-type": "application/json" },
  body: body === undefined ? undefined : JSON.stringify(body),
});
const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
const stub = (url: string) => env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2]));
const post = (url: string, text: string, extra: Record<string, unknown> = {}) => json<Added>(call(`${url}/facts`, "POST", { text, ...extra }));
const add = async (url: string, text: string, extra: Record<string, unknown> = {}) => (await post(url, text, extra)).fact;
const get = (url: string, id: number) => json<Fact>(call(`${url}/facts/${id}`));
const recall = (url: string, body: Record<string, unknown>) => json<{ results: Hit[] }>(call(`${url}/recall`, "POST", { log: false, ...body }));
const ids = (hits: { fact: Fact }[]) => hits.map((h) => h.fact.id);
const historyOf = async (url: string, query = "") => (await json<{ entries: Entry[] }>(call(`${url}/history${query}`))).entries;
const errorOf = async (r: Response | Promise<Response>) => {
  const res = await r;
  return { status: res.status, ...((await res.json()) as { error: { code: string; message: string } }).error };
};
const count = async (url: string) => (await json<{ total: number }>(call(`${url}/facts`))).total;
const undo = (url: string, entry: number, force = false) => call(`${url}/history/${entry}/undo`, "POST", force ? { force } : undefined);
const queue = (url: string, query = "") => json<Queue>(call(`${url}/conflicts${query}`));
const resolve = (url: string, old: number, next: number, resolution: string) =>
  call(`${url}/conflicts/resolve`, "POST", { old, new: next, resolution });
const restorePairs = (url: string, conflicts: unknown) => call(`${url}/conflicts/restore`, "POST", { conflicts });
/** The fake embedder's cosine of two texts. */
const cosine = (a: string, b: string) => {
  const [x, y] = [bagOfWords(a, 16), bagOfWords(b, 16)];
  return x.reduce((s, v, i) => s + v * y[i], 0);
};

const PAST = "2024-01-10T09:00:00.000000Z";
const LATER = "2024-06-01T09:00:00.000000Z";

describe("differences, as tests/golden/lifecycle.json has them", () => {
  it.each(cases.map((c) => [c.old, c.new, c.differs] as const))("%s / %s", (old, next, differs) => {
    expect(differences(old, next)).toEqual(differs);
  });
});

describe("a fact", () => {
  it("carries valid_until and superseded_by, null for every fact stored before (migrated current)", async () => {
    const url = await base();
    const fact = await add(url, "Ivo plays the cello.");
    expect(fact).toMatchObject({ valid_until: null, superseded_by: null });
    expect(await get(url, fact.id)).toEqual(fact);
    expect((await json<{ facts: Fact[] }>(call(`${url}/facts`))).facts[0]).toEqual(fact);
    const until = await add(url, "The parking permit is valid.", { valid_until: "2999-01-01T00:00Z" });
    expect(until.valid_until).toBe("2999-01-01T00:00:00.000000Z");
  });

  it("refuses a valid_until that is no time, or before its created_at", async () => {
    const url = await base();
    expect(await errorOf(call(`${url}/facts`, "POST", { text: "x", valid_until: "soon" })))
      .toMatchObject({ status: 422, message: "valid_until is not an ISO-8601 time" });
    const before = "valid_until must not be before the fact's created_at";
    expect(await errorOf(call(`${url}/facts`, "POST", { text: "x", created_at: PAST, valid_until: "2024-01-01T00:00Z" })))
      .toMatchObject({ status: 422, message: before });
    expect(await errorOf(call(`${url}/facts`, "POST", { text: "x", valid_until: "2020-01-01T00:00Z" }))).toMatchObject({ status: 422, message: before });
    expect(await errorOf(call(`${url}/facts/batch`, "POST", { facts: [{ text: "x", valid_until: "2020-01-01T00:00Z" }] }))).toMatchObject({ status: 422 });
    expect(await count(url)).toBe(0);
    // At its creation: never current (as a newer fact an older one replaced).
    expect((await post(url, "x", { created_at: PAST, valid_until: PAST })).fact).toMatchObject({ valid_until: PAST });
  });
});

describe("migration 8", () => {
  it("leaves every fact stored before it current, and adds the conflicts table", async () => {
    const name = `life-old-${Math.random().toString(36).slice(2)}`;  // not created: the object opens nothing itself
    await runInDurableObject(env.MEMORY.get(env.MEMORY.idFromName(name)), (_: MemoryObject, ctx: DurableObjectState) => {
      const sql = ctx.storage.sql;
      sql.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
      MIGRATIONS.slice(0, 7).forEach((script, i) => {
        for (const statement of script.split(";\n")) if (statement.trim()) sql.exec(statement);
        sql.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (?, 'then')", i + 1);
      });
      sql.exec("INSERT INTO facts (text, text_key, type, created_at, updated_at) VALUES ('Old fact.', 'old fact.', 'fact', ?, ?)", PAST, PAST);
      migrate(sql, ctx.storage);
      expect(sql.exec("SELECT valid_until, superseded_by FROM facts").toArray()).toEqual([{ valid_until: null, superseded_by: null }]);
      expect(sql.exec("SELECT count(*) AS n FROM conflicts").one().n).toBe(0);
      expect(sql.exec("SELECT max(version) AS v FROM schema_migrations").one().v).toBe(MIGRATIONS.length);
    });
  });
});

describe("supersedes", () => {
  it("replaces each named fact in the write, recorded as one add holding them as they were", async () => {
    const url = await base();
    const old = await add(url, "The owner lives in Lisbon.", { created_at: PAST });
    const other = await add(url, "The owner works at Acme.", { created_at: LATER });
    const body = await post(url, "The owner lives in Porto.", { supersedes: [old.id, other.id, old.id] });
    expect(body.created).toBe(true);
    const now = body.fact.created_at;
    expect(await get(url, old.id)).toEqual({ ...old, superseded_by: body.id, valid_until: now });
    expect(await get(url, other.id)).toMatchObject({ superseded_by: body.id, valid_until: now });
    const entries = await historyOf(url);
    expect(entries.length).toBe(3);
    expect(entries[0]).toMatchObject({ op: "add", fact_id: body.id, before: { replaced: [old, other] }, after: body.fact });
    // Proposals leave out what it replaces.
    expect(body.conflicts!.map((c) => c.id)).not.toContain(old.id);
  });

  it("refuses ids that are no facts, facts replaced already, or no list: 422 naming the id, nothing stored", async () => {
    const url = await base();
    const a = await add(url, "Fact A about tea.");
    const b = await add(url, "Fact B about coffee.", { supersedes: [a.id] });
    const before = await count(url);
    expect(await errorOf(call(`${url}/facts`, "POST", { text: "C", supersedes: [999] }))).toMatchObject({ status: 422 });
    expect((await errorOf(call(`${url}/facts`, "POST", { text: "C", supersedes: [999] }))).message).toContain("999");
    const again = await errorOf(call(`${url}/facts`, "POST", { text: "C", supersedes: [b.id, a.id] }));
    expect(again.status).toBe(422);
    expect(again.message).toContain(`fact ${a.id}`);
    for (const bad of [5, "1", [0], [1.5], ["1"], [null], Array.from({ length: 21 }, (_, i) => i + 1)]) {
      expect(await errorOf(call(`${url}/facts`, "POST", { text: "C", supersedes: bad })), JSON.stringify(bad))
        .toMatchObject({ status: 422, message: "supersedes must be a list of up to 20 fact ids" });
    }
    // In a batch: the whole batch is refused.
    expect((await call(`${url}/facts/batch`, "POST", { facts: [{ text: "D" }, { text: "E", supersedes: [a.id] }] })).status).toBe(422);
    expect(await count(url)).toBe(before);
    expect(await get(url, b.id)).toMatchObject({ superseded_by: null, valid_until: null });
  });

  it("lets a batch item replace one, and an earlier item of the batch replaced by a later one", async () => {
    const url = await base();
    const old = await add(url, "Dana's phone is 555 0101.");
    const body = await json<{ results: Added[] }>(call(`${url}/facts/batch`, "POST", {
      facts: [{ text: "Dana's phone is 555 0199.", supersedes: [old.id], id: 50 }, { text: "Dana moved to Oslo.", supersedes: [50] }],
    }));
    expect(body.results.map((r) => r.created)).toEqual([true, true]);
    expect(await get(url, old.id)).toMatchObject({ superseded_by: 50 });
    expect(await get(url, 50)).toMatchObject({ superseded_by: body.results[1].id });
  });

  it("is left out of dedup: a text a named fact holds is stored anew", async () => {
    const url = await base();
    const old = await add(url, "The office is on floor 3.");
    const body = await post(url, "The office is on floor 3.", { supersedes: [old.id] });
    expect(body).toMatchObject({ created: true, conflicts: [] });
    expect(await get(url, old.id)).toMatchObject({ superseded_by: body.id });
  });
});

describe("dedup compares with current facts only", () => {
  it("answers a replaced fact holding the text as match replaced; with supersedes the text is stored again", async () => {
    const url = await base();
    const a = await add(url, "The standup is at 9:30.");
    const b = await add(url, "The standup is at 9:00.", { supersedes: [a.id] });
    const back = await post(url, "the standup is at 9:30.");
    expect(back).toEqual({ id: a.id, created: false, duplicate: { match: "replaced", score: 1 }, fact: await get(url, a.id) });
    const moved = await post(url, "The standup is at 9:30.", { supersedes: [b.id] });
    expect(moved.created).toBe(true);
    expect(await get(url, b.id)).toMatchObject({ superseded_by: moved.id });
    // Now a current fact holds it: an exact duplicate again.
    expect((await post(url, "The standup is at 9:30.")).duplicate).toEqual({ match: "exact", score: 1 });
  });

  it("stores a text an expired fact holds as a new fact, and a PATCH may take an expired fact's text", async () => {
    const url = await base();
    const old = await add(url, "The promo code is SPRING.", { created_at: PAST, valid_until: LATER });
    const again = await post(url, "The promo code is SPRING.");
    expect(again.created).toBe(true);
    const other = await add(url, "Something else entirely.");
    await call(`${url}/facts/${again.id}`, "DELETE");
    expect((await call(`${url}/facts/${other.id}`, "PATCH", { text: old.text })).status).toBe(200);
  });
});

describe("recall", () => {
  it("answers from the current facts: a replaced one takes no place in either list's depth", async () => {
    const url = await base();
    const old = await add(url, "The owner's bike is a red Gazelle.");
    const next = await add(url, "The owner's bike is a green Batavus.", { supersedes: [old.id] });
    const depth1 = { fusion: { depth: 1, rerank: 0, expand: 0 } };
    for (const mode of ["hybrid", "keyword", "vector"]) {
      const body = await recall(url, { query: "red Gazelle bike", mode, ...depth1 });
      expect(ids(body.results), mode).toEqual([next.id]);
      expect(body.results[0]).toMatchObject({ current: true });
      if (mode !== "vector") expect(body.results[0].kw_rank ?? 1).toBe(1);
    }
    const stale = await recall(url, { query: "red Gazelle bike", include_stale: true, ...depth1 });
    expect(ids(stale.results)).toContain(old.id);
    expect(stale.results.find((h) => h.fact.id === old.id)).toMatchObject({ current: false, fact: { superseded_by: next.id } });
    expect((await recall(url, { query: "red Gazelle bike", include_stale: false })).results.map((h) => h.fact.id)).not.toContain(old.id);
  });

  it("as_of recalls what was current then, and judges current at it", async () => {
    const url = await base();
    const old = await add(url, "The owner lives in Lisbon.", { created_at: PAST });
    const next = await add(url, "The owner lives in Porto.", { created_at: LATER, supersedes: [old.id] });
    expect(await get(url, old.id)).toMatchObject({ valid_until: LATER });
    const then = await recall(url, { query: "where does the owner live", as_of: "2024-03-01T00:00:00Z" });
    expect(ids(then.results)).toEqual([old.id]);
    expect(then.results[0].current).toBe(true);
    expect(ids((await recall(url, { query: "where does the owner live", as_of: LATER })).results)).toEqual([next.id]);
    expect(ids((await recall(url, { query: "owner live", as_of: "2023-01-01T00:00Z" })).results)).toEqual([]);
    const stale = await recall(url, { query: "where does the owner live", as_of: "2024-03-01T00:00Z", include_stale: true });
    expect(new Set(ids(stale.results))).toEqual(new Set([old.id, next.id]));
    expect(stale.results.find((h) => h.fact.id === next.id)!.current).toBe(false);  // not yet created then
    expect(ids((await recall(url, { query: "where does the owner live" })).results)).toEqual([next.id]);
  });

  it("refuses an as_of in the future or that is no time, and an include_stale that is no boolean", async () => {
    const url = await base();
    await add(url, "A fact.");
    for (const as_of of ["2999-01-01T00:00:00Z", "yesterday", 5, "2024-01-01"]) {
      const e = await errorOf(call(`${url}/recall`, "POST", { query: "fact", as_of }));
      expect(e, String(as_of)).toMatchObject({ status: 422 });
      expect(e.message).toContain("as_of");
      expect((await errorOf(call(`${url}/explain`, "POST", { query: "fact", id: 1, as_of }))).status).toBe(422);
    }
    expect(await errorOf(call(`${url}/recall`, "POST", { query: "fact", include_stale: "yes" })))
      .toMatchObject({ status: 422, message: "include_stale must be true or false" });
  });

  it("explain ranks among the facts answered from: a replaced fact has its scores and no rank", async () => {
    const url = await base();
    const old = await add(url, "The owner's bike is a red Gazelle.");
    const next = await add(url, "The owner's red bike is a Batavus.", { supersedes: [old.id] });
    const q = { query: "red Gazelle bike", fusion: { rerank: 0, expand: 0 } };
    const hidden = await json<Record<string, unknown>>(call(`${url}/explain`, "POST", { ...q, id: old.id }));
    expect(hidden).toMatchObject({ kw_rank: null, vec_rank: null, fused_rank: null, current: false });
    expect(hidden.bm25).not.toBeNull();
    expect(hidden.cosine).not.toBeNull();
    expect(await json(call(`${url}/explain`, "POST", { ...q, id: next.id }))).toMatchObject({ kw_rank: 1, vec_rank: 1, fused_rank: 1, current: true });
    const stale = await json(call(`${url}/explain`, "POST", { ...q, id: old.id, include_stale: true }));
    expect(stale).toMatchObject({ kw_rank: 1, vec_rank: 1, fused_rank: 1, current: false });
    expect(await json(call(`${url}/explain`, "POST", { ...q, id: next.id, include_stale: true }))).toMatchObject({ kw_rank: 2, vec_rank: 2 });
  });
});

describe("GET /facts", () => {
  it("filters by status and as_of, and counts the total with the same filters", async () => {
    const url = await base();
    const old = await add(url, "The owner lives in Lisbon.", { created_at: PAST });
    const next = await add(url, "The owner lives in Porto.", { created_at: LATER, supersedes: [old.id] });
    const expired = await add(url, "The promo code is SPRING.", { created_at: PAST, valid_until: "2024-02-01T00:00Z" });
    const list = async (query: string) => {
      const body = await json<{ facts: Fact[]; total: number }>(call(`${url}/facts?${query}`));
      expect(body.total, query).toBe(body.facts.length);
      return body.facts.map((f) => f.id).sort((a, b) => a - b);
    };
    expect(await list("")).toEqual([old.id, next.id, expired.id]);
    expect(await list("status=all")).toEqual([old.id, next.id, expired.id]);
    expect(await list("status=current")).toEqual([next.id]);
    expect(await list("status=replaced")).toEqual([old.id]);
    expect(await list("status=expired")).toEqual([expired.id]);
    expect(await list("as_of=2024-01-20T00:00Z")).toEqual([old.id, expired.id]);
    expect(await list("as_of=2024-01-20T00:00Z&status=current")).toEqual([old.id, expired.id]);
    expect(await list("as_of=2024-03-01T00:00Z&status=expired")).toEqual([expired.id]);
    expect(await list("as_of=2024-03-01T00:00Z&status=replaced")).toEqual([]);
    expect(await errorOf(call(`${url}/facts?status=stale`)))
      .toMatchObject({ status: 422, message: "status must be one of all, current, replaced, expired" });
    expect((await errorOf(call(`${url}/facts?as_of=2999-01-01T00:00Z`))).status).toBe(422);
  });
});

describe("proposals", () => {
  it("asks the closest PROPOSE_CANDIDATES at or above PROPOSE (ties to the smaller id) whether they answer its question; at most PROPOSE_MOST", () => {
    const next = "The standup is at 9:00.";
    const texts = new Map([[1, "The standup is on Zoom."], [2, "The standup is at 9:30."], [3, "The standup is at 8:30."],
      [4, "The standup is at the office."], [5, "The gym closes at ten."], [6, "Rosa plays the violin."], [7, "The standup is at 10:00."],
      [8, "The standup is at 7:45."]]);
    const answer = (old: string) => ({ kinds: ["number"], old: [old], new: ["9:00"] });
    // 2 is under PROPOSE; 7 answers, but five are closer (1, 3, 4, 5, 6): it is not asked.
    const near: [number, number][] = [[7, 0.5], [6, 0.6], [5, 0.7], [4, 0.8], [3, 0.8], [2, PROPOSE - 0.01], [1, 0.9]];
    expect(PROPOSE_CANDIDATES).toBe(5);
    expect(proposals(near, texts, next)).toEqual([[3, 0.8, answer("8:30"), false]]);
    expect(proposals(near.filter(([id]) => id !== 6), texts, next)).toEqual([[3, 0.8, answer("8:30"), false], [7, 0.5, answer("10:00"), false]]);
    expect(proposals([[2, PROPOSE - 0.01]], texts, next)).toEqual([]);
    expect(proposals([[1, 0.9], [2, PROPOSE]], texts, next)).toEqual([[2, PROPOSE, answer("9:30"), false]]);
    // A neighbour newer than the new fact (an import's older one) is the pair's new fact.
    expect(proposals([[2, 0.9]], texts, next, new Set([2]))).toEqual([[2, 0.9, { kinds: ["number"], old: ["9:00"], new: ["9:30"] }, true]]);
    // Four answer: the closest PROPOSE_MOST, ties to the smaller id.
    const four: [number, number][] = [[8, 0.7], [7, 0.8], [3, 0.8], [2, 0.6]];
    expect(PROPOSE_MOST).toBe(3);
    expect(proposals(four, texts, next)).toEqual([[3, 0.8, answer("8:30"), false], [7, 0.8, answer("10:00"), false], [8, 0.7, answer("7:45"), false]]);
    // What differs: the kinds of `differences`, and each fact's answer, not every word that differs.
    const [old, now] = ["The standup is at 9:30 on Mondays.", "The standup is at 9:00 on Mondays now."];
    expect(differences(old, now)).toEqual({ kinds: ["number"], old: ["9:30"], new: ["9:00", "now"] });
    expect(proposals([[2, 0.85]], new Map([[2, old]]), now)).toEqual([[2, 0.85, { kinds: ["number"], old: ["9:30"], new: ["9:00"] }, false]]);
  });

  it("of the closest 5 current same-type facts at cosine >= 0.4, lists those answering its question, at most 3, stored as open conflicts", async () => {
    const url = await base();
    const texts = ["The standup is at 9:30.", "The gym closes at ten.", "Rosa plays the violin.", "The owner lives in Lisbon.",
      "The standup is at noon.", "The standup is at 10:00.", "The standup is at 12:10.", "The standup is at 7:50."];
    const facts: Fact[] = [];
    for (const t of texts) facts.push(await add(url, t));
    await add(url, "The standup is at 9:30.", { type: "skill" });  // another type: never proposed
    const next = "The standup is at 9:00.";
    const body = await post(url, next);
    // The closest five at or above PROPOSE: "noon" first (a time of day for a time, without a word
    // saying it changed: another question), then four times of the standup, all answering its
    // question: the closest three are proposed.
    const [at930, , , , noon, at1000, at1210, at750] = facts;
    const closest = facts.map((f) => [f.id, cosine(f.text, next)] as const)
      .filter(([, s]) => s >= PROPOSE).sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, PROPOSE_CANDIDATES);
    expect(closest.map(([id]) => id)).toEqual([noon, at930, at1000, at1210, at750].map((f) => f.id));
    const want = [at930, at1000, at1210].map((f) => [f.id, cosine(f.text, next)] as const);
    expect(body.conflicts!.map((c) => c.id)).toEqual(want.map(([id]) => id));
    body.conflicts!.forEach((c, i) => expect(c.score).toBeCloseTo(want[i][1], 5));
    const first = body.conflicts![0];
    expect(first).toMatchObject({ id: facts[0].id, fact: facts[0], differs: { kinds: ["number"], old: ["9:30"], new: ["9:00"] } });
    // The queue, newest row first: the new fact's (stored closest first), then those the earlier adds proposed.
    const open = await queue(url);
    const mine = open.conflicts.filter((c) => c.new.id === body.id);
    expect(open.conflicts.slice(0, 3)).toEqual(mine);
    expect(mine.map((c) => c.old.id)).toEqual(want.map(([id]) => id).reverse());
    expect(mine.find((c) => c.old.id === facts[0].id)).toMatchObject({ old: facts[0], new: body.fact, differs: first.differs });
    expect(open.total).toBe(open.conflicts.length);
    // A duplicate and a restore propose nothing; a created fact with none says [].
    expect((await post(url, "the standup is at 9:00.")).conflicts).toBeUndefined();
    expect((await post(url, "Completely unrelated xylophone quartz.")).conflicts).toEqual([]);
    const total = (await queue(url)).total;
    const restored = await json<{ results: Added[] }>(call(`${url}/facts/batch`, "POST", { restore: true, facts: [{ text: "The standup is at 9:15." }] }));
    expect(restored.results[0].conflicts).toEqual([]);
    expect((await queue(url)).total).toBe(total);
  });

  it("leaves out replaced facts and the near duplicate a forced write stored over; a batch's earlier facts count", async () => {
    const url = await base();
    const a = await add(url, "The standup is at 9:30.");
    const b = await add(url, "The standup is at 9:45.", { supersedes: [a.id] });
    const batch = await json<{ results: Added[] }>(call(`${url}/facts/batch`, "POST", {
      facts: [{ text: "Rosa's teacher is Ana." }, { text: "Rosa's teacher is Bea." }],
    }));
    expect(batch.results[1].conflicts!.map((c) => c.id)).toContain(batch.results[0].id);
    const body = await post(url, "The standup is at 9:00.");
    expect(body.conflicts!.map((c) => c.id)).not.toContain(a.id);
    expect(body.conflicts!.map((c) => c.id)).toContain(b.id);
    // Stored over its near duplicate (cosine 1 to the bag of words): that one is not proposed.
    const ana = batch.results[0].id;
    expect((await post(url, "Rosa's teacher is Ana!")).duplicate).toMatchObject({ match: "near" });
    const forced = await post(url, "Rosa's teacher is Ana!", { force: true });
    expect(forced.created).toBe(true);
    expect(forced.conflicts!.map((c) => c.id)).not.toContain(ana);
    expect(forced.conflicts!.map((c) => c.id)).toContain(batch.results[1].id);
  });

  it("pages the queue newest first by a cursor, and refuses a limit or cursor out of range", async () => {
    const url = await base();
    await add(url, "The standup is at 9:30.");
    for (const t of ["The standup is at 9:00.", "The standup is at 9:15.", "The standup is at 10:00."]) await add(url, t);
    const all = await queue(url);
    expect(all.total).toBeGreaterThanOrEqual(3);
    const ids = all.conflicts.map((c) => c.id);
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    const first = await queue(url, "?limit=2");
    expect(first.conflicts.map((c) => c.id)).toEqual(ids.slice(0, 2));
    const second = await queue(url, `?limit=2&cursor=${first.next_cursor}`);
    expect(second.conflicts.map((c) => c.id)).toEqual(ids.slice(2, 4));
    expect(second.total).toBe(all.total);
    for (const q of ["?limit=0", "?limit=101", "?cursor=abc", "?limit=1e3"]) expect((await call(`${url}/conflicts${q}`)).status, q).toBe(422);
  });

  it("goes when either fact is deleted, and leaves the queue once either stops being current", async () => {
    const url = await base();
    const a = await add(url, "The standup is at 9:30.");
    const b = await post(url, "The standup is at 9:00.");
    expect((await queue(url)).total).toBe(1);
    await call(`${url}/facts/${b.id}`, "PATCH", { valid_until: "2999-01-01T00:00Z" });  // still current
    expect((await queue(url)).total).toBe(1);
    await call(`${url}/facts/${a.id}`, "PATCH", { superseded_by: b.id });
    expect((await queue(url)).total).toBe(0);
    await call(`${url}/facts/${a.id}`, "PATCH", { superseded_by: null });
    expect((await queue(url)).total).toBe(1);
    await call(`${url}/facts/${a.id}`, "DELETE");
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expect(memory.sql.exec("SELECT count(*) AS n FROM conflicts").one().n).toBe(0);
    });
  });
});

describe("resolve", () => {
  it("replace: new replaces old, an edit of old; its undo opens the pair again", async () => {
    const url = await base();
    const old = await add(url, "The standup is at 9:30.");
    const next = await post(url, "The standup is at 9:00.");
    const r = await json<{ old: Fact; new: Fact; resolution: string; entry: number }>(resolve(url, old.id, next.id, "replace"));
    expect(r).toMatchObject({ resolution: "replace", old: { id: old.id, superseded_by: next.id, valid_until: next.fact.created_at }, new: next.fact });
    const entry = await json<Entry>(call(`${url}/history/${r.entry}`));
    expect(entry).toMatchObject({ op: "edit", fact_id: old.id, before: old, after: r.old });
    expect(entry.note).toContain("replace");
    expect((await queue(url)).total).toBe(0);
    expect((await undo(url, r.entry)).status).toBe(200);
    expect(await get(url, old.id)).toMatchObject({ superseded_by: null, valid_until: null });
    expect((await queue(url)).total).toBe(1);
  });

  it("keep_old: old replaces new, an edit of new, which is then never current", async () => {
    const url = await base();
    const old = await add(url, "The standup is at 9:30.");
    const next = await post(url, "The standup is at 9:00.");
    const r = await json<{ old: Fact; new: Fact; entry: number }>(resolve(url, old.id, next.id, "keep_old"));
    expect(r.new).toMatchObject({ superseded_by: old.id, valid_until: next.fact.created_at });
    expect(r.old).toEqual(old);
    expect(await json(call(`${url}/history/${r.entry}`))).toMatchObject({ op: "edit", fact_id: next.id });
    expect(ids((await recall(url, { query: "standup" })).results)).toEqual([old.id]);
  });

  it("keep_both: a resolve entry; the pair leaves the queue and its undo puts it back", async () => {
    const url = await base();
    const old = await add(url, "The standup is at 9:30.");
    const next = await post(url, "The standup is at 9:00.");
    const r = await json<{ old: Fact; new: Fact; resolution: string; entry: number }>(resolve(url, old.id, next.id, "keep_both"));
    expect(r).toMatchObject({ old, new: next.fact, resolution: "keep_both" });
    const entry = await json<Entry>(call(`${url}/history/${r.entry}`));
    expect(entry).toMatchObject({ op: "resolve", fact_id: next.id, before: { old: old.id, new: next.id, resolution: null },
      after: { old: old.id, new: next.id, resolution: "keep_both" } });
    expect((await historyOf(url, "?op=resolve")).map((e) => e.id)).toEqual([r.entry]);
    expect((await queue(url)).total).toBe(0);
    const undone = await json<{ entry: Entry }>(undo(url, r.entry));
    expect(undone.entry).toMatchObject({ op: "resolve", before: entry.after, after: entry.before });
    expect((await queue(url)).total).toBe(1);
    // An undo over a later resolve of the pair is a 409 changed_since.
    const again = await json<{ entry: number }>(resolve(url, old.id, next.id, "keep_both"));
    expect((await errorOf(undo(url, undone.entry.id))).code).toBe("changed_since");
    expect((await undo(url, again.entry)).status).toBe(200);
  });

  it("keep_both of a pair never proposed stores it, with its cosine and what differs", async () => {
    const url = await base();
    const a = await add(url, "Rosa plays the violin.");
    const b = await add(url, "Xylophone quartz lemon.");
    expect((await resolve(url, a.id, b.id, "keep_both")).status).toBe(200);
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const row = memory.sql.exec("SELECT old, new, score, differs, resolution FROM conflicts").one();
      expect(row).toMatchObject({ old: a.id, new: b.id, resolution: "keep_both" });
      expect(row.score as number).toBeCloseTo(cosine(a.text, b.text), 5);
      expect(JSON.parse(row.differs as string)).toEqual(differences(a.text, b.text));
    });
    expect((await queue(url)).total).toBe(0);
  });

  it("refuses unknown ids (404), facts not current, one fact twice and a resolution not known (422)", async () => {
    const url = await base();
    const a = await add(url, "The standup is at 9:30.");
    const b = await add(url, "The standup is at 9:00.");
    const c = await add(url, "The standup is at 10:00.", { supersedes: [a.id] });
    expect((await resolve(url, a.id + 100, b.id, "replace")).status).toBe(404);
    expect((await resolve(url, b.id, 999, "keep_both")).status).toBe(404);
    const stale = await errorOf(resolve(url, a.id, b.id, "replace"));
    expect(stale.status).toBe(422);
    expect(stale.message).toContain(String(a.id));
    expect((await resolve(url, b.id, b.id, "replace")).status).toBe(422);
    for (const resolution of ["merge", null, 1]) expect((await resolve(url, b.id, c.id, resolution as string)).status).toBe(422);
    expect((await call(`${url}/conflicts/resolve`, "POST", { new: c.id, resolution: "replace" })).status).toBe(422);
    expect((await call(`${url}/conflicts/resolve`, "POST", { old: "1", new: c.id, resolution: "replace" })).status).toBe(422);
    expect((await call(`${url}/conflicts/resolve`, "POST", "nope")).status).toBe(400);
    expect((await call(`${url}/conflicts/resolve`)).status).toBe(405);
  });
});

describe("a backup's pairs", () => {
  const DIFFERS = { kinds: ["name"], old: ["Lisbon"], new: ["Porto"] };

  it("all=true lists every pair kept with its resolution, newest first and paged; without it the open ones", async () => {
    const url = await base();
    const standup = await add(url, "The standup is at 9:30.");
    const later = await post(url, "The standup is at 9:00.");
    const gym = await add(url, "The gym opens at 7.");
    const earlier = await post(url, "The gym opens at 6.");
    const lisbon = await add(url, "Rosa lives in Lisbon.");
    const porto = await post(url, "Rosa lives in Porto.");
    expect((await resolve(url, lisbon.id, porto.id, "keep_both")).status).toBe(200);
    expect((await resolve(url, gym.id, earlier.id, "replace")).status).toBe(200);
    const key = (q: Queue) => q.conflicts.map((c) => [c.old.id, c.new.id, c.resolution]);
    const open = await queue(url);
    const every = await queue(url, "?all=true");
    expect(every.total).toBe(every.conflicts.length);
    expect(every.conflicts.map((c) => c.id)).toEqual(every.conflicts.map((c) => c.id).sort((i, j) => j - i));
    expect(key(every)).toContainEqual([lisbon.id, porto.id, "keep_both"]);
    expect(key(every)).toContainEqual([standup.id, later.id, null]);
    // The replaced one is kept as it was proposed, its old fact replaced.
    expect(every.conflicts.find((c) => c.old.id === gym.id && c.new.id === earlier.id))
      .toMatchObject({ old: { superseded_by: earlier.id }, differs: { kinds: ["number"] }, resolution: null });
    // Without all: those neither resolved nor with a fact no longer current.
    expect(open.conflicts).toEqual(every.conflicts.filter((c) => c.resolution === null && !c.old.valid_until && !c.new.valid_until));
    expect(key(open)).toContainEqual([standup.id, later.id, null]);
    expect(open.total).toBe(open.conflicts.length);
    expect(open.total).toBeLessThan(every.total - 1);
    const first = await queue(url, "?all=1&limit=2");
    const rest = await queue(url, `?all=true&cursor=${first.next_cursor}`);
    expect([...first.conflicts, ...rest.conflicts]).toEqual(every.conflicts);
    expect([first.total, rest.total, rest.next_cursor]).toEqual([every.total, every.total, null]);
    expect(await queue(url, "?all=false")).toEqual(open);
    expect(await errorOf(call(`${url}/conflicts?all=maybe`))).toMatchObject({ status: 422, code: "invalid", message: "all must be true or false" });
  });

  it("restore stores each pair whose facts are here and whose pair and id are free, and skips the others", async () => {
    const url = await base();
    // Logs never propose each other: every pair here comes from the restore.
    const x = (await add(url, "2026-11-02: Rosa moved to Lisbon.", { type: "log" })).id;
    const y = (await add(url, "2026-11-03: Rosa moved to Porto.", { type: "log" })).id;
    const kept = { id: 900001, old: x, new: y, score: 0.612345, differs: DIFFERS, resolution: "keep_both", note: "ignored" };
    const proposed = { old: y, new: x, score: 1, differs: { kinds: ["word"], old: [], new: [] }, resolution: null };
    const r = await restorePairs(url, [kept, { ...proposed, new: 2 ** 40 }, { ...kept, old: y, new: x }, { ...proposed, id: 5.0 }]);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ restored: 2, skipped: 2 });  // a fact not here; the id in use by then
    const every = await queue(url, "?all=true");
    expect(every.conflicts.map((c) => [c.id, c.old.id, c.new.id, c.score, c.differs, c.resolution])).toEqual([
      [900001, x, y, 0.612345, DIFFERS, "keep_both"], [5, y, x, 1, proposed.differs, null]]);
    expect((await queue(url)).conflicts.map((c) => c.id)).toEqual([5]);
    // An autoincrement id goes on after the largest restored.
    const z = (await add(url, "2026-11-04: Rosa moved to Faro.", { type: "log" })).id;
    expect(await json(restorePairs(url, [{ old: x, new: z, score: 0.5, differs: DIFFERS }]))).toEqual({ restored: 1, skipped: 0 });
    expect((await queue(url, "?all=true")).conflicts[0].id).toBe(900002);

    // The owner's "both true" comes back as a resolve entry (a proposal records none); its undo opens the pair.
    const [entry] = await historyOf(url, "?op=resolve");
    expect(entry).toMatchObject({ fact_id: y, before: { old: x, new: y, resolution: null }, after: { old: x, new: y, resolution: "keep_both" },
      note: "from a backup: the pair as it was resolved" });
    expect((await historyOf(url, "?op=resolve")).length).toBe(1);
    expect((await undo(url, entry.id)).status).toBe(200);
    expect((await queue(url)).conflicts.map((c) => [c.old.id, c.new.id])).toContainEqual([x, y]);
    // Again: the pairs are there (the pair, and its id).
    expect(await json(restorePairs(url, [kept, proposed, { ...proposed, old: x, new: z, id: 5 }]))).toEqual({ restored: 0, skipped: 3 });
    expect(await json(restorePairs(url, []))).toEqual({ restored: 0, skipped: 0 });
  });

  it("refuses a malformed pair by name and stores nothing; a list of at most 100", async () => {
    const url = await base();
    const a = (await add(url, "2026-10-01: renewed the car insurance.", { type: "log" })).id;
    const b = (await add(url, "2026-10-02: booked the dentist.", { type: "log" })).id;
    const good = { old: a, new: b, score: 0.55, differs: DIFFERS };
    const cases: [unknown, string][] = [
      [{ new: b, score: 0.7, differs: DIFFERS }, "conflicts[1].old is required: a fact id"],
      [{ ...good, new: a }, "conflicts[1]: old and new are the same fact"],
      [{ ...good, old: "1" }, "conflicts[1].old must be a whole number from 1 to 9007199254740991"],
      [{ ...good, id: true }, "conflicts[1].id must be a whole number from 1 to 9007199254740991"],
      [{ ...good, score: 1.5 }, "conflicts[1].score must be a number from -1 to 1"],
      [{ ...good, score: "0.5" }, "conflicts[1].score must be a number from -1 to 1"],
      [{ ...good, differs: { ...DIFFERS, more: [] } }, "conflicts[1].differs must be {kinds, old, new}: lists of words, kinds of number, date, negation, name, word"],
      [{ ...good, differs: { ...DIFFERS, kinds: ["mood"] } }, "conflicts[1].differs must be {kinds, old, new}: lists of words, kinds of number, date, negation, name, word"],
      [{ ...good, differs: { ...DIFFERS, new: ["\ud800"] } }, "conflicts[1].differs.new contains a lone surrogate: it is not valid Unicode"],
      [{ ...good, resolution: "keep_old" }, "conflicts[1].resolution must be null (proposed), keep_both or replace (replaced at once)"],
      [[good], "conflicts[1] must be an object"],
    ];
    for (const [bad, message] of cases) {
      expect(await errorOf(restorePairs(url, [good, bad])), message).toEqual({ status: 422, code: "invalid", message });
    }
    expect(await errorOf(restorePairs(url, { old: a }))).toEqual({ status: 422, code: "invalid", message: "conflicts must be a list of pairs" });
    expect(await errorOf(restorePairs(url, Array(101).fill(good))))
      .toEqual({ status: 413, code: "too_large", message: "a restore holds at most 100 pairs" });
    expect((await queue(url, "?all=true")).total).toBe(0);
  });

  it("an undone delete brings back the pairs its fact was in, with their ids and resolutions", async () => {
    const url = await base();
    const x = (await add(url, "2026-11-02: Rosa moved to Lisbon.", { type: "log" })).id;
    const y = (await add(url, "2026-11-03: Rosa moved to Porto.", { type: "log" })).id;
    const z = (await add(url, "2026-11-04: Rosa moved to Faro.", { type: "log" })).id;
    const pairs = [{ id: 7, old: x, new: y, score: 0.6, differs: DIFFERS, resolution: "keep_both" },
      { id: 8, old: z, new: x, score: 0.55, differs: DIFFERS, resolution: null }, { id: 9, old: y, new: z, score: 0.5, differs: DIFFERS }];
    expect(await json(restorePairs(url, pairs))).toEqual({ restored: 3, skipped: 0 });
    const before = (await queue(url, "?all=true")).conflicts;
    expect((await call(`${url}/facts/${x}`, "DELETE")).status).toBe(200);
    expect((await queue(url, "?all=true")).conflicts.map((c) => c.id)).toEqual([9]);
    const [deleted] = await historyOf(url, `?fact_id=${x}&op=delete`);
    expect((deleted.before as { pairs: unknown[] }).pairs).toEqual(pairs.slice(0, 2));
    expect((await undo(url, deleted.id)).status).toBe(200);
    expect((await queue(url, "?all=true")).conflicts).toEqual(before);
    expect((await historyOf(url, "?op=resolve")).length).toBe(1);  // the restore's own: the undo's entry covers the rest
  });
});

describe("PATCH of the validity", () => {
  it("superseded_by replaces the fact, valid_until the later creation, unless given; null clears both", async () => {
    const url = await base();
    const a = await add(url, "Fact A.", { created_at: PAST });
    const b = await add(url, "Fact B.", { created_at: LATER });
    const replaced = await json<Fact>(call(`${url}/facts/${a.id}`, "PATCH", { superseded_by: b.id }));
    expect(replaced).toMatchObject({ superseded_by: b.id, valid_until: LATER, text: a.text });
    const [entry] = await historyOf(url);
    expect(entry).toMatchObject({ op: "edit", before: a, after: replaced });
    const cleared = await json<Fact>(call(`${url}/facts/${a.id}`, "PATCH", { superseded_by: null }));
    expect(cleared).toMatchObject({ superseded_by: null, valid_until: null });
    const given = await json<Fact>(call(`${url}/facts/${a.id}`, "PATCH", { superseded_by: b.id, valid_until: "2024-03-01T00:00Z" }));
    expect(given).toMatchObject({ superseded_by: b.id, valid_until: "2024-03-01T00:00:00.000000Z" });
    const kept = await json<Fact>(call(`${url}/facts/${a.id}`, "PATCH", { superseded_by: null, valid_until: "2024-04-01T00:00Z" }));
    expect(kept).toMatchObject({ superseded_by: null, valid_until: "2024-04-01T00:00:00.000000Z" });
    expect(await json(call(`${url}/facts/${a.id}`, "PATCH", { source: "owner" }))).toMatchObject({ valid_until: kept.valid_until, source: "owner" });
    expect(await json(call(`${url}/facts/${a.id}`, "PATCH", { valid_until: null }))).toMatchObject({ valid_until: null, superseded_by: null });
    // The older fact replacing the newer ("old is right") leaves the newer never current.
    expect(await json(call(`${url}/facts/${b.id}`, "PATCH", { superseded_by: a.id }))).toMatchObject({ valid_until: LATER });
  });

  it("refuses itself, a fact that is none or not current, a loop, and a valid_until before its creation: 422", async () => {
    const url = await base();
    const a = await add(url, "Fact A.", { created_at: PAST });
    const b = await add(url, "Fact B.");
    const c = await add(url, "Fact C.");
    const refused = async (id: number, body: Record<string, unknown>) => {
      const e = await errorOf(call(`${url}/facts/${id}`, "PATCH", body));
      expect(e.status, JSON.stringify(body)).toBe(422);
      return e.message;
    };
    expect(await refused(a.id, { superseded_by: a.id })).toContain(String(a.id));
    expect(await refused(a.id, { superseded_by: 999 })).toContain("999");
    for (const bad of ["1", 0, 1.5, true]) await refused(a.id, { superseded_by: bad });
    // Replaced (its own valid_until later or not), b is no longer current: it replaces nothing.
    await call(`${url}/facts/${b.id}`, "PATCH", { superseded_by: c.id, valid_until: "2999-01-01T00:00Z" });
    expect(await refused(a.id, { superseded_by: b.id })).toContain(`fact ${b.id}, which is not current`);
    // A chain written by hand (a backup's restore) that would loop is still caught: d names a, yet is current.
    const restored = await json<{ results: Added[] }>(call(`${url}/facts/batch`, "POST", {
      restore: true, facts: [{ text: "Fact D.", superseded_by: a.id }] }));
    expect(await refused(a.id, { superseded_by: restored.results[0].id })).toContain(`leads back to fact ${a.id}: a loop`);
    expect(await refused(a.id, { valid_until: "2024-01-01T00:00Z" })).toBe("valid_until must not be before the fact's created_at");
    expect(await refused(a.id, { valid_until: "later" })).toBe("valid_until is not an ISO-8601 time");
    expect((await call(`${url}/facts/${a.id}`, "PATCH", { valid_until: "2024-02-01T00:00Z" })).status).toBe(200);
  });

  it("is undone as an edit, the validity put back; an undo over a later change of it is a 409", async () => {
    const url = await base();
    const a = await add(url, "Fact A.");
    const b = await add(url, "Fact B.");
    await call(`${url}/facts/${a.id}`, "PATCH", { superseded_by: b.id });
    const [edit] = await historyOf(url);
    await call(`${url}/facts/${a.id}`, "PATCH", { superseded_by: null, valid_until: "2999-01-01T00:00Z" });
    const refused = await errorOf(undo(url, edit.id));
    expect(refused).toMatchObject({ status: 409, code: "changed_since", current: { superseded_by: null, valid_until: "2999-01-01T00:00:00.000000Z" } });
    expect((await undo(url, edit.id, true)).status).toBe(200);
    expect(await get(url, a.id)).toMatchObject({ superseded_by: null, valid_until: null });
  });
});

describe("undo of an add that replaced facts", () => {
  it("deletes the new fact and makes each replaced fact current again as it was, in one write", async () => {
    const url = await base();
    const old = await add(url, "The owner lives in Lisbon.", { created_at: PAST, valid_until: "2999-01-01T00:00Z" });
    const next = await post(url, "The owner lives in Porto.", { supersedes: [old.id] });
    const [added] = await historyOf(url);
    const body = await json<{ entry: Entry; fact: Fact }>(undo(url, added.id));
    expect(body.entry).toMatchObject({ op: "delete", fact_id: next.id });
    expect((await call(`${url}/facts/${next.id}`)).status).toBe(404);
    expect(await get(url, old.id)).toEqual(old);
    expect(ids((await recall(url, { query: "where does the owner live" })).results)).toEqual([old.id]);
  });

  it("is a 409 changed_since once a replaced fact is no longer replaced by it, unless forced", async () => {
    const url = await base();
    const old = await add(url, "The owner lives in Lisbon.");
    const next = await post(url, "The owner lives in Porto.", { supersedes: [old.id] });
    const [added] = await historyOf(url);
    await call(`${url}/facts/${old.id}`, "PATCH", { superseded_by: null });
    const now = await get(url, old.id);
    const refused = await errorOf(undo(url, added.id)) as Record<string, unknown>;
    // As writing.py words it: the new fact's entry, and what the replaced one holds beside it.
    expect(refused).toMatchObject({ status: 409, code: "changed_since", entry: null, current: { text: next.fact.text, [`fact ${old.id}`]: now } });
    expect(refused.message).toContain(`fact ${next.id} changed since history entry ${added.id}`);
    expect((await call(`${url}/facts/${next.id}`)).status).toBe(200);
    expect((await undo(url, added.id, true)).status).toBe(200);
    expect(await get(url, old.id)).toMatchObject({ superseded_by: null, valid_until: null });
  });

  it("restores a deleted replaced fact as it was, replaced (its valid_until may be its creation)", async () => {
    const url = await base();
    const old = await add(url, "The owner lives in Lisbon.", { created_at: LATER });
    await add(url, "The owner lives in Porto.", { created_at: PAST, supersedes: [old.id] });
    const replaced = await get(url, old.id);
    expect(replaced.valid_until).toBe(LATER);  // the later creation: old's own
    await call(`${url}/facts/${old.id}`, "DELETE");
    const [del] = await historyOf(url);
    expect((await json<{ fact: Fact }>(undo(url, del.id))).fact).toEqual(replaced);
    const copy = { ...replaced, id: undefined, text: "Copy." };
    const backup = await json<{ results: Added[] }>(call(`${url}/facts/batch`, "POST", { restore: true, facts: [copy] }));
    expect(backup.results[0].fact).toMatchObject({ valid_until: LATER, superseded_by: replaced.superseded_by });
  });
});
