// Contract v3 inside workerd: the history of writes (recorded in each write's transaction, trimmed,
// undone), the recall log, the memory's own settings and X-Memory-Client.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import openapi from "../../docs/openapi.json";
import type { MemoryObject } from "../src/memory";
import { created } from "./memories";

const env = testEnv as unknown as Env;

type Fact = { id: number; text: string; type: string; source: string; created_at: string; updated_at: string };
type Entry = { id: number; client: string; op: string; fact_id: number | null; before: Record<string, unknown> | null;
  after: Record<string, unknown> | null; note: string; undone_by: number | null };
type Logged = { id: number; client: string; query: string; type: string | null; mode: string; limit: number;
  settings: Record<string, unknown>; results: { id: number; via: string; score: number }[]; model: string; ms: number };

let n = 0;
const base = () => created(`http://memory.test/memories/v3-${++n}-${Math.random().toString(36).slice(2)}`);
const call = (url: string, method = "GET", body?: unknown, client?: string) => SELF.fetch(url, {
  method,
  headers: { "x-memory-secret": "test-secret", "content-type": "application/json", ...(client === undefined ? {} : { "x-memory-client": client }) },
  body: body === undefined ? undefined : JSON.stringify(body),
});
const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
const stub = (url: string) => env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2]));
const add = async (url: string, text: string, client?: string) => (await json<{ fact: Fact }>(call(`${url}/facts`, "POST", { text }, client))).fact;
const historyOf = async (url: string, query = "") => (await json<{ entries: Entry[]; next_cursor: string | null }>(call(`${url}/history${query}`))).entries;
const errorOf = async (r: Response) => ({ status: r.status, ...((await r.json()) as { error: { code: string; message: string } }).error });

