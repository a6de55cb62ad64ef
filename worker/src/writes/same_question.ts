// Whether a new fact answers the same question as an older one with another answer: what makes
// a proposal ("this may replace #12"). memories/writes/same_question.py, line for line (its docstring
// says why); tests/golden/same_question.json holds both to the same answers.
//
// Two facts answer one question when they keep one frame (the same subject, the same attribute or
// relation) and change one value in it: "The standup is at 9:30." / "The standup is at 10:00 now.";
// or when the new one takes the old one back: "The owner no longer drinks coffee." A fact about the
// same subject's other attribute ("Umar's wife is Elena." after "Umar's sister is Ingrid."), another
// subject's same attribute ("Paul's sister ..."), or another true thing on the same topic ("likes
// jazz" after "likes hiking") is not. Cosine alone cannot tell these apart (they all score alike),
// so the rule reads the words. benchmarks/lifecycle.py measures it, seen and unseen sets apart.
//
// The words of each text are sorted into roles: glue (is, has: the hinge between a frame's attribute
// and its value), filler (the, of, to: nothing), change cues (now, new, moved: evidence of an
// update, not part of the frame), the owner (the default subject, often left out: "Is allergic to
// peanuts."), and content. The content the two texts share is the frame; what each holds that the
// other lacks is its value. The frame holds when each side's value is one unbroken run of its text
// (no shared word or glue inside it: "sister ... is ... Ingrid" against "wife ... is ... Elena" is
// two runs, the attribute and the value) and the subject is shared.
//
// Python's regexes and str methods as JavaScript's: \w is [\p{L}\p{N}_], \d \p{Nd}, [^\W\d_] (a
// letter, as Python has it) [\p{L}\p{Nl}\p{No}], \b a lookaround on \w (JavaScript's is ASCII),
// re.IGNORECASE spelled out (it also matches "İ" and "ı" to i), str.isupper() \p{Uppercase},
// str.isdigit() \p{Nd} and the other digits below, and lengths and slices in code points, not
// UTF-16 units. Each class was checked against every character Python 3.12's tables (Unicode 15)
// assign; characters newer than one side's tables may still differ.

import { CALENDAR, NUMBER_WORDS } from "./dedup";
import { DIGIT, first, UPPER } from "../text";
import { MEASURED, measure, saidUp, SWITCHES, switched, takenBack } from "./what_changed";

const set = (words: string) => new Set(words.split(/\s+/).filter(Boolean));
const GLUE = set("is are was were be been being am has have had 's called named titled known goes_by go_by going_by known_as");
const FILLER = set(`the a an of to in on at for from by with and or as into onto about per via its their his her
  our your this that these those it there here who which whose what where when than then so also
  just still too very really every each all some any one do does did ca wo sha`);
// The default subject: a memory's facts are about its owner unless they name someone else.
const OWNER = set("owner owners user users i me my mine myself we our");
// Words that say a fact changed, not what it is about: strong ones by themselves ("moved",
// "cancelled"), weak ones only with the frame kept ("now", "new").
const STRONG = set(`moved relocated switched changed replaced renamed rebranded retitled transferred became turned
  upgraded downgraded increased decreased raised lowered reduced pushed postponed rescheduled delayed
  sold left quit stopped resigned retired ended cancelled canceled terminated discontinued dropped
  renewed extended christened longer anymore off gave_up given_up giving_up stepped_down took_over
  called_off no_more any_more withdrew withdrawn scrapped shelved axed abandoned ditched lapsed
  unsubscribed dropped_out pulled_out moves moving relocates relocating switches switching renames
  renaming transfers transferring cancels cancelling canceling quits quitting stops stopping`);
const WEAK = set("now new newly currently since recently lately today again instead later latest actually");
const CUES = new Set([...STRONG, ...WEAK]);
// A new fact holding one of these takes the old one back ("no longer", "stopped", "cancelled").
const RETRACTIONS = set(`longer anymore quit stopped cancelled canceled ended off terminated discontinued gave_up given_up
  giving_up stepped_down called_off no_more any_more withdrew withdrawn scrapped shelved axed abandoned
  ditched lapsed unsubscribed dropped_out pulled_out cancels cancelling canceling quits quitting stops stopping`);
