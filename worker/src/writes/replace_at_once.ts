// Whether a write replaces the fact it proposes at once: the memory's `proposals` setting.
// memories/writes/replace_at_once.py mirrors it, line for line.
//
// `propose` (the default) keeps every proposal for a client (the agent, the owner) to decide.
// `replace`: a fact written alone by a client or with a source the memory trusts (reviewing.ts's
// rule: the dashboard, or the `review` setting's `trusted`) that proposes exactly one fact replaces
// it in the same write, recorded with the add and undone with it, the pair kept as done
// (`resolution` "replace"). Two or three proposals mean the write answers more than one question,
// or the rule is unsure which: those wait for a decision, as a batch's (an import's) do.

import type { Fact } from "../facts";
import { invalid } from "../serving/http";
import type { Differs } from "./lifecycle";
import type { Reader } from "../recall/reading";
import { replace } from "./replacing";
import { type ReviewSetting, reviewedBy } from "../review/reviewing";

export const MODES = ["propose", "replace"] as const;
export type Mode = (typeof MODES)[number];
export const DEFAULT: Mode = "propose";
export const DONE = "replace";  // the pair's resolution once replaced at once

/** A created fact's proposal (lifecycle.ts `proposals`): a current fact it may replace, and
 * whether this write replaced it at once. */
export type Proposal = { id: number; fact: Fact; score: number; differs: Differs; replaced: boolean };

/** PUT /settings's `proposals`. */
export function cleanMode(value: unknown): Mode {
  if (!MODES.includes(value as Mode)) throw invalid(`proposals must be one of ${MODES.join(", ")}`);
  return value as Mode;
}

/** The fact a write's proposals replace at once, as it was, or null: they wait. (A fact already
 * waiting to be replaced by another, in a memory that reviews before, waits.) */
export function replacesAtOnce(mode: Mode, alone: boolean, client: string, source: string, review: ReviewSetting,
  proposed: Proposal[]): Fact[] | null {
  if (mode !== "replace" || !alone || proposed.length !== 1 || !reviewedBy(client, source, review)) return null;
  const old = proposed[0].fact;
  return old.superseded_by !== null ? null : [old];
}

/** Inside the write: the one proposed fact replaced by fact `id`, the pair marked done; the write's
 * answer for it, its fact as it is now and `replaced` true. */
export function replaceNow(sql: SqlStorage, reader: Reader, id: number, proposed: Proposal[], reviewBefore: boolean): Proposal[] {
  const old = proposed[0].id;
  replace(sql, old, id, reviewBefore);
  sql.exec("UPDATE conflicts SET resolution = ? WHERE old = ? AND new = ?", DONE, old, id);
  return [{ ...proposed[0], fact: reader.get(old), replaced: true }];
}
