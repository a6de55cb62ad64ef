// What is true now (memories/writes/lifecycle.py, line for line): which facts are current, what a new
// fact may replace, and what differs between two facts. The write path (writing.ts) and the read
// path (searching.ts, reading.ts) ask this file; tests/golden/lifecycle.json holds both memories
// to the same `differences`.
//
// A fact is current while its `valid_until` is null or still ahead. Replacing a fact sets its
// `superseded_by` and, once the replacing fact counts, its `valid_until` (replacing.ts); expiring
// one sets `valid_until` alone. Neither deletes anything: `as_of` recalls what was current then.
// Nothing is replaced unless a client asks: a write only proposes (`conflicts`).

import { NEGATIONS, calendar, count, mentions, names, numbers, sameList, sameSet, words } from "./dedup";
import { type Fact, MAX_FACT_ID, cleanId, cleanTime, stamp } from "../facts";
import { invalid, wellFormed } from "../serving/http";
import { type Answer, answers } from "./same_question";
import { SPACE, casefold } from "../text";

// A created fact proposes a current same-type fact as one it may replace when both answer one
// question (same_question.ts). The candidates are its closest PROPOSE_CANDIDATES at or above
// PROPOSE (cosine finds the old fact of every seen update there); at most PROPOSE_MOST are
// proposed (chosen on the Python side: lifecycle.py says how).
export const PROPOSE = 0.4;
export const PROPOSE_CANDIDATES = 5;
export const PROPOSE_MOST = 3;
// A log is an event ("Ran 10 km on Sunday."): a later one does not make it untrue, so logs neither
// propose nor are proposed (proposals are same-type). (The demo's logs proposed each other at 0.51.)
export const PROPOSING: readonly string[] = ["fact", "skill"];
export const MAX_SUPERSEDES = 20;
export const STATUSES = ["all", "current", "replaced", "expired"] as const;
export type Status = (typeof STATUSES)[number];
export const RESOLUTIONS = ["replace", "keep_both", "keep_old"] as const;
export type Resolution = (typeof RESOLUTIONS)[number];
export const KINDS = ["number", "date", "negation", "name", "word"] as const;

/** SQL and its arguments, to go into a statement of the caller's. */
export type Clause = [string, SqlStorageValue[]];

const now = () => stamp(new Date());

/** The ids recall leaves out, as a subquery, and its arguments: the facts no longer current now,
 * or, `asOf` a time, those not current then (created after it, or ended at or before it); and
 * with `pending` (the memory's review is "before"), the facts not reviewed yet. The one place the
 * as-of question is asked of the table. */
export function hidden(asOf: string | null, pending = false): Clause {
  const [sql, args]: Clause = asOf === null
    ? ["SELECT id FROM facts WHERE valid_until IS NOT NULL AND valid_until <= ?", [now()]]
    : ["SELECT id FROM facts WHERE created_at > ? OR (valid_until IS NOT NULL AND valid_until <= ?)", [asOf, asOf]];
  // (by facts_unreviewed, which holds only those)
  return [pending ? `${sql} UNION ALL SELECT id FROM facts WHERE reviewed_at IS NULL` : sql, args];
}

/** A keyword query's clause leaving out `hidden` (null: none), after its `MATCH` and before its order. */
export function leaveOut(hidden: Clause | null): Clause {
  return hidden ? [` AND facts_fts.rowid NOT IN (${hidden[0]})`, hidden[1]] : ["", []];
}

/** GET /facts's `status` (and `asOf`: the memory as it was then, facts created after it left
 * out) as a WHERE clause ("" for none) and its arguments. */
export function statusFilter(status: Status, asOf: string | null): Clause {
  const at = asOf ?? now();
  const where: string[] = [];
  const args: SqlStorageValue[] = [];
  if (asOf !== null) {
    where.push("created_at <= ?");
    args.push(asOf);
  }
  if (status === "current") {
    where.push("(valid_until IS NULL OR valid_until > ?)");
    args.push(at);
  } else if (status === "replaced") {
    where.push("valid_until <= ? AND superseded_by IS NOT NULL");
    args.push(at);
  } else if (status === "expired") {
    where.push("valid_until <= ? AND superseded_by IS NULL");
    args.push(at);
  }
  return [where.join(" AND "), args];
}

export function isCurrent(validUntil: string | null, createdAt: string, asOf: string | null = null): boolean {
  if (asOf === null) return validUntil === null || validUntil > now();
  return createdAt <= asOf && (validUntil === null || validUntil > asOf);
}

export function cleanStatus(value: unknown): Status {
  if (value === undefined || value === null || value === "") return "all";
  if (!STATUSES.includes(value as Status)) throw invalid(`status must be one of ${STATUSES.join(", ")}`);
  return value as Status;
}