describe("the history", () => {
  it("records every write with its client, before and after", async () => {
    const url = await base();
    const fact = await add(url, "Priya is the owner's sister.", "claude-code 1.2");
    const edited = await json<Fact>(call(`${url}/facts/${fact.id}`, "PATCH", { text: "Priya is the owner's older sister." }, "dashboard"));
    expect((await call(`${url}/facts/${fact.id}`, "DELETE", undefined, "claude-code 1.2")).status).toBe(200);
    const entries = await historyOf(url, `?fact_id=${fact.id}`);
    expect(entries.map((e) => [e.op, e.client])).toEqual([["delete", "claude-code 1.2"], ["edit", "dashboard"], ["add", "claude-code 1.2"]]);
    const [del, edit, added] = entries;
    expect(added).toMatchObject({ before: null, after: fact, fact_id: fact.id, note: "", undone_by: null });
    expect(edit).toMatchObject({ before: fact, after: edited });
    expect(del).toMatchObject({ before: edited, after: null });
    expect(await json(call(`${url}/history/${added.id}`))).toEqual(added);
    // A request without the header is recorded with client "".
    await add(url, "Leo swims.");
    expect((await historyOf(url))[0].client).toBe("");
  });

  it("records one add a stored fact of a batch, none for a duplicate", async () => {
    const url = await base();
    const body = await json<{ results: { id: number; created: boolean }[] }>(call(`${url}/facts/batch`, "POST", {
      facts: [{ text: "Batch fact about tea." }, { text: "batch fact about TEA." }, { text: "Another fact entirely." }],
    }));
    expect(body.results.map((r) => r.created)).toEqual([true, false, true]);
    expect((await historyOf(url)).map((e) => [e.op, e.fact_id])).toEqual([["add", body.results[2].id], ["add", body.results[0].id]]);
  });

  it("is written in the write's transaction: a write that fails leaves no entry", async () => {
    const url = await base();
    const first = await add(url, "The first fact.");
    const r = await call(`${url}/facts/batch`, "POST", { facts: [{ text: "A brand new fact." }, { text: "Another one.", id: first.id }] });
    expect(r.status).toBe(409);
    expect((await historyOf(url)).map((e) => e.fact_id)).toEqual([first.id]);
    // A failure after the entry is written rolls the entry back with the row.
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const record = memory.history.record.bind(memory.history);
      memory.history.record = (...args: Parameters<typeof record>) => {
        const id = record(...args);
        memory.history.record = record;
        throw new Error(`disk full after entry ${id}`);
      };
    });
    expect((await call(`${url}/facts/${first.id}`, "PATCH", { text: "The first fact, edited." })).status).toBe(500);
    expect(await json<Fact>(call(`${url}/facts/${first.id}`))).toEqual(first);
    expect((await historyOf(url)).map((e) => e.op)).toEqual(["add"]);
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expect(memory.sql.exec<{ n: number }>("SELECT count(*) AS n FROM history").one().n).toBe(1);
    });
  });

  it("keeps the newest `keep` entries, dropped by id in the write that adds one", async () => {
    const url = await base();
    await add(url, "Fact one.");
    await runInDurableObject(stub(url), (memory: MemoryObject) => { memory.history.keep = 3; });
    const facts = [];
    for (const text of ["Fact two.", "Fact three.", "Fact four.", "Fact five."]) facts.push(await add(url, text));
    expect((await historyOf(url)).map((e) => e.fact_id)).toEqual(facts.slice(1).map((f) => f.id).reverse());
  });

  it("never pushes a delete out of the trash for other writes, and says what it keeps in /stats", async () => {
    const url = await base();
    const doomed = [await add(url, "Doomed fact about the attic."), await add(url, "Doomed fact about the cellar.")];
    for (const f of doomed) await call(`${url}/facts/${f.id}`, "DELETE");
    await runInDurableObject(stub(url), (memory: MemoryObject) => { memory.history.keep = 3; });
    for (const text of ["Jar one is on the shelf.", "Box two holds screws.", "The lamp is blue.", "The rug is red."]) await add(url, text);
    const entries = await historyOf(url);
    expect(entries.filter((e) => e.op === "delete").map((e) => e.fact_id).sort()).toEqual(doomed.map((f) => f.id).sort());
    expect(entries.filter((e) => e.op !== "delete")).toHaveLength(3);
    const stats = await json<{ history: Record<string, number> }>(call(`${url}/stats`));
    expect(stats.history).toEqual({ entries: 5, keep: 3, deletes: 2, deletes_days: 30, deletes_kept: 1000 });
  });

  it("pages newest first by id, and filters by op, client and fact", async () => {
    const url = await base();
    const facts = [];
    for (let i = 0; i < 5; i++) facts.push(await add(url, `Paging fact number ${["one", "two", "three", "four", "five"][i]}.`, i % 2 ? "odd" : "even"));
    await call(`${url}/facts/${facts[0].id}`, "DELETE");
    const first = await json<{ entries: Entry[]; next_cursor: string }>(call(`${url}/history?limit=4`));
    const second = await json<{ entries: Entry[]; next_cursor: string | null }>(call(`${url}/history?limit=4&cursor=${first.next_cursor}`));
    const ids = [...first.entries, ...second.entries].map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect([ids.length, second.next_cursor]).toEqual([6, null]);
    expect((await historyOf(url, "?op=delete")).map((e) => e.fact_id)).toEqual([facts[0].id]);
    expect((await historyOf(url, "?client=odd")).map((e) => e.fact_id)).toEqual([facts[3].id, facts[1].id]);
    expect((await historyOf(url, "?client=")).map((e) => e.op)).toEqual(["delete"]);
    expect(await historyOf(url, "?fact_id=")).toEqual([]);  // as service.py: no id is fact 0
    for (const bad of ["?op=nope", "?cursor=abc", "?cursor=0", "?cursor=-1", `?cursor=${"9".repeat(17)}`, "?fact_id=x", "?limit=0",
      "?client=caf%C3%A9"]) {
      expect((await call(`${url}/history${bad}`)).status, bad).toBe(422);
    }
    expect(await errorOf(await call(`${url}/history?op=nope`))).toMatchObject({ message: "op must be one of add, edit, delete, restore, settings, resolve, review" });
  });

  it("forgets every entry of a fact, and must be told which", async () => {
    const url = await base();
    const fact = await add(url, "The wifi password is hunter2.");
    await call(`${url}/facts/${fact.id}`, "DELETE");
    expect(await json(call(`${url}/history?fact_id=${fact.id}`, "DELETE"))).toEqual({ deleted: 2 });
    expect(await historyOf(url, `?fact_id=${fact.id}`)).toEqual([]);
    expect(await errorOf(await call(`${url}/history`, "DELETE")))
      .toMatchObject({ status: 422, message: "fact_id is required: the fact whose entries to forget" });
  });

  it("finds a client by its name alone or with its version, and an empty name only as empty", async () => {
    const url = await base();
    for (const client of ["walk-agent 0.1", "walk-agent-two", "walk-agent", "walk", ""]) {
      await add(url, `The owner walks with ${client || "nobody"} at dawn.`, client);
      await call(`${url}/recall`, "POST", { query: "walks at dawn" }, client);
    }
    for (const [route, key] of [["/history", "entries"], ["/recalls", "recalls"]]) {
      const clients = async (name: string) => (await json<Record<string, { client: string }[]>>(
        call(`${url}${route}?client=${encodeURIComponent(name)}`)))[key].map((e) => e.client);
      expect(await clients("walk-agent"), route).toEqual(["walk-agent", "walk-agent 0.1"]);
      expect(await clients("walk-agent 0.1"), route).toEqual(["walk-agent 0.1"]);
      expect(await clients("walk"), route).toEqual(["walk"]);
      expect(await clients(""), route).toEqual([""]);
      expect(await clients("walk-agent 0"), route).toEqual([]);  // a name is matched whole, then a space
    }
    expect((await json<{ total: number }>(call(`${url}/recalls?client=walk-agent`))).total).toBe(2);
  });

  it("answers 404 for an entry that is not there, or past 2^53", async () => {
    const url = await base();
    for (const path of ["/history/7", "/history/9007199254740992", "/recalls/7", "/recalls/99999999999999999999"]) {
      expect((await call(`${url}${path}`)).status, path).toBe(404);
    }
    expect((await call(`${url}/history/7/undo`, "POST")).status).toBe(404);
    expect((await call(`${url}/recalls/7/undo`, "POST")).status).toBe(404);
    expect((await call(`${url}/history/7`, "DELETE")).status).toBe(405);
  });
});

