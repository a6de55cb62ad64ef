// The owner's review (docs/memory-api.md, "Review"; reviewing.ts mirrors memories/review/reviewing.py):
// migration 9, which writes land reviewed, an edit that unreviews, restores that keep reviewed_at,
// GET /facts?reviewed= (and its client and source_prefix filters), POST /facts/review and its
// undo, the `review` setting and the pending facts recall leaves out. And what came with it: a
// batch's dry run and note, a log that neither proposes nor is proposed, and an undo of settings
// that is recorded even when the settings are back as they were by hand.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MemoryObject } from "../src/memory";
import { MIGRATIONS, migrate } from "../src/storage/schema";
import { created } from "./memories";

const env = testEnv as unknown as Env;

type Fact = { id: number; text: string; type: string; source: string; created_at: string; updated_at: string;
  valid_until: string | null; superseded_by: number | null; reviewed_at: string | null };
type Added = { id: number; created: boolean; fact: Fact; conflicts?: { id: number }[]; duplicate?: { match: string; score: number };
  pending?: boolean };
type Entry = { id: number; op: string; client: string; fact_id: number | null; before: Record<string, unknown> | null;
  after: Record<string, unknown> | null; note: string; undone_by: number | null };
type Hit = { fact: Fact; current: boolean; reviewed: boolean; kw_rank: number | null; vec_rank: number | null };
type Page = { facts: Fact[]; next_cursor: string | null; total: number };

let n = 0;
const base = () => created(`http://memory.test/memories/review-${++n}-${Math.random().toString(36).slice(2)}`);
/** A request as `client` (X-Memory-Client; "" sends none). */
const call = (url: string, method = "GET", body?: unknown, client = "") => SELF.fetch(url, {
  method,
  headers: { "x-memory-secret": "test-secret", "content-type": "application/json", ...(client ? { "x-memory-client": client } : {}) },
  body: body === undefined ? undefined : JSON.stringify(body),
});
const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
const stub = (url: string) => env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2]));
const post = (url: string, text: string, client = "", extra: Record<string, unknown> = {}) =>
  json<Added>(call(`${url}/facts`, "POST", { text, ...extra }, client));
const get = (url: string, id: number) => json<Fact>(call(`${url}/facts/${id}`));
const list = (url: string, query = "") => json<Page>(call(`${url}/facts?limit=100${query}`));
const listed = async (url: string, query = "") => (await list(url, query)).facts.map((f) => f.id);
const unreviewed = async (url: string) => new Set(await listed(url, "&reviewed=false"));
const review = (url: string, ids: unknown, client = "dashboard") => call(`${url}/facts/review`, "POST", { ids }, client);
const recall = (url: string, body: Record<string, unknown>) => json<{ results: Hit[] }>(call(`${url}/recall`, "POST", { log: false, ...body }));
const settings = (url: string, body: unknown) => call(`${url}/settings`, "PUT", body);
const historyOf = async (url: string, query = "") => (await json<{ entries: Entry[] }>(call(`${url}/history${query}`))).entries;
const undo = (url: string, entry: number, force = false) => call(`${url}/history/${entry}/undo`, "POST", force ? { force } : undefined);
const errorOf = async (r: Response | Promise<Response>) => {
  const res = await r;
  return { status: res.status, ...((await res.json()) as { error: { code: string; message: string } }).error };
};

const PAST = "2024-01-10T09:00:00.000000Z";

