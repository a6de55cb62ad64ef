// How many facts hold a term, and how many facts there are, each read in a row or two whatever
// the memory's size: recall's IDFs (method "info", the debugger's terms) and a word's count for
// query expansion read FTS5's own per-term record (fts5vocab `row`: a term and the rows holding
// it, kept by FTS5 in the write's own transaction), where count(*) over a MATCH read a row for
// every fact holding the term; GET /facts and /health read `fact_counts`, a row a type that
// triggers on `facts` keep (schema.ts migration 10), where count(*) read a row a fact.
//
// The vocab table is keyed by the index's terms, Porter stems: FTS5's porter tokenizer over
// unicode61. On ASCII that is a fold to lower case, letters and digits, and the stemmer below (a
// port of sqlite's ext/fts5/fts5_tokenize.c, checked against FTS5 itself in
// test/term_counts.test.ts). A term that is not plain ASCII is counted by its MATCH, as before.

import { quote } from "../recall/ranking";
import type { FactType } from "./vectors";

const PLAIN = /^[a-z0-9]+$/;
const MAX_TOKEN = 64;  // FTS5_PORTER_MAX_TOKEN: longer (and shorter than 3) tokens pass through unstemmed

/** How many facts hold `term` (a lower-case query token), as `count(*) ... MATCH quote(term)` counts. */
export function having(sql: SqlStorage, term: string): number {
  if (!PLAIN.test(term)) {
    return sql.exec<{ n: number }>("SELECT count(*) AS n FROM facts_fts WHERE facts_fts MATCH ?", quote(term)).one().n;
  }
  const rows = sql.exec<{ doc: number }>("SELECT doc FROM fts_rows WHERE term = ?", stem(term)).toArray();
  return rows.length ? rows[0].doc : 0;
}

/** The facts of `type` (null: all), from the counts the triggers keep. */
export function factCount(sql: SqlStorage, type: FactType | null = null): number {
  return type
    ? (sql.exec<{ n: number }>("SELECT n FROM fact_counts WHERE type = ?", type).toArray()[0]?.n ?? 0)
    : sql.exec<{ n: number }>("SELECT coalesce(sum(n), 0) AS n FROM fact_counts").one().n;
}

// -- FTS5's Porter stemmer, on a lower-case ASCII token -----------------------------------

const vowel = (c: string, yIsVowel: boolean) => c === "a" || c === "e" || c === "i" || c === "o" || c === "u" || (yIsVowel && c === "y");

/** Past the first vowel-consonant run of `s` from `from` (fts5PorterGobbleVC): its end, or 0. */
function gobbleVC(s: string, from: number, n: number, prevCons: boolean): number {
  let cons = prevCons;
  let i = from;
  for (; i < n; i++) if (!(cons = !vowel(s[i], cons))) break;
  for (i++; i < n; i++) if ((cons = !vowel(s[i], cons))) return i + 1 - from;
  return 0;
}
const mGt0 = (s: string, n: number) => gobbleVC(s, 0, n, false) > 0;
function mGt1(s: string, n: number): boolean {
  const k = gobbleVC(s, 0, n, false);
  return k > 0 && gobbleVC(s, k, n, true) > 0;
}
function mEq1(s: string, n: number): boolean {
  const k = gobbleVC(s, 0, n, false);
  return k > 0 && gobbleVC(s, k, n, true) === 0;
}
function oStar(s: string, n: number): boolean {
  const last = s[n - 1];
  if (last === "w" || last === "x" || last === "y") return false;
  let mask = 0, cons = false;
  for (let i = 0; i < n; i++) {
    cons = !vowel(s[i], cons);
    mask = ((mask << 1) + (cons ? 1 : 0)) & 0xffff;
  }
  return (mask & 7) === 5;
}
const sOrT = (s: string, n: number) => (s[n - 1] === "s" || s[n - 1] === "t") && mGt1(s, n);
function hasVowel(s: string, n: number): boolean {
  for (let i = 0; i < n; i++) if (vowel(s[i], i > 0)) return true;
  return false;
}

type Cond = ((s: string, n: number) => boolean) | null;
type Rule = [suffix: string, output: string, cond: Cond];

