// The in-memory index that cosine search runs over, as memories/storage/vectors.py keeps it: rows
// L2-normalised (cosine is a dot product), a deleted row filled by the last one. The object
// changes it at the end of the SQLite write that changes its vectors, in the same transaction
// (state.ts `transact`).
//
// It holds compact codes, not the vectors: each row quantised to `bits` bits a dimension
// (x ≈ lo + step·c, c in 0..2^bits-1, lo and step per row), with the norm of what rounding left
// out (`err`). A search scores every row on the codes, then reads the exact float32 vectors of
// the candidates from the table (`reader`) and ranks those by their exact cosine, so every
// score it answers is the exact one, summed as before:
// - the k nearest: the best k + `rescore` rows on the codes are rescored, then every row whose
//   code score and bound could still reach the k-th exact cosine, as vectors.py does (what it
//   costs: benchmarks/worker_capacity.py);
// - every row at or above a cosine (duplicates, pairs): each row whose code scores at or above
//   it less that row's bound is rescored. The bound is exact, not measured: the code's error for
//   a query q is the dot product of q with the rounding residual r, and |q·r| <= |q|·|r|
//   (Cauchy-Schwarz), so no row at or above the cosine is ever missed;
// - with it, the k nearest of a band below that cosine (a write's proposals, down to PROPOSE): the
//   best k + RESCORE_TOP of the band on the codes, then each row that could still reach the k-th.
// The rows are held in blocks of BLOCK rows, so growing adds a block and never copies the codes;
// `bytes` says what it holds, `bytesWith` what it would hold with more rows (state.ts checks the
// memory's budget with it). Each block is also a row of SQLite (code_blocks.ts): the index
// marks the blocks a change touches (`dirty`), and a start appends the stored ones (`appendBlock`).

import { best, byScore, dot, encode, kth, lookup, norm } from "./vector_math";

/** Rows a block holds: 96 KiB of codes at 768 dims and 4 bits. */
export const BLOCK = 256;
/** An upper bound on what one entry of a Map costs in V8: key, value and chain slots and a
 * bucket, with the table half full after it doubles, a boxed key past 2^31, and the old table
 * alive while a rehash copies it. */
export const MAP_ENTRY_BYTES = 112;
/** Bits a dimension of a fact's code. */
export const FACT_BITS = 4;
/** Rows rescored past the k asked for (chosen by benchmarks/worker_capacity.py). */
export const RESCORE = 300;
/** Rows rescored past the k a write's proposals ask for (`near`'s `top`; vectors.py RESCORE_TOP). */
export const RESCORE_TOP = 8;
/** Per row: lo, step and err as float32. */
const PARAMS = 3;
/** Bytes a row holds besides its code and its map entry: id (8), type (1), lo, step, err (12). */
export const ROW_BYTES = 8 + 1 + PARAMS * 4;
/** What float64 summation may add to the bound (cosines are within [-1, 1]). */
const SLACK = 1e-6;
/** Ids a read of exact vectors names at once (one JSON parameter). */
const READ_CHUNK = 500;

export const TYPES = ["fact", "skill", "log"] as const;
export type FactType = (typeof TYPES)[number];

/** Exact vectors of the given ids, read from the table (an id it lacks is left out). */
export type Reader = (ids: number[]) => Map<number, Float32Array>;

/** `near`'s band below its cosine (vectors.py's `top` (lower, k, hidden)): the k closest rows from
 * cosine `lower` up, the `hidden` ids left out. */
export type Top = { lower: number; k: number; hidden: Iterable<number> };

export class VectorIndex {
  dims: number;
  n = 0;
  codes: Uint8Array[] = [];  // `block` rows each, rowBytes a row
  params: Float32Array[] = [];  // `block` rows each: lo, step, err
  ids: Float64Array;
  types: Int8Array;
  row = new Map<number, number>();

  /** Rows only appended, each under a new id, and never removed nor found by id (the
   * vocabulary's): no row map is kept, so a row costs its code and ROW_BYTES alone. */
  appendOnly = false;
  /** Blocks changed since they were last stored, and how many blocks of it are stored
   * (code_blocks.ts; Infinity: not known, as for an index not read from them). */
  dirty = new Set<number>();
  storedBlocks = Infinity;

