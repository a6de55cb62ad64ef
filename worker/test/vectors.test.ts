import { describe, expect, it } from "vitest";
import { dot, encode, normalise } from "../src/storage/vector_math";
import { BLOCK, type FactType, MAP_ENTRY_BYTES, ROW_BYTES, TYPES, VectorIndex } from "../src/storage/vectors";
import { CANDIDATES, WORD_BITS, WORD_RESCORE } from "../src/storage/vocabulary";

const v = (...xs: number[]) => normalise(xs);

/** An index over vectors kept in a Map, as the object's is over its table; `reads` counts the ids read. */
function indexOf(dims = 0, bits = 4, block = BLOCK, rescore = 300) {
  const table = new Map<number, Float32Array>();
  const counter = { reads: 0 };
  const index = new VectorIndex(dims, (ids) => {
    counter.reads += ids.length;
    return new Map(ids.filter((id) => table.has(id)).map((id) => [id, table.get(id)!]));
  }, bits, block, rescore);
  const put = (id: number, type: FactType, vector: Float32Array) => {
    table.set(id, vector);
    index.put(id, type, vector);
  };
  const remove = (id: number) => {
    table.delete(id);
    index.remove(id);
  };
  return { index, table, put, remove, counter };
}

let seed = 11;
const rand = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
const gauss = () => Math.sqrt(-2 * Math.log(rand() || 1e-12)) * Math.cos(2 * Math.PI * rand());
const randomUnit = (dims: number) => normalise(Array.from({ length: dims }, gauss));
/** A vector at about cosine `c` with `u`. */
function near(u: Float32Array, c: number): Float32Array {
  const w = randomUnit(u.length);
  const d = dot(w, u);
  const orth = normalise(Array.from(w, (x, k) => x - d * u[k]));
  return normalise(Array.from(u, (x, k) => c * x + Math.sqrt(1 - c * c) * orth[k]));
}

describe("VectorIndex", () => {
  it("finds the nearest of a type, best first, ties by id", () => {
    const { index, put } = indexOf();
    put(3, "fact", v(1, 0, 0));
    put(1, "fact", v(1, 0, 0));
    put(2, "skill", v(1, 0, 0));
    put(4, "fact", v(0, 1, 0));
    expect(index.search(v(1, 0, 0), "fact", 2).map(([id]) => id)).toEqual([1, 3]);
    expect(index.search(v(1, 0, 0), null, 3).map(([id]) => id)).toEqual([1, 2, 3]);
    expect(index.search(v(0, 1, 0), "fact", 1)[0][0]).toBe(4);
    expect(index.search(v(1, 0, 0), "log")).toEqual([]);
  });

  it("fills a removed row with the last one and keeps every id findable", () => {
    const { index, put, remove } = indexOf(2, 4, 1);  // blocks of 1 row: every put grows the index
    for (let id = 1; id <= 5; id++) put(id, "fact", v(id, 1));
    remove(2);
    index.remove(99);
    expect(index.size).toBe(4);
    for (const id of [1, 3, 4, 5]) expect(index.search(index.vector(id)!, "fact", 1)[0][0]).toBe(id);
    expect(index.vector(2)).toBeNull();
    expect(index.holds(5, v(5, 1))).toBe(true);
    expect(index.holds(5, v(1, 5))).toBe(false);
  });

  it("ranks one fact for a query and lists each same-type pair once", () => {
    const { index, put } = indexOf();
    put(1, "fact", v(1, 0));
    put(2, "fact", v(1, 0.1));
    put(3, "fact", v(0, 1));
    put(4, "log", v(1, 0));
    const [rank, cosine] = index.rankOf(v(0, 1), 2, "fact");
    expect(rank).toBe(2);
    expect(cosine).toBeCloseTo(v(1, 0.1)[1], 6);
    expect(index.rankOf(v(0, 1), 4, "fact")[0]).toBeNull();
    expect(index.pairs("fact").map(([, a, b]) => [a, b])).toEqual([[1, 2], [1, 3], [2, 3]]);
    expect(index.pairs("fact", 0.5).map(([, a, b]) => [a, b])).toEqual([[1, 2]]);
  });
});

