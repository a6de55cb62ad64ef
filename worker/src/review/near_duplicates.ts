// What review asks of the memory (memories/review/near_duplicates.py): the pairs of near duplicates over a
// threshold, each fact's nearest same-type cosine (the histogram), a fact's neighbours, and the
// open proposals (the contradictions queue, memories/review/conflicts.py), or every pair it keeps, for a
// backup; resolving and a backup's restore are writes (conflicts.ts). At or above the floor the
// pairs kept on write answer; until the fill (background.ts) has caught up they are a 503
// `building` that says how far it is: all pairs in JavaScript would pass the CPU limit of a big
// memory. Below the floor every pair is computed, as review.py does.

import { distinct } from "../writes/dedup";
import { type Fact, cleanType, stamp } from "../facts";
import { cleanPageCursor } from "./history";
import { HttpError } from "../serving/http";
import type { Reader } from "../recall/reading";
import { DONE as REPLACED } from "../writes/replace_at_once";
import { Part, type State } from "../storage/state";
import { type FactType, TYPES } from "../storage/vectors";

const RETRY_AFTER = 5;  // seconds: a few slices of the fill, one an alarm

export class Review extends Part {
  constructor(state: State, private reader: Reader) {
    super(state);
  }

  private types(type: string | null): FactType[] {
    return type ? [cleanType(type)] : [...TYPES];
  }

  duplicates(threshold: number, type: string | null, limit: number) {
    const types = this.types(type);
    if (threshold >= this.state.floor) {  // the pairs kept on write
      this.built();
      const where = `score >= ? AND type IN (${types.map(() => "?").join(",")})`;
      const total = this.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM pairs WHERE ${where}`, threshold, ...types).one().n;
      const rows = this.sql.exec(`SELECT score, a, b FROM pairs WHERE ${where} ORDER BY score DESC, a, b LIMIT ?`, threshold, ...types, limit).toArray();
      const facts = this.reader.getMany(rows.flatMap((r) => [r.a as number, r.b as number]));
      return { pairs: rows.map((r) => pair(facts, r.a as number, r.b as number, r.score as number)), total, threshold };
    }
    if (this.state.full) throw this.state.fullError();
    const found: [number, number, number][] = [];
    for (const t of types) for (const p of this.vectors.pairs(t, threshold)) found.push([p[0], Math.min(p[1], p[2]), Math.max(p[1], p[2])]);
    found.sort((x, y) => y[0] - x[0] || x[1] - y[1] || x[2] - y[2]);
    const top = found.slice(0, limit);
    const facts = this.reader.getMany(top.flatMap(([, a, b]) => [a, b]));
    return { pairs: top.map(([s, a, b]) => pair(facts, a, b, s)), total: found.length, threshold };
  }

  /** Each fact's nearest same-type cosine, for the histogram: from the pairs kept on write, so
   * facts whose nearest is below the floor are not listed (as review.py's `nearest`). */
  nearest(type: string | null) {
    const types = this.types(type);
    this.built();
    // Two grouped scans, each in index order (the table's key, then pairs_b, which covers it).
    const marks = types.map(() => "?").join(",");
    const best = new Map<number, number>();
    for (const side of ["a", "b"]) {
      for (const r of this.sql.exec(`SELECT ${side} AS id, max(score) AS s FROM pairs WHERE type IN (${marks}) GROUP BY ${side}`, ...types)) {
        if (!(best.get(r.id as number)! >= (r.s as number))) best.set(r.id as number, r.s as number);
      }
    }
    return [...best].sort((x, y) => x[0] - y[0]).map(([id, score]) => ({ id, score }));
  }

  /** A 503 `building` while the fill of the pairs table has not caught up, saying how far it is. */
  private built(): void {
    if (this.state.pairsReady()) return;
    if (this.state.full) throw this.state.fullError();  // the fill needs the vectors
    const [done, total] = this.state.pairsProgress();
    throw new HttpError(503, "building",
      `the near-duplicate pairs are still being built (${done} of ${total} facts): try again in a few seconds`,
      {}, { "Retry-After": String(RETRY_AFTER) });
  }

  /** GET /conflicts: the open proposals, newest first, a page of `limit` after `cursor` (the last
   * id of the previous page, as the history's), and how many are open. `every`: every pair kept,
   * the resolved ones and those no longer asked about included (what a backup holds; conflicts.py `open`);
   * `done`: those replaced at once (replace_at_once.ts) whose new fact still replaces the old. */
  conflicts(limit: number, cursor: string | null, every = false, done = false) {
    const now = stamp(new Date());
    const before = cleanPageCursor(cursor);
    const [which, args]: [string, SqlStorageValue[]] = every ? ["1", []] : done ? [DONE, [REPLACED]] : [OPEN, [now, now]];
    const total = this.sql.exec<{ n: number }>(`SELECT count(*) AS n ${FROM} WHERE ${which}`, ...args).one().n;
    const [page, pageArgs] = before === null ? ["", []] : [" AND c.id < ?", [before]];
    const rows = this.sql.exec(`SELECT c.id, c.old, c.new, c.score, c.differs, c.resolution ${FROM} WHERE ${which}${page}`
      + " ORDER BY c.id DESC LIMIT ?", ...args, ...pageArgs, limit + 1).toArray();
    const shown = rows.slice(0, limit);
    const facts = this.reader.getMany(shown.flatMap((r) => [r.old as number, r.new as number]));
    return {
      conflicts: shown.map((r) => ({
        id: r.id as number, old: facts.get(r.old as number)!, new: facts.get(r.new as number)!, score: r.score as number,
        differs: JSON.parse(r.differs as string), resolution: r.resolution as string | null,
      })),
      next_cursor: rows.length > limit ? String(shown[shown.length - 1].id) : null,
      total,
    };
  }

  neighbours(id: number, limit: number) {
    this.reader.get(id);
    if (this.state.full) throw this.state.fullError();
    const v = this.vectors.vector(id);
    if (!v) return { neighbours: [] };
    const near = this.vectors.search(v, null, limit, id);
    const facts = this.reader.getMany(near.map(([i]) => i));
    return { neighbours: near.map(([i, s]) => ({ fact: facts.get(i), cosine: s })) };
  }
}

// A pair and both its facts (a row of conflicts whose fact was deleted went with it).
const FROM = "FROM conflicts c JOIN facts o ON o.id = c.old JOIN facts n ON n.id = c.new";
// An open proposal: not resolved, and both its facts current (a proposal whose fact was replaced
// or expired since is no longer asked about; it is kept, and is open again if that is undone).
const OPEN = "c.resolution IS NULL AND (o.valid_until IS NULL OR o.valid_until > ?) AND (n.valid_until IS NULL OR n.valid_until > ?)";
// Replaced at once: the write's pair marked done, and the write's fact still what replaces the old one.
const DONE = "c.resolution = ? AND o.superseded_by = c.new";

/** A pair as the contract gives it; `distinct`: why the two may be different facts after all
 * (dedup.ts, as review.py does), for the owner's review. */
function pair(facts: Map<number, Fact>, a: number, b: number, score: number) {
  const fa = facts.get(a)!, fb = facts.get(b)!;
  return { a: fa, b: fb, score, distinct: distinct(fa.text, fb.text) };
}