  constructor(dims: number, private reader: Reader, readonly bits = FACT_BITS, readonly block = BLOCK, readonly rescore = RESCORE) {
    if (![1, 2, 4, 8].includes(bits)) throw new Error(`codes of ${bits} bits`);
    this.dims = dims;
    this.ids = new Float64Array(0);
    this.types = new Int8Array(0);
  }

  get size(): number {
    return this.n;
  }

  /** Bytes a row's code takes. */
  get rowBytes(): number {
    return Math.ceil((this.dims * this.bits) / 8);
  }

  put(id: number, type: FactType, vector: Float32Array): void {
    if (this.dims === 0) this.dims = vector.length;  // the first vector fixes the width (none is held yet)
    let i = this.appendOnly ? undefined : this.row.get(id);
    if (i === undefined) {
      if (this.n === this.ids.length) this.grow();
      i = this.n++;
      if (!this.appendOnly) this.row.set(id, i);
      this.ids[i] = id;
    }
    const [code, params] = this.at(i);
    encode(vector, this.bits, code, params);
    this.types[i] = TYPES.indexOf(type);
    this.dirty.add(Math.floor(i / this.block));
  }

  remove(id: number): void {
    if (this.appendOnly) throw new Error("an append-only index removes no row");
    const i = this.row.get(id);
    if (i === undefined) return;
    this.row.delete(id);
    const last = --this.n;
    if (i !== last) {
      const moved = this.ids[last];
      const [code, params] = this.at(i);
      const [lastCode, lastParams] = this.at(last);
      code.set(lastCode);
      params.set(lastParams);
      this.ids[i] = moved;
      this.types[i] = this.types[last];
      this.row.set(moved, i);
    }
    this.dirty.add(Math.floor(i / this.block)).add(Math.floor(last / this.block));  // (the hole's and the last row's)
  }

  clear(): void {
    this.n = 0;
    this.row.clear();
  }

  /** Block `b`'s rows in use, as views: ids, types, lo/step/err and codes (code_blocks.ts stores them). */
  blockRows(b: number): { ids: Float64Array; types: Int8Array; params: Float32Array; codes: Uint8Array } {
    const from = b * this.block, rows = Math.max(0, Math.min(this.block, this.n - from));
    return { ids: this.ids.subarray(from, from + rows), types: this.types.subarray(from, from + rows),
      params: this.params[b].subarray(0, rows * PARAMS), codes: this.codes[b].subarray(0, rows * this.rowBytes) };
  }

  /** A stored block's rows, as `blockRows` gave them, after the whole blocks held; false (and
   * nothing changed) when they do not fit: too many rows, arrays of other lengths, a held id. */
  appendBlock(ids: Float64Array, types: Int8Array, params: Float32Array, codes: Uint8Array): boolean {
    const rows = ids.length;
    if (this.n % this.block || rows < 1 || rows > this.block || types.length !== rows || params.length !== rows * PARAMS
      || codes.length !== rows * this.rowBytes || (!this.appendOnly && ids.some((id) => this.row.has(id)))) return false;
    if (this.n + rows > this.ids.length) this.grow(this.n + rows);
    const b = this.n / this.block;
    this.codes[b].set(codes);
    this.params[b].set(params);
    this.ids.set(ids, this.n);
    this.types.set(types, this.n);
    if (!this.appendOnly) for (let r = 0; r < rows; r++) this.row.set(ids[r], this.n + r);
    this.n += rows;
    return true;
  }

  /** A row's exact vector, read from the table (null: not held). */
  vector(id: number): Float32Array | null {
    return this.row.has(id) ? (this.read([id]).get(id) ?? null) : null;
  }

  /** Whether the row of `id` is the code of `vector` (state.ts compares the index with the table). */
  holds(id: number, vector: Float32Array): boolean {
    const i = this.row.get(id);
    if (i === undefined || vector.length !== this.dims) return false;
    const [code, params] = this.at(i);
    const want = new Uint8Array(code.length), wantParams = new Float32Array(PARAMS);
    encode(vector, this.bits, want, wantParams);
    return want.every((b, k) => b === code[k]) && wantParams.every((p, k) => Object.is(p, params[k]));
  }