describe("undo", () => {
  it("brings a deleted fact back whole, under its id and times, with its FTS entry and vector, once", async () => {
    const url = await base();
    const fact = await add(url, "The owner's dentist is Dr Okafor in Porto.");
    await add(url, "Something else entirely.");
    await call(`${url}/facts/${fact.id}`, "DELETE");
    const [del] = await historyOf(url, `?fact_id=${fact.id}`);
    const body = await json<{ entry: Entry; fact: Fact; restored: boolean }>(call(`${url}/history/${del.id}/undo`, "POST", undefined, "dashboard"));
    expect(body).toMatchObject({ restored: true, fact, entry: { op: "restore", client: "dashboard", fact_id: fact.id, note: `undo of #${del.id}` } });
    expect((await json<Entry>(call(`${url}/history/${del.id}`))).undone_by).toBe(body.entry.id);
    expect(await json(call(`${url}/facts/${fact.id}`))).toEqual(fact);
    for (const mode of ["keyword", "vector"]) {
      const hits = await json<{ results: { fact: Fact }[] }>(call(`${url}/recall`, "POST", { query: "dentist Okafor Porto", mode, log: false }));
      expect(hits.results.map((h) => h.fact.id), mode).toContain(fact.id);
    }
    expect(await json(call(`${url}/stats`))).toMatchObject({ consistent: true });
    const again = await errorOf(await call(`${url}/history/${del.id}/undo`, "POST"));
    expect(again).toMatchObject({ status: 409, code: "already_undone" });
  });

  it("puts back the fact that was there under its own id, even when it was stored again meanwhile", async () => {
    const url = await base();
    const fact = await add(url, "Ada knits on Sundays.");
    await call(`${url}/facts/${fact.id}`, "DELETE");
    const again = await add(url, "Ada knits on Sundays.");
    const [del] = await historyOf(url, `?fact_id=${fact.id}`);
    const body = await json<{ entry: Entry; fact: Fact; restored: boolean }>(call(`${url}/history/${del.id}/undo`, "POST"));
    expect(body).toMatchObject({ restored: true, fact, entry: { op: "restore" } });  // what was there, no dedup
    expect(await json(call(`${url}/facts/${fact.id}`))).toEqual(fact);
    expect(await json(call(`${url}/facts/${again.id}`))).toEqual(again);
  });

  it("puts an edit's text, type and source back", async () => {
    const url = await base();
    const fact = (await json<{ fact: Fact }>(call(`${url}/facts`, "POST", { text: "Leo swims on Wednesdays.", source: "chat" }))).fact;
    await call(`${url}/facts/${fact.id}`, "PATCH", { text: "Leo plays chess on Fridays.", type: "log", source: "mcp" });
    const [edit] = await historyOf(url);
    const body = await json<{ entry: Entry; fact: Fact; restored: boolean }>(call(`${url}/history/${edit.id}/undo`, "POST"));
    expect(body.fact).toMatchObject({ id: fact.id, text: fact.text, type: "fact", source: "chat", created_at: fact.created_at });
    expect(body.entry).toMatchObject({ op: "edit", before: { text: "Leo plays chess on Fridays." }, after: body.fact });
    expect(await json(call(`${url}/facts/${fact.id}`))).toEqual(body.fact);
    // An edit back that would duplicate another fact is a 409, and leaves the entry as it was.
    await call(`${url}/facts/${fact.id}`, "PATCH", { text: "Leo runs." });
    await add(url, "Leo swims on Wednesdays.");
    const [second] = await historyOf(url, `?fact_id=${fact.id}&op=edit`);
    expect(await errorOf(await call(`${url}/history/${second.id}/undo`, "POST"))).toMatchObject({ status: 409, code: "duplicate" });
    expect((await json<Entry>(call(`${url}/history/${second.id}`))).undone_by).toBeNull();
  });

  it("deletes what an add or a restore stored, and a fact gone meanwhile is a 404", async () => {
    const url = await base();
    const fact = await add(url, "Pixel is the owner's cat.");
    const [added] = await historyOf(url);
    const body = await json<{ entry: Entry; fact: Fact; restored: boolean }>(call(`${url}/history/${added.id}/undo`, "POST"));
    expect(body).toMatchObject({ restored: true, fact, entry: { op: "delete", before: fact, fact_id: fact.id } });
    expect((await call(`${url}/facts/${fact.id}`)).status).toBe(404);
    const restore = (await json<{ entry: Entry }>(call(`${url}/history/${body.entry.id}/undo`, "POST"))).entry;
    expect(restore.op).toBe("restore");
    expect((await json<{ entry: Entry }>(call(`${url}/history/${restore.id}/undo`, "POST"))).entry.op).toBe("delete");
    const other = await add(url, "Rex is the neighbour's dog.");
    await call(`${url}/facts/${other.id}`, "DELETE");
    const [, addOther] = await historyOf(url, `?fact_id=${other.id}`);
    expect((await call(`${url}/history/${addOther.id}/undo`, "POST")).status).toBe(404);
    expect((await json<Entry>(call(`${url}/history/${addOther.id}`))).undone_by).toBeNull();
  });

  it("undoes an entry once when two undos race", async () => {
    const url = await base();
    const fact = await add(url, "Mara likes green tea.");
    await call(`${url}/facts/${fact.id}`, "PATCH", { text: "Mara likes black coffee." });
    const [edit] = await historyOf(url);
    const answers = await Promise.all([1, 2, 3].map(() => call(`${url}/history/${edit.id}/undo`, "POST")));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 409, 409]);
    expect((await historyOf(url, "?op=edit")).length).toBe(2);
    expect((await json<Fact>(call(`${url}/facts/${fact.id}`))).text).toBe("Mara likes green tea.");
  });

  it("fails the write with the entry when it was undone already (the mark is in the write's transaction)", async () => {
    const url = await base();
    const fact = await add(url, "Ole sails in June.");
    const [added] = await historyOf(url);
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      // As if another undo had landed between the check and the write.
      memory.sql.exec("UPDATE history SET undone_by = 99 WHERE id = ?", added.id);
      const entry = memory.history.entry.bind(memory.history);
      memory.history.entry = (id: number) => ({ ...entry(id), undone_by: null });
    });
    expect(await errorOf(await call(`${url}/history/${added.id}/undo`, "POST")))
      .toMatchObject({ status: 409, code: "already_undone", message: `history entry ${added.id} was undone already` });
    expect(await json(call(`${url}/facts/${fact.id}`))).toEqual(fact);  // the delete was rolled back
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expect(memory.sql.exec<{ n: number }>("SELECT count(*) AS n FROM history").one().n).toBe(1);
    });
  });
});