describe("migration 9", () => {
  it("reviews every fact stored before it, at its creation, and indexes the unreviewed", async () => {
    const name = `review-old-${Math.random().toString(36).slice(2)}`;  // not created: the object opens nothing itself
    await runInDurableObject(env.MEMORY.get(env.MEMORY.idFromName(name)), (_: MemoryObject, ctx: DurableObjectState) => {
      const sql = ctx.storage.sql;
      sql.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
      MIGRATIONS.slice(0, 8).forEach((script, i) => {
        for (const statement of script.split(";\n")) if (statement.trim()) sql.exec(statement);
        sql.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (?, 'then')", i + 1);
      });
      sql.exec("INSERT INTO facts (text, text_key, type, created_at, updated_at) VALUES ('Old fact.', 'old fact.', 'fact', ?, ?)", PAST, PAST);
      migrate(sql, ctx.storage);
      expect(sql.exec("SELECT reviewed_at FROM facts").toArray()).toEqual([{ reviewed_at: PAST }]);
      expect(sql.exec("SELECT name FROM sqlite_master WHERE name = 'facts_unreviewed'").toArray()).toHaveLength(1);
      expect(sql.exec("SELECT max(version) AS v FROM schema_migrations").one().v).toBe(MIGRATIONS.length);
    });
  });
});

describe("a write", () => {
  it("is reviewed when the dashboard writes it, with or without a version, and not when an agent does", async () => {
    const url = await base();
    const agent = await post(url, "The owner's gym is on Bath Road.", "claude-code 1.2");
    const owner = await post(url, "The owner's dentist is on Mill Lane.", "dashboard");
    const versioned = await post(url, "The owner's barber is on Quay Street.", "dashboard 2.1");
    const nobody = await post(url, "The owner's tailor is on Elm Row.");
    expect(agent.fact.reviewed_at).toBeNull();
    expect(nobody.fact.reviewed_at).toBeNull();
    expect(owner.fact.reviewed_at).toBe(owner.fact.created_at);
    expect(versioned.fact.reviewed_at).toBe(versioned.fact.created_at);
    expect(await get(url, owner.id)).toEqual(owner.fact);
    expect(await unreviewed(url)).toEqual(new Set([agent.id, nobody.id]));
    expect(await listed(url, "&reviewed=true")).toEqual([versioned.id, owner.id]);
    expect(await listed(url, "&reviewed=1")).toEqual(await listed(url, "&reviewed=true"));
    expect(await listed(url, "&reviewed=0")).toEqual(await listed(url, "&reviewed=false"));
    expect((await list(url, "&reviewed=")).total).toBe(4);
    expect(await errorOf(call(`${url}/facts?reviewed=maybe`))).toMatchObject({ status: 422, message: "reviewed must be true or false" });
  });

  it("is unreviewed again by an agent's edit of its text, type or source; the owner's edit reviews it; validity alone keeps it", async () => {
    const url = await base();
    const fact = (await post(url, "The owner's dentist is on Mill Lane.", "dashboard")).fact;
    const edit = (body: unknown, client: string) => json<Fact>(call(`${url}/facts/${fact.id}`, "PATCH", body, client));
    expect((await edit({ text: "The owner's dentist is on Mill Lane." }, "agent")).reviewed_at).toBe(fact.reviewed_at);  // nothing changed
    expect((await edit({ valid_until: "2999-01-01T00:00Z" }, "agent")).reviewed_at).toBe(fact.reviewed_at);
    expect((await edit({ text: "The owner's dentist is on Kiln Lane." }, "agent")).reviewed_at).toBeNull();
    const checked = await edit({ source: "checked" }, "dashboard");
    expect(checked.reviewed_at).toBe(checked.updated_at);
    expect((await edit({ type: "skill" }, "agent 3")).reviewed_at).toBeNull();
    expect(await get(url, fact.id)).toMatchObject({ reviewed_at: null, type: "skill" });
    // The edit entry holds the fact before and after, reviewed_at and all.
    const [entry] = await historyOf(url, "?op=edit&limit=1");
    expect(entry.before).toMatchObject({ reviewed_at: checked.reviewed_at });
    expect(entry.after).toMatchObject({ reviewed_at: null });
  });

  it("keeps reviewed_at as given on a restore (and on an undone delete); anything else ignores it", async () => {
    const url = await base();
    const seen = (await post(url, "The owner's umbrella is black.", "dashboard")).fact;
    const unseen = (await post(url, "The owner's scarf is woollen.", "agent")).fact;
    await call(`${url}/facts/${seen.id}`, "DELETE");
    const [deleted] = await historyOf(url, "?op=delete");
    const back = await json<{ fact: Fact }>(undo(url, deleted.id, false));
    expect(back.fact).toEqual(seen);
    for (const f of [seen, unseen]) await call(`${url}/facts/${f.id}`, "DELETE");
    const restored = await json<{ results: Added[] }>(call(`${url}/facts/batch`, "POST", { restore: true, facts: [seen, unseen] }, "cli"));
    expect(restored.results.map((r) => r.fact)).toEqual([seen, unseen]);
    const given = await post(url, "The owner's hat is a trilby.", "agent", { reviewed_at: PAST });
    expect(given.fact.reviewed_at).toBeNull();
    expect(await errorOf(call(`${url}/facts`, "POST", { text: "x", reviewed_at: "yesterday" })))
      .toMatchObject({ status: 422, message: "reviewed_at is not an ISO-8601 time" });
  });
});

