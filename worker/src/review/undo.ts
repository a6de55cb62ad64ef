// The undo of one history entry (POST /history/{id}/undo; memories/review/undo.py `undo`): each is
// the write that puts back what the entry changed (a delete's undo restores the fact, an add's
// deletes it, an edit's edits it back), recorded as an entry naming the one it undoes. An undo
// that would overwrite what was written since is a 409 changed_since unless forced; one that would
// leave what no write may make (a loop of replacements, a fact replaced by one gone or not
// current: replacing.ts) is a 409 undo_refused, forced or not.

import { type Conflicts, type Resolved, putPairs, resolution } from "./conflicts";
import type { Fact } from "../facts";
import type { Entry, History } from "./history";
import { HttpError } from "../serving/http";
import type { Pair } from "../writes/lifecycle";
import type { Reader } from "../recall/reading";
import { type Replaced, check, refusal, replace, settle, unreplace } from "../writes/replacing";
import { sameJson } from "../model/settings";
import { Part, type State } from "../storage/state";
import type { Writer } from "../writes/writing";

// What an undo of an edit puts back, so what it would overwrite (undo.py CHANGED_FIELDS).
const CHANGED_FIELDS = ["text", "type", "source", "valid_until", "superseded_by"] as const;
const changedFields = (f: object): Record<string, unknown> =>
  Object.fromEntries(CHANGED_FIELDS.map((k) => [k, (f as Record<string, unknown>)[k] ?? null]));

export class Undo extends Part {
  constructor(state: State, private reader: Reader, private history: History, private writer: Writer, private conflicts: Conflicts) {
    super(state);
  }

  /** Undo one history entry as the contract says: the entry that records the undo, the fact, and
   * true. Errors: 409 already_undone; 409 changed_since (it would overwrite what was written since
   * the entry) unless `force`; 409 undo_refused (an edit's validity no write could put back) even
   * with `force`; 404 when its fact is gone; id_taken when a deleted fact's id is in use. */
  async undo(entryId: number, client = "", force = false): Promise<{ entry: Entry; fact: Fact | null; restored: boolean }> {
    // Checked now and again after the embedding's await, right before the write: a write that
    // lands meanwhile is seen, as under undo.py's lock.
    const check = () => {
      const now = this.history.entry(entryId);
      if (now.undone_by !== null) {
        throw new HttpError(409, "already_undone", `history entry ${entryId} was undone already, by entry ${now.undone_by}`);
      }
      if (!force) this.unchangedSince(now);
    };
    const entry = this.history.entry(entryId);
    check();
    const note = `undo of #${entryId}`;
    const before = entry.before!;
    let fact: Fact | null = null;
    if (entry.op === "delete") {
      // What was there, under its id and times (own validity too), with its FTS entry, vector and
      // pairs (its near duplicates, and the contradictions it was in, from the entry): no dedup.
      // Then, in the same write, what it replaced and what replaced it (`rejoin`).
      const [pairs, replaced] = [(before.pairs ?? []) as Pair[], (before.replaced ?? []) as Replaced[]];
      const also = () => this.rejoin(before.id as number, pairs, replaced, client);
      const [r] = await this.writer.addMany([before], client, { op: "restore", note, undoes: entryId, restore: true, check, also });
      fact = this.reader.get(r.body.fact.id);
    } else if (entry.op === "edit") {
      const back = { text: before.text, type: before.type, source: before.source };  // its validity: from `entry`, checked
      fact = (await this.writer.editing(entry.fact_id!, back, client, note, entryId, check, entry)).fact;
    } else if (entry.op === "add" || entry.op === "restore") {
      fact = this.writer.delete(entry.fact_id!, client, note, entryId).fact;  // (the delete gives back what it replaced)
    } else if (entry.op === "review") {
      this.writer.unreview(entry, client, note);
    } else if (entry.op === "resolve") {
      this.conflicts.resolved(before as Resolved, client, note, entryId);
    } else {
      this.writer.setSettings(before, client, note, entryId);
    }
    return { entry: this.history.entry(this.history.entry(entryId).undone_by!), fact, restored: true };
  }