// The generated steps: the first suffix that ends the word (and is shorter than it) decides;
// it is replaced only when its condition holds on what precedes it.
const STEP2: Rule[] = [["ational", "ate", mGt0], ["tional", "tion", mGt0], ["enci", "ence", mGt0], ["anci", "ance", mGt0],
  ["izer", "ize", mGt0], ["logi", "log", mGt0], ["bli", "ble", mGt0], ["alli", "al", mGt0], ["entli", "ent", mGt0], ["eli", "e", mGt0],
  ["ousli", "ous", mGt0], ["ization", "ize", mGt0], ["ation", "ate", mGt0], ["ator", "ate", mGt0], ["alism", "al", mGt0],
  ["iveness", "ive", mGt0], ["fulness", "ful", mGt0], ["ousness", "ous", mGt0], ["aliti", "al", mGt0], ["iviti", "ive", mGt0],
  ["biliti", "ble", mGt0]];
const STEP3: Rule[] = [["ical", "ic", mGt0], ["ness", "", mGt0], ["icate", "ic", mGt0], ["iciti", "ic", mGt0], ["ful", "", mGt0],
  ["ative", "", mGt0], ["alize", "al", mGt0]];
const STEP4: Rule[] = [["al", "", mGt1], ["ance", "", mGt1], ["ence", "", mGt1], ["er", "", mGt1], ["ic", "", mGt1], ["able", "", mGt1],
  ["ible", "", mGt1], ["ant", "", mGt1], ["ement", "", mGt1], ["ment", "", mGt1], ["ent", "", mGt1], ["ion", "", sOrT], ["ou", "", mGt1],
  ["ism", "", mGt1], ["ate", "", mGt1], ["iti", "", mGt1], ["ous", "", mGt1], ["ive", "", mGt1], ["ize", "", mGt1]];
const STEP1B2: Rule[] = [["at", "ate", null], ["bl", "ble", null], ["iz", "ize", null]];

/** `w` after the step's rule, and whether it changed. */
function apply(w: string, rules: Rule[]): [string, boolean] {
  for (const [suffix, output, cond] of rules) {
    if (w.length > suffix.length && w.endsWith(suffix)) {
      const stemLength = w.length - suffix.length;
      if (cond && !cond(w, stemLength)) return [w, false];
      return [w.slice(0, stemLength) + output, true];
    }
  }
  return [w, false];
}

/** The index's term for a lower-case ASCII token (fts5PorterCb). */
export function stem(token: string): string {
  if (token.length > MAX_TOKEN || token.length < 3) return token;
  let w = token;
  if (w.endsWith("s")) {  // step 1a
    if (w[w.length - 2] === "e") {
      w = (w.length > 4 && w.endsWith("sses")) || (w.length > 3 && w[w.length - 3] === "i") ? w.slice(0, -2) : w.slice(0, -1);
    } else if (w[w.length - 2] !== "s") {
      w = w.slice(0, -1);
    }
  }
  // step 1b: only "ed" and "ing" taken off go on to 1b2 ("eed" to "ee" does not)
  let cut = false;
  if (w.length > 3 && w.endsWith("eed")) {
    if (mGt0(w, w.length - 3)) w = w.slice(0, -1);
  } else if (w.length > 2 && w.endsWith("ed")) {
    if (hasVowel(w, w.length - 2)) [w, cut] = [w.slice(0, -2), true];
  } else if (w.length > 3 && w.endsWith("ing")) {
    if (hasVowel(w, w.length - 3)) [w, cut] = [w.slice(0, -3), true];
  }
  if (cut) {
    let added: boolean;
    [w, added] = apply(w, STEP1B2);
    if (!added) {
      const c = w[w.length - 1];
      if (!vowel(c, false) && c !== "l" && c !== "s" && c !== "z" && c === w[w.length - 2]) w = w.slice(0, -1);
      else if (mEq1(w, w.length) && oStar(w, w.length)) w += "e";
    }
  }
  if (w.endsWith("y") && hasVowel(w, w.length - 1)) w = w.slice(0, -1) + "i";  // step 1c
  [w] = apply(w, STEP2);
  [w] = apply(w, STEP3);
  [w] = apply(w, STEP4);
  if (w.endsWith("e") && (mGt1(w, w.length - 1) || (mEq1(w, w.length - 1) && !oStar(w, w.length - 1)))) w = w.slice(0, -1);  // 5a
  if (w.length > 1 && w.endsWith("ll") && mGt1(w, w.length - 1)) w = w.slice(0, -1);  // 5b
  return w;
}