/** A time not in the future (what was current then), as the store writes times. */
export function cleanAsOf(value: unknown): string | null {
  const at = cleanTime(value, "as_of");
  if (at !== null && at > now()) throw invalid("as_of is in the future: the memory knows only what is true until now");
  return at;
}

/** Up to MAX_SUPERSEDES fact ids, each once, in the order given. */
export function cleanSupersedes(value: unknown): number[] {
  const refused = () => invalid(`supersedes must be a list of up to ${MAX_SUPERSEDES} fact ids`);
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || value.length > MAX_SUPERSEDES) throw refused();
  let ids: number[];
  try {
    ids = value.map((v) => cleanId(v)!);
  } catch {
    throw refused();
  }
  if (ids.some((id) => id === null)) throw refused();  // (null is no id here)
  return [...new Set(ids)];
}

export function cleanResolution(value: unknown): Resolution {
  if (!RESOLUTIONS.includes(value as Resolution)) throw invalid(`resolution must be one of ${RESOLUTIONS.join(", ")}`);
  return value as Resolution;
}

/** A backup's pair, as GET /conflicts?all=true gives it but with fact ids (`id` null: none given). */
export interface Pair {
  id: number | null;
  old: number;
  new: number;
  score: number;
  differs: Differs;
  resolution: "keep_both" | "replace" | null;  // "replace": replaced at once (replace_at_once.ts)
}

/** The `n`th pair of a backup (POST /conflicts/restore), as lifecycle.py `clean_pair`, with its
 * messages: `id` (may be left out), `old`, `new`, `score`, `differs`, `resolution` (null:
 * proposed, "keep_both", or "replace": replaced at once). Other fields are ignored. */
export function cleanPair(item: unknown, n: number): Pair {
  const at = `conflicts[${n}]`;
  if (typeof item !== "object" || item === null || Array.isArray(item)) throw invalid(`${at} must be an object`);
  const i = item as Record<string, unknown>;
  const ids = (["id", "old", "new"] as const).map((name) => {
    if ((i[name] === undefined || i[name] === null) && name !== "id") throw invalid(`${at}.${name} is required: a fact id`);
    try {
      return cleanId(i[name]);
    } catch {
      throw invalid(`${at}.${name} must be a whole number from 1 to ${MAX_FACT_ID}`);
    }
  });
  const [id, old, next] = ids as [number | null, number, number];
  if (old === next) throw invalid(`${at}: old and new are the same fact`);
  const score = i.score;  // (NaN and Infinity fail the range)
  if (typeof score !== "number" || !(-1 <= score && score <= 1)) throw invalid(`${at}.score must be a number from -1 to 1`);
  const d = i.differs as Record<string, unknown>;
  const words = (v: unknown) => Array.isArray(v) && v.every((w) => typeof w === "string");
  const shaped = typeof d === "object" && d !== null && !Array.isArray(d)
    && sameSet(new Set(Object.keys(d)), new Set(["kinds", "old", "new"])) && Object.values(d).every(words)
    && (d.kinds as string[]).every((k) => (KINDS as readonly string[]).includes(k));
  if (!shaped) throw invalid(`${at}.differs must be {kinds, old, new}: lists of words, kinds of ${KINDS.join(", ")}`);
  for (const side of ["old", "new"] as const) for (const w of d[side] as string[]) wellFormed(w, `${at}.differs.${side}`);
  const resolution = i.resolution ?? null;
  if (resolution !== null && resolution !== "keep_both" && resolution !== "replace") {
    throw invalid(`${at}.resolution must be null (proposed), keep_both or replace (replaced at once)`);
  }
  return { id, old, new: next, score, differs: d as unknown as Differs, resolution };
}

// What a word of a text is for the diff: a run of non-space characters (str.isspace's spaces,
// as Python's \S), its surrounding punctuation taken off ("9:30." is "9:30").
const RUN = new RegExp(`[^${SPACE}]+`, "gu");
const EDGE = "[.,;:!?(){}\\[\\]\"'\u201c\u201d\u2018\u2019]";
const EDGES = new RegExp(`^${EDGE}+|${EDGE}+$`, "gu");

export function diffWords(text: string): string[] {
  return (text.match(RUN) ?? []).map((t) => t.replace(EDGES, "")).filter(Boolean);
}

/** How the diff compares a word: case-folded, a curly apostrophe as a straight one. */
export const same = (word: string) => casefold(word).replaceAll("\u2019", "'");

export interface Differs {
  kinds: string[];
  old: string[];
  new: string[];
}