// Two words that make one change word: "gave up", "stepped down", "called off". Python's \w is
// [\p{L}\p{N}_]; its re.IGNORECASE matches a letter's other case, and "İ" and "ı" to i, "ſ" to s,
// the Kelvin sign to k.
const WORD = "\\p{L}\\p{N}_";
const CASELESS: Record<string, string> = { i: "iIİı", s: "sSſ", k: "kK\u212a" };
const caseless = (words: string, sep = " ") => words.split(sep).map((w) => Array.from(w, (c) => `[${CASELESS[c] ?? c + c.toUpperCase()}]`).join("")).join("|");
const PHRASES = new RegExp(`(?<![${WORD}])(${caseless("gave given giving stepped took called no any goes go going known")})`
  + ` (${caseless("up down over off more by as")})(?![${WORD}])`, "gu");
const OUT = new RegExp(`(?<![${WORD}])(${caseless("dropped pulled")}) (${caseless("out")})(?![${WORD}])`, "gu");  // "dropped out", not "goes out"
const NEGATIONS = set("not no never n't without");
// Words that name one place to live or work out of several verbs: "moved to X" answers "lives in Y".
const SAME = new Map(Object.entries({ home: "live", live: "live", lives: "live", living: "live", lived: "live", moved: "live", relocated: "live",
  based: "live", located: "live", kept: "live", stored: "live", parked: "live", housed: "live" }));
const PLACES = new Set(SAME.values());

const NAMING = set("called named title titled renamed goes_by go_by going_by known_as");
// How much of the old fact the new one must say again: with a retraction, with a strong change word.
const RETRACTS = 0.4;
const CHANGED = 0.5;
const CLOSE = 0.8;
const NEAR = 0.6;
// Two things said about one labelled subject ("D3.js: used for graphs" / "D3.js: licence ISC", as
// an MCP memory graph's observations read) differ in more than a short answer ("Tech stack: Go").
const LABEL = /^([^:\n]{1,60}?): /u;
const ANSWER_WORDS = 3;
// A subject written as one identifier ("mcp-server-memory", "D3.js"): what a text opens with.
const IDENT = /^([\p{L}\p{N}]+(?:[-._/][\p{L}\p{N}]+)+)/u;

// An opening that says when, not what: "After the wedding, ...", "As of March, ...".
const LEAD = new RegExp(`^(?:${caseless("after|since|as of|from|following|starting|effective|these days|this|last|next", "|")})`
  + `(?![${WORD}])[^,;]{0,60},[ \t\r\n]*`, "u");
// Clauses: a sentence's end after a word (not "Ms." or "Dr."), or a semicolon.
const CLAUSES = /(?:;|(?<=[a-z]{4})\.)[ \t\r\n]+/u;
const ALPHA = "\\p{L}\\p{Nl}\\p{No}";  // Python's [^\W\d_]
const TOKEN = new RegExp(`n't|[£$€¥]?\\p{Nd}+(?:[:.,/-]\\p{Nd}+)*[\\p{L}\\p{N}]*|[${ALPHA}][\\p{L}\\p{N}]*(?:_[${ALPHA}]+|'[${ALPHA}]+)?|'s`, "gu");
// Python's len() and slices: code points.
const len = (s: string) => Array.from(s).length;
const and = <T>(a: Set<T>, b: Set<T>) => new Set([...a].filter((x) => b.has(x)));
const minus = <T>(a: Set<T>, b: Set<T>) => new Set([...a].filter((x) => !b.has(x)));

/** Why a new fact answers an older one's question: `reason` "retraction", "value", "change" or
 * "rename", and the words of each fact's answer as written (`old`, `new`). */
export interface Answer {
  reason: string;
  old: string[];
  new: string[];
}

/** A crude stem, the same on both sides: "drinks", "drinking" and "drink" are one word, as
 * are "coffees" and "coffee", "lives" and "lived". */