describe("POST /facts/review", () => {
  it("reviews the facts not reviewed yet in one entry, and its undo makes them unreviewed again", async () => {
    const url = await base();
    const ids = [];
    for (const word of ["blue", "green", "amber"]) ids.push((await post(url, `The owner's locker is ${word}.`, "agent", { force: true })).id);
    const owners = (await post(url, "The owner's bike is red.", "dashboard")).id;
    const r = await review(url, [...ids, owners, ids[0]]);
    expect(r.status).toBe(200);
    const body = await json<{ reviewed: number[]; entry: number }>(r);
    expect(body.reviewed).toEqual(ids);  // each once, in the order given; the owner's was reviewed already
    expect(await unreviewed(url)).toEqual(new Set());
    const facts = await Promise.all(ids.map((id) => get(url, id)));
    const at = facts[0].reviewed_at!;
    expect(facts.every((f) => f.reviewed_at === at && f.updated_at === f.created_at)).toBe(true);  // no edit: updated_at stays
    const entry = await json<Entry>(call(`${url}/history/${body.entry}`));
    expect(entry).toMatchObject({ op: "review", client: "dashboard", fact_id: null, before: { ids }, after: { ids, reviewed_at: at },
      note: "3 reviewed" });
    expect((await historyOf(url, "?op=review")).map((e) => e.id)).toEqual([body.entry]);
    expect(await json(review(url, ids))).toEqual({ reviewed: [], entry: null });
    expect((await historyOf(url, "?op=review")).length).toBe(1);  // nothing to review, nothing recorded

    // A fact reviewed again since (by the owner's edit) keeps that review through the undo.
    await call(`${url}/facts/${ids[0]}`, "PATCH", { text: "The owner's locker is cyan." }, "agent");
    const again = await json<Fact>(call(`${url}/facts/${ids[0]}`, "PATCH", { source: "checked" }, "dashboard"));
    const undone = await undo(url, body.entry);
    expect(undone.status).toBe(200);
    const answer = await json<{ entry: Entry; fact: Fact | null; restored: boolean }>(undone);
    expect(answer).toMatchObject({ fact: null, restored: true,
      entry: { op: "review", before: { ids, reviewed_at: at }, after: { ids, reviewed_at: null }, note: `undo of #${body.entry}` } });
    expect(await unreviewed(url)).toEqual(new Set(ids.slice(1)));
    expect((await get(url, ids[0])).reviewed_at).toBe(again.reviewed_at);
    // Its undo reviews them again, at the time they were.
    expect((await undo(url, answer.entry.id)).status).toBe(200);
    expect(await unreviewed(url)).toEqual(new Set());
    expect((await get(url, ids[1])).reviewed_at).toBe(at);
    expect((await errorOf(undo(url, body.entry))).code).toBe("already_undone");
  });

  it("takes up to 200 ids (past the object's 100 bindings a statement)", async () => {
    const url = await base();
    const ids: number[] = [];
    for (let i = 0; i < 200; i += 100) {
      const facts = Array.from({ length: 100 }, (_, k) => ({ text: `Locker number ${i + k} holds item ${i + k}.`, force: true }));
      const body = await json<{ results: Added[] }>(call(`${url}/facts/batch`, "POST", { facts }, "agent"));
      ids.push(...body.results.map((r) => r.id));
    }
    expect(new Set(ids).size).toBe(200);
    const body = await json<{ reviewed: number[] }>(review(url, ids));
    expect(body.reviewed).toEqual(ids);
    expect((await list(url, "&reviewed=false")).total).toBe(0);
  });

  it("refuses a bad body with a 422 naming ids, and an unknown id naming it, changing nothing", async () => {
    const url = await base();
    const fid = (await post(url, "The owner's kettle is steel.", "agent")).id;
    const bad = "ids must be a list of 1 to 200 fact ids";
    for (const ids of [[], Array.from({ length: 201 }, (_, i) => i + 1), "1,2", [0], [1.5], [true], [null], ["1"], undefined]) {
      expect(await errorOf(review(url, ids)), JSON.stringify(ids)).toEqual({ status: 422, code: "invalid", message: bad });
    }
    expect(await errorOf(review(url, [fid, 8999997, 8999998]))).toEqual({ status: 422, code: "invalid",
      message: "ids name facts that do not exist: 8999997, 8999998" });
    expect(await unreviewed(url)).toEqual(new Set([fid]));
    expect(await historyOf(url, "?op=review")).toEqual([]);
    expect((await call(`${url}/facts/review`, "GET")).status).toBe(405);
    expect((await errorOf(call(`${url}/facts/review`, "POST", { ids: [fid] }, "bad\tname"))).status).toBe(422);
  });
});

