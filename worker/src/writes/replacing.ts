// Which fact replaces which, and what that does to the old fact's validity (memories/writes/replacing.py,
// line for line; then writing.py's `_replaceable`, `_validity` and `_undone_validity`: what a
// write, a PATCH and an edit's undo may replace). Every way a replacement is made or taken back (a
// write's `supersedes`, PATCH's `superseded_by`, a conflict's resolution, a delete, an undo, the
// owner's approval) goes through the checks and the one rule here, so none can make a loop,
// replace a fact that is not current, or hide the owner's fact behind one still waiting in the inbox.
//
// A replaced fact keeps the validity it had in `own_valid_until`. Its `valid_until` is the earlier
// of that and the replacement's time (the later of the two facts' creation) once the replacing
// fact counts: it is not pending (the memory recalls it: review "after", or the owner approved
// it). Until then the old fact stays current, its `superseded_by` naming what waits to replace it.
// Taking a replacement back (un-replacing, or deleting the fact that replaced it) gives the old
// fact its own validity again, exactly.

import { FACT_COLUMNS, type Fact, asFact, validFrom } from "../facts";
import type { Entry } from "../review/history";
import { HttpError, invalid, undoRefused } from "../serving/http";
import { isCurrent } from "./lifecycle";

// valid_until of each fact replaced by one of the ids (?2, a JSON array), or of every replaced fact
// when that is null, from its own validity and its replacing fact: the rule above. ?1: whether the
// memory's review is "before" (an unreviewed fact is pending). json_each: one binding for any
// number of ids.
const SETTLE = `
UPDATE facts SET valid_until = (
    SELECT CASE
        WHEN ?1 AND b.reviewed_at IS NULL THEN facts.own_valid_until
        WHEN facts.own_valid_until IS NOT NULL AND facts.own_valid_until < max(facts.created_at, b.created_at)
            THEN facts.own_valid_until
        ELSE max(facts.created_at, b.created_at) END
    FROM facts AS b WHERE b.id = facts.superseded_by)
WHERE superseded_by IS NOT NULL AND (?2 IS NULL OR superseded_by IN (SELECT value FROM json_each(?2)))
  AND EXISTS (SELECT 1 FROM facts AS b WHERE b.id = facts.superseded_by)`;

/** Inside a write: the validity of the facts that `by` replace (every replaced fact: null). */
export function settle(sql: SqlStorage, reviewBefore: boolean, by: number[] | null = null): void {
  if (by !== null && !by.length) return;
  sql.exec(SETTLE, reviewBefore ? 1 : 0, by === null ? null : JSON.stringify(by));
}

/** Inside a write, checked already (`check`): fact `old` replaced by fact `by`. */
export function replace(sql: SqlStorage, old: number, by: number, reviewBefore: boolean): void {
  sql.exec("UPDATE facts SET own_valid_until = valid_until, superseded_by = ? WHERE id = ? AND superseded_by IS NULL", by, old);
  settle(sql, reviewBefore, [by]);
}

/** Inside a write: these facts no longer replaced, each with its own validity back. */
export function unreplace(sql: SqlStorage, ids: number[]): void {
  sql.exec("UPDATE facts SET valid_until = own_valid_until, own_valid_until = NULL, superseded_by = NULL"
    + " WHERE superseded_by IS NOT NULL AND id IN (SELECT value FROM json_each(?))", JSON.stringify(ids));
}

/** A fact as its row holds it, own validity too (a replaced fact's end of its own). */
export type Replaced = Fact & { own_valid_until: string | null };

/** The facts `id` replaces (waiting or in effect), each as its row holds it: what a delete of `id`
 * gives back, and its undo replaces again. */
export function replacedBy(sql: SqlStorage, id: number): Replaced[] {
  return sql.exec(`SELECT ${FACT_COLUMNS}, own_valid_until FROM facts WHERE superseded_by = ? ORDER BY id`, id).toArray()
    .map((r) => ({ ...asFact(r), own_valid_until: r.own_valid_until as string | null }));
}

/** Fact `id`'s own validity (null unless it is replaced). */
export function ownValidUntil(sql: SqlStorage, id: number): string | null {
  const rows = sql.exec<{ own: string | null }>("SELECT own_valid_until AS own FROM facts WHERE id = ?", id).toArray();
  return rows.length ? rows[0].own : null;
}

/** The ids `id`'s superseded_by leads to, `id` first (a loop stops where it closes). */
export function chain(sql: SqlStorage, id: number): number[] {
  const seen: number[] = [];
  for (let at: number | null = id; at !== null && !seen.includes(at);) {
    seen.push(at);
    const rows = sql.exec<{ superseded_by: number | null }>("SELECT superseded_by FROM facts WHERE id = ?", at).toArray();
    at = rows.length ? rows[0].superseded_by : null;
  }
  return seen;
}

/** 422 unless `old` may be replaced now (by `by`): current, and not replaced by another fact. (An
 * expired fact replaced would come back in as_of, and lose its own end.) */