describe("the codes", () => {
  it("score within their bound of the exact cosine, for every bit width", () => {
    for (const bits of [1, 2, 4, 8]) {
      for (const dims of [16, 384, 768]) {
        const code = new Uint8Array(Math.ceil((dims * bits) / 8)), params = new Float32Array(3);
        let worst = 0;
        for (let t = 0; t < 50; t++) {
          const x = randomUnit(dims), q = t % 2 ? near(x, 0.9) : randomUnit(dims);
          encode(x, bits, code, params);
          const { index } = indexOf(dims, bits);
          index.put(1, "fact", x);
          const error = Math.abs(index.approx(q)[0] - dot(x, q));
          expect(error).toBeLessThanOrEqual(index.bound(0, 1));
          expect(params[2]).toBeGreaterThanOrEqual(0);
          worst = Math.max(worst, error / params[2]);
        }
        expect(worst).toBeLessThan(1);
      }
    }
  });

  it("find every row at or above a cosine that exact search finds, and no other", () => {
    const dims = 384;
    const { index, table, put } = indexOf(dims);
    const base = randomUnit(dims);
    // Rows spread around the thresholds: the codes' error (about 0.1 of bound) must not hide one.
    for (let id = 1; id <= 600; id++) put(id, TYPES[id % 2], near(base, 0.6 + 0.4 * rand()));
    for (const min of [0.8, 0.9, 0.97]) {
      for (const type of ["fact", "skill"] as const) {
        const want = [...table].filter(([id, x]) => TYPES[id % 2] === type && dot(x, base) >= min).map(([id, x]) => [id, dot(x, base)]);
        const got = index.near(base, type, min);
        expect(got.sort((a, b) => a[0] - b[0])).toEqual(want.sort((a, b) => a[0] - b[0]));
      }
    }
    // The pairs at 0.9, against every pair computed from the table.
    const rows = [...table].filter(([id]) => id % 2 === 0);
    const want = new Set<string>();
    for (let a = 0; a < rows.length; a++) for (let b = a + 1; b < rows.length; b++) if (dot(rows[a][1], rows[b][1]) >= 0.9) want.add(`${rows[a][0]}-${rows[b][0]}`);
    expect(new Set(index.pairs("fact", 0.9).map(([, a, b]) => `${Math.min(a, b)}-${Math.max(a, b)}`))).toEqual(want);
  });

  it("rank the exact top k of well-separated rows reading little more than k + rescore", () => {
    const dims = 64;
    const { index, table, put, counter } = indexOf(dims, 4, BLOCK, 50);
    for (let id = 1; id <= 2000; id++) put(id, "fact", randomUnit(dims));
    for (let t = 0; t < 20; t++) {
      const q = randomUnit(dims);
      const exact = bruteForce(table, q, 10);
      counter.reads = 0;
      expect(index.search(q, null, 10)).toEqual(exact);
      expect(counter.reads).toBeGreaterThanOrEqual(60);
      expect(counter.reads).toBeLessThan(200);
      const [rank, cosine] = index.rankOf(q, exact[3][0], null);
      expect([rank, cosine]).toEqual([4, exact[3][1]]);
    }
  });
});

/** Exact search over the table: every row's cosine, best first, ties by id. */
function bruteForce(table: Map<number, Float32Array>, q: Float32Array, k: number, exclude: number | null = null): [number, number][] {
  return [...table].filter(([id]) => id !== exclude).map(([id, x]): [number, number] => [id, dot(x, q)])
    .sort((a, b) => b[1] - a[1] || a[0] - b[0]).slice(0, k);
}

/** Ids 1..n in a shuffled order, so a row's place says nothing of its id. */
function shuffled(n: number): number[] {
  const ids = Array.from({ length: n }, (_, i) => i + 1);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [ids[i], ids[j]] = [ids[j], ids[i]];
  }
  return ids;
}