describe("the memory's own settings", () => {
  it("start from the shipped default, are used by recall and explain without a fusion, and undo", async () => {
    const url = await base();
    const fact = await add(url, "Priya is the owner's sister.");
    const start = await json<{ fusion: Record<string, unknown>; shipped: Record<string, unknown>; changed: string[] }>(call(`${url}/settings`));
    expect(start.fusion).toEqual(start.shipped);
    expect(start.changed).toEqual([]);
    expect(Object.keys(start.fusion)).toEqual(["k", "depth", "kw_weight", "vec_weight", "phrases", "method", "alias_self", "expand", "rerank"]);
    const put = await call(`${url}/settings`, "PUT", { fusion: { rerank: 0, expand: 0.7 } }, "dashboard");
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ fusion: { rerank: 0, expand: 0.7, k: 60 }, shipped: start.shipped, changed: ["expand", "rerank"] });
    const used = await json<{ fusion: Record<string, unknown> }>(call(`${url}/recall`, "POST", { query: "sister", debug: true, log: false }));
    expect(used.fusion).toMatchObject({ rerank: 0, expand: 0.7 });
    expect((await json<{ fusion: Record<string, unknown> }>(call(`${url}/explain`, "POST", { query: "sister", id: fact.id }))).fusion)
      .toMatchObject({ rerank: 0, expand: 0.7 });
    // A fusion sent still wins, over the memory's own settings.
    expect((await json<{ fusion: Record<string, unknown> }>(call(`${url}/recall`, "POST", { query: "x", debug: true, fusion: { k: 5 } }))).fusion)
      .toMatchObject({ k: 5, rerank: 0 });
    // A preset applies over the shipped default, not over the memory's own settings.
    expect(await json(call(`${url}/settings`, "PUT", { fusion: { preset: "seed", k: 20 } }))).toMatchObject({ fusion: { method: "rrf", k: 20, rerank: 0, expand: 0 } });
    const [seed, mine] = await historyOf(url, "?op=settings");
    expect(mine).toMatchObject({ client: "dashboard", fact_id: null, before: start.fusion, after: { rerank: 0, expand: 0.7 } });
    expect((await call(`${url}/history/${seed.id}/undo`, "POST")).status).toBe(200);
    expect((await call(`${url}/history/${mine.id}/undo`, "POST")).status).toBe(200);
    expect(await json(call(`${url}/settings`))).toEqual(start);
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expect(JSON.parse(memory.sql.exec("SELECT value FROM meta WHERE key = 'settings'").one().value as string)).toEqual(start.fusion);
    });
  });

  it("already in use change nothing and record nothing", async () => {
    const url = await base();
    const stored = (memory: MemoryObject) => memory.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'settings'").toArray();
    // The shipped settings, as a new memory uses them: nothing stored, nothing recorded.
    expect((await call(`${url}/settings`, "PUT", { fusion: { preset: "default" } })).status).toBe(200);
    expect((await call(`${url}/settings`, "PUT", { fusion: {} })).status).toBe(200);
    expect(await historyOf(url, "?op=settings")).toEqual([]);
    expect(await runInDurableObject(stub(url), stored)).toEqual([]);
    await call(`${url}/settings`, "PUT", { fusion: { rerank: 3 }, threshold: 0.9 });
    const once = await historyOf(url, "?op=settings");
    expect(once).toHaveLength(1);
    const answer = await json(call(`${url}/settings`, "PUT", { fusion: { rerank: 3 }, threshold: 0.9 }, "dashboard"));
    expect(answer).toEqual(await json(call(`${url}/settings`)));
    expect(await json(call(`${url}/settings`, "PUT", { threshold: 0.9 }))).toMatchObject({ fusion: { rerank: 3 } });
    expect(await historyOf(url, "?op=settings")).toEqual(once);
    // One value that differs is a change, recorded with the settings before it.
    await call(`${url}/settings`, "PUT", { fusion: { rerank: 3 }, threshold: null });
    const [dropped] = await historyOf(url, "?op=settings");
    expect(dropped).toMatchObject({ before: { rerank: 3, threshold: 0.9 }, after: { rerank: 3 } });
    expect(dropped.after).not.toHaveProperty("threshold");
  });

  it("refuse a bad body with a 422 naming the field", async () => {
    const url = await base();
    const cases: [unknown, string][] = [
      [{ fusion: { rerank: 99 } }, "fusion.rerank must be between 0 and 20"], [{ fusion: { nope: 1 } }, "unknown fusion settings: nope"],
      [{ fusion: { expand: "x" } }, "fusion.expand must be a number"], [{ fusion: {}, other: 1, extra: true }, "unknown settings: extra, other"],
      [{}, "fusion, threshold, review or proposals is required: the recall settings, as recall's fusion takes them, "
        + "the memory's own duplicate threshold, its review setting, and/or its proposals setting"],
      [{ fusion: { depth: -1 } }, "fusion.depth must be between 1 and 1000"],
      [{ threshold: 0.7 }, "threshold must be between 0.8 and 1"], [{ threshold: "" }, "threshold must be a number"],
      [{ fusion: "seed" }, "fusion must be an object"],
    ];
    for (const [body, message] of cases) {
      expect(await errorOf(await call(`${url}/settings`, "PUT", body))).toEqual({ status: 422, code: "invalid", message });
    }
    expect(await historyOf(url)).toEqual([]);
  });

  it("read NaN, Infinity and -Infinity as Python's json does: a 422 naming the field, not a 400", async () => {
    const url = await base();
    const put = (text: string) => SELF.fetch(`${url}/settings`, { method: "PUT", headers: { "x-memory-secret": "test-secret" }, body: text });
    for (const [text, message] of [['{"fusion": {"kw_weight": Infinity}}', "fusion.kw_weight must be a number"],
      ['{"fusion": {"k":NaN}}', "fusion.k must be a whole number"], ['{"fusion": {"expand": [-Infinity]}}', "fusion.expand must be a number"],
      ['{"fusion": {"Infinity": 1}, "x": "NaN"}', "unknown settings: x"]]) {
      expect(await errorOf(await put(text)), text).toEqual({ status: 422, code: "invalid", message });
    }
    for (const text of ['{"fusion": {"k": -NaN}}', '{"fusion": {"k": Infinity1}}', '{"fusion": {"k": 1Infinity}}', '{"fusion": Infinityx}']) {
      expect((await errorOf(await put(text))).status, text).toBe(400);
    }
    const stored = await json<{ fact: Fact }>(call(`${url}/facts`, "POST", { text: 'Say "NaN", Infinity: -Infinity \\ NaN.' }));
    expect(stored.fact.text).toBe('Say "NaN", Infinity: -Infinity \\ NaN.');
  });
});

