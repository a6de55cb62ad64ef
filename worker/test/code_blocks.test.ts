// The codes in memory stored as blocks of SQLite rows (code_blocks.ts): a start reads those few
// rows instead of every vector and word, every write keeps them in step with the tables, and
// blocks that are missing or out of step are built again from the tables.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MemoryObject } from "../src/memory";
import type { State } from "../src/storage/state";
import { BLOCK, type VectorIndex } from "../src/storage/vectors";
import { created } from "./memories";

const env = testEnv as unknown as Env;
const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
let n = 0;
const base = () => created(`http://memory.test/memories/blocks-${++n}-${Math.random().toString(36).slice(2)}`);
const call = (url: string, method = "GET", body?: unknown) =>
  SELF.fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
const json = async (r: Response | Promise<Response>) => (await (await r).json()) as Record<string, any>;
const stub = (url: string) => env.MEMORY.get(env.MEMORY.idFromName(new URL(url).pathname.split("/")[2]));
const stateOf = (memory: MemoryObject) => (memory as unknown as { state: State }).state;

/** A made-up word a number: each fact brings a new vocabulary word. */
const word = (i: number) => [...String(i + 100)].map((d) => "bcdfghjklm"[Number(d)]).join("") + "a";
const THINGS = ["tea", "chess", "opera", "sailing", "poetry", "tennis"];
const text = (i: number) => `${word(i)} enjoys ${THINGS[i % THINGS.length]} on weekends.`;

/** Facts from..from+count through the batch route, stored even when near another. */
async function fill(url: string, from: number, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = from; i < from + count; i += 100) {
    const facts = Array.from({ length: Math.min(100, from + count - i) }, (_, k) => ({ text: text(i + k), force: true }));
    const body = await json(call(`${url}/facts/batch`, "POST", { facts }));
    ids.push(...body.results.map((r: { id: number }) => r.id));
  }
  return ids;
}

/** The object started again on its own storage, as after an eviction (a new instance, its
 * constructor's work awaited), with the rows its statements read and the statements. */
async function restart(ctx: DurableObjectState, vars: Partial<Env> = {}) {
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  const statements: string[] = [];
  const sql = ctx.storage.sql, exec = sql.exec;
  let started: unknown;
  // Own members over the prototype's for the start (the base class takes no stand-in for ctx).
  Object.assign(sql, {
    exec: (query: string, ...bindings: SqlStorageValue[]) => {
      statements.push(query);
      const cursor = exec.call(sql, query, ...bindings);
      cursors.push(cursor);
      return cursor;
    },
  });
  Object.assign(ctx, { blockConcurrencyWhile: (work: () => Promise<unknown>) => (started = work()) });
  try {
    const memory = new MemoryObject(ctx, { ...env, ...vars });
    await started;
    return { memory, rowsRead: cursors.reduce((sum, c) => sum + c.rowsRead, 0), statements };
  } finally {
    delete (sql as Partial<SqlStorage>).exec;
    delete (ctx as Partial<DurableObjectState>).blockConcurrencyWhile;
  }
}

/** The rows an index holds, in its order: id, type, lo/step/err and code. */
function held(index: VectorIndex): string[] {
  const out: string[] = [];
  for (let b = 0; b * BLOCK < index.size; b++) {
    const { ids, types, params, codes } = index.blockRows(b);
    ids.forEach((_, r) => out.push(row(ids, types, params, codes, r)));
  }
  return out;
}

/** The rows the stored blocks of `kind` hold, in order, as `held` gives them; and the blocks' numbers. */
function stored(sql: SqlStorage, kind: string): [string[], number[]] {
  const out: string[] = [];
  const blocks: number[] = [];
  for (const r of sql.exec("SELECT block, ids, types, params, codes FROM code_blocks WHERE kind = ? ORDER BY block", kind)) {
    const ids = new Float64Array(r.ids as ArrayBuffer);
    const [types, params, codes] = [new Int8Array(r.types as ArrayBuffer), new Float32Array(r.params as ArrayBuffer), new Uint8Array(r.codes as ArrayBuffer)];
    ids.forEach((_, i) => out.push(row(ids, types, params, codes, i)));
    blocks.push(r.block as number);
  }
  return [out, blocks];
}