// Crowds: far more rows than k + rescore, closer together than the codes' error (about 0.03 at
// 4 bits), so the best on the codes are not the best. The search must still be exact search's.
describe("the k nearest in a crowd", () => {
  const N = 1200;  // past k + RESCORE (330), so the rows left out on the codes matter
  const crowds: [string, (dims: number, base: Float32Array) => Float32Array[]][] = [
    ["near copies of one vector", (dims, base) => Array.from({ length: N }, () => near(base, 0.94 + 0.02 * rand()))],
    ["one large component shared by all", (dims, base) =>
      Array.from({ length: N }, () => normalise(Array.from(base, (x) => 3 * Math.sqrt(dims) * x + gauss())))],
    ["exact ties among near copies", (dims, base) => {
      const rows = Array.from({ length: N }, () => near(base, 0.95 + 0.001 * rand()));
      for (let r = 0; r < 60; r++) rows[200 + 7 * r] = rows[1100];  // 61 rows of one vector, ids not in row order
      return rows;
    }],
  ];
  for (const dims of [384, 768]) {
    for (const [kind, make] of crowds) {
      it(`${kind}, ${dims} dims: search and rank are exact search's`, () => {
        const { index, table, put } = indexOf(dims);
        const base = randomUnit(dims);
        const rows = make(dims, base);
        shuffled(N).forEach((id, r) => put(id, "fact", rows[r]));
        const queries = [base, rows[1100], near(base, 0.99), near(rows[5], 0.999)];
        for (const q of queries) {
          const want = bruteForce(table, q, 30);
          expect(index.search(q, null, 30)).toEqual(want);
          // explain's rank is the place search gives, ties by id too
          for (const p of [0, 1, 14, 29]) expect(index.rankOf(q, want[p][0], null)).toEqual([p + 1, want[p][1]]);
        }
        const [id, v] = [...table][7];  // neighbours: a fact's own nearest, itself left out
        expect(index.search(v, null, 20, id)).toEqual(bruteForce(table, v, 20, id));
      });
    }
  }

  it("finds the one fact a hair nearer than 2,000 others (issue 28), at 768 dims", () => {
    const dims = 768;
    for (let trial = 0; trial < 5; trial++) {  // the codes alone put it first in about 7 trials of 20
      const { index, put } = indexOf(dims);
      const q = randomUnit(dims);
      const ids = shuffled(2001);
      for (let r = 0; r < 2000; r++) put(ids[r], "fact", near(q, 0.95));
      put(ids[2000], "fact", near(q, 0.952));
      expect(index.search(q, null, 30)[0][0]).toBe(ids[2000]);
      expect(index.rankOf(q, ids[2000], null)[0]).toBe(1);
    }
  });

  it("finds the closest words as exact search does, with the vocabulary's codes and rescore", () => {
    const dims = 384;
    const { index, table, put } = indexOf(dims, WORD_BITS, BLOCK, WORD_RESCORE);
    index.appendOnly = true;
    const base = randomUnit(dims);
    for (let id = 1; id <= 600; id++) put(id, "fact", near(base, 0.9 + 0.02 * rand()));
    for (const q of [base, near(base, 0.98), near(base, 0.9)]) expect(index.search(q, null, CANDIDATES)).toEqual(bruteForce(table, q, CANDIDATES));
  });

  it("ranks equal cosines by id, as search orders them", () => {
    const { index, put } = indexOf(3);
    for (const id of [9, 3, 7, 1, 5]) put(id, "fact", v(1, 1, 0));
    put(2, "fact", v(1, 0, 0));
    put(4, "skill", v(1, 1, 0));
    const q = v(1, 1, 0);
    const order = index.search(q, "fact", 10).map(([id]) => id);
    expect(order).toEqual([1, 3, 5, 7, 9, 2]);
    for (const [p, id] of order.entries()) expect(index.rankOf(q, id, "fact")[0]).toBe(p + 1);
    expect(index.rankOf(q, 5, null)[0]).toBe(4);  // the skill (id 4) ties too, before 5
  });
});

