// The in-memory matrix that exact cosine search runs over, as memories/vectors.py keeps it:
// rows L2-normalised (cosine is a dot product), a deleted row filled by the last one. The object
// changes it only right after the matching SQLite write commits. The rows are held in blocks of
// BLOCK rows, so growing adds a block and never copies the matrix (doubling one array needed the
// old and the new alive at once: 3x the rows); `bytes` says what it holds, `bytesWith` what it
// would hold with more rows (state.ts checks the memory's budget with it).

/** Rows a block holds: 768 KiB at 768 dims. */
export const BLOCK = 256;
/** An upper bound on what one entry of a Map costs in V8: key, value and chain slots and a
 * bucket, with the table half full after it doubles, a boxed key past 2^31, and the old table
 * alive while a rehash copies it. */
export const MAP_ENTRY_BYTES = 112;

export const TYPES = ["fact", "skill", "log"] as const;
export type FactType = (typeof TYPES)[number];

export class VectorIndex {
  dims: number;
  n = 0;
  blocks: Float32Array[] = [];  // BLOCK rows each (`block` rows while that is smaller)
  ids: Float64Array;
  types: Int8Array;
  row = new Map<number, number>();

  constructor(dims: number, private block = BLOCK) {
    this.dims = dims;
    this.ids = new Float64Array(0);
    this.types = new Int8Array(0);
  }

  get size(): number {
    return this.n;
  }

  put(id: number, type: FactType, vector: Float32Array): void {
    if (this.dims === 0) this.dims = vector.length;  // the first vector fixes the width (none is held yet)
    let i = this.row.get(id);
    if (i === undefined) {
      if (this.n === this.ids.length) this.grow();
      i = this.n++;
      this.row.set(id, i);
      this.ids[i] = id;
    }
    this.at(i).set(vector);
    this.types[i] = TYPES.indexOf(type);
  }

  remove(id: number): void {
    const i = this.row.get(id);
    if (i === undefined) return;
    this.row.delete(id);
    const last = --this.n;
    if (i !== last) {
      const moved = this.ids[last];
      this.at(i).set(this.at(last));
      this.ids[i] = moved;
      this.types[i] = this.types[last];
      this.row.set(moved, i);
    }
  }

  clear(): void {
    this.n = 0;
    this.row.clear();
  }

  vector(id: number): Float32Array | null {
    const i = this.row.get(id);
    return i === undefined ? null : this.at(i);
  }

  /** Row `i` of the matrix, a view. */
  private at(i: number): Float32Array {
    const b = Math.floor(i / this.block);
    const start = (i - b * this.block) * this.dims;
    return this.blocks[b].subarray(start, start + this.dims);
  }

  /** The bytes the index holds: exact for its arrays, an upper bound for the row map. */
  bytes(): number {
    return this.blocks.reduce((sum, b) => sum + b.byteLength, 0) + this.ids.byteLength + this.types.byteLength
      + this.row.size * MAP_ENTRY_BYTES;
  }

  /** The bytes it would hold with `more` rows put (each a new id), counting the moment a grow
   * has the old id and type arrays alive beside the new ones. */
  bytesWith(more: number): number {
    const n = this.n + more;
    const blocks = Math.ceil(n / this.block);
    const rowBytes = this.dims * 4;
    let matrix = this.blocks.reduce((sum, b) => sum + b.byteLength, 0);
    for (let b = this.blocks.length; b < blocks; b++) matrix += this.block * rowBytes;
    const capacity = Math.max(this.ids.length, blocks * this.block);
    const copying = capacity > this.ids.length ? this.ids.length * 9 : 0;
    return matrix + capacity * 9 + copying + (this.row.size + more) * MAP_ENTRY_BYTES;
  }

  /** Cosine of every row with the query; rows of another type get -Infinity. */
  scores(q: Float32Array, type: FactType | null = null): Float64Array {
    const { dims, n, block } = this;
    const code = type === null ? -1 : TYPES.indexOf(type);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      if (code >= 0 && this.types[i] !== code) {
        out[i] = -Infinity;
        continue;
      }
      const b = Math.floor(i / block);
      const matrix = this.blocks[b];
      const base = (i - b * block) * dims;
      let s = 0;
      for (let d = 0; d < dims; d++) s += matrix[base + d] * q[d];
      out[i] = s;
    }
    return out;
  }

  /** The k nearest as [id, cosine], best first (ties by id, as in vectors.py). */
  search(q: Float32Array, type: FactType | null = null, k = 30, exclude: number | null = null): [number, number][] {
    const s = this.scores(q, type);
    if (exclude !== null && this.row.has(exclude)) s[this.row.get(exclude)!] = -Infinity;
    return this.top(s, k);
  }

  private top(s: Float64Array, k: number): [number, number][] {
    // A k-long list kept in order while one pass goes over the scores: k is small (30), n is not.
    const best: number[] = [];
    const before = (a: number, b: number) => s[a] > s[b] || (s[a] === s[b] && this.ids[a] < this.ids[b]);
    for (let i = 0; i < s.length; i++) {
      if (s[i] === -Infinity || (best.length === k && !before(i, best[k - 1]))) continue;
      let j = best.length === k ? k - 1 : best.length;
      while (j > 0 && before(i, best[j - 1])) {
        best[j] = best[j - 1];
        j--;
      }
      best[j] = i;
    }
    return best.map((i) => [this.ids[i], s[i]]);
  }

  /** Where one fact stands for a query: [1-based rank or null, cosine or null]. */
  rankOf(q: Float32Array, id: number, type: FactType | null): [number | null, number | null] {
    const i = this.row.get(id);
    if (i === undefined) return [null, null];
    const s = this.scores(q, type);
    if (s[i] === -Infinity) return [null, this.scores(q, null)[i]];
    let better = 0;
    for (let j = 0; j < s.length; j++) if (s[j] > s[i]) better++;
    return [better + 1, s[i]];
  }

  /** Every same-type pair (each once) as [cosine, id of the earlier row, id of the later]. */
  *pairs(type: FactType): Generator<[number, number, number]> {
    const code = TYPES.indexOf(type);
    const rows: number[] = [];
    for (let i = 0; i < this.n; i++) if (this.types[i] === code) rows.push(i);
    const { dims } = this;
    for (let x = 0; x < rows.length; x++) {
      const a = this.at(rows[x]);
      for (let y = x + 1; y < rows.length; y++) {
        const b = this.at(rows[y]);
        let s = 0;
        for (let d = 0; d < dims; d++) s += a[d] * b[d];
        yield [s, this.ids[rows[x]], this.ids[rows[y]]];
      }
    }
  }

  /** One block more: the matrix's rows stay where they are; only ids and types (9 bytes a row) are copied. */
  private grow(): void {
    this.blocks.push(new Float32Array(this.block * this.dims));
    const capacity = this.blocks.length * this.block;
    const ids = new Float64Array(capacity);
    ids.set(this.ids.subarray(0, this.n));
    const types = new Int8Array(capacity);
    types.set(this.types.subarray(0, this.n));
    Object.assign(this, { ids, types });
  }
}

/** Unit length, so a dot product is the cosine (Workers AI's vectors are not normalised). */
export function normalise(v: ArrayLike<number>): Float32Array {
  let norm = 0;
  for (let i = 0; i < v.length; i++) norm += v[i] * v[i];
  norm = Math.sqrt(norm) || 1;
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] / norm;
  return out;
}

/** The dot product: two unit vectors' cosine, summed as `scores` sums it. */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += a[d] * b[d];
  return s;
}
