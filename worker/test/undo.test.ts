// Undo and backups give back what was there (issue 28 §4; memories/writes/writing.py): a batch with
// `restore` stores each fact as given, an undo that would overwrite a later write is a 409
// changed_since unless forced (checked again after the embedding's await), and the trash's
// deletes are pruned apart from the other entries.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { MemoryObject } from "../src/memory";
import { created } from "./memories";

const env = testEnv as unknown as Env;

type Fact = { id: number; text: string; type: string; source: string; created_at: string; updated_at: string };
type Entry = { id: number; op: string; fact_id: number | null; before: Record<string, unknown> | null;
  after: Record<string, unknown> | null; note: string; undone_by: number | null };
type ErrorBody = { status: number; code: string; message: string; entry?: number | null; current?: Record<string, unknown> };

let n = 0;
const base = () => created(`http://memory.test/memories/undo-${++n}-${Math.random().toString(36).slice(2)}`);
const send = (url: string, method = "GET", body?: string) => SELF.fetch(url, {
  method, headers: { "x-memory-secret": "test-secret", "content-type": "application/json" }, body,
});
const call = (url: string, method = "GET", body?: unknown) => send(url, method, body === undefined ? undefined : JSON.stringify(body));
const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
const stub = (url: string) => env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2]));
const add = async (url: string, text: string, extra: Record<string, unknown> = {}) =>
  (await json<{ fact: Fact }>(call(`${url}/facts`, "POST", { text, ...extra }))).fact;
const historyOf = async (url: string, query = "") => (await json<{ entries: Entry[] }>(call(`${url}/history${query}`))).entries;
const errorOf = async (r: Response) => ({ status: r.status, ...((await r.json()) as { error: Omit<ErrorBody, "status"> }).error });
const RESTORED = "from a backup: stored as it was, without the duplicate check";

describe("a batch with restore", () => {
  it("stores each fact as given, exact duplicates and all, and says so in the history", async () => {
    const url = await base();
    const first = await add(url, "The owner's bike is a blue Gazelle.");
    const facts = [{ text: "THE OWNER'S BIKE IS A BLUE GAZELLE.", created_at: "2024-01-02T03:04:05.000006Z" },
      { text: "The owner's bike is a blue Gazelle.", type: "skill" }, { text: "The owner's bike is a blue Gazelle.", id: 77 }];
    const body = await json<{ results: { id: number; created: boolean; fact: Fact }[] }>(call(`${url}/facts/batch`, "POST", { restore: true, facts }));
    expect(body.results.map((r) => r.created)).toEqual([true, true, true]);
    expect(body.results[0].fact).toMatchObject({ text: facts[0].text, created_at: facts[0].created_at, updated_at: facts[0].created_at });
    expect(body.results[2].id).toBe(77);
    for (const r of body.results) expect((await historyOf(url, `?fact_id=${r.id}`))[0]).toMatchObject({ op: "add", note: RESTORED });
    expect(await json(call(`${url}/stats`))).toMatchObject({ consistent: true });
    // Without restore, the same batch dedups as ever.
    const again = await json<{ results: { created: boolean }[] }>(call(`${url}/facts/batch`, "POST", { facts: [{ text: first.text }] }));
    expect(again.results[0].created).toBe(false);
  });

  it("still refuses an id in use, and takes restore as a boolean only", async () => {
    const url = await base();
    const first = await add(url, "Kept fact about the attic.");
    const taken = await errorOf(await call(`${url}/facts/batch`, "POST", { restore: true, facts: [{ text: "x", id: first.id }] }));
    expect(taken).toMatchObject({ status: 409, code: "id_taken" });
    for (const restore of ["yes", 1, "true"]) {
      expect(await errorOf(await call(`${url}/facts/batch`, "POST", { restore, facts: [] })), String(restore))
        .toMatchObject({ status: 422, message: "restore must be true or false" });
    }
    // null is "not given", as service.py's bool_param reads it (and dry_run alike)
    expect((await call(`${url}/facts/batch`, "POST", { restore: null, dry_run: null, facts: [] })).status).toBe(200);
    expect((await historyOf(url)).length).toBe(1);
  });
});

