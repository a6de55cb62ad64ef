// The pure parts of recall, mirroring memories/recall/ranking.py line for line: the FTS5 query builder,
// the fusions and the rerank of the fused top. tests/golden/recall.json holds cases both
// implementations must agree on.

import { strip } from "../text";

// Words too common to say anything about which fact is meant (the same list as recall.py).
export const STOP_WORDS = new Set(
  `a about above after again against all am an and any are aren't as at be because been before
  being below between both but by can could did do does doing down during each few for from
  further had has have having he her here hers herself him himself his how i if in into is it
  its itself just me more most my myself no nor not now of off on once only or other our ours
  ourselves out over own same she should so some such than that the their theirs them
  themselves then there these they this those through to too under until up very was we were
  what when where which while who whom why will with would you your yours yourself yourselves
  s t d ll m re ve don doesn didn isn wasn weren won`.split(/\s+/),
);

// unicode61 splits on anything that is not a letter or a digit; so do we, so each quoted term
// is one FTS5 token and a quote, `*`, `:` or `NEAR` in user text is only ever text.
const HAS_TOKEN = /[\p{L}\p{N}]/u;  // TOKEN without the global flag's state, for a test
const TOKEN = /[\p{L}\p{N}]+/gu;
/** Whether `text` holds a word (a token recall.py's TOKEN finds). */
export const hasToken = (text: string) => HAS_TOKEN.test(text);
const MAX_TERMS = 64;
const MAX_PHRASES = 16;

const FIRST_PERSON: Record<string, string[]> = {
  i: ["owner"], me: ["owner"], myself: ["owner"], mine: ["owner"], my: ["owner", "s"],
};

export function tokens(text: string, aliasSelf = false): string[] {
  const found = text.toLowerCase().match(TOKEN) ?? [];
  return aliasSelf ? found.flatMap((t) => FIRST_PERSON[t] ?? [t]) : found;
}

export function terms(text: string, aliasSelf = false): string[] {
  const seen = new Set<string>();
  for (const token of tokens(text, aliasSelf)) {
    if (!STOP_WORDS.has(token) && !seen.has(token)) {
      seen.add(token);
      if (seen.size === MAX_TERMS) break;
    }
  }
  return [...seen];
}

export function phrases(text: string, aliasSelf = false): string[] {
  const words = tokens(text, aliasSelf).slice(0, 512);
  const found = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    if (STOP_WORDS.has(words[i])) continue;
    for (const j of [i + 1, i + 2]) {
      if (j < words.length && !STOP_WORDS.has(words[j])) {
        found.add(words.slice(i, j + 1).join(" "));
        break;
      }
    }
    if (found.size === MAX_PHRASES) break;
  }
  return [...found];
}

export const quote = (term: string) => '"' + term.replaceAll('"', '""') + '"';

/** An FTS5 MATCH that ORs the quoted terms (and phrases, and `extra` words: the expansion). */
export function matchExpression(text: string, withPhrases = false, aliasSelf = false, extra: string[] = []): string {
  const parts = terms(text, aliasSelf).map(quote);
  if (withPhrases) parts.push(...phrases(text, aliasSelf).map(quote));
  parts.push(...extra.map(quote));
  return parts.join(" OR ");
}

export function matchTerms(match: string): string[] {
  return match ? match.split(" OR ").map((t) => t.slice(1, -1).replaceAll('""', '"')) : [];
}

// Query expansion (recall.py `expand`): the memory's own words that the model finds close to a
// query term. The vocabulary is each fact's words that could carry meaning (no stop words,
// numbers or words of one or two letters), each embedded alone.
export const EXPAND_CLOSEST = 3;  // of a term's closest vocabulary words (itself included), those over the bar
// An expansion word more facts hold than this is left out: the keyword query would score every one
// of them for a word that tells few facts apart (recall.py EXPAND_MOST_FACTS, measured there).
export const EXPAND_MOST_FACTS = 50_000;

/** Whether an expansion word that `facts` facts hold joins the query: some fact must hold it (a
 * word stays in the vocabulary after its last fact goes), and not too many. */