// A write's proposals (`near`'s `top`): every row at or over `min` as before, and of those between
// `lower` and `min` (the hidden left out) at least the exact k best, as brute force finds them,
// with their exact cosines (tests/test_vector_codes.py
// test_near_with_a_top_band_holds_every_row_over_least_and_the_exact_k_best_below).
describe("near's top band", () => {
  const N = 1500;
  const spreads: [string, (base: Float32Array) => Float32Array][] = [
    ["rows spread from cosine 0.2 to 0.95", (base) => near(base, 0.2 + 0.75 * rand())],
    ["a crowd closer together than the codes' error", (base) => near(base, 0.94 + 0.02 * rand())],
  ];
  for (const dims of [384, 768]) {
    for (const [kind, make] of spreads) {
      it(`${kind}, ${dims} dims: every row over min and the exact k best below it`, () => {
        const { index, table, put } = indexOf(dims);
        const base = randomUnit(dims);
        const ids = shuffled(N);
        for (let r = 0; r < N; r++) put(ids[r], r % 5 ? "fact" : "skill", make(base));
        const facts = [...table].filter(([id]) => index.types[index.row.get(id)!] === 0);
        for (const q of [base, near(base, 0.97), near(base, 0.8), table.get(ids[7])!]) {
          const ref = facts.map(([id, x]): [number, number] => [id, dot(x, q)]).sort((a, b) => b[1] - a[1] || a[0] - b[0]);
          const hidden = new Set(Array.from({ length: 40 }, () => facts[Math.floor(rand() * facts.length)][0]));
          const [lower, min] = [ref[59][1], ref[4][1]];
          for (const k of [3, 5]) {
            const found = new Map(index.near(q, "fact", min, null, { lower, k, hidden }));
            for (const [id, c] of ref.filter(([, c]) => c >= min)) expect(found.get(id)).toBe(c);
            const band = ref.filter(([id, c]) => c >= lower && c < min && !hidden.has(id)).slice(0, k);
            expect(band.length).toBe(k);
            for (const [id, c] of band) expect(found.get(id)).toBe(c);
            expect([...found].filter(([id, c]) => c < min && hidden.has(id))).toEqual([]);
            expect([...found].every(([id, c]) => c >= lower && table.has(id) && dot(table.get(id)!, q) === c)).toBe(true);
          }
        }
      });
    }
  }

  it("reads the band's best and what may still reach them, not every row down to lower", () => {
    const dims = 384;
    const { index, table, put, counter } = indexOf(dims);
    const base = randomUnit(dims);
    // As a memory's facts stand to a new one: most far (about cosine 0.25), a few close.
    for (let id = 1; id <= 4000; id++) put(id, "fact", near(base, id <= 5 ? 0.8 + 0.03 * id : Math.min(0.95, Math.max(-0.9, 0.25 + 0.12 * gauss()))));
    const reads = (run: () => unknown) => {
      counter.reads = 0;
      run();
      return counter.reads;
    };
    const top = { lower: 0.5, k: 4, hidden: [] };
    const band = reads(() => index.near(base, "fact", 0.9, null, top));
    expect(reads(() => index.near(base, "fact", 0.5))).toBeGreaterThan(300);  // every row that far: what a write read before
    expect(band).toBeLessThan(60);  // (35 here: the 5 over 0.9, the best 12 of the band, those that may reach its 4th)
    const want = bruteForce(table, base, 30).filter(([, c]) => c >= 0.5);
    const got = new Map(index.near(base, "fact", 0.9, null, top));
    for (const [id, c] of want.slice(0, 4)) expect(got.get(id)).toBe(c);
    // exactly the rows over min and the band's 4 best: no row past them, whichever were rescored
    const over = want.filter(([, c]) => c >= 0.9);
    expect(got).toEqual(new Map([...over, ...want.filter(([, c]) => c < 0.9).slice(0, 4)]));
    // the band's lower at or over min: no band, as before
    expect(index.near(base, "fact", 0.9, null, { lower: 2, k: 4, hidden: [] })).toEqual(index.near(base, "fact", 0.9));
  });
});

