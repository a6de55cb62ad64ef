// Which stored fact a write duplicates: memories/writes/duplicates_of.py, line for line (its docstring
// says why). The write path (writing.ts) asks, inside its transaction.

import { distinct, sameButSubject, spellings, SUBJECT_FLOOR } from "./dedup";
import { type Fact, stamp } from "../facts";
import { currentClosest } from "./lifecycle";
import type { Reader } from "../recall/reading";
import { Part, type State } from "../storage/state";
import { textKey } from "../text";
import type { FactType } from "../storage/vectors";

const NEAR_CANDIDATES = 10;  // same-type neighbours over the threshold that dedup looks at

export class Duplicates extends Part {
  constructor(state: State, private reader: Reader) {
    super(state);
  }

  // Dedup compares with current facts only: a replaced or expired fact is no duplicate. `skip`:
  // the facts a new one replaces (its `supersedes`), no duplicate of it either.

  private exact(text: string, type: FactType, exclude: number | null = null, skip: number[] = []): [number, string, number] | null {
    const rows = this.sql.exec("SELECT id FROM facts WHERE type = ? AND text_key = ? AND id IS NOT ?"
      + " AND (valid_until IS NULL OR valid_until > ?) AND id NOT IN (SELECT value FROM json_each(?)) LIMIT 1",
    type, textKey(text), exclude, stamp(new Date()), JSON.stringify(skip)).toArray();
    return rows.length ? [rows[0].id as number, "exact", 1.0] : null;
  }

  /** [existing id, "exact" or "near", score] of a current fact this one would duplicate; `near`
   * holds [id, exact cosine] of every same-type fact at or above the threshold (and maybe more). */
  find(text: string, type: FactType, near: [number, number][], exclude: number | null = null,
    skip: number[] = []): [number, string, number] | null {
    const exact = this.exact(text, type, exclude, skip);
    if (exact) return exact;
    // The nearest current same-type facts at or above the threshold, best first; the first that
    // does not differ in a number, date, name or negation is the duplicate (dedup.ts says why).
    const over = near.filter(([id, s]) => s >= this.state.threshold && id !== exclude && !skip.includes(id));
    const [facts, live] = currentClosest(over, (ids) => this.reader.getMany(ids), NEAR_CANDIDATES);
    const same = live.find(([id]) => distinct(text, facts.get(id)!.text) === null);
    if (same) return [same[0], "near", same[1]];
    // The same text with or without "The owner" scores below the threshold: its own look.
    const close = near.filter(([id, s]) => s >= SUBJECT_FLOOR && id !== exclude && !skip.includes(id));
    const [others, current] = currentClosest(close, (ids) => this.reader.getMany(ids), NEAR_CANDIDATES);
    const twin = current.find(([id]) => sameButSubject(text, others.get(id)!.text));
    return twin ? [twin[0], "near", twin[1]] : null;
  }

  /** The newest replaced fact of the type that holds the text (the same key), when no current one
   * does: what was true before the owner moved on, not stored again. */
  replaced(text: string, type: FactType): Fact | null {
    const rows = this.sql.exec("SELECT id FROM facts WHERE type = ? AND text_key IN (SELECT value FROM json_each(?))"
      + " AND superseded_by IS NOT NULL ORDER BY id DESC LIMIT 1", type, JSON.stringify(spellings(text))).toArray();
    return rows.length ? this.reader.get(rows[0].id as number) : null;
  }
}