describe("the recall log", () => {
  it("keeps what each client asked and got, with the settings, model and time", async () => {
    const url = await base();
    const fact = await add(url, "Priya is the owner's sister, a nurse.");
    const answer = await json<{ mode: string; results: { fact: Fact; via: string; score: number }[] }>(
      call(`${url}/recall`, "POST", { query: "Who is Priya", limit: 5 }, "agent-x"));
    await call(`${url}/recall`, "POST", { query: "Who is Priya", log: false }, "dashboard");
    const found = await json<{ recalls: Logged[]; total: number; next_cursor: null }>(call(`${url}/recalls`));
    expect(found.total).toBe(1);
    const [logged] = found.recalls;
    expect(logged).toMatchObject({ client: "agent-x", query: "Who is Priya", type: null, limit: 5, mode: answer.mode, model: "fake-bow-16" });
    expect(logged.results).toEqual(answer.results.map((h) => ({ id: h.fact.id, via: h.via, score: h.score, text: h.fact.text })));
    expect(logged.settings).toEqual((await json<{ fusion: unknown }>(call(`${url}/settings`))).fusion);
    expect(logged.ms).toBeGreaterThanOrEqual(0);
    expect(await json(call(`${url}/recalls/${logged.id}`))).toEqual(logged);
    const total = async (query: string) => (await json<{ total: number }>(call(`${url}/recalls${query}`))).total;
    expect(await total(`?fact_id=${fact.id}`)).toBe(1);
    expect(await total(`?fact_id=${fact.id + 1}`)).toBe(0);
    expect(await total("?client=agent-x&q=priya")).toBe(1);
    expect(await total("?client=nobody")).toBe(0);
    expect(await total("?empty=true")).toBe(0);
    await call(`${url}/recall`, "POST", { query: "zzzqqq", mode: "keyword", type: "log", fusion: { preset: "seed" } });
    const [empty] = (await json<{ recalls: Logged[] }>(call(`${url}/recalls?empty=1`))).recalls;
    expect(empty).toMatchObject({ query: "zzzqqq", type: "log", mode: "keyword", results: [], settings: { method: "rrf" } });
    for (const bad of ["?empty=yes", "?cursor=abc", "?fact_id=0", `?q=${"x".repeat(1001)}`, "?client=a%09b"]) {
      expect((await call(`${url}/recalls${bad}`)).status, bad).toBe(422);
    }
    expect(await json(call(`${url}/recalls`, "DELETE"))).toEqual({ deleted: 2 });
    expect(await total("")).toBe(0);
  });

  it("logs the mode answered: keyword-only when the model was down", async () => {
    const url = await base();
    await add(url, "Mara likes tea.");
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      memory.embedder.embed = () => Promise.reject(new Error("down"));
    });
    await call(`${url}/recall`, "POST", { query: "tea" });
    const [logged] = (await json<{ recalls: Logged[] }>(call(`${url}/recalls`))).recalls;
    expect(logged.mode).toBe("keyword-only");
  });

  it("keeps the newest `keep` recalls, and none with keep 0", async () => {
    const url = await base();
    await runInDurableObject(stub(url), (memory: MemoryObject) => { memory.recallLog.keep = 3; });
    for (let i = 0; i < 5; i++) await call(`${url}/recall`, "POST", { query: `paging ${i}`, mode: "keyword" });
    const first = await json<{ recalls: Logged[]; next_cursor: string; total: number }>(call(`${url}/recalls?limit=2`));
    const second = await json<{ recalls: Logged[]; next_cursor: string | null }>(call(`${url}/recalls?limit=2&cursor=${first.next_cursor}`));
    expect([...first.recalls, ...second.recalls].map((r) => r.query)).toEqual(["paging 4", "paging 3", "paging 2"]);
    expect([first.total, second.next_cursor]).toEqual([3, null]);
    await runInDurableObject(stub(url), (memory: MemoryObject) => { memory.recallLog.keep = 0; });
    expect((await call(`${url}/recall`, "POST", { query: "not logged", mode: "keyword" })).status).toBe(200);
    expect((await json<{ total: number }>(call(`${url}/recalls`))).total).toBe(3);
  });

  it("never fails the recall when the log cannot be written", async () => {
    const url = await base();
    await add(url, "Mara likes tea.");
    await runInDurableObject(stub(url), (memory: MemoryObject) => { memory.sql.exec("DROP TABLE recalls"); });
    const r = await call(`${url}/recall`, "POST", { query: "tea" });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { results: unknown[] }).results).toHaveLength(1);
  });

  it("takes log as a boolean only", async () => {
    const url = await base();
    for (const log of ["yes", 1, "false"]) {
      expect(await errorOf(await call(`${url}/recall`, "POST", { query: "x", log }))).toMatchObject({ status: 422, message: "log must be true or false" });
    }
  });
});