export const expansionKept = (facts: number): boolean => facts > 0 && facts <= EXPAND_MOST_FACTS;

// Python's str.isdigit(): decimal digits and the superscript, subscript and circled ones.
const DIGITS = new RegExp(String.raw`^[\p{Nd}\u00b2\u00b3\u00b9\u1369-\u1371\u19da\u2070\u2074-\u2079\u2080-\u2089\u2460-\u2468`
  + String.raw`\u2474-\u247c\u2488-\u2490\u24ea\u24f5-\u24fd\u24ff\u2776-\u277e\u2780-\u2788\u278a-\u2792\u{10a40}-\u{10a43}`
  + String.raw`\u{10e60}-\u{10e68}\u{11052}-\u{1105a}\u{1f100}-\u{1f10a}]+$`, "u");

export const expandable = (word: string) => [...word].length > 2 && !DIGITS.test(word) && !STOP_WORDS.has(word);

/** The words of a fact that the vocabulary holds, each once, in order. */
export const vocabularyWords = (text: string) => [...new Set(tokens(text).filter(expandable))];

/** Words to add to the keyword query, as [word, the term it came from, cosine]. `closest[i]`
 * holds [word, cosine] for vocabulary words close to the i-th expandable query term; of each
 * term's EXPAND_CLOSEST closest (ties to the word first in sort order; the term itself counts),
 * those at or above `bar` that the query does not already hold, each once. */
export function expand(queryTerms: string[], closest: [string, number][][], bar: number): [string, string, number][] {
  const asked = queryTerms.filter(expandable);
  const found = new Map<string, [string, string, number]>();
  asked.forEach((term, i) => {
    const near = [...(closest[i] ?? [])].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [word, cosine] of near.slice(0, EXPAND_CLOSEST)) {
      if (cosine >= bar && !queryTerms.includes(word) && !found.has(word)) found.set(word, [word, term, cosine]);
    }
  });
  return [...found.values()];
}

export const METHODS = ["rrf", "relative", "ratio", "info"] as const;

/** A term's inverse document frequency exactly as FTS5's bm25() computes it. */
export function idf(rows: number, having: number): number {
  const value = Math.log((rows - having + 0.5) / (having + 0.5));
  return value > 0 ? value : 1e-6;
}

/** The query terms' summed IDF: what a fact matching each term once at average length scores in BM25. */
export const information = (rows: number, having: number[]) => having.reduce((sum, n) => sum + idf(rows, n), 0);

export interface Fusion {
  k: number;
  depth: number;
  kw_weight: number;
  vec_weight: number;
  phrases: boolean;
  method: (typeof METHODS)[number];
  alias_self: boolean;
  expand: number;  // the cosine a vocabulary word needs with a query term to join the query; 0 is off
  rerank: number;  // how many of the fused top are ranked again without the words they share; 0 is off
}

export const SEED: Fusion = {
  k: 60, depth: 30, kw_weight: 1.0, vec_weight: 1.0, phrases: false, method: "rrf", alias_self: false, expand: 0, rerank: 0,
};
// The default chosen on evaluation sets written before it (recall.py's DEFAULT).
export const DEFAULT: Fusion = { ...SEED, method: "info", expand: 0.65, rerank: 5 };
export const PRESETS: Record<string, Fusion> = { default: DEFAULT, seed: SEED };

export const match = (f: Fusion, query: string, extra: string[] = []) => matchExpression(query, f.phrases, f.alias_self, extra);
/** The terms whose document frequencies method "info" needs ([] for other methods). */
export const infoTerms = (f: Fusion, query: string, extra: string[] = []) =>
  (f.method === "info" ? [...terms(query, f.alias_self), ...extra] : []);
/** The query terms whose closest vocabulary words may join the query ([] when off). */
export const expandableTerms = (f: Fusion, query: string) => (f.expand ? terms(query, f.alias_self).filter(expandable) : []);

export interface Fused {
  id: number;
  kw_rank: number | null;
  vec_rank: number | null;
  kw_part: number;
  vec_part: number;
  rerank_part: number;
}

