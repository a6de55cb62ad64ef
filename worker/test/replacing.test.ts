// The lifecycle of replacements (issue 45; replacing.ts, as memories/writes/replacing.py): a replaced
// fact keeps its own validity and gets it back exactly, only a current fact is replaced, a fact
// replaced already is not re-pointed, no undo makes a loop (409 undo_refused, forced or not), a
// pending fact's replacements wait for the owner, and a delete gives back what it replaced while
// its undo (the redo of an add) replaces it again. tests/test_lifecycle_holds.py holds both
// memories to the same over HTTP; these are the object's own.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { MemoryObject } from "../src/memory";
import { MIGRATIONS, migrate } from "../src/storage/schema";
import { created } from "./memories";

const env = testEnv as unknown as Env;

type Fact = { id: number; text: string; created_at: string; valid_until: string | null; superseded_by: number | null;
  reviewed_at: string | null };
type Added = { id: number; created: boolean; fact: Fact; pending?: boolean };
type Entry = { id: number; op: string; fact_id: number | null; before: Record<string, unknown> | null; undone_by: number | null };

let n = 0;
const base = () => created(`http://memory.test/memories/replacing-${++n}-${Math.random().toString(36).slice(2)}`);
/** A request as `client` (X-Memory-Client; "" sends none). */
const call = (url: string, method = "GET", body?: unknown, client = "") => SELF.fetch(url, {
  method, body: body === undefined ? undefined : JSON.stringify(body),
  headers: { "x-memory-secret": "test-secret", "content-type": "application/json", ...(client ? { "x-memory-client": client } : {}) },
});
const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
const post = (url: string, text: string, extra: Record<string, unknown> = {}, client = "") =>
  json<Added>(call(`${url}/facts`, "POST", { text, ...extra }, client));
const get = (url: string, id: number) => json<Fact>(call(`${url}/facts/${id}`));
const patch = (url: string, id: number, body: Record<string, unknown>, client = "") => call(`${url}/facts/${id}`, "PATCH", body, client);
const latest = async (url: string, id: number) => (await json<{ entries: Entry[] }>(call(`${url}/history?fact_id=${id}&limit=1`))).entries[0];
const undo = (url: string, entry: number, force = false) => call(`${url}/history/${entry}/undo`, "POST", force ? { force } : undefined);
const errorOf = async (r: Response | Promise<Response>) => {
  const res = await r;
  return { status: res.status, ...((await res.json()) as { error: { code: string; message: string } }).error };
};
const reviewBefore = (url: string) => call(`${url}/settings`, "PUT", { review: { mode: "before" } });
const approve = (url: string, ids: number[]) => json<{ entry: number }>(call(`${url}/facts/review`, "POST", { ids }, "dashboard"));

const PAST = "2024-01-10T09:00:00.000000Z";
const UNTIL = "2031-06-30T12:00:00.000000Z";

describe("migration 11", () => {
  it("gives every fact no own validity, and indexes the replaced facts", async () => {
    const name = `replacing-old-${Math.random().toString(36).slice(2)}`;  // not created: the object opens nothing itself
    await runInDurableObject(env.MEMORY.get(env.MEMORY.idFromName(name)), (_: MemoryObject, ctx: DurableObjectState) => {
      const sql = ctx.storage.sql;
      sql.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)");
      MIGRATIONS.slice(0, 10).forEach((script, i) => {
        for (const statement of script.split(";\n")) if (statement.trim()) sql.exec(statement);
        sql.exec("INSERT INTO schema_migrations (version, applied_at) VALUES (?, 'then')", i + 1);
      });
      sql.exec("INSERT INTO facts (text, text_key, type, created_at, updated_at, superseded_by, valid_until) VALUES"
        + " ('Old fact.', 'old fact.', 'fact', ?, ?, 7, ?)", PAST, PAST, PAST);
      migrate(sql, ctx.storage);
      expect(sql.exec("SELECT valid_until, superseded_by, own_valid_until FROM facts").toArray())
        .toEqual([{ valid_until: PAST, superseded_by: 7, own_valid_until: null }]);
      expect(sql.exec("SELECT name FROM sqlite_master WHERE name = 'facts_superseded_by'").toArray()).toHaveLength(1);
    });
  });
});

