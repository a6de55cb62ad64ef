// Whether the owner has looked at a fact (memories/review/reviewing.py, line for line): which writes count
// as reviewed, the memory's `review` setting (docs/memory-api.md, "Review"), and the owner's
// review itself and its undo, which the writer (writing.ts) runs as its own. The write path asks
// `reviewedBy`; recall asks for the pending facts through lifecycle.ts `hidden`.

import { MAX_CLIENT, cleanId, stamp } from "../facts";
import type { Entry, History } from "./history";
import { invalid } from "../serving/http";
import type { State } from "../storage/state";
import { settle } from "../writes/replacing";

export const DASHBOARD = "dashboard";  // the owner's own client: what it writes is reviewed
export const MODES = ["after", "before"] as const;  // an unreviewed fact is recalled at once, or only once reviewed
export type Mode = (typeof MODES)[number];
export interface ReviewSetting { mode: Mode; trusted: string[] }
export const MAX_TRUSTED = 50;
export const MAX_REVIEW = 200;  // ids a POST /facts/review takes

/** The default setting, a fresh copy each time (no caller shares its `trusted`). */
export const defaultReview = (): ReviewSetting => ({ mode: "after", trusted: [] });

/** Whether `review` is the default (reviewing.py `DEFAULT`): then it is not stored. */
export const isDefault = (review: ReviewSetting): boolean => review.mode === "after" && review.trusted.length === 0;

/** `client` is `name`, or `name` and a version after a space (the MCP server's "name version"). */
export function named(client: string, name: string): boolean {
  return client === name || client.startsWith(`${name} `);
}

/** Whether a write by `client` with `source` counts as the owner's review. */
export function reviewedBy(client: string, source: string, review: ReviewSetting): boolean {
  if (named(client, DASHBOARD)) return true;
  const trusted = review.trusted ?? [];
  return (client !== "" && trusted.some((t) => named(client, t))) || trusted.includes(source);
}

const PRINTABLE = /^[ -~]*$/;

/** PUT /settings's `review` over the setting `before`: `mode` and/or `trusted`. */
export function cleanReview(value: unknown, before: ReviewSetting): ReviewSetting {
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
  const keys = isObject ? Object.keys(value) : [];
  if (!isObject || !keys.length || keys.some((k) => k !== "mode" && k !== "trusted")) {
    throw invalid('review must be an object with "mode" and/or "trusted"');
  }
  const v = value as Record<string, unknown>;
  const out: ReviewSetting = { mode: before.mode, trusted: [...before.trusted] };
  if ("mode" in v) {
    if (!MODES.includes(v.mode as Mode)) throw invalid(`review.mode must be one of ${MODES.join(", ")}`);
    out.mode = v.mode as Mode;
  }
  if ("trusted" in v) {
    const trusted = v.trusted;
    if (!Array.isArray(trusted) || trusted.length > MAX_TRUSTED) {
      throw invalid(`review.trusted must be a list of up to ${MAX_TRUSTED} client names or sources`);
    }
    for (const t of trusted) {
      if (!(typeof t === "string" && 1 <= t.length && t.length <= MAX_CLIENT && PRINTABLE.test(t))) {
        throw invalid(`review.trusted: each entry is a client name or a source of 1 to ${MAX_CLIENT} printable ASCII characters`);
      }
    }
    out.trusted = [...new Set(trusted as string[])];
  }
  return out;
}

/** POST /facts/review's `ids`: 1 to MAX_REVIEW fact ids, each once, in the order given. */
export function cleanIds(value: unknown): number[] {
  const refused = () => invalid(`ids must be a list of 1 to ${MAX_REVIEW} fact ids`);
  if (!Array.isArray(value) || !(1 <= value.length && value.length <= MAX_REVIEW)) throw refused();
  let ids: (number | null)[];
  try {
    ids = value.map((v) => cleanId(v));
  } catch {
    throw refused();
  }
  if (ids.some((id) => id === null)) throw refused();  // (null is no id here)
  return [...new Set(ids as number[])];
}

/** POST /facts/review: the owner reviewed these facts (reviewing.py `review`): each not yet
 * reviewed is, now, in one write and one history entry. The ids it reviewed, and the entry
 * (null when none was). */
export function review(state: State, history: History, value: unknown, client = "", note = ""): { reviewed: number[]; entry: number | null } {
  const ids = cleanIds(value);
  const before = state.review.mode === "before";
  return state.ctx.storage.transactionSync(() => {
    // One binding for up to 200 ids: the object binds at most 100 a statement.
    const found = new Map(state.sql.exec<{ id: number; reviewed_at: string | null }>(
      "SELECT id, reviewed_at FROM facts WHERE id IN (SELECT value FROM json_each(?))", JSON.stringify(ids),
    ).toArray().map((r) => [r.id, r.reviewed_at]));
    const unknown = ids.filter((id) => !found.has(id));
    if (unknown.length) throw invalid(`ids name facts that do not exist: ${unknown.slice(0, 10).join(", ")}`);
    const todo = ids.filter((id) => found.get(id) === null);
    if (!todo.length) return { reviewed: [], entry: null };
    const at = stamp(new Date());
    state.sql.exec("UPDATE facts SET reviewed_at = ? WHERE id IN (SELECT value FROM json_each(?))", at, JSON.stringify(todo));
    settle(state.sql, before, todo);  // what they replace waited for this
    const entry = history.record(client, "review", null, { ids: todo }, { ids: todo, reviewed_at: at }, note || `${todo.length} reviewed`);
    return { reviewed: todo, entry };
  });
}

/** The undo of a review entry (reviewing.py `unreview`): its facts that still hold what it left
 * get what was before (a review's: unreviewed again; the undo of one: reviewed again, at the
 * time they were). */
export function unreview(state: State, history: History, entry: Entry, client: string, note: string): void {
  const after = entry.after as { ids: number[]; reviewed_at: string | null };
  const was = (entry.before?.reviewed_at ?? null) as string | null;
  state.ctx.storage.transactionSync(() => {
    state.sql.exec("UPDATE facts SET reviewed_at = ? WHERE reviewed_at IS ? AND id IN (SELECT value FROM json_each(?))",
      was, after.reviewed_at, JSON.stringify(after.ids));
    settle(state.sql, state.review.mode === "before", after.ids);
    history.record(client, "review", null, entry.after, { ids: after.ids, reviewed_at: was }, note, entry.id);
  });
}
