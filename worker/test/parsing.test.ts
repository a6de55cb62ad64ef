// The Worker's parsers against tests/golden/parsing.json, which tests/test_golden_parsing.py
// checks against memories/: times, cursors, whole-number and decimal parameters and fact ids are
// read alike by both memories, or refused alike with the same message.
import { describe, expect, it } from "vitest";
import golden from "../../tests/golden/parsing.json";
import { type Fact, ORDERS, type Order, cleanId, cleanTime, decodeCursor, encodeCursor } from "../src/facts";
import { HttpError, floatParam, intParam } from "../src/serving/http";

type Outcome = { error: string } | Record<string, unknown>;
interface Param { value: unknown; name: string; default: number; low: number; high: number; parsed?: number; error?: string }
interface Golden {
  times: ({ input: unknown } & Outcome)[];
  cursors: ({ cursor: string; text?: string; order?: Order; note?: string } & Outcome)[];
  int_params: Param[];
  float_params: Param[];
  ids: ({ value: unknown } & Outcome)[];
}
const cases = golden as unknown as Golden;

/** What a parser answered: {ok} or {error} with the contract's 422; anything else fails the test (it would be a 500). */
function outcome(parse: () => unknown): { ok: unknown } | { error: string } {
  try {
    return { ok: parse() };
  } catch (e) {
    if (e instanceof HttpError && e.status === 422 && e.code === "invalid") return { error: e.message };
    throw e;
  }
}
const wanted = (c: Record<string, unknown>, key: string) => ("error" in c ? { error: c.error } : { ok: c[key] });
const shown = (v: unknown) => {
  const text = typeof v === "number" && !Number.isFinite(v) ? String(v) : JSON.stringify(v);
  return text.length <= 40 ? text : `${text.slice(0, 30)}…(${text.length} chars)`;
};

describe("times", () => {
  it.each(cases.times.map((c) => ({ ...c, shown: shown(c.input) })))("$shown", (c) => {
    expect(outcome(() => cleanTime(c.input, "created_at"))).toEqual(wanted(c, "stored"));
  });
});

describe("cursors", () => {
  it.each(cases.cursors.map((c) => ({ ...c, shown: shown(c.text ?? c.cursor) + (c.order ? ` order=${c.order}` : "") })))("$shown", (c) => {
    expect(outcome(() => decodeCursor(c.cursor, c.order ?? "created"))).toEqual(wanted(c, "decoded"));
  });

  it("covers every order with a cursor that reads", () => {
    expect(new Set(cases.cursors.filter((c) => "decoded" in c).map((c) => c.order ?? "created"))).toEqual(new Set(Object.keys(ORDERS)));
  });

  const orders = Object.keys(ORDERS) as Order[];
  it.each(orders)("gives out a cursor in order=%s that reads back in that order alone", (order) => {
    const fact: Fact = { id: 7, text: "x", type: "fact", source: "", created_at: "2024-03-05T10:00:00.000000Z", updated_at: "2024-03-06T10:00:00.000000Z",
      valid_until: null, superseded_by: null, reviewed_at: null };
    const cursor = encodeCursor(fact, order);
    const key = { created_at: fact.created_at, updated_at: fact.updated_at, id: "" }[ORDERS[order][0]];
    expect(decodeCursor(cursor, order)).toEqual([key, 7]);
    for (const other of orders.filter((o) => o !== order)) {
      expect(outcome(() => decodeCursor(cursor, other))).toEqual({ error: `cursor is from the list in order=${order}, not order=${other}: start that list again without it` });
    }
  });
});

describe("whole-number parameters", () => {
  it.each(cases.int_params.map((c) => ({ ...c, shown: shown(c.value) })))("$name=$shown", (c) => {
    expect(outcome(() => intParam(c.value, c.name, c.default, c.low, c.high))).toEqual(wanted({ ...c }, "parsed"));
  });
});

describe("decimal parameters", () => {
  it.each(cases.float_params.map((c) => ({ ...c, shown: shown(c.value) })))("$name=$shown", (c) => {
    expect(outcome(() => floatParam(c.value, c.name, c.default, c.low, c.high))).toEqual(wanted({ ...c }, "parsed"));
  });
});

describe("fact ids", () => {
  it.each(cases.ids.map((c) => ({ ...c, shown: shown(c.value) })))("$shown", (c) => {
    expect(outcome(() => cleanId(c.value))).toEqual(wanted(c, "id"));
  });

  it("reads JSON's 1e400 as Infinity here as Python does, so the cases mean the same on both sides", () => {
    expect(cases.ids.some((c) => c.value === Infinity)).toBe(true);
  });
});