export const score = (h: Fused) => h.kw_part + h.vec_part + h.rerank_part;

const BIG = 1 << 30;
// Ties go to the fact the vector list ranked higher, then the keyword list, then the id.
export function byRank(a: Fused, b: Fused): number {
  return score(b) - score(a) || (a.vec_rank ?? BIG) - (b.vec_rank ?? BIG) || (a.kw_rank ?? BIG) - (b.kw_rank ?? BIG) || a.id - b.id;
}

/** Fused hits, best first: the whole of ranking, given the two lists. kw and vec are [id, score]
 * best first, higher better (BM25 negated); `info` is the query's information (method "info"). */
export function fuse(kw: [number, number][], vec: [number, number][], f: Fusion, info: number | null = null): Fused[] {
  const out = new Map<number, Fused>();
  const lists: [[number, number][], number, "kw" | "vec"][] = [[kw, f.kw_weight, "kw"], [vec, f.vec_weight, "vec"]];
  for (const [hits, weight, slot] of lists) {
    let top = 0, bottom = 0, span = 0;
    if (f.method !== "rrf" && hits.length) {
      top = hits[0][1];
      bottom = f.method === "relative" ? hits[hits.length - 1][1] : 0.0;
      if (f.method === "info" && slot === "kw" && info) top = info;
      span = top - bottom;
    }
    hits.forEach(([id, s], i) => {
      const rank = i + 1;
      let e = out.get(id);
      if (!e) out.set(id, (e = { id, kw_rank: null, vec_rank: null, kw_part: 0, vec_part: 0, rerank_part: 0 }));
      const part = f.method === "rrf" ? weight / (f.k + rank) : weight * (span > 0 ? (s - bottom) / span : 1.0);
      if (slot === "kw") { e.kw_part = part; e.kw_rank = rank; } else { e.vec_part = part; e.vec_rank = rank; }
    });
  }
  return [...out.values()].sort(byRank);
}

// Reranking the fused top (recall.py `rerank`): the top facts and the query embedded again
// without the query words the top shares ("Cosima" in every fact about Cosima), each fact
// gaining its cosine there as a share of the best, times RERANK_WEIGHT.
export const RERANK_SHARED = 2;  // a query term at least this many of the top facts hold is shared
export const RERANK_WEIGHT = 0.5;

/** What reranking the top embeds: the query and each top fact without the shared words. */
export interface Rerank {
  shared: string[];
  query: string;
  facts: string[];
}

/** `text` with every word in `words` (lower-case tokens) taken out, the rest as written, stripped. */
export const without = (text: string, words: Set<string>): string =>
  strip(text.replace(TOKEN, (t) => (words.has(t.toLowerCase()) ? "" : t)));

/** The texts to embed to rerank the facts `texts` (the fused top, best first), or null when there
 * is nothing to do: under two facts, no shared query term, or nothing left of the query. */
export function rerankPlan(query: string, texts: string[], aliasSelf = false): Rerank | null {
  if (texts.length < 2) return null;
  const held = texts.map((t) => new Set(tokens(t)));
  const shared = terms(query, aliasSelf).filter((t) => expandable(t) && held.filter((h) => h.has(t)).length >= RERANK_SHARED);
  if (!shared.length) return null;
  const words = new Set(shared);
  const rest = without(query, words);
  if (!HAS_TOKEN.test(rest)) return null;  // stop words alone still rerank (recall.py says why)
  return { shared, query: rest, facts: texts.map((t) => without(t, words)) };
}

/** The fused top again, each fact given RERANK_WEIGHT times its cosine (with the query, both
 * without the shared words) over the best of them. Unchanged when no cosine is above 0. */
export function rerank(head: Fused[], cosines: number[]): Fused[] {
  const best = cosines.length ? Math.max(...cosines) : 0;
  if (best <= 0) return head;
  head.forEach((h, i) => { h.rerank_part = RERANK_WEIGHT * cosines[i] / best; });
  return [...head].sort(byRank);
}

export const via = (kw: number | null, vec: number | null) => (kw && vec ? "both" : kw ? "kw" : "vec");