describe("replacing", () => {
  it("refuses to replace a fact that is not current, or one replaced already: 422 naming it, nothing stored", async () => {
    const url = await base();
    const expired = await post(url, "The owner's passport expires in 2020.", { created_at: PAST, valid_until: "2024-02-01T00:00:00Z" });
    const stale = await errorOf(call(`${url}/facts`, "POST", { text: "The owner's passport expires in 2031.", supersedes: [expired.id] }));
    expect(stale).toMatchObject({ status: 422, code: "invalid" });
    expect(stale.message).toBe(`supersedes names fact ${expired.id}: fact ${expired.id} is not current (its validity ended `
      + "2024-02-01T00:00:00.000000Z): only a current fact is replaced");
    const a = await post(url, "The team's retro is on Thursdays.");
    const b = await post(url, "The team's retro is on Fridays.", { supersedes: [a.id] });
    const again = await errorOf(call(`${url}/facts`, "POST", { text: "The team's retro is on Mondays.", supersedes: [a.id] }));
    expect(again.message).toBe(`supersedes names fact ${a.id}: fact ${a.id} is replaced already, by fact ${b.id}: `
      + "un-replace it first (superseded_by null) to name another");
    expect((await json<{ total: number }>(call(`${url}/facts`))).total).toBe(3);
    // PATCH alike: the current replacer named; the same one again is no error and changes nothing.
    const c = await post(url, "The team's retro is on Tuesdays.");
    const other = await errorOf(patch(url, a.id, { superseded_by: c.id }));
    expect(other).toMatchObject({ status: 422, message: `fact ${a.id} is replaced already, by fact ${b.id}: `
      + "un-replace it first (superseded_by null) to name another" });
    const was = await get(url, a.id);
    expect(await json(patch(url, a.id, { superseded_by: b.id }))).toMatchObject({ superseded_by: b.id, valid_until: was.valid_until });
    expect((await errorOf(patch(url, c.id, { superseded_by: expired.id }))).message).toContain(`fact ${expired.id}, which is not current`);
    expect((await errorOf(patch(url, expired.id, { superseded_by: c.id }))).message)
      .toContain(`fact ${expired.id} is not current`);
  });

  it("keeps the replaced fact's own validity, and un-replacing gives it back exactly", async () => {
    const url = await base();
    const a = await post(url, "The owner's lease runs to June 2031.", { valid_until: UNTIL });
    const b = await post(url, "The owner's lease was ended early.", { supersedes: [a.id] });
    expect(await get(url, a.id)).toMatchObject({ superseded_by: b.id, valid_until: b.fact.created_at });
    // valid_until given while replaced is its own end: seen once it is no longer replaced.
    expect(await json(patch(url, a.id, { valid_until: "2032-01-01T00:00:00Z" }))).toMatchObject({ valid_until: b.fact.created_at });
    expect(await json(patch(url, a.id, { superseded_by: null }))).toMatchObject({ superseded_by: null, valid_until: "2032-01-01T00:00:00.000000Z" });
    // null on a fact not replaced changes nothing (its end stays).
    expect(await json(patch(url, a.id, { superseded_by: null }))).toMatchObject({ superseded_by: null, valid_until: "2032-01-01T00:00:00.000000Z" });
  });
});

describe("an undo", () => {
  it("that would make a loop is a 409 undo_refused, forced or not, and leaves everything as it is", async () => {
    const url = await base();
    const a = await post(url, "The owner's locker code is 3141.");
    const b = await post(url, "The owner's locker code is 2718.");
    await patch(url, a.id, { superseded_by: b.id });
    await patch(url, a.id, { superseded_by: null });
    const unreplaced = await latest(url, a.id);
    expect((await patch(url, b.id, { superseded_by: a.id })).status).toBe(200);
    for (const force of [false, true]) {
      const refused = await errorOf(undo(url, unreplaced.id, force));
      expect(refused).toMatchObject({ status: 409, code: "undo_refused" });
      expect(refused.message).toBe(`history entry ${unreplaced.id} cannot be undone: fact ${a.id} would be replaced by fact ${b.id}, `
        + `and superseded_by names fact ${b.id}, which is not current: only a current fact replaces`);
    }
    expect(await get(url, a.id)).toMatchObject({ superseded_by: null, valid_until: null });
    expect(await get(url, b.id)).toMatchObject({ superseded_by: a.id });
    expect((await json<Entry>(call(`${url}/history/${unreplaced.id}`))).undone_by).toBeNull();
  });

  it("of an edit that un-replaced puts the replacement back when it still may be", async () => {
    const url = await base();
    const a = await post(url, "The owner's bike lock code is 5512.", { valid_until: UNTIL });
    const b = await post(url, "The owner's bike lock code is 9034.");
    await patch(url, a.id, { superseded_by: b.id });
    await patch(url, a.id, { superseded_by: null });
    expect((await undo(url, (await latest(url, a.id)).id)).status).toBe(200);
    expect(await get(url, a.id)).toMatchObject({ superseded_by: b.id, valid_until: b.fact.created_at });
    await patch(url, a.id, { superseded_by: null });  // and its own validity is still its own
    expect(await get(url, a.id)).toMatchObject({ superseded_by: null, valid_until: UNTIL });
  });
});