describe("the review setting", () => {
  it("is after by default, kept only when not the default, recorded in the history and undone", async () => {
    const url = await base();
    const shown = async () => (await json<{ review: unknown }>(call(`${url}/settings`))).review;
    expect(await shown()).toEqual({ mode: "after", trusted: [] });
    const r = await settings(url, { review: { mode: "before" } });
    expect(r.status).toBe(200);
    expect((await json<{ review: unknown }>(r)).review).toEqual({ mode: "before", trusted: [] });
    await settings(url, { review: { trusted: ["walk-agent", "import:chatgpt", "walk-agent"] } });  // each once
    expect(await shown()).toEqual({ mode: "before", trusted: ["walk-agent", "import:chatgpt"] });
    const [second, first] = await historyOf(url, "?op=settings");
    expect(first.before).not.toHaveProperty("review");
    expect(first.after).toMatchObject({ review: { mode: "before", trusted: [] } });
    expect(second.after).toMatchObject({ review: { mode: "before", trusted: ["walk-agent", "import:chatgpt"] } });
    // The fusion and threshold stay as they are.
    await settings(url, { fusion: { rerank: 2 }, threshold: 0.9 });
    expect(await shown()).toEqual({ mode: "before", trusted: ["walk-agent", "import:chatgpt"] });
    await settings(url, { review: { mode: "after", trusted: [] } });
    const [back] = await historyOf(url, "?op=settings&limit=1");
    expect(back.after).not.toHaveProperty("review");  // the default is not stored
    expect(back.after).toMatchObject({ rerank: 2, threshold: 0.9 });
    expect((await settings(url, { review: { mode: "after" } })).status).toBe(200);
    expect((await historyOf(url, "?op=settings")).length).toBe(4);  // already in use: nothing recorded
    expect((await undo(url, back.id)).status).toBe(200);
    expect(await shown()).toEqual({ mode: "before", trusted: ["walk-agent", "import:chatgpt"] });
  });

  it("is read again when the object starts", async () => {
    const url = await base();
    await settings(url, { review: { mode: "before", trusted: ["cli"] } });
    await runInDurableObject(stub(url), async (_: MemoryObject, ctx: DurableObjectState) => {
      let started: unknown;
      Object.assign(ctx, { blockConcurrencyWhile: (work: () => Promise<unknown>) => (started = work()) });
      try {
        const again = new MemoryObject(ctx, env);
        await started;
        const r = await again.fetch(new Request("http://memory.test/settings", { headers: { "x-memory-secret": "test-secret" } }));
        expect(((await r.json()) as { review: unknown }).review).toEqual({ mode: "before", trusted: ["cli"] });
      } finally {
        delete (ctx as Partial<DurableObjectState>).blockConcurrencyWhile;
      }
    });
  });

  it.each([
    [{ mode: "never" }, "review.mode must be one of after, before"],
    [{ mode: null }, "review.mode must be one of after, before"],
    [{ trusted: "all" }, "review.trusted must be a list of up to 50 client names or sources"],
    [{ trusted: Array.from({ length: 51 }, (_, i) => `agent-${i}`) }, "review.trusted must be a list of up to 50 client names or sources"],
    [{ trusted: ["tab\there"] }, "review.trusted: each entry is a client name or a source of 1 to 64 printable ASCII characters"],
    [{ trusted: [""] }, "review.trusted: each entry is a client name or a source of 1 to 64 printable ASCII characters"],
    [{ trusted: ["x".repeat(65)] }, "review.trusted: each entry is a client name or a source of 1 to 64 printable ASCII characters"],
    [{ trusted: [7] }, "review.trusted: each entry is a client name or a source of 1 to 64 printable ASCII characters"],
    [{ other: 1 }, 'review must be an object with "mode" and/or "trusted"'],
    [{}, 'review must be an object with "mode" and/or "trusted"'],
    ["before", 'review must be an object with "mode" and/or "trusted"'],
    [null, 'review must be an object with "mode" and/or "trusted"'],
    [["before"], 'review must be an object with "mode" and/or "trusted"'],
  ])("refuses %j with a 422 naming the field, changing nothing", async (value, message) => {
    const url = await base();
    const before = await json(call(`${url}/settings`));
    expect(await errorOf(settings(url, { review: value }))).toEqual({ status: 422, code: "invalid", message });
    expect(await json(call(`${url}/settings`))).toEqual(before);
    expect(await historyOf(url)).toEqual([]);
  });

  it("reviews the writes of a trusted client (with or without its version) or source", async () => {
    const url = await base();
    await settings(url, { review: { trusted: ["walk-agent", "import:chatgpt"] } });
    const byClient = await post(url, "The owner walks at dawn.", "walk-agent 0.3", { force: true });
    const bySource = await post(url, "The owner likes figs.", "cli", { source: "import:chatgpt", force: true });
    const other = await post(url, "The owner likes dates.", "walk-agent-two", { force: true });
    const prefixed = await post(url, "The owner likes plums.", "cli", { source: "import:chatgpt:2", force: true });
    expect([byClient, bySource, other, prefixed].every((a) => a.created)).toBe(true);
    expect(byClient.fact.reviewed_at).toBe(byClient.fact.created_at);
    expect(bySource.fact.reviewed_at).toBe(bySource.fact.created_at);
    expect(other.fact.reviewed_at).toBeNull();
    expect(prefixed.fact.reviewed_at).toBeNull();
    // An edit by a trusted client reviews; by another, with a trusted source, too.
    const edited = await json<Fact>(call(`${url}/facts/${other.id}`, "PATCH", { text: "The owner likes dried dates." }, "walk-agent"));
    expect(edited.reviewed_at).toBe(edited.updated_at);
  });

  it("before: a client's fact is pending, out of recall and explain's ranks until reviewed, and still a duplicate", async () => {
    const url = await base();
    await settings(url, { review: { mode: "before" } });
    const text = "The owner's passport number ends in 5521.";
    const added = await post(url, text, "agent");
    expect(added).toMatchObject({ created: true, pending: true, conflicts: [] });
    const owners = await post(url, "The owner's passport office is in Leeds.", "dashboard");
    expect(owners.created).toBe(true);
    expect(owners).not.toHaveProperty("pending");
    const asked = await recall(url, { query: "passport number" });
    expect(asked.results.map((h) => h.fact.id)).toEqual([owners.id]);
    expect(asked.results[0].reviewed).toBe(true);
    expect((await recall(url, { query: "passport number", mode: "keyword" })).results.map((h) => h.fact.id)).toEqual([owners.id]);
    const stale = await recall(url, { query: "passport number", include_stale: true });
    expect(stale.results.find((h) => h.fact.id === added.id)).toMatchObject({ reviewed: false, current: true });
    const why = await json(call(`${url}/explain`, "POST", { query: "passport number", id: added.id }));
    expect(why).toMatchObject({ kw_rank: null, vec_rank: null, fused_rank: null, current: true });
    expect(why.bm25).not.toBeNull();
    const again = await post(url, text, "agent");
    expect(again).toMatchObject({ created: false, id: added.id, duplicate: { match: "exact" } });
    expect(again).not.toHaveProperty("pending");
    const batch = await json<{ results: Added[] }>(call(`${url}/facts/batch`, "POST", { facts: [{ text: "The owner's visa is a B2." }] }, "agent"));
    expect(batch.results[0]).toMatchObject({ created: true, pending: true });
    await review(url, [added.id]);
    const now = await recall(url, { query: "passport number" });
    expect(now.results.map((h) => h.fact.id)).toContain(added.id);
    expect(now.results.find((h) => h.fact.id === added.id)!.reviewed).toBe(true);
    expect(await json(call(`${url}/explain`, "POST", { query: "passport number", id: added.id }))).toMatchObject({ kw_rank: 1 });
    // After: an unreviewed fact is recalled at once, and said so.
    await settings(url, { review: { mode: "after" } });
    const visa = batch.results[0].id;
    const after = await recall(url, { query: "visa" });
    expect(after.results.find((h) => h.fact.id === visa)).toMatchObject({ reviewed: false });
    expect((await post(url, "The owner's visa expires in May.", "agent"))).not.toHaveProperty("pending");
  });
});