export function stem(word: string): string {
  let w = word.endsWith("'s") ? word.slice(0, -2) : word;
  const c = Array.from(w);  // (the suffixes are ASCII: a slice of code units takes them off)
  if (c.length > 4 && w.endsWith("ies")) w = w.slice(0, -3) + "y";
  else if (c.length > 4 && w.endsWith("es") && ("sxz".includes(c.at(-3)!) || ["ch", "sh"].includes(c.slice(-4, -2).join("")))) w = w.slice(0, -2);
  else if (c.length > 3 && w.endsWith("s") && !w.endsWith("ss")) w = w.slice(0, -1);
  else if (c.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (c.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  return len(w) > 3 && w.endsWith("e") ? w.slice(0, -1) : w;
}

export interface Words {
  raw: string[];  // as written
  keys: string[];  // stemmed content words, or "~" for glue; "" for the rest
  cues: Set<string>;
  negations: number;
}

export function read(text: string): Words {
  const raw: string[] = [], keys: string[] = [], cues = new Set<string>();
  let negations = 0;
  // "doesn't" is "does" and a negation, as dedup.words reads it.
  const split = text.replaceAll("\u2019", "'").replaceAll("n't", " n't").replaceAll("N'T", " N'T");
  for (const token of split.replace(PHRASES, "$1_$2").replace(OUT, "$1_$2").match(TOKEN) ?? []) {
    const word = token.toLowerCase();
    if (word.endsWith("'s") && len(word) > 2) {  // "Umar's": the name, then the glue of possession
      for (const [part, key] of [[token.slice(0, -2), word.slice(0, -2)], ["'s", "~"]]) {
        raw.push(part);
        keys.push(OWNER.has(key) ? "" : (key === "~" ? key : stem(key)));
      }
      continue;
    }
    raw.push(token);
    if (NEGATIONS.has(word)) {
      negations += 1;
      keys.push("");
    } else if (SAME.has(word)) {
      if (CUES.has(word)) cues.add(word);
      keys.push(SAME.get(word)!);
    } else if (word === "off" && (keys.length === 0 || keys[keys.length - 1] !== "~")) {  // "drop-off", not "is off"
      keys.push("");
    } else if (CUES.has(word) || (raw.length > 1 && raw[raw.length - 2].toLowerCase() === "since")) {  // "since March": when, not what
      cues.add(word);
      keys.push("");
    } else if (GLUE.has(word)) {
      keys.push("~");
    } else if (FILLER.has(word) || OWNER.has(word)) {
      keys.push("");
    } else {
      keys.push(stem(word));
    }
  }
  return { raw, keys, cues, negations };
}

/** The positions of the value's words if they make one unbroken run (no shared content word
 * or glue between them), else null. */
function run(words: Words, value: Set<string>, shared: Set<string>): number[] | null {
  const found = at(words, value);
  if (!found.length) return [];
  for (let i = found[0]; i <= found[found.length - 1]; i++) {  // an answer can own something: "at Carla's house"
    if ((words.keys[i] === "~" && words.raw[i] !== "'s") || shared.has(words.keys[i])) return null;
  }
  return found;
}

const asWritten = (words: Words, at: number[]) => [...new Set(at.map((i) => words.raw[i]))];

const written = (words: Words, keys: Set<string>) => asWritten(words, at(words, keys));

/** How `next` answers the question `old` answers, or null when it answers another one;
 * `cosine` is the model's for the two texts. A new fact of several clauses answers it when one
 * of them does: "The flat was sold; the new landlord is Ms. Kowalczyk.". */
export function answers(old: string, next: string, cosine = 0.0): Answer | null {
  let found = answer(old, next.replace(LEAD, ""), cosine);
  const clauses = next.split(CLAUSES).filter((c) => c);
  for (const clause of clauses.length > 1 && !found ? clauses : []) {
    found = answer(old, clause, cosine);
    if (found) break;
  }
  return found;
}

function answer(old: string, next: string, cosine: number): Answer | null {
  const o = read(old), n = read(next);
  const ko = o.keys.filter((k) => k && k !== "~");
  const kn = n.keys.filter((k) => k && k !== "~");
  if (!ko.length || !kn.length) return null;
  const shared = and(new Set(ko), new Set(kn));
  const onlyOld = minus(new Set(ko), shared), onlyNew = minus(new Set(kn), shared);
  const cues = minus(n.cues, o.cues);
  const covered = ko.filter((k) => shared.has(k)).length / ko.length;
  const differs = { old: written(o, onlyOld), new: written(n, onlyNew) };
  const saidAgain = covered >= RETRACTS || (cosine >= NEAR && covered > 0)
    || [...takenBack(n, o, and(cues, RETRACTIONS))].some((k) => shared.has(k));
  if ((o.negations % 2 !== n.negations % 2 || and(cues, RETRACTIONS).size) && saidAgain) {
    // The new answer of a retraction is what takes the old one back: "no longer", "stopped".
    const taken = n.keys.flatMap((k, i) => (onlyNew.has(k) || cues.has(n.raw[i].toLowerCase()) || NEGATIONS.has(n.raw[i].toLowerCase())
      ? [n.raw[i].replaceAll("_", " ")] : []));
    return { reason: "retraction", old: differs.old, new: [...new Set(taken)] };
  }
  // One measure, another amount, said as a change: "5 mg of amlodipine" / "The doctor raised the
  // amlodipine dose to 10 mg." (its subject can be written two ways, so before the subject's test).
  const amounts = (cues.size || saidUp(n)) && cosine >= MEASURED && sameOwned(o, n) ? measure(o, n, shared) : null;
  if (amounts) return { reason: "value", old: amounts[0], new: amounts[1] };
  // A switch said of the thing switched, however the subject is written ("moved from LastPass").
  const switches = and(cues, SWITCHES);
  if (switches.size && [...switched(n, o, switches)].some((k) => shared.has(k) && !PLACES.has(k))) {
    return { reason: "change", old: differs.old, new: differs.new };
  }
  // The subject: the first thing either names is named by the other too, or both are the owner's.
  // (Two facts of the owner's that open on different words only answer one question when the new
  // one says what changed: "User banks with Barclays." / "User switched to Monzo ...".)
  const opened = shared.has(ko[0]) || shared.has(kn[0]);
  if (!opened && !(ownerFirst(o) && ownerFirst(n))) return null;
  if (observations(old, next, differs.old, differs.new) || otherSubjects(old, next)) return null;
  const found = opened ? value(o, n, shared, onlyOld, onlyNew, cues, new Set([...named(old), ...named(next)])) : null;
  if (found) return found;
  // A fresh sentence that says what changed ("The owner sold the Corolla and drives a Tesla."):
  // a strong change word, and most of the old fact said again.
  if (and(cues, STRONG).size && (covered >= CHANGED || (cosine >= NEAR && covered >= RETRACTS / 2))) {
    return { reason: "change", old: differs.old, new: differs.new };
  }
  // A new name, said as one: "TaskBoard is now called Tallyo.", "has a new title: Tinker Talk."
  if (cues.size && n.raw.some((w) => NAMING.has(w.toLowerCase())) && covered >= RETRACTS / 4 * 3) {
    return { reason: "rename", old: differs.old, new: differs.new };
  }
  // Nearly one sentence, a value changed in it ("Ravi's insulin dose is 12 units" / "Ravi now
  // injects 14 units of insulin").
  if (opened && cosine >= CLOSE && covered >= CHANGED && sameOwned(o, n) && !narrowed(o, n, shared)
      && !possessors(o, at(o, onlyOld), n, at(n, onlyNew))
      && and(kinds(o, at(o, onlyOld)), minus(kinds(n, at(n, onlyNew)), new Set(["word"]))).size) {
    return { reason: "value", old: differs.old, new: differs.new };
  }
  return null;
}

/** One text puts a word inside the other's frame: "The flight back from Vilnius ..." after "The
 * flight to Vilnius ...": two words next to each other in one (filler aside) have a plain word
 * between them in the other, so the two ask about different things. */
function narrowed(o: Words, n: Words, shared: Set<string>): boolean {
  for (const [a, b] of [[o, n], [n, o]]) {
    const seq = a.keys.filter((k) => k && k !== "~");
    const pos = b.keys.flatMap((k, i) => (k && k !== "~" ? [i] : [])); // b's content words' positions
    const keys = pos.map((i) => b.keys[i]);
    for (let p = 0; p + 1 < seq.length; p++) {
      const [x, y] = [seq[p], seq[p + 1]];
      if (shared.has(x) && shared.has(y) && keys.includes(x)) {
        const i = keys.indexOf(x);
        let j = i + 1;
        for (let m = i + 1; m < keys.length; m++) {
          if (keys[m] === y) { j = m; break; }
        }
        const between = pos.slice(i + 1, j);
        if (between.length && between.every((m) => !shared.has(b.keys[m]) && kinds(b, [m]).has("word"))) return true;
      }
    }
  }
  return false;
}

/** Both answers own what the frame names: "Kerensa is Fitzroy's mother." / "... Hamish's mother."
 * are two people's mothers (another subject's same attribute), not two answers. */
function possessors(o: Words, atOld: number[], n: Words, atNew: number[]): boolean {
  return atOld.length > 0 && atNew.length > 0 && owns(o, atOld) && owns(n, atNew);
}

/** The words at `at` are all in a possessor: the first glue after each is "'s". */
function owns(words: Words, at: number[]): boolean {
  for (const i of at) {
    let glue = -1;
    for (let j = i + 1; j < words.keys.length; j++) {
      if (words.keys[j] === "~") { glue = j; break; }
    }
    if (glue < 0 || words.raw[glue] !== "'s") return false;
  }
  return true;
}

/** Both open with one label and say more than a short answer after it. */
function observations(old: string, next: string, saidOld: string[], saidNew: string[]): boolean {
  const a = LABEL.exec(old), b = LABEL.exec(next);
  return a !== null && b !== null && a[1] === b[1] && Math.max(saidOld.length, saidNew.length) > ANSWER_WORDS;
}

function sameOwned(o: Words, n: Words): boolean {
  const a = owned(o), b = owned(n);
  return !a || !b || a === b;
}

/** What a text's first possessive owns ("Ravi's daughter": daughter), "" when it has none: two
 * facts of one owner's different things answer different questions. */
function owned(words: Words): string {
  for (let i = 0; i < words.raw.length - 1; i++) {
    if (words.raw[i] === "'s") return words.keys.slice(i + 1).find((k) => k && k !== "~") ?? "";
  }
  return "";
}

function at(words: Words, keys: Set<string>): number[] {
  return words.keys.flatMap((k, i) => (keys.has(k) ? [i] : []));
}

/** Both open with an identifier, not the same one: "issue-8-entity-types ..." / "issue-9-relation-types ...". */
function otherSubjects(old: string, next: string): boolean {
  const a = IDENT.exec(old), b = IDENT.exec(next);
  return a !== null && b !== null && a[1] !== b[1];
}

function named(text: string): Set<string> {
  const found = IDENT.exec(text);
  return new Set(found ? read(found[1]).keys.filter((k) => k && k !== "~") : []);
}

/** The frame kept and its value changed: "The standup is at 9:30." / "... at 10:00 now."." */
function value(o: Words, n: Words, shared: Set<string>, onlyOld: Set<string>, onlyNew: Set<string>, cues: Set<string>,
  named: Set<string>): Answer | null {
  // Who the subject is, said before it in one text only, is not its answer: "The owner's brother
  // Ben lives in Denver." / "Ben lives in Austin."
  onlyOld = minus(onlyOld, lead(o, shared));
  onlyNew = minus(onlyNew, lead(n, shared));
  if (!onlyOld.size || !onlyNew.size) return null;
  const runOld = run(o, onlyOld, shared), runNew = run(n, onlyNew, shared);
  if (runOld === null || runNew === null) return null;
  // The frame is more than its subject: an attribute, a relation or a verb both keep.
  if (!minus(minus(minus(shared, subject(o)), subject(n)), named).size) return null;
  // ... in one order, with the answer in one place of it: "Cosima reports to Ulla." and "Ulla
  // reports to Ivo." share their words, not their frame.
  if (JSON.stringify(frame(o, shared, runOld)) !== JSON.stringify(frame(n, shared, runNew))) return null;
  if (possessors(o, runOld, n, runNew)) return null;
  const kindsOld = kinds(o, runOld), kindsNew = kinds(n, runNew);
  if (flips(o, n, runOld, runNew)) return { reason: "retraction", old: asWritten(o, runOld), new: asWritten(n, runNew) };
  // Two answers to one question are answers of one kind: a time for a time, a name for a name;
  // a change word ("now", "upgraded to") says so by itself.
  if (!cues.size && !and(kindsOld, kindsNew).size) return null;
  // A word for a word only where the frame says the thing has one ("The owner's car is a blue
  // Skoda." / "... a red Skoda."), not after a verb that takes many ("likes jazz", "likes hiking").
  if (cues.size || minus(kindsOld, new Set(["word"])).size || (afterGlue(o, runOld) && afterGlue(n, runNew))) {
    return { reason: "value", old: asWritten(o, runOld), new: asWritten(n, runNew) };
  }
  return null;
}

/** The content words before the first shared one when that is a name both give and the words
 * before it describe it (none owns it, none comes again): "The owner's brother | Ben ...". */
function lead(words: Words, shared: Set<string>): Set<string> {
  const at = words.keys.findIndex((k) => shared.has(k));
  const firstShared = at < 0 ? 0 : at;
  const before = new Set(words.keys.slice(0, firstShared).filter((k) => k && k !== "~"));
  if (!firstShared || !UPPER.test(first(words.raw[firstShared])) || words.raw[firstShared - 1] === "'s") return new Set();
  return words.keys.slice(firstShared).some((k) => before.has(k)) ? new Set() : before;
}

/** The shared words in their order (each once), and how many of them come before the answer. */
function frame(words: Words, shared: Set<string>, run: number[]): [string[], number] {
  const seen = new Map<string, number>();
  words.keys.forEach((k, i) => {
    if (shared.has(k) && !seen.has(k)) seen.set(k, i);
  });
  const order = [...seen.keys()].sort((a, b) => seen.get(a)! - seen.get(b)!);
  return [order, [...seen.values()].filter((at) => at < run[0]).length];
}

/** The answer follows "is" or "has" (filler aside; not the "'s" of "Mia's") and something
 * before that names the thing. */
function afterGlue(words: Words, run: number[]): boolean {
  const before = words.keys.slice(0, run[0]).flatMap((k, i) => (k ? [i] : []));
  const last = before.at(-1)!;
  return before.length >= 2 && words.keys[last] === "~" && words.raw[last] !== "'s" && before.some((i) => words.keys[i] !== "~");
}

/** One answer is the other with "un" before it: "unpaid" / "paid". */
function flips(o: Words, n: Words, runOld: number[], runNew: number[]): boolean {
  const a = new Set(runOld.map((i) => o.raw[i].toLowerCase()));
  const b = new Set(runNew.map((i) => n.raw[i].toLowerCase()));
  return [...b].some((w) => a.has("un" + w)) || [...a].some((w) => b.has("un" + w));
}

/** The text opens with the owner as its subject ("User banks with ...", "The owner moved ..."),
 * not with something of the owner's ("The owner's bank ..."). */
function ownerFirst(words: Words): boolean {
  for (let i = 0; i < words.raw.length; i++) {
    const low = words.raw[i].toLowerCase();
    if (FILLER.has(low)) continue;
    return OWNER.has(low) && (i + 1 === words.raw.length || words.raw[i + 1] !== "'s");
  }
  return false;
}

/** The names a text opens with ("Marisol Arrieta was born ..."): its subject, when it names one. */
function subject(words: Words): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i < words.raw.length; i++) {
    const [raw, key] = [words.raw[i], words.keys[i]];
    if (key === "~" || (key && !UPPER.test(first(raw)))) break;
    if (key) out.add(key);
  }
  return out;
}

/** What sort of answer a run is: a number, a day or time, a name; else a word. */
function kinds(words: Words, at: number[]): Set<string> {
  const out = new Set<string>();
  for (const i of at) {
    const w = words.raw[i];
    const lw = w.toLowerCase();
    if (DIGIT.test(w) || NUMBER_WORDS.has(lw)) out.add("number");
    else if (CALENDAR.has(lw) || (lw.endsWith("s") && CALENDAR.has(lw.slice(0, -1)))) out.add("date");
    else if (UPPER.test(first(w)) && i > 0) out.add("name");
  }
  return out.size ? out : new Set(["word"]);
}
