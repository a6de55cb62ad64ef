// Whether a new fact answers an older one's question (same_question.ts): the examples of
// tests/test_same_question.py, and tests/golden/same_question.json, which memories/writes/same_question.py
// answers too (tests/golden/make_same_question.py writes it).
import { describe, expect, it } from "vitest";
import golden from "../../tests/golden/same_question.json";
import { answers } from "../src/writes/same_question";

type Case = { old: string; new: string; cosine: number; answer: { reason: string; old: string[]; new: string[] } | null };
const cases = (golden as unknown as { cases: Case[] }).cases;

describe("two answers to one question are a proposal", () => {
  const proposals: [string, string, string, string[] | null, string[] | null][] = [
    ["The standup is at 9:30.", "The standup is at 10:00 now.", "value", ["9:30"], ["10:00"]],
    ["The owner's dentist is Dr. Alvarez.", "The owner's dentist is Dr. Chen.", "value", ["Alvarez"], ["Chen"]],
    ["The owner drinks coffee every morning.", "The owner no longer drinks coffee.", "retraction", null, null],
    ["Priya lives in Lisbon.", "Priya moved to Porto.", "value", ["Lisbon"], ["Porto"]],
    ["The side project is named TaskBoard.", "TaskBoard is now called Tallyo.", "rename", null, ["Tallyo"]],
    ["The Friday yoga class is at the community hall.", "The Friday yoga class was cancelled.", "retraction", null, null],
  ];
  it.each(proposals)("%s / %s", (old, next, reason, was, now) => {
    const found = answers(old, next, 0.7);
    expect(found?.reason).toBe(reason);
    if (was !== null) expect(found!.old).toEqual(was);
    if (now !== null) expect(found!.new).toEqual(now);
  });
});

describe("another question is not a proposal", () => {
  const others: [string, string][] = [
    ["Umar's sister is Ingrid.", "Umar's wife is Elena."],  // the same subject's other attribute
    ["Umar's sister is Ingrid.", "Paul's sister is Nora."],  // another subject's same attribute
    ["The owner uses Java and Python for work.", "The owner uses Python."],  // the same topic
    ["The owner likes jazz.", "The owner likes hiking."],  // both true at once
    ["Cosima reports to Ulla.", "Ulla reports to Ivo."],  // the same words in another frame
    ["Marisol Arrieta was born in 1987.", "Marisol Arrieta is based in Bergen."],  // only the subject shared
    ["Leo's swimming lesson is at 4pm.", "Leo's piano lesson is at 5pm."],  // the attribute and the value differ
  ];
  it.each(others)("%s / %s", (old, next) => {
    expect(answers(old, next, 0.7)).toBeNull();
  });
});

describe("answers, as tests/golden/same_question.json has them", () => {
  it("holds the seen updates, their neighbours and the edge texts", () => {
    expect(cases.length).toBeGreaterThanOrEqual(700);
    expect(cases.filter((c) => c.answer !== null).length).toBeGreaterThan(50);
    expect(cases.filter((c) => c.answer === null).length).toBeGreaterThan(100);
  });

  it.each(cases.map((c, i) => [i, `${c.old.slice(0, 25)}|${c.new.slice(0, 25)}`, c] as const))("%i %s", (_, __, c) => {
    const found = answers(c.old, c.new, c.cosine);
    expect(found === null ? null : { reason: found.reason, old: found.old, new: found.new }).toEqual(c.answer);
  });
});