describe("GET /facts", () => {
  it("filters by the client whose adds (and restores) wrote a fact, with or without its version, and by source prefix", async () => {
    const url = await base();
    const mine = (await post(url, "The owner's scarf is green.", "inbox-agent 2.0", { source: "import:mem0" })).id;
    const other = (await post(url, "The owner's hat is red.", "inbox-agent-other")).id;
    const plain = (await post(url, "The owner's coat is grey.", "inbox-agent", { source: "🍎:notes" })).id;
    const nobody = (await post(url, "The owner's gloves are brown.")).id;
    // An edit by the client is not a write of the fact.
    await call(`${url}/facts/${nobody}`, "PATCH", { source: "import:letta" }, "inbox-agent");
    const byClient = await list(url, "&client=inbox-agent");
    expect(byClient.facts.map((f) => f.id)).toEqual([plain, mine]);
    expect(byClient.total).toBe(2);
    expect(await listed(url, "&client=inbox-agent-other")).toEqual([other]);
    expect(await listed(url, "&client=")).toEqual([nobody]);
    expect(await listed(url, "&source_prefix=import:")).toEqual([nobody, mine]);
    expect(await listed(url, "&source_prefix=import:&client=inbox-agent")).toEqual([mine]);
    expect(await listed(url, "&source_prefix=%F0%9F%8D%8E:")).toEqual([plain]);  // characters, not UTF-16 units
    expect((await list(url, "&source_prefix=import:zzz")).total).toBe(0);
    expect((await list(url, "&source_prefix=")).total).toBe(4);
    // A fact deleted and put back by another client is that client's restore.
    await call(`${url}/facts/${other}`, "DELETE");
    const [deleted] = await historyOf(url, "?op=delete");
    await call(`${url}/history/${deleted.id}/undo`, "POST", undefined, "dashboard");
    expect(await listed(url, "&client=dashboard")).toEqual([other]);
    expect(await errorOf(call(`${url}/facts?client=${"x".repeat(65)}`))).toMatchObject({ status: 422 });
  });
});

