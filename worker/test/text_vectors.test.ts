// Recall's kept text vectors (src/recall/text_vectors.ts, as memories/recall/text_vectors.py): a recall asked
// again calls no model, a recall whose rerank texts are all held calls it once (for its query),
// the ranking stays, the bytes are in /stats, and forget for good empties it.
import { SELF, env as testEnv, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { MemoryObject } from "../src/memory";
import { TextVectors, sizeOf } from "../src/recall/text_vectors";
import { created } from "./memories";

const env = testEnv as unknown as Env;
const headers = { "x-memory-secret": "test-secret", "content-type": "application/json" };
const stub = (name: string) => env.MEMORY.get(env.MEMORY.idFromName(name));
const vector = (x: number) => new Float32Array([x, 1 - x]);

/** The texts of each model call of `embed`, as `fake` answers them. */
function counted() {
  const calls: string[][] = [];
  const embed = async (texts: string[]) => { calls.push(texts); return texts.map((t) => vector(t.length / 100)); };
  return { calls, embed };
}

describe("the text vectors' store", () => {
  it("keeps no vector of texts read before a clear (a forget during the model call)", async () => {
    const { embed } = counted();
    const kept = new TextVectors();
    const read = kept.generation;
    kept.clear();
    await kept.embed(["The vault code is quokka7731."], embed, read);
    expect(kept.size).toBe(0);
    await kept.embed(["The vault is in the cellar."], embed, kept.generation);
    expect(kept.size).toBe(1);
  });

  it("embeds only what it does not hold, in one call, and keeps the order", async () => {
    const { calls, embed } = counted();
    const kept = new TextVectors();
    const first = await kept.embed(["alpha", "beta", "alpha"], embed);
    expect(calls).toEqual([["alpha", "beta"]]);
    expect(first[0]).toEqual(first[2]);
    await kept.embed(["beta", "gamma", "alpha"], embed);
    expect(calls).toEqual([["alpha", "beta"], ["gamma"]]);
    expect([kept.hits, kept.misses]).toEqual([3, 3]);
    await kept.embed(["gamma", "alpha"], embed);
    expect(calls.length).toBe(2);
  });

  it("holds no more than its limit and lets the least recently used go", async () => {
    const { calls, embed } = counted();
    const one = sizeOf("text 0", vector(0.06));
    const kept = new TextVectors(3 * one);
    await kept.embed(["text 0", "text 1", "text 2"], embed);
    await kept.embed(["text 0"], embed);  // used again: "text 1" is now the oldest
    await kept.embed(["text 3"], embed);
    expect(kept.size).toBe(3);
    expect(kept.bytes()).toBe(3 * one);
    const before = calls.length;
    await kept.embed(["text 0", "text 2", "text 3"], embed);
    expect(calls.length).toBe(before);
    await kept.embed(["text 1"], embed);
    expect(calls.slice(before)).toEqual([["text 1"]]);
  });

  it("keeps its own copy, not a view of the batch it came from", async () => {
    const batch = new Float32Array([1, 1, 1, 1]);
    const kept = new TextVectors();
    await kept.embed(["a", "b"], async () => [batch.subarray(0, 2), batch.subarray(2)]);
    batch.fill(0);
    expect([...(await kept.embed(["a"], async () => { throw new Error("not held"); }))[0]]).toEqual([1, 1]);
  });
});

describe("recall's model calls", () => {
  const FACTS = ["The owner's son is eight years old.", "The owner's son plays football.", "The owner's daughter is twelve.",
    "The owner's sister is Priya."];

  async function memory() {
    const name = `tv-${Math.random().toString(36).slice(2)}`;
    const url = await created(`http://memory.test/memories/${name}`);
    const r = await SELF.fetch(`${url}/facts/batch`, { method: "POST", headers, body: JSON.stringify({ facts: FACTS.map((text) => ({ text })) }) });
    expect(r.status).toBe(200);
    return { name, url };
  }

  /** Inside the object: a recall's answer, and the texts of each model call it made. */
  async function recall(m: MemoryObject, query: string) {
    const embedder = m.embedder;
    const calls: string[][] = [];
    const own = embedder.embed;
    embedder.embed = async (texts: string[]) => { calls.push(texts); return own.call(embedder, texts); };
    try {
      const r = await m.fetch(new Request("http://memory.test/recall", { method: "POST", headers, body: JSON.stringify({ query, debug: true, log: false }) }));
      expect(r.status).toBe(200);
      return { answer: (await r.json()) as Record<string, any>, calls };
    } finally {
      embedder.embed = own;
    }
  }
  const ranked = (a: Record<string, any>) => a.results.map((h: any) => [h.fact.id, h.score]);

  it("calls no model for a recall asked again, and ranks the same", async () => {
    const { name } = await memory();
    await runInDurableObject(stub(name), async (m: MemoryObject) => {
      const first = await recall(m, "how old is the owner's son");
      expect(first.answer.rerank).not.toBeNull();  // the rerank ran: its texts are held now too
      expect(first.calls.length).toBe(2);  // the query (with its terms), then the rerank's texts
      const again = await recall(m, "how old is the owner's son");
      expect(again.calls).toEqual([]);
      expect(ranked(again.answer)).toEqual(ranked(first.answer));
      expect(again.answer.rerank).toEqual(first.answer.rerank);
    });
  });

  it("calls the model once when the rerank's texts are all held", async () => {
    const { name } = await memory();
    await runInDurableObject(stub(name), async (m: MemoryObject) => {
      const first = await recall(m, "how old is the owner's son");
      // Another query (a shared word written otherwise), the same rerank texts: only the query is embedded.
      const other = await recall(m, "how old is the owner's SON");
      expect(other.answer.rerank.query).toBe(first.answer.rerank.query);
      expect(other.calls).toEqual([["how old is the owner's SON"]]);
      expect(ranked(other.answer).map(([id]: number[]) => id)).toEqual(ranked(first.answer).map(([id]: number[]) => id));
    });
  });

  it("counts its bytes in /stats and is emptied by forget for good", async () => {
    const { name, url } = await memory();
    const stats = async () => (await (await SELF.fetch(`${url}/stats`, { headers })).json()) as Record<string, any>;
    expect((await stats()).memory_parts.text_vectors).toBe(0);
    expect((await SELF.fetch(`${url}/recall`, { method: "POST", headers, body: JSON.stringify({ query: "how old is the owner's son" }) })).status).toBe(200);
    const held = await stats();
    expect(held.memory_parts.text_vectors).toBeGreaterThan(0);
    expect(held.memory_bytes).toBe(held.memory_parts.vectors + held.memory_parts.vocabulary + held.memory_parts.text_vectors);
    await runInDurableObject(stub(name), (m: MemoryObject) => {
      expect((m as unknown as { state: { textVectors: TextVectors } }).state.textVectors.size).toBeGreaterThan(0);
    });
    expect((await SELF.fetch(`${url}/facts/1`, { method: "DELETE", headers })).status).toBe(200);
    expect((await SELF.fetch(`${url}/history?fact_id=1`, { method: "DELETE", headers })).status).toBe(200);
    expect((await stats()).memory_parts.text_vectors).toBe(0);
  });
});