  /** Row `i`'s code and its lo, step and err, as views. */
  private at(i: number): [Uint8Array, Float32Array] {
    const b = Math.floor(i / this.block);
    const r = i - b * this.block;
    const rb = this.rowBytes;
    return [this.codes[b].subarray(r * rb, (r + 1) * rb), this.params[b].subarray(r * PARAMS, (r + 1) * PARAMS)];
  }

  /** The bytes the index holds: exact for its arrays, an upper bound for the row map. */
  bytes(): number {
    return this.arrayBytes() + this.row.size * MAP_ENTRY_BYTES;
  }

  /** The bytes of its arrays alone. */
  arrayBytes(): number {
    let sum = this.ids.byteLength + this.types.byteLength;
    for (let b = 0; b < this.codes.length; b++) sum += this.codes[b].byteLength + this.params[b].byteLength;
    return sum;
  }

  /** The bytes it would hold with `more` rows put (each a new id), counting the moment a grow
   * has the old id and type arrays alive beside the new ones. */
  bytesWith(more: number): number {
    const n = this.n + more;
    const blocks = Math.ceil(n / this.block);
    const blockBytes = this.block * (this.rowBytes + PARAMS * 4);
    const capacity = Math.max(this.ids.length, blocks * this.block);
    const copying = capacity > this.ids.length ? this.ids.length * 9 : 0;
    const map = this.appendOnly ? 0 : (this.row.size + more) * MAP_ENTRY_BYTES;
    return Math.max(blocks, this.codes.length) * blockBytes + capacity * 9 + copying + map;
  }

  // -- scores on the codes ----------------------------------------------------------------

  /** Each row's cosine with `q` on the codes; rows of another type get -Infinity. */
  approx(q: Float32Array, type: FactType | null = null): Float64Array {
    const { n, block, bits } = this;
    const rb = this.rowBytes;
    const code = type === null ? -1 : TYPES.indexOf(type);
    const table = lookup(q, bits, rb);
    let sumQ = 0;
    for (let d = 0; d < q.length; d++) sumQ += q[d];
    const out = new Float64Array(n);
    for (let b = 0; b * block < n; b++) {
      const codes = this.codes[b], params = this.params[b];
      const rows = Math.min(block, n - b * block);
      for (let r = 0; r < rows; r++) {
        const i = b * block + r;
        if (code >= 0 && this.types[i] !== code) {
          out[i] = -Infinity;
          continue;
        }
        let s = 0;
        const base = r * rb;
        for (let j = 0, t = 0; j < rb; j++, t += 256) s += table[t + codes[base + j]];
        out[i] = params[r * PARAMS] * sumQ + params[r * PARAMS + 1] * s;
      }
    }
    return out;
  }

  /** How far row `i`'s code may score from its exact cosine with a query of norm `qn`. */
  bound(i: number, qn: number): number {
    const b = Math.floor(i / this.block);
    return this.params[b][(i - b * this.block) * PARAMS + 2] * qn + SLACK;
  }

  // -- exact answers ----------------------------------------------------------------------

  /** The exact vectors of `ids` from the table, READ_CHUNK ids a read. */
  read(ids: number[]): Map<number, Float32Array> {
    if (ids.length <= READ_CHUNK) return this.reader(ids);
    const out = new Map<number, Float32Array>();
    for (let k = 0; k < ids.length; k += READ_CHUNK) for (const [id, v] of this.reader(ids.slice(k, k + READ_CHUNK))) out.set(id, v);
    return out;
  }

  /** [id, exact cosine] of the given rows (a row the table lacks is left out). */
  private exact(q: Float32Array, rows: number[]): [number, number][] {
    const vectors = this.read(rows.map((i) => this.ids[i]));
    const out: [number, number][] = [];
    for (const i of rows) {
      const v = vectors.get(this.ids[i]);
      if (v) out.push([this.ids[i], dot(v, q)]);
    }
    return out;
  }