describe("a batch's dry run", () => {
  const batch = [
    { text: "The owner's accountant is Tom Berg." }, { text: "the owner's accountant is maria lopez." },
    { text: "Green Brompton bicycle kept indoors." }, { text: "Green Brompton bicycle kept indoors." },
    { text: "Ran 10 km along the canal on Sunday.", type: "log" },
  ];
  /** What the memory holds, in its tables and in memory. */
  const held = async (url: string) => ({
    stats: await json<Record<string, unknown>>(call(`${url}/stats`)),
    history: await historyOf(url),
    conflicts: await json(call(`${url}/conflicts`)),
    facts: await list(url),
    inside: await runInDurableObject(stub(url), (m: MemoryObject) => ({
      vectors: m.vectors.size, words: m.vocab.size, last: m.vocab.last,
      table: m.sql.exec("SELECT count(*) AS n FROM words").one().n,
      pairs: m.sql.exec("SELECT count(*) AS n FROM pairs").one().n,
      blocks: m.sql.exec("SELECT kind, block, hex(ids) AS ids FROM code_blocks ORDER BY kind, block").toArray(),
      sequence: m.sql.exec("SELECT seq FROM sqlite_sequence WHERE name = 'facts'").toArray(),
    })),
  });
  const shape = (results: Added[]) => results.map((r) => ({ id: r.id, created: r.created, match: r.duplicate?.match ?? null,
    conflicts: (r.conflicts ?? []).map((c) => c.id), pending: r.pending ?? false, text: r.fact.text, reviewed: r.fact.reviewed_at !== null }));

  it("answers what the batch then does, and keeps nothing: no fact, entry, proposal, pair or word, in storage or in memory", async () => {
    const url = await base();
    const maria = (await post(url, "The owner's accountant is Maria Lopez.", "dashboard")).id;
    await settings(url, { review: { mode: "before" } });
    const before = await held(url);
    const dry = await call(`${url}/facts/batch`, "POST", { facts: batch, dry_run: true }, "importer");
    expect(dry.status).toBe(200);
    const dryResults = (await json<{ results: Added[] }>(dry)).results;
    expect(await held(url)).toEqual(before);
    const real = await json<{ results: Added[] }>(call(`${url}/facts/batch`, "POST", { facts: batch, note: "import of test.txt" }, "importer"));
    expect(shape(dryResults)).toEqual(shape(real.results));
    const [tom, , bike] = real.results;
    expect(shape(real.results).map(({ created, match, conflicts, pending }) => ({ created, match, conflicts, pending }))).toEqual([
      { created: true, match: null, conflicts: [maria], pending: true },
      { created: false, match: "exact", conflicts: [], pending: false },
      { created: true, match: null, conflicts: [], pending: true },
      { created: false, match: "exact", conflicts: [], pending: false },  // the batch's own third fact
      { created: true, match: null, conflicts: [], pending: true },
    ]);
    expect(real.results[3].id).toBe(bike.id);
    for (const r of [tom, bike, real.results[4]]) {
      expect((await historyOf(url, `?fact_id=${r.id}`))[0]).toMatchObject({ op: "add", client: "importer", note: "import of test.txt" });
    }
    const after = await held(url);
    expect(after.inside.vectors).toBe(before.inside.vectors + 3);
    expect(after.inside.words).toBeGreaterThan(before.inside.words);
  });

  it("refuses what the batch refuses, and checks dry_run and note", async () => {
    const url = await base();
    const first = (await post(url, "Kept fact about the attic.")).id;
    expect(await errorOf(call(`${url}/facts/batch`, "POST", { dry_run: true, restore: true, facts: [{ text: "x", id: first }] })))
      .toMatchObject({ status: 409, code: "id_taken" });
    for (const dry_run of ["yes", 1, "true"]) {
      expect(await errorOf(call(`${url}/facts/batch`, "POST", { dry_run, facts: [] }))).toEqual({ status: 422, code: "invalid",
        message: "dry_run must be true or false" });
    }
    for (const note of [null, 5, ["x"], "x".repeat(201)]) {
      expect(await errorOf(call(`${url}/facts/batch`, "POST", { note, facts: [{ text: "A note's fact." }] })), JSON.stringify(note))
        .toEqual({ status: 422, code: "invalid", message: "note must be text of at most 200 characters" });
    }
    expect((await call(`${url}/facts/batch`, "POST", { note: "🍎".repeat(200), facts: [] })).status).toBe(200);  // characters
    expect(await listed(url)).toEqual([first]);
    expect((await historyOf(url)).length).toBe(1);
  });

  it("with restore: the note is its own, else the restore's", async () => {
    const url = await base();
    const kept = (await post(url, "Fact from a backup.")).fact;
    await call(`${url}/facts/${kept.id}`, "DELETE");
    await call(`${url}/facts/batch`, "POST", { restore: true, facts: [kept], note: "backup of Monday" });
    expect((await historyOf(url, "?op=add&limit=1"))[0].note).toBe("backup of Monday");
  });
});