const row = (ids: Float64Array, types: Int8Array, params: Float32Array, codes: Uint8Array, r: number, width = codes.length / ids.length) =>
  `${ids[r]} ${types[r]} ${params.subarray(r * 3, r * 3 + 3).join(",")} ${codes.subarray(r * width, (r + 1) * width).join(",")}`;

/** The stored blocks hold what the object's two indexes hold, row for row, in as many blocks as those take. */
function expectInStep(memory: MemoryObject): void {
  for (const [kind, index] of [["facts", memory.vectors], ["words", memory.vocab.index]] as const) {
    const [rows, blocks] = stored(memory.sql, kind);
    expect(rows).toEqual(held(index));
    expect(blocks).toEqual([...Array(Math.ceil(index.size / BLOCK)).keys()]);
  }
  const stamp = JSON.parse(memory.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'codes'").one().value);
  expect(stamp).toMatchObject({ model: "fake-bow-16", dims: 16, facts: memory.vectors.size, words: memory.vocab.size, stale: false });
}

const sorted = (rows: string[]) => [...rows].sort();

/** What the object answers to a contract request, as the Worker would forward it. */
const ask = async (memory: MemoryObject, path: string, method = "GET", body?: unknown) =>
  json(memory.fetch(new Request(`http://memory${path}`, { method, body: body === undefined ? undefined : JSON.stringify(body) })));

describe("a start", () => {
  it("reads a few dozen rows, however many facts the memory holds", async () => {
    const url = await base();
    await fill(url, 0, 100);
    const small = await runInDurableObject(stub(url), async (_: MemoryObject, ctx: DurableObjectState) => (await restart(ctx)).rowsRead);
    await fill(url, 100, 500);
    await runInDurableObject(stub(url), async (before: MemoryObject, ctx: DurableObjectState) => {
      const { memory, rowsRead } = await restart(ctx);
      expect(memory.vectors.size).toBe(600);
      expect(memory.vocab.size).toBe(before.vocab.size);
      // Today's (every vector, its fact's type and every word, and the counts) read about 5 a fact.
      expect(rowsRead).toBeLessThan(40);
      expect(rowsRead - small).toBeLessThanOrEqual(6);  // the blocks of 500 more facts and words: 2 + 2 rows
    });
  });

  it("holds what the object held before it, and answers the same", async () => {
    const url = await base();
    await fill(url, 0, 300);
    await runInDurableObject(stub(url), async (before: MemoryObject, ctx: DurableObjectState) => {
      const { memory } = await restart(ctx);
      expect(held(memory.vectors)).toEqual(held(before.vectors));  // in its order, too
      expect(memory.vocab.held()).toEqual(before.vocab.held());
      for (const query of [text(7), "who enjoys opera", `${word(250)} chess`]) {
        const body = { query, log: false, debug: true };
        const [was, now] = [await ask(before, "/recall", "POST", body), await ask(memory, "/recall", "POST", body)];
        expect(now.results).toEqual(was.results);
        expect(now.vec).toEqual(was.vec);
      }
    });
  });
});

describe("the stored blocks", () => {
  it("follow adds, batches, edits, deletes (the last row moved into the hole) and undo, and equal a rebuild's", async () => {
    const url = await base();
    const ids = await fill(url, 0, BLOCK + 1);  // one row into the second block
    expect((await call(`${url}/facts/${ids[3]}`, "DELETE")).status).toBe(200);  // the last row fills row 3: the second block empties
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      expectInStep(memory);
      expect(stored(memory.sql, "facts")[1]).toEqual([0]);
    });
    const okafor = (await json(call(`${url}/facts`, "POST", { text: "Okafor plays the cello on Sundays." }))).id;
    await call(`${url}/facts/${okafor}`, "PATCH", { text: "Zanzibar enjoys quilting at dusk." });  // new words
    await call(`${url}/facts/${ids[11]}`, "PATCH", { type: "skill" });  // a new type, the same vector
    await call(`${url}/facts/${ids[12]}`, "PATCH", { source: "chat" });  // no vector work
    await call(`${url}/facts/${ids[20]}`, "DELETE");
    const history = await json(call(`${url}/history?limit=10`));
    const undo = (op: string, id: number) => history.entries.find((e: { op: string; fact_id: number }) => e.op === op && e.fact_id === id).id;
    expect((await call(`${url}/history/${undo("delete", ids[3])}/undo`, "POST")).status).toBe(200);  // restored under its id
    expect((await call(`${url}/history/${undo("edit", okafor)}/undo`, "POST")).status).toBe(200);
    await fill(url, 1000, 150);
    await call(`${url}/facts/${ids[30]}`, "DELETE");  // the last row (block 1) into row 30 (block 0)
    await runInDurableObject(stub(url), async (memory: MemoryObject, ctx: DurableObjectState) => {
      expectInStep(memory);
      const again = (await restart(ctx)).memory;
      expect(held(again.vectors)).toEqual(held(memory.vectors));
      expect(again.vocab.held()).toEqual(memory.vocab.held());
      const body = { query: "Zanzibar enjoys quilting, opera and the cello", log: false, debug: true };
      expect((await ask(again, "/recall", "POST", body)).vec).toEqual((await ask(memory, "/recall", "POST", body)).vec);
      const [facts, words] = [stored(memory.sql, "facts")[0], stored(memory.sql, "words")[0]];
      stateOf(memory).rebuild();  // from the tables, in table order
      expect(sorted(stored(memory.sql, "facts")[0])).toEqual(sorted(facts));
      expect(stored(memory.sql, "words")[0]).toEqual(words);  // (words in id order, both times)
      expectInStep(memory);
    });
  });

  it("are rewritten once each in a write's transaction, only those it changed", async () => {
    const url = await base();
    const ids = await fill(url, 0, 200);
    await runInDurableObject(stub(url), (memory: MemoryObject) => {
      const state = stateOf(memory);
      const sql = state.sql, written: SqlStorageValue[][] = [];
      state.sql = Object.assign(Object.create(sql), {
        exec: (query: string, ...bindings: SqlStorageValue[]) => {
          if (query.includes("INTO code_blocks")) written.push(bindings.slice(0, 2));
          return sql.exec(query, ...bindings);
        },
      });
      (memory as unknown as { spy: () => SqlStorageValue[][] }).spy = () => written.splice(0);
    });
    const spy = () => runInDurableObject(stub(url), (memory: MemoryObject) => (memory as unknown as { spy: () => SqlStorageValue[][] }).spy());
    await fill(url, 200, 100);  // rows 200 to 299: the end of block 0 and the start of block 1, and as many words
    expect(await spy()).toEqual([["facts", 0], ["facts", 1], ["words", 0], ["words", 1]]);
    // Approved first: a delete of a fact nobody reviewed also drops its own words (their blocks too).
    await call(`${url}/facts/review`, "POST", { ids: [ids[5]] });
    await call(`${url}/facts/${ids[5]}`, "DELETE");  // the last row (block 1) into row 5 (block 0)
    expect(await spy()).toEqual([["facts", 0], ["facts", 1]]);
    await call(`${url}/facts/${ids[6]}`, "PATCH", { source: "chat" });
    expect(await spy()).toEqual([]);
  });

  it("follow a reindex, and a change of model and back", async () => {
    const url = await base();
    await fill(url, 0, 300);
    expect((await call(`${url}/reindex`, "POST")).status).toBe(200);
    await runInDurableObject(stub(url), async (memory: MemoryObject, ctx: DurableObjectState) => {
      expectInStep(memory);
      const other = (await restart(ctx, { EMBED_MODEL: "another-16" } as Partial<Env>)).memory;
      expect([other.vectors.size, other.vocab.size]).toEqual([0, 0]);  // none of its vectors is of that model
      expect(stored(other.sql, "facts")[1]).toEqual([]);
      const back = (await restart(ctx)).memory;
      expect(back.vectors.size).toBe(300);
      expect(sorted(held(back.vectors))).toEqual(sorted(held(memory.vectors)));
      expectInStep(back);
    });
  });

  it("are built again from the tables when they are missing or out of step", async () => {
    const url = await base();
    await fill(url, 0, 300);
    const cases: [string, (sql: SqlStorage) => void][] = [
      ["a memory from before them", (sql) => { sql.exec("DELETE FROM code_blocks"); sql.exec("DELETE FROM meta WHERE key = 'codes'"); }],
      ["stamped for another model", (sql) => sql.exec("UPDATE meta SET value = json_set(value, '$.model', 'other') WHERE key = 'codes'")],
      ["stamped for another count", (sql) => sql.exec("UPDATE meta SET value = json_set(value, '$.facts', 299) WHERE key = 'codes'")],
      ["a block missing", (sql) => sql.exec("DELETE FROM code_blocks WHERE kind = 'words' AND block = 0")],
      ["a block cut short", (sql) => sql.exec("UPDATE code_blocks SET codes = substr(codes, 1, 8) WHERE kind = 'facts' AND block = 1")],
      ["a vector written past them", (sql) => {
        const id = sql.exec<{ id: number }>("INSERT INTO facts (text, text_key, type, created_at, updated_at) VALUES ('x', 'x', 'log', '', '') RETURNING id").one().id;
        sql.exec("INSERT INTO vectors (fact_id, model, dims, embedding) SELECT ?, model, dims, embedding FROM vectors LIMIT 1", id);
      }],
      ["a word written past them", (sql) => sql.exec("INSERT INTO words (word, model, embedding) SELECT 'xylophone', model, embedding FROM words LIMIT 1")],
    ];
    for (const [why, damage] of cases) {
      await runInDurableObject(stub(url), async (memory: MemoryObject, ctx: DurableObjectState) => {
        damage(memory.sql);
        const count = (table: string) => memory.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE model = 'fake-bow-16'`).one().n;
        const { memory: again, statements, rowsRead } = await restart(ctx);
        expect(statements.some((s) => s.includes("FROM vectors v JOIN facts")), why).toBe(true);
        expect([again.vectors.size, again.vocab.size], why).toEqual([count("vectors"), count("words")]);
        expectInStep(again);
        expect(rowsRead, why).toBeGreaterThan(600);
        expect((await restart(ctx)).rowsRead, `${why}, the start after`).toBeLessThan(40);
      });
    }
  });

  it("are read by no start past the budget, which reads no vector or word either, until deletes bring it under", async () => {
    const url = await base();
    const ids = await fill(url, 0, 300);
    await runInDurableObject(stub(url), async (_: MemoryObject, ctx: DurableObjectState) => {
      const small = { MEMORY_BUDGET_BYTES: "1000" } as Partial<Env>;
      const full = await restart(ctx, small);
      expect(full.memory.vectors.size).toBe(0);
      expect(full.statements.filter((s) => /code_blocks|embedding|count\(\*\)/.test(s))).toEqual([]);
      expect(full.rowsRead).toBeLessThan(40);
      expect(await ask(full.memory, "/health")).toMatchObject({ memory_full: true });
      // A delete while full: the blocks fall behind (stale) but the stamp's count follows it.
      expect((await ask(full.memory, `/facts/${ids[0]}`, "DELETE")).deleted).toBe(ids[0]);
      const stamp = JSON.parse(full.memory.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = 'codes'").one().value);
      expect(stamp).toMatchObject({ facts: 299, stale: true });
      const still = await restart(ctx, small);
      expect(still.statements.filter((s) => /code_blocks|embedding|count\(\*\)/.test(s))).toEqual([]);
      const room = await restart(ctx);  // the default budget: built again from the tables
      expect(room.memory.vectors.size).toBe(299);
      expect(room.memory.vectors.row.has(ids[0])).toBe(false);
      expectInStep(room.memory);
    });
  });
});