  /** The k nearest as [id, exact cosine], best first, ties by id: exact search's answer, by
   * vectors.py's rule. The best k + `rescore` on the codes are rescored, then every other row
   * whose code score and bound could still reach the k-th exact cosine (a crowd of rows closer
   * together than the codes' error). `hidden`: facts left out before the k are taken (recall's
   * facts no longer current), so the k are among the others. */
  search(q: Float32Array, type: FactType | null = null, k = 30, exclude: number | null = null, hidden: Iterable<number> = []): [number, number][] {
    const s = this.approx(q, type);
    if (exclude !== null && this.row.has(exclude)) s[this.row.get(exclude)!] = -Infinity;
    this.leaveOut(s, hidden);
    const first = best(s, k + this.rescore);
    const found = this.exact(q, first).sort(byScore);
    const kth = found.length >= k ? found[k - 1][1] : -Infinity;
    for (const i of first) s[i] = -Infinity;  // rescored already
    const more = this.reach(s, norm(q), kth);
    return (more.length ? found.concat(this.exact(q, more)).sort(byScore) : found).slice(0, k);
  }

  /** Code scores of the `hidden` ids' rows to -Infinity: nothing after (`best`, `reach`) picks them. */
  private leaveOut(s: Float64Array, hidden: Iterable<number>): void {
    for (const id of hidden) {
      const i = this.row.get(id);
      if (i !== undefined) s[i] = -Infinity;
    }
  }

  /** Every row of the type at or above cosine `min`, as [id, exact cosine] in row order: each
   * row whose code scores within its bound of `min` is rescored.
   *
   * `top`: also the k closest rows from cosine `top.lower` up to `min` (and any tied with the
   * k-th), leaving out the hidden ids, exactly (the best k + RESCORE_TOP on the codes rescored,
   * then any row that could still reach the k-th): what a write's proposals need, without
   * rescoring every row down to `lower` (vectors.py `near`'s `top`). */
  near(q: Float32Array, type: FactType | null, min: number, exclude: number | null = null, top: Top | null = null): [number, number][] {
    const s = this.approx(q, type), qn = norm(q);
    const rows = this.reach(s, qn, min).filter((i) => this.ids[i] !== exclude);
    const out = this.exact(q, rows).filter(([, c]) => c >= min);
    return top && top.lower < min ? out.concat(this.closestBetween(q, s, qn, top, min)) : out;
  }

  /** `near`'s band: of the rows whose exact cosine lies in [lower, min), the k best (and any tied
   * with the k-th) with their exact cosines, the hidden left out (vectors.py `_closest_between`).
   * `s`, the code scores, is changed. */
  private closestBetween(q: Float32Array, s: Float64Array, qn: number, top: Top, min: number): [number, number][] {
    const { lower, k } = top;
    this.leaveOut(s, top.hidden);
    const band: number[] = [];
    for (let i = 0; i < s.length; i++) {
      if (s[i] === -Infinity) continue;
      const e = this.bound(i, qn);
      if (s[i] + e >= lower && s[i] - e < min) band.push(i);
    }
    // The best k + RESCORE_TOP on the codes (more on a tie at the last), then the rest.
    let first = band, rest: number[] = [];
    if (band.length > k + RESCORE_TOP) {
      const cut = kth(Float64Array.from(band, (i) => s[i]), k + RESCORE_TOP);
      [first, rest] = [band.filter((i) => s[i] >= cut), band.filter((i) => s[i] < cut)];
    }
    const inside = (c: number) => c >= lower && c < min;
    let found = this.exact(q, first);
    const cosines = found.map(([, c]) => c).filter(inside).sort((a, b) => b - a);
    const kthCosine = cosines.length >= k ? cosines[k - 1] : lower;
    // A row left out whose code could still reach the k-th is rescored too.
    const more = rest.filter((i) => s[i] + this.bound(i, qn) >= kthCosine);
    if (more.length) found = found.concat(this.exact(q, more));
    // The k best and any tied with the k-th: which rows past it were rescored depends on the
    // codes' order, so they are not answered (vectors.py `k_best`).
    const within = found.filter(([, c]) => inside(c));
    if (within.length <= k) return within;
    const cut = within.map(([, c]) => c).sort((a, b) => b - a)[k - 1];
    return within.filter(([, c]) => c >= cut);
  }