describe("who asks", () => {
  it("is 1 to 64 printable ASCII characters, else a 422 on the routes that record, and nothing is stored", async () => {
    const url = await base();
    const fact = await add(url, "Kept fact.");
    const message = "X-Memory-Client must be 1 to 64 printable ASCII characters";
    for (const client of ["x".repeat(65), "tab\there", "bell\x07", "naïve"]) {
      for (const [method, path, body] of [["POST", "/facts", { text: "Never stored." }], ["POST", "/facts/batch", { facts: [{ text: "Never." }] }],
        ["PATCH", `/facts/${fact.id}`, { text: "Never edited." }], ["DELETE", `/facts/${fact.id}`, undefined],
        ["POST", "/recall", { query: "kept" }], ["PUT", "/settings", { fusion: {} }], ["POST", "/history/1/undo", undefined]] as const) {
        let r: Response;
        try {
          r = await call(`${url}${path}`, method, body, client);
        } catch {
          continue;  // a header fetch() itself refuses (a control character) never reaches the Worker
        }
        expect(await errorOf(r), `${method} ${path} ${JSON.stringify(client)}`).toEqual({ status: 422, code: "invalid", message });
      }
    }
    expect(await json(call(`${url}/facts/${fact.id}`))).toEqual(fact);
    expect((await historyOf(url)).length).toBe(1);
    expect((await json<{ total: number }>(call(`${url}/recalls`))).total).toBe(0);
    expect((await add(url, "Stored by a named client.", "x".repeat(64))).id).toBeGreaterThan(fact.id);
  });
});

