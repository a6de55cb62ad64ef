// The arithmetic under the vector index (vectors.ts): a row's 4-bit code and its bound, a query's
// lookup table over the codes, the best rows of a scan, and the exact dot product and norm.

/** `v`'s code into `code` (bits a dimension, packed low bits first) and its lo, step and err into
 * `params`: err is the norm of what the code leaves out, computed with lo and step as stored. */
export function encode(v: Float32Array, bits: number, code: Uint8Array, params: Float32Array): void {
  const levels = 2 ** bits - 1;
  let lo = Infinity, hi = -Infinity;
  for (let d = 0; d < v.length; d++) {
    if (v[d] < lo) lo = v[d];
    if (v[d] > hi) hi = v[d];
  }
  if (!(hi > lo)) hi = lo + 1;  // a constant row: every code 0, lo exact
  const flo = Math.fround(lo), step = Math.fround((hi - lo) / levels);
  const per = 8 / bits;
  code.fill(0);
  let err = 0;
  for (let d = 0; d < v.length; d++) {
    const c = Math.min(levels, Math.max(0, Math.round((v[d] - flo) / step)));
    code[Math.floor(d / per)] |= c << ((d % per) * bits);
    const r = v[d] - (flo + step * c);
    err += r * r;
  }
  params[0] = flo;
  params[1] = step;
  params[2] = Math.sqrt(err) * (1 + 1e-6) + 1e-9;  // rounded up past float32's rounding
}

/** For each byte of a code, what each of its 256 values adds to a row's sum of q·c. */
export function lookup(q: Float32Array, bits: number, rowBytes: number): Float64Array {
  const per = 8 / bits, mask = 2 ** bits - 1;
  const table = new Float64Array(rowBytes * 256);
  for (let j = 0; j < rowBytes; j++) {
    for (let b = 0; b < 256; b++) {
      let s = 0;
      for (let k = 0; k < per; k++) {
        const d = j * per + k;
        if (d < q.length) s += q[d] * ((b >> (k * bits)) & mask);
      }
      table[j * 256 + b] = s;
    }
  }
  return table;
}

/** The rows of the `m` best scores (more on a tie at the last), best first; -Infinity never. */
export function best(s: Float64Array, m: number): number[] {
  let rows: number[] = [];
  for (let i = 0; i < s.length; i++) if (s[i] !== -Infinity) rows.push(i);
  if (rows.length > m) {
    const cut = kth(Float64Array.from(rows, (i) => s[i]), m);
    rows = rows.filter((i) => s[i] >= cut);
  }
  return rows.sort((a, b) => s[b] - s[a]);
}

/** The m-th largest of `xs` (which it reorders): quickselect. */
export function kth(xs: Float64Array, m: number): number {
  let lo = 0, hi = xs.length - 1;
  const want = m - 1;
  while (lo < hi) {
    const pivot = xs[(lo + hi) >> 1];
    let i = lo, j = hi;
    while (i <= j) {
      while (xs[i] > pivot) i++;
      while (xs[j] < pivot) j--;
      if (i <= j) {
        [xs[i], xs[j]] = [xs[j], xs[i]];
        i++;
        j--;
      }
    }
    if (want <= j) hi = j;
    else if (want >= i) lo = i;
    else break;
  }
  return xs[want];
}

/** Best cosine first, ties by id. */
export const byScore = (a: [number, number], b: [number, number]) => b[1] - a[1] || a[0] - b[0];

export function norm(q: Float32Array): number {
  let s = 0;
  for (let d = 0; d < q.length; d++) s += q[d] * q[d];
  return Math.sqrt(s);
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

/** The dot product: two unit vectors' cosine, summed as the exact scores always were. */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += a[d] * b[d];
  return s;
}
