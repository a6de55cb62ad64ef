// The Worker's parsers against tests/golden/parsing.json, which tests/test_golden_parsing.py
// checks against memories/: times, cursors, whole-number and decimal parameters and fact ids are
// read alike by both memories, or refused alike with the same message.
import { describe, expect, it } from "vitest";
import golden from "../../tests/golden/parsing.json";
import { cleanId, cleanTime, decodeCursor } from "../src/facts";
import { HttpError, floatParam, intParam } from "../src/http";

type Outcome = { error: string } | Record<string, unknown>;
interface Param { value: unknown; name: string; default: number; low: number; high: number; parsed?: number; error?: string }
interface Golden {
  times: ({ input: unknown } & Outcome)[];
  cursors: ({ cursor: string; text?: string; note?: string } & Outcome)[];
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
  it.each(cases.cursors.map((c) => ({ ...c, shown: shown(c.text ?? c.cursor) })))("$shown", (c) => {
    expect(outcome(() => decodeCursor(c.cursor))).toEqual(wanted(c, "decoded"));
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