  /** The rows whose code score `s` (for a query of norm `qn`) is within its bound of `min`:
   * every row whose exact cosine may be `min` or more. */
  private reach(s: Float64Array, qn: number, min: number): number[] {
    const rows: number[] = [];
    for (let i = 0; i < s.length; i++) if (s[i] !== -Infinity && s[i] + this.bound(i, qn) >= min) rows.push(i);
    return rows;
  }

  /** Where one fact stands for a query: [1-based rank or null, cosine or null], its place in
   * `search`'s order (a tie goes to the smaller id). A row whose code scores within its bound of
   * the fact's cosine is rescored; the others are surely above or below. Among the rows not
   * `hidden` (as `search`): a hidden fact has its cosine and no rank. */
  rankOf(q: Float32Array, id: number, type: FactType | null, hidden: Set<number> = new Set()): [number | null, number | null] {
    const i = this.row.get(id);
    if (i === undefined) return [null, null];
    const mine = this.exact(q, [i]);
    if (!mine.length) return [null, null];
    const c = mine[0][1];
    if ((type !== null && this.types[i] !== TYPES.indexOf(type)) || hidden.has(id)) return [null, c];
    const s = this.approx(q, type);
    this.leaveOut(s, hidden);
    const qn = norm(q);
    let better = 0;
    const unsure: number[] = [];
    for (let j = 0; j < s.length; j++) {
      if (j === i || s[j] === -Infinity) continue;
      const e = this.bound(j, qn);
      if (s[j] - e > c) better++;
      else if (s[j] + e >= c) unsure.push(j);
    }
    for (const [other, x] of this.exact(q, unsure)) if (x > c || (x === c && other < id)) better++;
    return [better + 1, c];
  }

  /** Every same-type pair (each once) at or above cosine `min`, as [exact cosine, id of the
   * earlier row, id of the later]: each row's exact vector against the codes of the rows after
   * it, and the pairs within the bound rescored. */
  pairs(type: FactType, min = -Infinity): [number, number, number][] {
    const code = TYPES.indexOf(type);
    const out: [number, number, number][] = [];
    const rows: number[] = [];
    for (let i = 0; i < this.n; i++) if (this.types[i] === code) rows.push(i);
    for (let k = 0; k < rows.length; k += READ_CHUNK) {
      const chunk = rows.slice(k, k + READ_CHUNK);
      const vectors = this.read(chunk.map((i) => this.ids[i]));
      const wanted: [Float32Array, number, number[]][] = [];  // [vector, its row, rows to rescore with it]
      for (const x of chunk) {
        const v = vectors.get(this.ids[x]);
        if (!v) continue;
        const s = this.approx(v, type);
        const qn = norm(v);
        const near: number[] = [];
        for (let y = x + 1; y < s.length; y++) if (s[y] !== -Infinity && s[y] + this.bound(y, qn) >= min) near.push(y);
        wanted.push([v, x, near]);
      }
      const others = this.read([...new Set(wanted.flatMap(([, , near]) => near.map((y) => this.ids[y])))].filter((id) => !vectors.has(id)));
      for (const [v, x, near] of wanted) {
        for (const y of near) {
          const w = vectors.get(this.ids[y]) ?? others.get(this.ids[y]);
          if (!w) continue;
          const c = dot(v, w);
          if (c >= min) out.push([c, this.ids[x], this.ids[y]]);
        }
      }
    }
    return out;
  }

  /** Blocks enough for `rows` rows (one more by default): the codes stay where they are; only ids
   * and types (9 bytes a row) are copied. A start that knows its count grows once. */
  grow(rows = this.ids.length + 1): void {
    while (this.codes.length * this.block < rows) {
      this.codes.push(new Uint8Array(this.block * this.rowBytes));
      this.params.push(new Float32Array(this.block * PARAMS));
    }
    const capacity = this.codes.length * this.block;
    if (capacity === this.ids.length) return;
    const ids = new Float64Array(capacity);
    ids.set(this.ids.subarray(0, this.n));
    const types = new Int8Array(capacity);
    types.set(this.types.subarray(0, this.n));
    Object.assign(this, { ids, types });
  }
}