describe("GET /facts?ids=", () => {
  it("lists only those facts, up to 100 ids, beside the other filters", async () => {
    const url = await base();
    const facts = [];
    for (const text of ["Alpha fact.", "Beta fact.", "Gamma fact."]) facts.push(await add(url, text));
    const list = async (query: string) => (await json<{ facts: Fact[]; total: number }>(call(`${url}/facts${query}`)));
    expect((await list(`?ids=${facts[0].id},${facts[2].id}`)).facts.map((f) => f.id)).toEqual([facts[2].id, facts[0].id]);
    const many = Array.from({ length: 100 }, (_, i) => i + 1).join(",");
    expect(await list(`?ids=${many}&type=fact&source=&q=fact&limit=1`)).toMatchObject({ total: 3 });
    expect((await list("?ids=")).total).toBe(0);
    for (const bad of [`?ids=${many},101`, "?ids=a", "?ids=0", "?ids=9007199254740992"]) expect((await call(`${url}/facts${bad}`)).status, bad).toBe(422);
  });
});

describe("the routes", () => {
  it("serves every route openapi.json lists", async () => {
    const url = await base();
    const paths = (openapi as { paths: Record<string, Record<string, unknown>> }).paths;
    for (const [path, item] of Object.entries(paths)) {
      for (const method of Object.keys(item).filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))) {
        const r = await call(`${url}${path.replace("{id}", "1")}`, method.toUpperCase(), method === "get" || method === "delete" ? undefined : {});
        const json = (r.headers.get("content-type") ?? "").startsWith("application/json");  // (/metrics is Prometheus' text)
        const body = (json ? await r.json() : { text: await r.text() }) as { error?: { message: string } };
        expect(r.status, `${method} ${path}`).not.toBe(405);
        expect(body.error?.message ?? "", `${method} ${path}`).not.toMatch(/^no route/);
      }
    }
  });
});