describe("an undo over a later write", () => {
  it("of an older edit is a 409 changed_since naming the newer entry and what the fact holds, unless forced", async () => {
    const url = await base();
    const fact = await add(url, "The owner's doctor is Dr. Alvarez.");
    await call(`${url}/facts/${fact.id}`, "PATCH", { text: "The owner's doctor is Dr. Alvarez, on Rua Augusta." });
    const newer = await json<Fact>(call(`${url}/facts/${fact.id}`, "PATCH", { text: "Dr. Chen, since March.", source: "agent" }));
    const [latest, edit] = await historyOf(url, `?fact_id=${fact.id}`);
    const refused = await errorOf(await call(`${url}/history/${edit.id}/undo`, "POST"));
    expect(refused).toEqual({
      status: 409, code: "changed_since", entry: latest.id,
      current: { text: newer.text, type: "fact", source: "agent", valid_until: null, superseded_by: null },
      message: `fact ${fact.id} changed since history entry ${edit.id} by history entry ${latest.id}: undoing it would overwrite that; `
        + "send force true to undo it anyway",
    });
    expect((await json<Fact>(call(`${url}/facts/${fact.id}`))).text).toBe(newer.text);  // nothing changed
    expect((await json<Entry>(call(`${url}/history/${edit.id}`))).undone_by).toBeNull();
    for (const force of ["yes", 1, null]) {
      expect(await errorOf(await call(`${url}/history/${edit.id}/undo`, "POST", { force })), String(force))
        .toMatchObject({ status: 422, message: "force must be true or false" });
    }
    for (const body of ["{", "[true]", "nope"]) expect((await send(`${url}/history/${edit.id}/undo`, "POST", body)).status, body).toBe(400);
    const forced = await json<{ fact: Fact; restored: boolean }>(call(`${url}/history/${edit.id}/undo`, "POST", { force: true }));
    expect(forced).toMatchObject({ restored: true, fact: { text: fact.text, source: "" } });
    // The newest entry undoes as before, with an empty body or {"force": false}.
    const [undone] = await historyOf(url, `?fact_id=${fact.id}`);
    expect((await call(`${url}/history/${undone.id}/undo`, "POST", { force: false })).status).toBe(200);
  });

  it("of an add after an edit is a 409 too; a delete's never is (its fact is put back beside the new one)", async () => {
    const url = await base();
    const fact = await add(url, "Rosa's birthday is on the 3rd of June.");
    await call(`${url}/facts/${fact.id}`, "PATCH", { source: "owner" });
    const [edit, added] = await historyOf(url, `?fact_id=${fact.id}`);
    expect(await errorOf(await call(`${url}/history/${added.id}/undo`, "POST"))).toMatchObject({
      status: 409, code: "changed_since", entry: edit.id, current: { text: fact.text, type: "fact", source: "owner" },
    });
    expect((await call(`${url}/facts/${fact.id}`)).status).toBe(200);
    // An entry with nothing newer names none.
    const other = await add(url, "Ivo plays the cello.");
    const [otherAdd] = await historyOf(url, `?fact_id=${other.id}`);
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      memory.sql.exec("UPDATE facts SET source = 'changed behind the history' WHERE id = ?", other.id);
    });
    const unnamed = await errorOf(await call(`${url}/history/${otherAdd.id}/undo`, "POST"));
    expect(unnamed).toMatchObject({ code: "changed_since", entry: null });
    expect(unnamed.message).toBe(`fact ${other.id} changed since history entry ${otherAdd.id}: undoing it would overwrite that; `
      + "send force true to undo it anyway");
    await call(`${url}/facts/${fact.id}`, "DELETE");
    const again = await add(url, fact.text);
    const [del] = await historyOf(url, `?fact_id=${fact.id}&op=delete`);
    const body = await json<{ fact: Fact; restored: boolean }>(call(`${url}/history/${del.id}/undo`, "POST"));
    expect(body).toMatchObject({ restored: true, fact: { id: fact.id, source: "owner" } });
    expect((await call(`${url}/facts/${again.id}`)).status).toBe(200);
  });

  it("of settings with newer settings is a 409 naming the newest, and undoes once those are undone", async () => {
    const url = await base();
    const start = (await json<{ fusion: Record<string, unknown> }>(call(`${url}/settings`))).fusion;
    await call(`${url}/settings`, "PUT", { fusion: { expand: 0.7 } });
    await call(`${url}/settings`, "PUT", { fusion: { expand: 0.8 } });
    const [newest, older] = await historyOf(url, "?op=settings");
    const refused = await errorOf(await call(`${url}/history/${older.id}/undo`, "POST"));
    expect(refused).toMatchObject({ status: 409, code: "changed_since", entry: newest.id, current: { ...start, expand: 0.8 } });
    expect(refused.message).toBe(`the settings changed since history entry ${older.id} by history entry ${newest.id}: `
      + "undoing it would overwrite that; send force true to undo it anyway");
    expect((await call(`${url}/history/${newest.id}/undo`, "POST")).status).toBe(200);
    expect((await call(`${url}/history/${older.id}/undo`, "POST")).status).toBe(200);
    expect((await json<{ fusion: Record<string, unknown> }>(call(`${url}/settings`))).fusion).toEqual(start);
  });

  it("is seen when it lands while the undo embeds: the check runs again right before the write", async () => {
    const url = await base();
    const fact = await add(url, "Mara likes green tea.", { source: "chat" });
    await call(`${url}/facts/${fact.id}`, "PATCH", { text: "Mara likes black coffee." });
    const [edit] = await historyOf(url, `?fact_id=${fact.id}`);
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const embed = memory.embedder.embed.bind(memory.embedder);
      memory.embedder.embed = async (texts) => {
        await new Promise((r) => setTimeout(r, 300));
        return embed(texts);
      };
    });
    const undo = call(`${url}/history/${edit.id}/undo`, "POST");  // embeds the old text: waits
    await new Promise((r) => setTimeout(r, 50));
    const meanwhile = await call(`${url}/facts/${fact.id}`, "PATCH", { source: "owner" });  // no text: nothing to embed
    expect(meanwhile.status).toBe(200);
    const [latest] = await historyOf(url, `?fact_id=${fact.id}`);
    expect(await errorOf(await undo)).toMatchObject({ status: 409, code: "changed_since", entry: latest.id });
    expect(await json(call(`${url}/facts/${fact.id}`))).toMatchObject({ text: "Mara likes black coffee.", source: "owner" });
    expect((await json<Entry>(call(`${url}/history/${edit.id}`))).undone_by).toBeNull();
  });
});