describe("a pending fact", () => {
  it("replaces only once the owner approves it; the review's undo, or a setting of the review, waits again", async () => {
    const url = await base();
    await reviewBefore(url);
    const a = await post(url, "The owner's dentist is Dr Okafor.", {}, "dashboard");
    const b = await post(url, "The owner's dentist is Dr Lindqvist.", { supersedes: [a.id] }, "agent");
    expect(b.pending).toBe(true);
    expect(await get(url, a.id)).toMatchObject({ superseded_by: b.id, valid_until: null });
    const approved = await approve(url, [b.id]);
    expect(await get(url, a.id)).toMatchObject({ superseded_by: b.id, valid_until: b.fact.created_at });
    expect((await undo(url, approved.entry)).status).toBe(200);
    expect(await get(url, a.id)).toMatchObject({ valid_until: null });
    await call(`${url}/settings`, "PUT", { review: { mode: "after" } });  // nothing is pending now
    expect(await get(url, a.id)).toMatchObject({ valid_until: b.fact.created_at });
    await reviewBefore(url);
    expect(await get(url, a.id)).toMatchObject({ valid_until: null });
  });

  it("made so by an edit gives back what it replaces until approved again", async () => {
    const url = await base();
    await reviewBefore(url);
    const a = await post(url, "The owner's barber is Sal.", {}, "dashboard");
    const b = await post(url, "The owner's barber is Kemi.", { supersedes: [a.id] }, "dashboard");
    expect((await get(url, a.id)).valid_until).toBe(b.fact.created_at);
    expect(await json(patch(url, b.id, { text: "The owner's barber is Kemi, on Dock Street." }, "agent"))).toMatchObject({ reviewed_at: null });
    expect(await get(url, a.id)).toMatchObject({ superseded_by: b.id, valid_until: null });
    await approve(url, [b.id]);
    expect((await get(url, a.id)).valid_until).toBe(b.fact.created_at);
  });
});

describe("a delete", () => {
  it("gives back what the fact replaced and says so; its undo replaces it again", async () => {
    const url = await base();
    const a = await post(url, "The owner's car is a blue Corsa.", { valid_until: UNTIL });
    const b = await post(url, "The owner's car is a green Yaris.", { supersedes: [a.id] });
    const replaced = await get(url, a.id);
    expect((await call(`${url}/facts/${b.id}`, "DELETE")).status).toBe(200);
    expect(await get(url, a.id)).toMatchObject({ superseded_by: null, valid_until: UNTIL });
    const deleted = await latest(url, b.id);
    expect(deleted.before).toMatchObject({ id: b.id, replaced: [{ ...replaced, own_valid_until: UNTIL }] });
    expect(deleted.before).not.toHaveProperty("own_valid_until");  // (b itself was not replaced)
    expect((await undo(url, deleted.id)).status).toBe(200);
    expect(await get(url, a.id)).toMatchObject({ superseded_by: b.id, valid_until: b.fact.created_at });
  });

  it("of a replaced fact keeps its own validity, and its undo puts it back replaced, or current when the replacer is gone", async () => {
    const url = await base();
    const a = await post(url, "The owner's gym is on Bath Road.", { valid_until: UNTIL });
    const b = await post(url, "The owner's gym is on Station Road.", { supersedes: [a.id] });
    await call(`${url}/facts/${a.id}`, "DELETE");
    const deletedA = await latest(url, a.id);
    expect(deletedA.before).toMatchObject({ superseded_by: b.id, own_valid_until: UNTIL });
    await undo(url, deletedA.id);
    expect(await get(url, a.id)).toMatchObject({ superseded_by: b.id, valid_until: b.fact.created_at });
    await call(`${url}/facts/${a.id}`, "DELETE");
    await call(`${url}/facts/${b.id}`, "DELETE");
    expect((await undo(url, (await latest(url, a.id)).id)).status).toBe(200);
    expect(await get(url, a.id)).toMatchObject({ superseded_by: null, valid_until: UNTIL });
  });

  it("undone (the redo of an add) leaves a fact replaced since by another as it is", async () => {
    const url = await base();
    const a = await post(url, "The owner's standup is at 9:30.");
    const b = await post(url, "The owner's standup is at 10:00.", { supersedes: [a.id] });
    const undone = await json<{ entry: Entry }>(undo(url, (await latest(url, b.id)).id));
    expect(await get(url, a.id)).toMatchObject({ superseded_by: null, valid_until: null });
    const c = await post(url, "The owner's standup is at 11:00.", { supersedes: [a.id] });
    expect((await undo(url, undone.entry.id)).status).toBe(200);
    expect(await get(url, a.id)).toMatchObject({ superseded_by: c.id });
    expect(await get(url, b.id)).toMatchObject({ superseded_by: null, valid_until: null });
  });
});