  /** Inside the write that puts deleted fact `id` back (undo.py `_rejoin`): its pairs; itself
   * current again if the fact that replaced it is gone (else its end settled from that fact's);
   * and each fact it replaced that is still current and not replaced since, replaced again (so
   * the redo of an add with `supersedes` replaces again). */
  private rejoin(id: number, pairs: Pair[], replaced: Replaced[], client: string): void {
    const before = this.writer.reviewBefore;
    putPairs(this.sql, this.history, pairs, client, null);
    let fact = this.reader.get(id);
    if (fact.superseded_by !== null) {
      if (this.reader.getMany([fact.superseded_by]).has(fact.superseded_by)) settle(this.sql, before, [fact.superseded_by]);
      else unreplace(this.sql, [id]);
    }
    fact = this.reader.get(id);
    for (const r of replaced) {
      const old = this.reader.getMany([r.id]).get(r.id);
      if (!old || refusal(() => check(this.sql, old, id, fact)) !== null) continue;  // gone, or changed since: left as it is now
      replace(this.sql, old.id, id, before);
    }
  }

  /** 409 changed_since when the fact (or the settings, or a resolved pair) no longer holds what
   * `entry` left: the undo would silently overwrite a later write (undo.py `_unchanged_since`).
   * An add that replaced facts left each replaced by it. A delete's undo overwrites nothing (its id
   * in use is id_taken), nor does a review's. */
  private unchangedSince(entry: Entry): void {
    if (entry.op === "delete" || entry.op === "review") return;  // (a review's undo leaves facts reviewed again since as they are)
    const newest = (sql: string, ...args: SqlStorageValue[]) => this.sql.exec<{ m: number | null }>(sql, ...args).one().m;
    const ofFact = (id: number) => newest("SELECT max(id) AS m FROM history WHERE fact_id = ? AND id > ?", id, entry.id);
    const changed = (what: string, now: Record<string, unknown>, newer: number | null) => {
      const by = newer ? ` by history entry ${newer}` : "";
      return new HttpError(409, "changed_since", `${what} changed since history entry ${entry.id}${by}: undoing it would overwrite that; `
        + "send force true to undo it anyway", { entry: newer ?? null, current: now });
    };
    if (entry.op === "settings") {
      const now = this.state.settings() as Record<string, unknown>;
      const newer = newest("SELECT max(id) AS m FROM history WHERE op = 'settings' AND id > ?", entry.id);
      if (!sameJson(now, entry.after!)) throw changed("the settings", now, newer);
      return;
    }
    if (entry.op === "resolve") {  // (a fact of the pair deleted since: its row went with it; forced, a 404)
      const { old, new: next, resolution: left } = entry.after as Resolved;
      const now = { resolution: resolution(this.sql, old, next) ?? null };
      if (now.resolution !== left) throw changed(`fact ${entry.fact_id}`, now, null);
      return;
    }
    const fact = this.reader.get(entry.fact_id!);  // gone since: 404, as before
    const now: Record<string, unknown> = changedFields(fact);
    const left: Record<string, unknown> = changedFields(entry.after!);
    // An add that replaced facts left each replaced by it: one that is not (or is gone) is named.
    const replaced = (entry.before?.replaced ?? []) as Fact[];
    const still = this.reader.getMany(replaced.map((r) => r.id));
    for (const r of replaced) {
      const f = still.get(r.id);
      if (f?.superseded_by !== entry.fact_id) [now[`fact ${r.id}`], left[`fact ${r.id}`]] = [f ?? null, `replaced by ${entry.fact_id}`];
    }
    if (!sameJson(now, left)) throw changed(`fact ${entry.fact_id}`, now, ofFact(entry.fact_id!));
  }
}
