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
//   The r tied rows still wanted are the r lowest tied ids. Two cursors race: the ranked one
//   taking the tie (done when it ends: every tied row seen), and the MATCH stepped by rowid (done
//   when it has met r tied rows: every lower id seen), STEPS rows of this one a row of that. The
//   object's sort gives ties in id order (test/keyword_top.test.ts), where only the second can
//   finish early; in any order the rows read are at most 1 + STEPS times a whole tie's, and at
//   most 1 + 1/STEPS times the id-ordered read's (a tie of 5,000 at 100k facts: 1,230 rows -> 780).

type Row = { id: number; s: number };

/** Rows of the id-ordered cursor a row of the ranked one. */
export const STEPS = 4;

/** Top `depth` of `match` by bm25() as [id, bm25], lower (better) first, ties by id, the
 * `hidden` facts left out before the depth is taken: what `ORDER BY bm25(facts_fts), rowid`
 * with a `NOT IN (hidden)` returns. */
export function keywordTop(sql: SqlStorage, match: string, depth: number, hidden: { has(id: number): boolean } = new Set()): [number, number][] {
  if (!match || depth <= 0) return [];
  const ranked = sql.exec<Row>(
    "SELECT rowid AS id, rank AS s FROM facts_fts WHERE facts_fts MATCH ? AND rank MATCH 'bm25()' ORDER BY rank", match)[Symbol.iterator]();
  const kept: Row[] = [];
  let step = ranked.next();
  for (; !step.done && kept.length < depth; step = ranked.next()) if (!hidden.has(step.value.id)) kept.push(step.value);
  if (kept.length < depth || step.done || step.value.s > kept[depth - 1].s) return sorted(kept, depth);
  // The depth-th kept row ties with the next: race the rest of the tie against the lowest ids.
  const tie = kept[depth - 1].s;
  const better = kept.filter((r) => r.s < tie);
  const wanted = depth - better.length;
  const low = kept.filter((r) => r.s === tie).map((r) => r.id);  // the tied ids taken
  const byRowid = sql.exec<Row>("SELECT rowid AS id, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ? ORDER BY rowid", match)[Symbol.iterator]();
  const first: [number, number][] = [];  // the tied rows in id order
  for (;;) {
    if (step.done || step.value.s !== tie) {  // the whole tie taken: its lowest ids
      return [...sorted(better, better.length), ...low.sort((a, b) => a - b).slice(0, wanted).map((id): [number, number] => [id, tie])];
    }
    if (!hidden.has(step.value.id)) low.push(step.value.id);
    step = ranked.next();
    for (let k = 0; k < STEPS; k++) {
      const row = byRowid.next();
      if (row.done) break;
      if (row.value.s === tie && !hidden.has(row.value.id)) first.push([row.value.id, tie]);
      if (first.length === wanted) return [...sorted(better, better.length), ...first];
    }
  }
}

/** The first `n` of `rows` by (score, id). */
function sorted(rows: Row[], n: number): [number, number][] {
  return [...rows].sort((a, b) => a.s - b.s || a.id - b.id).slice(0, n).map((r) => [r.id, r.s]);
}