/** What differs between two facts: `kinds` (the dedup guard's reasons, all that apply: a number,
 * a date or time, a negation, a name; else "word" when any word differs), and the words each
 * holds that the other lacks, as written, each once, in order (`old`, `new`). */
export function differences(old: string, next: string): Differs {
  const wo = words(old), wn = words(next);
  const kinds: string[] = [];
  if (!sameList(numbers(wo), numbers(wn))) kinds.push("number");
  if (!sameSet(calendar(wo), calendar(wn))) kinds.push("date");
  if (count(wo, NEGATIONS) % 2 !== count(wn, NEGATIONS) % 2) kinds.push("negation");
  if ([...names(old)].some((n) => !mentions(wn, n)) || [...names(next)].some((n) => !mentions(wo, n))) kinds.push("name");
  const dOld = diffWords(old), dNew = diffWords(next);
  const kOld = new Set(dOld.map(same)), kNew = new Set(dNew.map(same));
  const onlyOld = [...new Set(dOld.filter((w) => !kNew.has(same(w))))];
  const onlyNew = [...new Set(dNew.filter((w) => !kOld.has(same(w))))];
  if (!kinds.length && (onlyOld.length || onlyNew.length)) kinds.push("word");
  return { kinds, old: onlyOld, new: onlyNew };
}

/** Of a new fact's eligible same-type neighbours [id, cosine] (current, not its duplicate, not
 * named in its `supersedes`; `texts` their texts), the ones it may replace, with what differs:
 * the closest PROPOSE_CANDIDATES at or above PROPOSE (ties to the smaller id) that answer the
 * question `text` answers, at most PROPOSE_MOST. A pair goes by the facts' times, not by which
 * was written last: a neighbour in `newer` (created after the new fact: an import's older fact)
 * is the pair's new fact, and its flag (the last item) says so. */
export function proposals(near: [number, number][], texts: Map<number, string>, text: string,
  newer: Set<number> = new Set()): [number, number, Differs, boolean][] {
  const kept = near.filter(([, s]) => s >= PROPOSE).sort((x, y) => y[1] - x[1] || x[0] - y[0]).slice(0, PROPOSE_CANDIDATES);
  const out: [number, number, Differs, boolean][] = [];
  for (const [id, s] of kept) {
    const [old, next] = newer.has(id) ? [text, texts.get(id)!] : [texts.get(id)!, text];
    const answer = answers(old, next, s);
    if (answer !== null) out.push([id, s, proposalDiffers(old, next, answer), newer.has(id)]);
  }
  return out.slice(0, PROPOSE_MOST);
}

/** Of `near` [id, cosine], the first `most` current ones, best first then the smaller id, and the
 * facts read: rows are read a few at a time, as a crowd is mostly current (writing.py
 * `_current_closest`), not every row down to PROPOSE. */
export function currentClosest(near: [number, number][], getMany: (ids: number[]) => Map<number, Fact>,
  most: number): [Map<number, Fact>, [number, number][]] {
  const closest = [...near].sort((x, y) => y[1] - x[1] || x[0] - y[0]);
  const facts = new Map<number, Fact>();
  const current: [number, number][] = [];
  for (let start = 0; start < closest.length && current.length < most; start += 4 * most) {
    const part = closest.slice(start, start + 4 * most);
    for (const [id, fact] of getMany(part.map(([id]) => id))) facts.set(id, fact);
    current.push(...part.filter(([id]) => facts.has(id) && isCurrent(facts.get(id)!.valid_until, facts.get(id)!.created_at)));
  }
  return [facts, current.slice(0, most)];
}

/** A proposal's `differs`: the kinds of `differences`, and each fact's answer (the old value
 * and the new one, as written), not every word that differs. */
export function proposalDiffers(old: string, next: string, answer: Answer): Differs {
  return { kinds: differences(old, next).kinds, old: holding(old, answer.old), new: holding(next, answer.new) };
}

/** The words of `text` (as `diffWords` cuts them) that hold a word of `answer`, each once
 * ("heron-42", not "heron" and "42"): lifecycle.py `holding`. */
export function holding(text: string, answer: string[]): string[] {
  const wanted = new Set(answer.flatMap((a) => a.split(/\s+/).filter(Boolean)).map(same));
  return [...new Set(diffWords(text).filter((w) => wanted.has(same(w)) || (w.match(/[\p{L}\p{N}]+/gu) ?? []).some((t) => wanted.has(same(t)))))];
}

/** `differences` in words, for a note or an agent: "9:30 / 9:00". */
export function whyDiffers(d: Differs): string {
  const old = d.old.join(" ") || "-", next = d.new.join(" ") || "-";
  return d.old.length || d.new.length ? `${old} / ${next}` : "the same words";
}
