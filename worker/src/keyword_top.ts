// The keyword list's top by BM25, read in about as many rows as it returns. The object is billed
// a row for each row an FTS5 query steps through, not for FTS5's own reads: `ORDER BY s, rowid
// LIMIT n` scores and sorts every match in the statement (two rows each), where `ORDER BY rank`
// is sorted inside FTS5 (its own statement, bm25() of every match, not billed) and steps only
// through the rows taken (test/keyword_top.test.ts). The list is the same, built so:
//
// - `ORDER BY rank` returns the matches by bm25() (`rank MATCH 'bm25()'`: the same function, so
//   the same scores), but ties in no promised order. So rows are taken while they are better than
//   the depth-th kept one or tie with it: every row not taken scores worse, and the kept ones
//   sorted by (score, id) are the old query's order.
// - A large tie at the depth (facts of one length holding the same words) would be taken whole.
//   The r tied rows still wanted are the r lowest tied ids; once the tied rows taken pass the
//   r-th lowest tied id seen (at most that many matches lie at or below it), they are found in
//   id order instead: the MATCH stepped by rowid up to that id, the first r whose bm25() is the
//   tie's: at most twice the rows of taking the tie whole.

type Row = { id: number; s: number };

/** Top `depth` of `match` by bm25() as [id, bm25], lower (better) first, ties by id, the
 * `hidden` facts left out before the depth is taken: what `ORDER BY bm25(facts_fts), rowid`
 * with a `NOT IN (hidden)` returns. */
export function keywordTop(sql: SqlStorage, match: string, depth: number, hidden: Set<number> = new Set()): [number, number][] {
  if (!match || depth <= 0) return [];
  const ranked = sql.exec<Row>(
    "SELECT rowid AS id, rank AS s FROM facts_fts WHERE facts_fts MATCH ? AND rank MATCH 'bm25()' ORDER BY rank", match)[Symbol.iterator]();
  const kept: Row[] = [];
  let step = ranked.next();
  for (; !step.done && kept.length < depth; step = ranked.next()) if (!hidden.has(step.value.id)) kept.push(step.value);
  if (kept.length < depth || step.done || step.value.s > kept[depth - 1].s) return sorted(kept, depth);
  // The depth-th kept row ties with the next: take its tied rows, or find the lowest-id ones.
  const tie = kept[depth - 1].s;
  const better = kept.filter((r) => r.s < tie);
  const wanted = depth - better.length;
  const low = kept.filter((r) => r.s === tie).map((r) => r.id).sort((a, b) => a - b);  // the `wanted` lowest tied ids seen
  for (let taken = 1; !step.done && step.value.s === tie; step = ranked.next(), taken++) {
    const id = step.value.id;
    if (!hidden.has(id) && id < low[wanted - 1]) {
      low.splice(low.findIndex((other) => other > id), 0, id);
      low.pop();
    }
    if (taken >= low[wanted - 1]) return [...sorted(better, better.length), ...byId(sql, match, tie, low[wanted - 1], wanted, hidden)];
  }
  return [...sorted(better, better.length), ...low.map((id): [number, number] => [id, tie])];
}

/** The first `n` of `rows` by (score, id). */
function sorted(rows: Row[], n: number): [number, number][] {
  return [...rows].sort((a, b) => a.s - b.s || a.id - b.id).slice(0, n).map((r) => [r.id, r.s]);
}

/** The `n` lowest ids up to `bound` that `match` scores `score`, not hidden: the MATCH stepped
 * in rowid order (as many rows as the matches up to the n-th). */
function byId(sql: SqlStorage, match: string, score: number, bound: number, n: number, hidden: Set<number>): [number, number][] {
  const out: [number, number][] = [];
  // No `rowid <= bound` in the query: the object's SQLite checks it row by row, not in FTS5, and its
  // cursor reads a row ahead, so the last row up to it would step through every match past it.
  const rows = sql.exec<Row>("SELECT rowid AS id, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rowid", match);
  for (const r of rows) {
    if (r.id > bound) break;
    if (r.s === score && !hidden.has(r.id)) out.push([r.id, r.s]);
    if (out.length === n) break;
  }
  return out;
}