describe("forget for good", () => {
  // The table, what the object holds and the stored blocks a start reads (code_blocks.ts) agree.
  const wordsOf = (memory: MemoryObject) => {
    const table = memory.sql.exec<{ word: string }>("SELECT word FROM words ORDER BY id").toArray().map((r) => r.word);
    const stamp = JSON.parse(memory.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'codes'").toArray()[0]?.value ?? "null");
    const blocks = memory.sql.exec<{ ids: ArrayBuffer }>("SELECT ids FROM code_blocks WHERE kind = 'words' ORDER BY block").toArray()
      .reduce((n, r) => n + r.ids.byteLength / 8, 0);
    return { table, held: memory.vocab.held(), stamped: stamp?.words, blocks };
  };

  it("removes the words only the forgotten fact held, from the table, the object and the stored blocks", async () => {
    const url = await base();
    // The owner's own facts: a delete keeps a reviewed fact's words (for its undo); forget for good drops them.
    const secret = await add(url, "The bank PIN is quokkastaple42, said Wilhelmina.", "dashboard");
    await add(url, "Wilhelmina banks on Rua Nova.");
    await call(`${url}/facts/${secret.id}`, "PATCH", { text: "The bank PIN is quokkastaple42 or zebrafinch7." }, "dashboard");
    await call(`${url}/facts/${secret.id}`, "DELETE");
    const before = await runInDurableObject(stub(url), wordsOf);
    expect(before.table).toEqual(expect.arrayContaining(["quokkastaple42", "zebrafinch7", "wilhelmina"]));
    expect(await json(call(`${url}/history?fact_id=${secret.id}`, "DELETE"))).toEqual({ deleted: 3 });
    const after = await runInDurableObject(stub(url), wordsOf);
    expect(after.table).not.toContain("quokkastaple42");
    expect(after.table).not.toContain("zebrafinch7");  // the words of every text it had, not only its last
    expect(after.table).toContain("wilhelmina");  // another fact holds it
    expect(after.table).toContain("rua");
    expect(after.held).toEqual(after.table);
    expect([after.stamped, after.blocks]).toEqual([after.table.length, after.table.length]);
    expect(await json(call(`${url}/stats`))).toMatchObject({ consistent: true });
  });

  it("takes a replaced fact out of the add entries of the facts that replaced it", async () => {
    const url = await base();
    const post = async (text: string, supersedes: number[]) => (await json<{ fact: Fact }>(call(`${url}/facts`, "POST", { text, supersedes }))).fact;
    const old = await add(url, "The owner's old door code is 8841-quokka.");
    const other = await add(url, "The owner's old gate code is 1234.");
    const next = await post("The owner's door and gate codes changed.", [old.id, other.id]);
    await call(`${url}/facts/${old.id}`, "DELETE");
    expect(await json(call(`${url}/history?fact_id=${old.id}`, "DELETE"))).toEqual({ deleted: 2 });  // its add and delete
    const entries = await historyOf(url, "?limit=100");
    expect(JSON.stringify(entries)).not.toContain("8841-quokka");
    const [added] = await historyOf(url, `?fact_id=${next.id}`);
    expect(added.before).toEqual({ replaced: [other] });  // the other fact as it was, kept
    // The other fact it replaced too: nothing left in `replaced`, and `before` is null.
    await call(`${url}/facts/${other.id}`, "DELETE");
    expect(await json(call(`${url}/history?fact_id=${other.id}`, "DELETE"))).toEqual({ deleted: 2 });
    expect((await historyOf(url, `?fact_id=${next.id}`))[0]).toMatchObject({ op: "add", before: null, after: next });
  });

  it("counts the words of a fact's copies in other entries, and takes out its proposals", async () => {
    const url = await base();
    const old = await add(url, "The vault phrase is zebrafinch7.", "dashboard");  // reviewed: its delete keeps its words
    const next = (await json<{ fact: Fact }>(call(`${url}/facts`, "POST", { text: "The vault phrase changed.", supersedes: [old.id] }))).fact;
    await call(`${url}/facts/${old.id}`, "DELETE");
    // As a memory is once `keep` and the trash have let the fact's own entries go: only its copy is left.
    await runInDurableObject(stub(url), (memory: MemoryObject) => { memory.sql.exec("DELETE FROM history WHERE fact_id = ?", old.id); });
    expect((await runInDurableObject(stub(url), wordsOf)).table).toContain("zebrafinch7");
    expect(await json(call(`${url}/history?fact_id=${old.id}`, "DELETE"))).toEqual({ deleted: 0 });
    const after = await runInDurableObject(stub(url), wordsOf);
    expect(after.table).not.toContain("zebrafinch7");
    expect(after.held).toEqual(after.table);
    expect((await historyOf(url, `?fact_id=${next.id}`))[0].before).toBeNull();
    // A fact still in the memory, forgotten: its proposals (old or new) go with its entries.
    const standup = await add(url, "The standup is at 9:30.");
    const proposed = await json<{ fact: Fact; conflicts: { id: number }[] }>(call(`${url}/facts`, "POST", { text: "The standup is at 9:45." }));
    expect(proposed.conflicts.map((c) => c.id)).toContain(standup.id);
    const pairs = (memory: MemoryObject) => memory.sql.exec<{ n: number }>("SELECT count(*) AS n FROM conflicts WHERE old = ? OR new = ?",
      proposed.fact.id, proposed.fact.id).one().n;
    expect(await runInDurableObject(stub(url), pairs)).toBe(proposed.conflicts.length);
    expect(await json(call(`${url}/history?fact_id=${proposed.fact.id}`, "DELETE"))).toEqual({ deleted: 1 });
    expect(await runInDurableObject(stub(url), pairs)).toBe(0);
    const open = await json<{ conflicts: { new: Fact }[] }>(call(`${url}/conflicts`));
    expect(open.conflicts.map((c) => c.new.id)).not.toContain(proposed.fact.id);
  });

  it("logs no text of a fact forgotten while the recall that returned it was in flight", async () => {
    const url = await base();
    const kept = await add(url, "The vault is in the cellar.");
    const gone = await add(url, "The vault code is quokka7731.");
    await call(`${url}/facts/${gone.id}`, "DELETE");
    await call(`${url}/history?fact_id=${gone.id}`, "DELETE");
    // As the recall answered before the forget: its answer still names the fact, logged after.
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const results = [kept, gone].map((fact) => ({ fact, via: "both", score: 1 }));
      memory.recallLog.add("agent", "vault code", null, 5, {} as never, { results, mode: "hybrid" } as never, 1);
      memory.recallLog.flush();
    });
    const [logged] = (await json<{ recalls: { results: Record<string, unknown>[] }[] }>(call(`${url}/recalls?limit=1`))).recalls;
    expect(logged.results).toEqual([{ id: kept.id, via: "both", score: 1, text: kept.text }, { id: gone.id, via: "both", score: 1, forgotten: true }]);
  });

  it("keeps the words of a fact still in the memory (only its past texts are forgotten)", async () => {
    const url = await base();
    const fact = await add(url, "Ottoline keeps bees in Lisbon.");
    await call(`${url}/facts/${fact.id}`, "PATCH", { text: "Ottoline keeps goats in Lisbon." });
    expect(await json(call(`${url}/history?fact_id=${fact.id}`, "DELETE"))).toEqual({ deleted: 2 });
    const after = await runInDurableObject(stub(url), wordsOf);
    expect(after.table).toEqual(expect.arrayContaining(["ottoline", "goats", "lisbon"]));
    expect(after.table).not.toContain("bees");
    expect(after.held).toEqual(after.table);
  });
});