describe("a log", () => {
  it("neither proposes nor is proposed: a later event does not make an earlier one untrue", async () => {
    const url = await base();
    await post(url, "Ran 10 km along the canal on Sunday.", "", { type: "log" });
    const later = await post(url, "Ran 12 km along the canal on Monday.", "", { type: "log" });
    expect(later).toMatchObject({ created: true, conflicts: [] });
    // The same two as facts do propose (so the logs were near enough to).
    await post(url, "Ran 10 km along the canal on Sunday.", "", { type: "fact" });
    expect((await post(url, "Ran 12 km along the canal on Monday.", "", { type: "fact" })).conflicts!.length).toBe(1);
    expect((await json<{ total: number }>(call(`${url}/conflicts`))).total).toBe(1);
  });
});

describe("an undo of settings", () => {
  it("is recorded even when the settings are back as they were by hand (forced)", async () => {
    const url = await base();
    await settings(url, { fusion: { rerank: 2 } });
    const [entry] = await historyOf(url, "?op=settings&limit=1");
    await settings(url, { fusion: { rerank: entry.before!.rerank } });  // back by hand
    expect((await errorOf(undo(url, entry.id))).code).toBe("changed_since");
    const r = await undo(url, entry.id, true);
    expect(r.status).toBe(200);
    const body = await json<{ entry: Entry }>(r);
    expect(body.entry).toMatchObject({ op: "settings", note: `undo of #${entry.id}` });
    expect((await json<Entry>(call(`${url}/history/${entry.id}`))).undone_by).toBe(body.entry.id);
  });
});

describe("deleting a fact nobody reviewed", () => {
  it("leaves none of its own words in the vocabulary; a reviewed fact's delete keeps them (writing.py delete)", async () => {
    const url = await base();
    const words = () => runInDurableObject(stub(url), (_: MemoryObject, ctx: DurableObjectState) =>
      new Set(ctx.storage.sql.exec<{ word: string }>("SELECT word FROM words").toArray().map((r) => r.word)));
    await post(url, "The owner's cat is called Qwzlorp.", "dashboard");
    const wrong = await post(url, "Vexmantine qwzlorp secrets live here.", "agent");
    expect([...(await words())]).toEqual(expect.arrayContaining(["vexmantine", "qwzlorp", "secrets"]));
    expect((await call(`${url}/facts/${wrong.id}`, "DELETE")).status).toBe(200);
    const after = await words();
    expect(after.has("vexmantine") || after.has("secrets")).toBe(false);
    expect(after.has("qwzlorp")).toBe(true);
    const kept = await post(url, "The owner's zarquon is blue.", "dashboard");
    await call(`${url}/facts/${kept.id}`, "DELETE");
    expect((await words()).has("zarquon")).toBe(true);
  });
});
