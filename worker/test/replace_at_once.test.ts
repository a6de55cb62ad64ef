// The memory's `proposals` setting (replace_at_once.ts mirrors memories/writes/replace_at_once.py): which
// write replaces the one fact it proposes at once (`replacesAtOnce`), PUT /settings's value
// (`cleanMode`), and, through the object, a trusted write that replaces at once, GET
// /conflicts?done=true, the undo that gives the old fact back, and a backup's "replace" pair.
// tests/test_replace_at_once_contract.py runs the same on both memories with the real model.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Fact } from "../src/facts";
import { DEFAULT, DONE, MODES, type Proposal, cleanMode, replacesAtOnce } from "../src/writes/replace_at_once";
import type { ReviewSetting } from "../src/review/reviewing";
import { created } from "./memories";

const fact = (id: number, superseded_by: number | null = null): Fact => ({
  id, text: `fact ${id}`, type: "fact", source: "", created_at: "2026-01-01T00:00:00.000000Z",
  updated_at: "2026-01-01T00:00:00.000000Z", valid_until: null, superseded_by, reviewed_at: null,
});
const proposal = (f: Fact): Proposal => ({ id: f.id, fact: f, score: 0.8, differs: { kinds: ["number"], old: ["6"], new: ["7"] }, replaced: false });
const review = (trusted: string[] = []): ReviewSetting => ({ mode: "after", trusted });

describe("cleanMode", () => {
  it("takes propose or replace, the default propose", () => {
    expect(MODES).toEqual(["propose", "replace"]);
    expect(DEFAULT).toBe("propose");
    expect(DONE).toBe("replace");
    for (const m of MODES) expect(cleanMode(m)).toBe(m);
  });

  it("refuses anything else with a 422 naming proposals, as Python's", () => {
    for (const bad of ["yes", "", "Replace", null, undefined, 1, true, ["replace"], { mode: "replace" }]) {
      expect(() => cleanMode(bad)).toThrow(expect.objectContaining({ status: 422, message: "proposals must be one of propose, replace" }));
    }
  });
});

describe("replacesAtOnce", () => {
  const one = [proposal(fact(3))];

  it("replaces the one proposal of a trusted write alone, answering the fact as it was", () => {
    expect(replacesAtOnce("replace", true, "dashboard", "", review(), one)).toEqual([fact(3)]);
    expect(replacesAtOnce("replace", true, "dashboard 0.1", "", review(), one)).toEqual([fact(3)]);
    expect(replacesAtOnce("replace", true, "claude-code 2.1.0", "", review(["claude-code"]), one)).toEqual([fact(3)]);
    expect(replacesAtOnce("replace", true, "", "notes.md", review(["notes.md"]), one)).toEqual([fact(3)]);
  });

  it("leaves it waiting under propose, for a batch, for anyone untrusted, and for none, two or three proposals", () => {
    expect(replacesAtOnce("propose", true, "dashboard", "", review(), one)).toBeNull();
    expect(replacesAtOnce("replace", false, "dashboard", "", review(), one)).toBeNull();
    expect(replacesAtOnce("replace", true, "claude-code 2.1.0", "", review(), one)).toBeNull();
    expect(replacesAtOnce("replace", true, "", "", review(["claude-code"]), one)).toBeNull();
    expect(replacesAtOnce("replace", true, "dashboard", "", review(), [])).toBeNull();
    expect(replacesAtOnce("replace", true, "dashboard", "", review(), [proposal(fact(3)), proposal(fact(4))])).toBeNull();
    expect(replacesAtOnce("replace", true, "dashboard", "", review(), [3, 4, 5].map((i) => proposal(fact(i))))).toBeNull();
  });

  it("leaves a fact already waiting to be replaced by another as it is", () => {
    expect(replacesAtOnce("replace", true, "dashboard", "", review(), [proposal(fact(3, 9))])).toBeNull();
  });
});

// -- through the object ---------------------------------------------------------------------

type Added = { id: number; fact: Fact; conflicts: (Proposal & { fact: Fact })[] };
type Entry = { id: number; op: string; before: Record<string, unknown> | null; after: Record<string, unknown> | null; note: string };
type Queue = { conflicts: { old: Fact; new: Fact; resolution: string | null }[]; total: number };

let n = 0;
const base = () => created(`http://memory.test/memories/at-once-${++n}-${Math.random().toString(36).slice(2)}`);
const call = (url: string, method = "GET", body?: unknown, client = "") => SELF.fetch(url, {
  method,
  headers: { "x-memory-secret": "test-secret", "content-type": "application/json", ...(client ? { "x-memory-client": client } : {}) },
  body: body === undefined ? undefined : JSON.stringify(body),
});
const json = async <T = Record<string, unknown>>(r: Response | Promise<Response>) => (await (await r).json()) as T;
const post = (url: string, text: string, client: string) => json<Added>(call(`${url}/facts`, "POST", { text }, client));
const queue = (url: string, query = "") => json<Queue>(call(`${url}/conflicts${query}`));
const pairsOf = (q: Queue) => q.conflicts.map((c) => [c.old.id, c.new.id, c.resolution]);
const historyOf = async (url: string, query: string) => (await json<{ entries: Entry[] }>(call(`${url}/history${query}`))).entries;