describe("what the index holds", () => {
  it("counts its arrays' bytes exactly and the row map as a bound, and grows a block at a time", () => {
    const { index, put, remove } = indexOf(4, 4, 8);  // blocks of 8 rows, 2 bytes of code a row
    expect(index.bytes()).toBe(0);
    for (let id = 1; id <= 20; id++) {
      const bound = index.bytesWith(1);
      put(id, "fact", v(id, 1, 0, 0));
      expect(index.bytes()).toBeLessThanOrEqual(bound);
    }
    expect(index.codes.map((b) => b.byteLength)).toEqual([8 * 2, 8 * 2, 8 * 2]);
    expect(index.params.map((b) => b.byteLength)).toEqual([8 * 12, 8 * 12, 8 * 12]);
    const arrays = [...index.codes, ...index.params].reduce((s, b) => s + b.byteLength, 0) + index.ids.byteLength + index.types.byteLength;
    expect(arrays).toBe(3 * 8 * (2 + 12) + 24 * 9);
    expect(index.arrayBytes()).toBe(arrays);
    expect(index.bytes()).toBe(arrays + 20 * MAP_ENTRY_BYTES);
    expect(index.bytesWith(4)).toBe(arrays + 24 * MAP_ENTRY_BYTES);  // room in the last block
    expect(index.bytesWith(5)).toBe(arrays + 8 * 14 + 8 * 9 + 24 * 9 + 25 * MAP_ENTRY_BYTES);  // a block more, ids copied
    remove(3);
    expect(index.bytes()).toBe(arrays + 19 * MAP_ENTRY_BYTES);
  });

  it("marks the blocks a change touches, and takes stored blocks back as they were", () => {
    const { index, put, remove } = indexOf(8, 4, 4);  // blocks of 4 rows
    for (let id = 1; id <= 10; id++) put(id, id % 2 ? "fact" : "skill", randomUnit(8));
    expect([...index.dirty]).toEqual([0, 1, 2]);
    index.dirty.clear();
    remove(2);  // the last row (block 2) fills row 1 (block 0)
    expect([...index.dirty]).toEqual([0, 2]);
    const copy = indexOf(8, 4, 4).index;
    copy.grow(index.size);
    const blocks = [0, 1, 2].map((b) => index.blockRows(b));
    expect(blocks.map((b) => b.ids.length)).toEqual([4, 4, 1]);
    for (const { ids, types, params, codes } of blocks) expect(copy.appendBlock(ids, types, params, codes)).toBe(true);
    const q = randomUnit(8);
    expect(copy.approx(q, "skill")).toEqual(index.approx(q, "skill"));
    expect(copy.row).toEqual(index.row);
    expect(copy.dirty.size).toBe(0);
    // Refused: a block after a part-filled one, one of another width, or one holding an id it has.
    const { ids, types, params, codes } = blocks[0];
    expect(copy.appendBlock(ids, types, params, codes)).toBe(false);
    const fresh = indexOf(8, 4, 4).index;
    expect(fresh.appendBlock(ids, types, params, codes.subarray(1))).toBe(false);
    expect(fresh.appendBlock(ids, types, params, codes)).toBe(true);
    expect(fresh.appendBlock(ids, types, params, codes)).toBe(false);
    expect(fresh.size).toBe(4);
  });

  it("takes a row's code, ROW_BYTES and a map entry a fact", () => {
    const { index } = indexOf(768);
    expect(index.bytesWith(BLOCK) / BLOCK).toBe(768 / 2 + ROW_BYTES + MAP_ENTRY_BYTES);
  });
});
