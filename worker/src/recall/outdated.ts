// Which recalled facts may be outdated: memories/recall/outdated.py, line for line (its docstring says
// why). Of an open proposal (both facts current, nobody resolved it), the older fact by created_at
// then id; recall answers the newer one above it and marks it `may_be_outdated`.
import { stamp } from "../facts";

/** Of the facts `ids`, each that an open proposal says may be outdated, with the newer fact that
 * says so (the newest, if several do). */
export function olderOf(sql: SqlStorage, ids: number[]): Map<number, number> {
  const out = new Map<number, [string, number]>();
  if (!ids.length) return new Map();
  const at = stamp(new Date());
  const rows = sql.exec<{ a: number; a_at: string; b: number; b_at: string }>(
    "SELECT o.id AS a, o.created_at AS a_at, n.id AS b, n.created_at AS b_at FROM conflicts c JOIN facts o ON o.id = c.old "
    + "JOIN facts n ON n.id = c.new WHERE c.resolution IS NULL "
    + "AND (o.valid_until IS NULL OR o.valid_until > ?) AND (n.valid_until IS NULL OR n.valid_until > ?) "
    + "AND (c.old IN (SELECT value FROM json_each(?)) OR c.new IN (SELECT value FROM json_each(?)))",
    at, at, JSON.stringify(ids), JSON.stringify(ids)).toArray();
  const wanted = new Set(ids);
  const later = (x: [string, number], y: [string, number]) => x[0] > y[0] || (x[0] === y[0] && x[1] > y[1]);
  for (const r of rows) {
    const [older, newer]: [string, number][] = later([r.a_at, r.a], [r.b_at, r.b]) ? [[r.b_at, r.b], [r.a_at, r.a]] : [[r.a_at, r.a], [r.b_at, r.b]];
    const have = out.get(older[1]);
    if (wanted.has(older[1]) && (!have || later(newer, have))) out.set(older[1], newer);
  }
  return new Map([...out].map(([older, [, newer]]) => [older, newer]));
}

/** `ids` in recall's order, each newer fact of a pair moved just above its older one when it
 * ranked below it; the rest keep their order. */
export function newerFirst(ids: number[], older: Map<number, number>): number[] {
  const order = [...ids];
  for (const old of [...older.keys()].sort((x, y) => ids.indexOf(x) - ids.indexOf(y))) {
    const next = older.get(old)!;
    if (order.includes(next) && order.indexOf(next) > order.indexOf(old)) {
      order.splice(order.indexOf(next), 1);
      order.splice(order.indexOf(old), 0, next);
    }
  }
  return order;
}
