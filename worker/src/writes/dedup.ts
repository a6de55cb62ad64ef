// When two texts the model finds nearly the same still say different things: memories/writes/dedup.py,
// line for line (its docstring says why). tests/golden/recall.json holds both to the same answers.

import { textKey } from "../text";

const CAPITALISED = /(?<![\p{L}\p{N}])\p{L}[\p{L}\p{N}]*/gu;
const set = (words: string) => new Set(words.split(/\s+/).filter(Boolean));
export const NEGATIONS = set("not no never none nobody nothing nowhere neither nor cannot without n't");
export const NUMBER_WORDS = set(`zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
  sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred
  thousand million billion first second third fourth fifth sixth seventh eighth ninth tenth
  eleventh twelfth once twice half dozen`);
export const CALENDAR = set(`monday tuesday wednesday thursday friday saturday sunday january february march april may june
  july august september october november december today tomorrow yesterday morning afternoon
  evening night noon midnight weekend weekday`);
const COMMON = set(`the a an this that these those it its owner owners my our your his her their there here i we
  you he she they on in at to for from by with of and or but if when while after before since
  until every each all some any no not never to do does did is are was were be been has have
  had please always usually also`);

const isUpper = (c: string) => c !== c.toLowerCase() && c === c.toUpperCase();

export function words(text: string): string[] {
  const lowered = text.toLowerCase().replaceAll("\u2019", "'").replaceAll("n't", " n't");
  return lowered.match(/n't|[\p{L}\p{N}]+/gu) ?? [];
}

export function numbers(tokens: string[]): string[] {
  const out: string[] = [];
  for (const t of tokens) {
    const digits = t.replace(/[^0-9]/g, "");
    if (digits) out.push(digits.replace(/^0+/, "") || "0");  // "02" and "2" are one hour
    else if (NUMBER_WORDS.has(t)) out.push(t);
  }
  return out;
}

export function names(text: string): Set<string> {
  return new Set((text.match(CAPITALISED) ?? []).filter((w) => isUpper(w[0]) && !COMMON.has(w.toLowerCase())).map((w) => w.toLowerCase()));
}

export function calendar(tokens: string[]): Set<string> {
  return new Set(tokens.filter((w) => CALENDAR.has(w) || CALENDAR.has(w.slice(0, -1))).map((w) => (CALENDAR.has(w) ? w : w.slice(0, -1))));
}

export function mentions(tokens: string[], name: string): boolean {
  return tokens.includes(name) || tokens.includes(name.endsWith("s") ? name.slice(0, -1) : name) || tokens.includes(name + "s");
}

export const sameList = (a: string[], b: string[]) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
export const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));
export const count = (tokens: string[], words: Set<string>) => tokens.filter((w) => words.has(w)).length;

/** Why two near-identical texts still state different facts, or null if nothing says so. */
export function distinct(a: string, b: string): string | null {
  const wa = words(a), wb = words(b);
  if (!sameList(numbers(wa), numbers(wb))) return "they differ in a number";
  if (!sameSet(calendar(wa), calendar(wb))) return "they differ in a day, month or time of day";
  if (count(wa, NEGATIONS) % 2 !== count(wb, NEGATIONS) % 2) return "one says not";
  if ([...names(a)].some((n) => !mentions(wb, n)) || [...names(b)].some((n) => !mentions(wa, n))) return "they differ in a name";
  return null;
}

// How close the same text with and without its subject must be to be looked at (MiniLM: 0.81-0.86).
export const SUBJECT_FLOOR = 0.6;
// The owner as a fact's opening subject, which a memory's facts often leave out ("Is allergic to
// peanuts.", as ChatGPT writes them): matched on the case-folded text.
const OWNER_OPENING = /^(?:the +)?(?:owner|user)(?:'s|\u2019s)? +/u;

/** The text as exact dedup compares it, without an opening owner subject or a closing full stop. */
export const bare = (text: string): string => textKey(text).replace(/[. ]+$/u, "").replace(OWNER_OPENING, "");

/** One fact, written with and without its subject: "The owner is allergic to peanuts." and
 * "Is allergic to peanuts." (the memory is the owner's; another subject is another fact). */
export const sameButSubject = (a: string, b: string): boolean => bare(a) !== "" && bare(a) === bare(b);

const SUBJECTS = ["", "the owner ", "owner ", "the user ", "user ", "the owner's ", "owner's ", "the user's ", "user's ",
  "the owner\u2019s ", "owner\u2019s ", "the user\u2019s ", "user\u2019s "];

/** Every text_key the same fact has with or without its subject and full stop: what a replaced
 * fact is looked up by, so "Lives in Utrecht." is the replaced "The owner lives in Utrecht.". */
export function spellings(text: string): string[] {
  const b = bare(text);
  return [textKey(text), ...(b ? SUBJECTS.flatMap((s) => ["", "."].map((end) => `${s}${b}${end}`)) : [])];
}