export function checkOld(old: Fact, by: number | null = null): void {
  if (old.superseded_by !== null && old.superseded_by !== by) {
    throw invalid(`fact ${old.id} is replaced already, by fact ${old.superseded_by}: `
      + "un-replace it first (superseded_by null) to name another");
  }
  if (!isCurrent(old.valid_until, old.created_at)) {
    throw invalid(`fact ${old.id} is not current (its validity ended ${old.valid_until}): only a current fact is replaced`);
  }
}

/** 422 unless fact `by` (`byFact`, undefined: there is none) may replace `old` now: `checkOld`, and
 * `by` another current fact whose chain does not lead back to `old`. */
export function check(sql: SqlStorage, old: Fact, by: number, byFact: Fact | undefined, name = "superseded_by"): void {
  checkOld(old, by);
  if (by === old.id) throw invalid(`${name} names fact ${old.id} itself: a fact cannot replace itself`);
  if (!byFact) throw invalid(`${name} names fact ${by}, which does not exist`);
  if (!isCurrent(byFact.valid_until, byFact.created_at)) throw invalid(`${name} names fact ${by}, which is not current: only a current fact replaces`);
  if (chain(sql, by).includes(old.id)) throw invalid(`${name} names fact ${by}, whose chain leads back to fact ${old.id}: a loop`);
}

/** Why `checking` refused (its 422's message), or null when it did not; any other error goes on. */
export function refusal(checking: () => void): string | null {
  try {
    checking();
    return null;
  } catch (e) {
    if (e instanceof HttpError && e.code === "invalid") return e.message;
    throw e;
  }
}

/** The facts a write's `supersedes` names, read as `facts`, each one that exists, is current and
 * is not replaced yet (inside the write); any other is a 422 naming it, and nothing is stored
 * (writing.py `_replaceable`). */
export function replaceable(ids: number[], facts: Map<number, Fact>): Fact[] {
  return ids.map((id) => {
    const f = facts.get(id);
    if (!f) throw invalid(`supersedes names fact ${id}, which does not exist`);
    const why = refusal(() => checkOld(f));
    if (why !== null) throw invalid(`supersedes names fact ${id}: ${why}`);
    return f;
  });
}

// -- what an edit makes of a fact's validity ------------------------------------------

/** What PATCH gives of a fact's validity: a field left out is undefined, null clears it. */
export type Validity = { superseded_by?: number | null; valid_until?: string | null };

/** A fact's validity as its row holds it: its end, its own end while replaced, what replaces it. */
export type Held = { valid_until: string | null; own_valid_until: string | null; superseded_by: number | null };

/** The fact `id`, or undefined. */
function factOf(sql: SqlStorage, id: number): Fact | undefined {
  const rows = sql.exec(`SELECT ${FACT_COLUMNS} FROM facts WHERE id = ?`, id).toArray();
  return rows.length ? asFact(rows[0]) : undefined;
}

/** What PATCH's `life` makes of `fact`'s validity (`own`: its own_valid_until), checked inside the
 * write (`check`); a replaced fact's valid_until is then settled from its own (writing.py
 * `_validity`). `valid_until` of a replaced fact is its own end. */
export function patched(sql: SqlStorage, fact: Fact, own: string | null, life: Validity): Held {
  let [until, by] = [fact.valid_until, fact.superseded_by];
  const to = life.superseded_by;
  if (to === null && by !== null) {  // no longer replaced: its own end back
    [until, own, by] = [own, null, null];
  } else if (to !== undefined && to !== null && to !== by) {
    check(sql, fact, to, factOf(sql, to));
    [own, by] = [fact.valid_until, to];
  }
  if (life.valid_until !== undefined) {
    validFrom(life.valid_until, fact.created_at);
    if (by === null) until = life.valid_until;
    else own = life.valid_until;
  }
  return { valid_until: until, own_valid_until: own, superseded_by: by };
}

/** What the undo of edit `entry` puts back of `fact`'s validity: its end, or the fact that
 * replaced it, again only where a write could (409 undo_refused says why not, forced or not;
 * writing.py `_undone_validity`). */
export function undone(sql: SqlStorage, fact: Fact, own: string | null, entry: Entry): Held {
  const wasValid = (entry.before?.valid_until ?? null) as string | null;
  const wasBy = (entry.before?.superseded_by ?? null) as number | null;
  if (wasBy === null) return { valid_until: wasValid, own_valid_until: null, superseded_by: null };  // not replaced then: its end as it was
  if (wasBy === fact.superseded_by) return { valid_until: fact.valid_until, own_valid_until: own, superseded_by: wasBy };
  const why = refusal(() => check(sql, fact, wasBy, factOf(sql, wasBy)));
  if (why !== null) {
    throw undoRefused(`history entry ${entry.id} cannot be undone: fact ${fact.id} would be replaced by fact ${wasBy}, and ${why}`);
  }
  return { valid_until: fact.valid_until, own_valid_until: fact.valid_until, superseded_by: wasBy };
}
