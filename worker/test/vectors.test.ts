import { describe, expect, it } from "vitest";
import { MAP_ENTRY_BYTES, VectorIndex, normalise } from "../src/vectors";

const v = (...xs: number[]) => normalise(xs);

describe("VectorIndex", () => {
  it("finds the nearest of a type, best first, ties by id", () => {
    const index = new VectorIndex(0);
    index.put(3, "fact", v(1, 0, 0));
    index.put(1, "fact", v(1, 0, 0));
    index.put(2, "skill", v(1, 0, 0));
    index.put(4, "fact", v(0, 1, 0));
    expect(index.search(v(1, 0, 0), "fact", 2).map(([id]) => id)).toEqual([1, 3]);
    expect(index.search(v(1, 0, 0), null, 3).map(([id]) => id)).toEqual([1, 2, 3]);
    expect(index.search(v(0, 1, 0), "fact", 1)[0][0]).toBe(4);
    expect(index.search(v(1, 0, 0), "log")).toEqual([]);
  });

  it("fills a removed row with the last one and keeps every id findable", () => {
    const index = new VectorIndex(2, 1);  // capacity 1: every put past it grows the matrix
    for (let id = 1; id <= 5; id++) index.put(id, "fact", v(id, 1));
    index.remove(2);
    index.remove(99);
    expect(index.size).toBe(4);
    for (const id of [1, 3, 4, 5]) expect(index.search(index.vector(id)!.slice(), "fact", 1)[0][0]).toBe(id);
    expect(index.vector(2)).toBeNull();
  });

  it("ranks one fact for a query and lists each same-type pair once", () => {
    const index = new VectorIndex(0);
    index.put(1, "fact", v(1, 0));
    index.put(2, "fact", v(1, 0.1));
    index.put(3, "fact", v(0, 1));
    index.put(4, "log", v(1, 0));
    const [rank, cosine] = index.rankOf(v(0, 1), 2, "fact");
    expect(rank).toBe(2);
    expect(cosine).toBeCloseTo(v(1, 0.1)[1], 6);
    expect(index.rankOf(v(0, 1), 4, "fact")[0]).toBeNull();
    const pairs = [...index.pairs("fact")].map(([, a, b]) => [a, b]);
    expect(pairs).toEqual([[1, 2], [1, 3], [2, 3]]);
  });
});

describe("what the index holds", () => {
  it("counts its arrays' bytes exactly and the row map as a bound, and grows a block at a time", () => {
    const index = new VectorIndex(4, 8);  // blocks of 8 rows
    expect(index.bytes()).toBe(0);
    for (let id = 1; id <= 20; id++) {
      const bound = index.bytesWith(1);
      index.put(id, "fact", v(id, 1, 0, 0));
      expect(index.bytes()).toBeLessThanOrEqual(bound);
    }
    expect(index.blocks.map((b) => b.byteLength)).toEqual([8 * 4 * 4, 8 * 4 * 4, 8 * 4 * 4]);
    const arrays = index.blocks.reduce((s, b) => s + b.byteLength, 0) + index.ids.byteLength + index.types.byteLength;
    expect(arrays).toBe(3 * 8 * 16 + 24 * 8 + 24);
    expect(index.bytes()).toBe(arrays + 20 * MAP_ENTRY_BYTES);
    expect(index.bytesWith(4)).toBe(arrays + 24 * MAP_ENTRY_BYTES);  // room in the last block
    expect(index.bytesWith(5)).toBe(arrays + 8 * 16 + 8 * 9 + 24 * 9 + 25 * MAP_ENTRY_BYTES);  // a block more, ids copied
    index.remove(3);
    expect(index.bytes()).toBe(arrays + 19 * MAP_ENTRY_BYTES);
  });
});
