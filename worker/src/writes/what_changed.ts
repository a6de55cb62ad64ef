// What a new fact says changed, when it does not keep the old one's sentence: the thing a change
// word is about, and a measure's new amount. memories/writes/what_changed.py, line for line (its docstring
// says why); tests/golden/same_question.json holds both to the same answers.

import type { Words } from "./same_question";
import { DIGIT, first, UPPER } from "../text";

const set = (words: string) => new Set(words.split(/\s+/).filter(Boolean));
// The change words whose thing is the old fact's: "switched the broadband", "The office moved".
export const SWITCHES = set(`moved relocated switched changed replaced transferred upgraded downgraded increased decreased
  raised lowered reduced pushed postponed rescheduled delayed renamed rebranded retitled took_over moves
  moving relocates relocating switches switching renames renaming transfers transferring`);
// How close two facts must be for a measure's change to be theirs, and how many words around a
// number say what it measures.
export const MEASURED = 0.6;
const AROUND = 3;
const CURRENCY = "£$€¥";
// "Biscuit is up to 14 kg", "put the rent up to £1,240": a measure said as a change.
const UP = set("up down");
const BE = set("is are was were be been being");
const ARTICLES = set("the a an his her their my our its your");
const FROM = set("from");
const ADVERBS = set("longer anymore no_more any_more");

/** A number in each with one unit after it ("12 kg" / "14 kg", "9:30" / "10:00", "£400" /
 * "£650"), the numbers differ, the words around both name one thing (what is measured), and no
 * one else is named: the old amount and the new one. */
export function measure(o: Words, n: Words, shared: Set<string>): [string[], string[]] | null {
  const namesOld = names(o), namesNew = names(n);
  if ([...namesOld].some((k) => !namesNew.has(k)) && [...namesNew].some((k) => !namesOld.has(k))) return null;
  const unitsOld = units(o), unitsNew = units(n);
  for (const [i, unit] of unitsOld) {
    for (const [j, other] of unitsNew) {
      if (unit !== other || shared.has(o.keys[i]) || shared.has(n.keys[j])) continue;
      const near = around(n, j);
      if ([...around(o, i)].some((k) => near.has(k) && shared.has(k) && k !== unit)) return [[o.raw[i]], [n.raw[j]]];
    }
  }
  return null;
}

export const saidUp = (words: Words): boolean => words.raw.some((w) => UP.has(w.toLowerCase()));

/** What a retraction takes back: the words after its cue ("gave up coffee", "scrapped the Lake
 * District offsite") or, when the cue follows "is" or "been" or nothing follows it, before it
 * ("The HelloFresh deliveries are cancelled"). Not after an adverb: "no more messages" is not a
 * thing taken back. Not the person the old fact is about: "Ben's party is cancelled" takes
 * nothing back from "Ben is the owner's godson". */
export function takenBack(words: Words, old: Words, cues: Set<string>): Set<string> {
  const out = new Set<string>();
  words.raw.forEach((raw, i) => {
    const low = raw.toLowerCase();
    if (!cues.has(low) || ADVERBS.has(low)) return;
    const after = i && BE.has(words.raw[i - 1].toLowerCase()) ? new Set<string>() : thing(words, i, 1);
    for (const k of after.size ? after : thing(words, i, -1)) out.add(k);
  });
  const firstKey = old.keys.find((k) => k && k !== "~") ?? "";
  if (capital(old, firstKey) && capital(words, firstKey)) out.delete(firstKey);
  return out;
}

/** A switch word's thing: what it switches ("moved from LastPass to ...", "switched the
 * broadband over to ...") or what switched ("The office moved to ..."), a thing and not a person
 * ("Ingrid moved to Oslo" says nothing of Ingrid's job). What follows "to" is the new answer. */
export function switched(words: Words, old: Words, cues: Set<string>): Set<string> {
  const out = new Set<string>();
  words.raw.forEach((raw, i) => {
    if (cues.has(raw.toLowerCase())) {
      for (const k of thing(words, i, 1, FROM)) out.add(k);
      for (const k of thing(words, i, -1)) if (!name(words, old, k)) out.add(k);
    }
  });
  return out;
}

/** The content words next to position i, one way: up to the next glue or small word that is
 * not an article ("coffee | and", "HelloFresh deliveries | are"); past `skip` words and "the
 * owner's" only when they come first ("from LastPass", "renamed the owner's plan"). */
function thing(words: Words, i: number, step: number, skip = new Set<string>()): Set<string> {
  const out = new Set<string>();
  for (let m = i + step; m >= 0 && m < words.raw.length && out.size < AROUND; m += step) {
    const key = words.keys[m], low = words.raw[m].toLowerCase();
    if (key && key !== "~") out.add(key);
    else if (out.size && (key === "~" || !ARTICLES.has(low))) break;
    else if (!out.size && step === 1 && !ARTICLES.has(low) && !skip.has(low) && !owning(words, m)) break;
  }
  return out;
}

/** A name: written with a capital past the text's first word, or first and in the old fact too
 * ("Leo moved ..." after "Leo is ..."; not "Newsletter was renamed ..." after "The newsletter ..."). */
const name = (words: Words, old: Words, key: string) =>
  words.keys.some((k, m) => k === key && UPPER.test(first(words.raw[m])) && (m > 0 || capital(old, key)));

/** Position m is in a possessive before a thing: "the owner's Flex 20 plan". */
const owning = (words: Words, m: number) => words.raw[m] === "'s" || words.raw[m + 1] === "'s";

const capital = (words: Words, key: string) => words.keys.some((k, i) => k === key && UPPER.test(first(words.raw[i])));

/** The content words nearest a position: three before it and three after. */
function around(words: Words, i: number): Set<string> {
  const at = words.keys.flatMap((k, m) => (k && k !== "~" && m !== i ? [m] : []));
  const before = at.filter((m) => m < i).slice(-AROUND);
  const after = at.filter((m) => m > i).slice(0, AROUND);
  return new Set([...before, ...after].map((m) => words.keys[m]));
}

/** The names a text holds: capitalised words, its first only when it owns something ("Mia's"). */
function names(words: Words): Set<string> {
  return new Set(words.keys.filter((k, m) => k && k !== "~" && UPPER.test(first(words.raw[m]))
    && (m > 0 || words.raw[1] === "'s")));
}

/** Each number's position and its unit: "time", "money", or the next content word ("mg"). */
function units(words: Words): Map<number, string> {
  const out = new Map<number, string>();
  words.raw.forEach((raw, i) => {
    if (!DIGIT.test(raw)) return;
    if (raw.includes(":") || ["am", "pm"].includes(words.raw[i + 1]?.toLowerCase() ?? "")) out.set(i, "time");
    else if (CURRENCY.includes(first(raw))) out.set(i, "money");
    else {
      const unit = words.keys.slice(i + 1, i + 3).find((k) => k && k !== "~") ?? "";
      if (unit && !DIGIT.test(unit)) out.set(i, unit);
    }
  });
  return out;
}