describe("the trash", () => {
  it("keeps every delete of the last 30 days and the newest 1,000, pruning the rest every 100th entry", async () => {
    const url = await base();
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      memory.history.keep = 3;
      const at = (days: number) => new Date(Date.now() - days * 86_400_000).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
      // 1,050 deletes: the first of the last 30 days, the next 1,049 older; then adds up to entry 1,098.
      for (let id = 1; id <= 1098; id++) {
        const op = id <= 1050 ? "delete" : "add";
        memory.sql.exec("INSERT INTO history (id, at, client, op, fact_id, before, after, note) VALUES (?, ?, '', ?, ?, ?, NULL, '')",
          id, at(id === 1 ? 2 : 40), op, 100_000 + id, JSON.stringify({ id: 100_000 + id, text: `old fact ${id}` }));
      }
    });
    await add(url, "Entry one thousand and ninety-nine.");  // 1099: the adds past keep go, every delete stays
    const count = async () => runInDurableObject(stub(url), (memory: MemoryObject) =>
      memory.sql.exec<{ op: string; n: number }>("SELECT op, count(*) AS n FROM history GROUP BY op ORDER BY op").toArray()
        .map((r) => [r.op, r.n]));
    expect(await count()).toEqual([["add", 3], ["delete", 1050]]);
    await add(url, "Entry one thousand one hundred.");  // 1100: the deletes past both 30 days and the newest 1,000
    expect(await count()).toEqual([["add", 3], ["delete", 1001]]);
    const kept = await runInDurableObject(stub(url), (memory: MemoryObject) =>
      memory.sql.exec<{ id: number }>("SELECT id FROM history WHERE op = 'delete' ORDER BY id LIMIT 2").toArray().map((r) => r.id));
    expect(kept).toEqual([1, 51]);  // the recent one, then the newest 1,000
    expect((await json<{ history: Record<string, number> }>(call(`${url}/stats`))).history)
      .toMatchObject({ entries: 1004, deletes: 1001 });
  });

  it("finds the deletes by an index on (op, id)", async () => {
    const url = await base();
    const plan = await runInDurableObject(stub(url), (memory: MemoryObject) =>
      memory.sql.exec("EXPLAIN QUERY PLAN SELECT id FROM history WHERE op = 'delete' ORDER BY id DESC LIMIT 1 OFFSET 999").toArray()
        .map((r) => String(r.detail)).join("; "));
    expect(plan).toContain("history_op");
  });
});
