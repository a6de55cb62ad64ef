// The contradictions' resolution and a backup's pairs (memories/review/conflicts.py `resolve` and
// `restore`, with its `set_resolution`, `restore_pairs`, `pairs_of` and `put_pairs`): "replace" and
// "keep_old" replace one fact by the other, an edit of the one replaced (writing.ts, replacing.ts);
// "keep_both" marks the pair, which is never proposed again. Each is one history entry, undoable
// (undo.ts). The queue itself is read by review.ts.

import { type Fact, cleanId } from "../facts";
import type { History } from "./history";
import { invalid } from "../serving/http";
import { type Pair, type Resolution, cleanPair, cleanResolution, differences, isCurrent } from "../writes/lifecycle";
import type { Reader } from "../recall/reading";
import { Part, type State } from "../storage/state";
import { dot } from "../storage/vector_math";
import type { Writer } from "../writes/writing";

export const RESTORED_PAIR = "from a backup: the pair as it was resolved";

/** A pair of facts and how the owner resolved it (null: open), a `resolve` entry's before and after. */
export type Resolved = { old: number; new: number; resolution: Resolution | null };

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const current = (f: Fact) => isCurrent(f.valid_until, f.created_at);

export class Conflicts extends Part {
  constructor(state: State, private reader: Reader, private history: History, private writer: Writer) {
    super(state);
  }

  /** POST /conflicts/resolve: two current facts, and which is true (conflicts.py `resolve`).
   * `replace` and `keep_old` replace one by the other, an edit of the fact replaced (as PATCH's
   * `superseded_by`); `keep_both` marks the pair, which is never proposed again. */
  async resolve(data: Record<string, unknown>, client = "") {
    const resolution = cleanResolution(data.resolution);
    const [old, next] = (["old", "new"] as const).map((name) => {
      if (data[name] === undefined || data[name] === null) throw invalid(`${name} is required: a fact id`);
      return cleanId(data[name])!;
    });
    if (old === next) throw invalid("old and new are the same fact");
    for (const f of [this.reader.get(old), this.reader.get(next)]) {
      if (!current(f)) throw invalid(`fact ${f.id} is not current: resolve only current facts`);
    }
    const note = { replace: `resolved: #${next} replaces #${old}`, keep_old: `resolved: #${old} is right, #${next} replaced`,
      keep_both: `resolved: #${old} and #${next} are both true` }[resolution];
    const entry = resolution === "replace" ? (await this.writer.editing(old, { superseded_by: next }, client, note)).entry
      : resolution === "keep_old" ? (await this.writer.editing(next, { superseded_by: old }, client, note)).entry
        : this.resolved({ old, new: next, resolution }, client, note);
    return { old: this.reader.get(old), new: this.reader.get(next), resolution, entry };
  }

  /** The pair's resolution set (a row of conflicts made if the pair was never proposed, with their
   * cosine and what differs), recorded as a `resolve` entry; answers its id (conflicts.py `set_resolution`). */
  resolved(to: Resolved, client: string, note: string, undoes: number | null = null): number {
    const [old, next] = [this.reader.get(to.old), this.reader.get(to.new)];  // (an undo: one deleted since is a 404)
    return this.ctx.storage.transactionSync(() => {
      const before = resolution(this.sql, old.id, next.id);
      if (before !== undefined) {
        this.sql.exec("UPDATE conflicts SET resolution = ? WHERE old = ? AND new = ?", to.resolution, old.id, next.id);
      } else {
        const vectors = this.vectors.read([old.id, next.id]);
        const [a, b] = [vectors.get(old.id), vectors.get(next.id)];
        this.sql.exec("INSERT INTO conflicts (old, new, score, differs, resolution) VALUES (?, ?, ?, ?, ?)", old.id, next.id,
          a && b ? round6(dot(a, b)) : 0, JSON.stringify(differences(old.text, next.text)), to.resolution);
      }
      return this.history.record(client, "resolve", next.id, { old: old.id, new: next.id, resolution: before ?? null }, to, note, undoes);
    });
  }

  /** POST /conflicts/restore: a backup's pairs put back, after its facts (conflicts.py `restore`
   * and `restore_pairs`): each whose two facts are here and whose pair and id the memory
   * does not hold yet, in one write; the others skipped. "keep_both" is recorded as a `resolve`
   * entry, as the owner's resolution is, so its undo opens the pair again. Any malformed pair: a
   * 422 naming it, and nothing stored. */
  restorePairs(value: unknown, client = ""): { restored: number; skipped: number } {
    if (!Array.isArray(value)) throw invalid("conflicts must be a list of pairs");
    const pairs = value.map((p, n) => cleanPair(p, n));
    // Nothing in memory changes (no vector, no word): the transaction alone, as `resolved`'s.
    const restored = this.ctx.storage.transactionSync(() => putPairs(this.sql, this.history, pairs, client, RESTORED_PAIR));
    return { restored, skipped: pairs.length - restored };
  }
}

/** The pairs fact `id` is in, as a backup holds them: what its delete takes with it (conflicts.py `pairs_of`). */
export function pairsOf(sql: SqlStorage, id: number): Pair[] {
  return sql.exec("SELECT id, old, new, score, differs, resolution FROM conflicts WHERE old = ? OR new = ? ORDER BY id", id, id)
    .toArray().map((r) => ({ id: r.id as number, old: r.old as number, new: r.new as number, score: r.score as number,
      differs: JSON.parse(r.differs as string), resolution: r.resolution as Pair["resolution"] }));
}

/** Inside a write: each pair whose facts are here and whose pair and id are free, stored as it
 * was; how many. With a `note`, each "keep_both" is a `resolve` entry (its undo opens the pair
 * again), as the owner's resolution is; without, the caller's entry covers them (conflicts.py `put_pairs`). */
export function putPairs(sql: SqlStorage, history: History, pairs: Pair[], client: string, note: string | null): number {
  let put = 0;
  for (const p of pairs) {
    const here = sql.exec<{ n: number }>("SELECT count(*) AS n FROM facts WHERE id IN (?, ?)", p.old, p.new).one().n === 2;
    const taken = sql.exec("SELECT 1 FROM conflicts WHERE (old = ? AND new = ?) OR id = ?", p.old, p.new, p.id).toArray().length > 0;
    if (!here || taken) continue;
    sql.exec("INSERT INTO conflicts (id, old, new, score, differs, resolution) VALUES (?, ?, ?, ?, ?, ?)",
      p.id, p.old, p.new, p.score, JSON.stringify(p.differs), p.resolution);
    if (p.resolution === "keep_both" && note !== null) { // (a pair replaced at once: its add entry covers it)
      const to: Resolved = { old: p.old, new: p.new, resolution: p.resolution };
      history.record(client, "resolve", p.new, { ...to, resolution: null }, to, note);
    }
    put++;
  }
  return put;
}

/** The resolution of the pair's row of conflicts (null: open), or undefined: there is none. */
export function resolution(sql: SqlStorage, old: number, next: number): Resolution | null | undefined {
  const rows = sql.exec<{ resolution: Resolution | null }>("SELECT resolution FROM conflicts WHERE old = ? AND new = ?", old, next).toArray();
  return rows.length ? rows[0].resolution : undefined;
}