describe("the proposals setting", () => {
  it("is read, set, recorded only when not the default, undone, and refused by name", async () => {
    const url = await base();
    expect((await json(call(`${url}/settings`))).proposals).toBe("propose");
    expect((await json(call(`${url}/settings`, "PUT", { proposals: "replace" }))).proposals).toBe("replace");
    const [entry] = await historyOf(url, "?op=settings&limit=1");
    expect(entry.after).toMatchObject({ proposals: "replace" });
    expect(entry.before).not.toHaveProperty("proposals");
    expect((await call(`${url}/history/${entry.id}/undo`, "POST")).status).toBe(200);
    expect((await json(call(`${url}/settings`))).proposals).toBe("propose");
    for (const bad of ["yes", null, 1, ["replace"]]) {
      const r = await call(`${url}/settings`, "PUT", { proposals: bad });
      expect(r.status).toBe(422);
      expect(((await r.json()) as { error: { message: string } }).error.message).toBe("proposals must be one of propose, replace");
    }
    expect((await call(`${url}/conflicts?all=true&done=true`)).status).toBe(422);
  });

  it("lets a trusted write replace its one proposal at once; its undo gives the fact back", async () => {
    const url = await base();
    const old = await post(url, "The standup is at 9:30.", "claude-code 2.1.0");
    const waits = await post(url, "The standup is at 9:45.", "dashboard");  // the default: it waits
    expect(waits.conflicts.map((c) => [c.id, c.replaced])).toEqual([[old.id, false]]);
    expect((await call(`${url}/conflicts/resolve`, "POST", { old: old.id, new: waits.id, resolution: "keep_old" })).status).toBe(200);
    expect((await call(`${url}/settings`, "PUT", { proposals: "replace" })).status).toBe(200);
    const agent = await post(url, "The gym opens at 6:00.", "claude-code 2.1.0");
    const untrusted = await post(url, "The gym opens at 7:00.", "claude-code 2.1.0");
    expect(untrusted.conflicts.map((c) => [c.id, c.replaced])).toEqual([[agent.id, false]]);

    const next = await post(url, "The standup is at 10:00.", "dashboard");
    expect(next.conflicts.map((c) => [c.id, c.replaced])).toEqual([[old.id, true]]);
    expect(next.conflicts[0].fact.superseded_by).toBe(next.id);  // as it is after the write
    expect((await json<Fact>(call(`${url}/facts/${old.id}`))).superseded_by).toBe(next.id);
    expect(pairsOf(await queue(url, "?done=true"))).toEqual([[old.id, next.id, "replace"]]);
    expect((await queue(url, "?done=true")).total).toBe(1);
    expect(pairsOf(await queue(url))).not.toContainEqual([old.id, next.id, null]);
    const [entry] = await historyOf(url, `?fact_id=${next.id}&op=add`);
    expect((entry.before!.replaced as Fact[]).map((f) => [f.id, f.superseded_by])).toEqual([[old.id, null]]);
    expect(entry.note).toBe(`replaces #${old.id} at once (the memory's proposals setting is replace)`);

    expect((await call(`${url}/history/${entry.id}/undo`, "POST")).status).toBe(200);
    expect(await json<Fact>(call(`${url}/facts/${old.id}`))).toMatchObject({ superseded_by: null, valid_until: null });
    expect((await queue(url, "?done=true")).total).toBe(0);
  });

  it("restores a backup's pair replaced at once; any other resolution is a 422", async () => {
    const url = await base();
    const a = (await post(url, "2026-11-02: the bins went out.", "dashboard")).id;
    const b = (await post(url, "2026-11-05: the recycling went out.", "dashboard")).id;
    const pair = { old: a, new: b, score: 0.5, differs: { kinds: ["date"], old: ["02"], new: ["05"] }, resolution: "replace" };
    const r = await call(`${url}/conflicts/restore`, "POST", { conflicts: [pair] });
    expect(await r.json()).toEqual({ restored: 1, skipped: 0 });
    expect(pairsOf(await queue(url, "?all=true"))).toContainEqual([a, b, "replace"]);
    const bad = await call(`${url}/conflicts/restore`, "POST", { conflicts: [{ ...pair, resolution: "keep_old" }] });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { error: { message: string } }).error.message)
      .toBe("conflicts[0].resolution must be null (proposed), keep_both or replace (replaced at once)");
  });
});
