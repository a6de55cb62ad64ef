// How a recall ranks, top to bottom (memories/recall/searching.py), and how explain retraces it for one
// fact: embed the query and its expandable terms, plan the FTS5 query with its expansions, read
// the keyword and the vector lists, fuse them (recall.ts, pure), read the rows, rerank the fused
// top, answer. The rows and the keyword reads come from reading.ts, the vectors from the matrix.

import { editedAfter } from "../review/history";
import { newerFirst, olderOf } from "./outdated";
import type { Background } from "../storage/background";
import { type Fact, MAX_LIMIT, MAX_RERANK, checkQuery } from "../facts";
import { boolParam, choiceParam, floatParam, intParam, invalid, optionalStr } from "../serving/http";
import { type Clause, cleanAsOf, hidden as hiddenBy, isCurrent, leaveOut as leavingOut } from "../writes/lifecycle";
import {
  DEFAULT, type Fused, type Fusion, METHODS, PRESETS, expand, expandableTerms, expansionKept, fuse, hasToken, infoTerms,
  match as matchOf, matchTerms, rerank, rerankPlan, score, terms, via,
} from "./ranking";
import type { Reader } from "./reading";
import type { Answer } from "./recall_log";
import { Part, type State } from "../storage/state";
import { dot } from "../storage/vector_math";
import type { FactType } from "../storage/vectors";

// hybrid fuses both lists; keyword and vector answer from one (the agent's search modes).
const MODES = ["hybrid", "keyword", "vector"] as const;
type Mode = (typeof MODES)[number];

/** A vocabulary word OR-ed into the keyword query: the query term it came from, their cosine
 * and how many facts hold it (searching.py `_expansions`). */
export interface Expansion {
  word: string;
  term: string;
  cosine: number;
  facts: number;
}

const shown = (expansions: Expansion[]) => expansions.map(({ word, term, cosine }) => ({ word, term, cosine }));

/** What reranking the fused top did (recall's debug "rerank"): the shared words, the query
 * without them and each reranked fact's text without them with its cosine there. */
interface Reranked {
  shared: string[];
  query: string;
  facts: { id: number; text: string; cosine: number }[];
}

/** A request's fusion settings (recall, explain, PUT /settings), as service.py's `fusion_param`:
 * a preset ("default" or "seed") and/or single settings over `fallback`; none: `fallback`. */
export function fusionParam(data: Record<string, unknown>, fallback: Fusion): Fusion {
  const raw = data.fusion;
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw !== "object" || Array.isArray(raw)) throw invalid("fusion must be an object");
  const r = raw as Record<string, unknown>;
  const unknown = Object.keys(r).filter((k) => !["preset", ...Object.keys(DEFAULT)].includes(k)).sort();
  // A lone surrogate written as \\udXXX, as Python's backslashreplace writes it: the message stays valid text.
  const escaped = unknown.join(", ").replace(/\p{Surrogate}/gu, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  if (unknown.length) throw invalid(`unknown fusion settings: ${escaped}`);
  const base = "preset" in r ? PRESETS[choiceParam(r.preset, "fusion.preset", "default", Object.keys(PRESETS))] : fallback;
  return {
    k: intParam(r.k, "fusion.k", base.k, 0, 1000),
    depth: intParam(r.depth, "fusion.depth", base.depth, 1, 1000),
    kw_weight: floatParam(r.kw_weight, "fusion.kw_weight", base.kw_weight, 0, 10),
    vec_weight: floatParam(r.vec_weight, "fusion.vec_weight", base.vec_weight, 0, 10),
    phrases: boolParam(r.phrases, "fusion.phrases", base.phrases),
    method: choiceParam(r.method, "fusion.method", base.method, METHODS),
    alias_self: boolParam(r.alias_self, "fusion.alias_self", base.alias_self),
    expand: floatParam(r.expand, "fusion.expand", base.expand, 0, 1),
    rerank: intParam(r.rerank, "fusion.rerank", base.rerank, 0, MAX_RERANK),
  };
}

/** What a recall asks, read from its body (service.py's recall route). */
export interface RecallAsk {
  query: string;
  type: FactType | null;
  limit: number;
  debug: boolean;
  fusion: Fusion;
  mode: Mode;
  asOf: string | null;  // recall what was current then (null: now)
  includeStale: boolean;  // replaced and expired facts too
}

/** Which facts a recall or an explain answers from, read from its body: `as_of` and `include_stale`. */
function answeredFrom(data: Record<string, unknown>): { asOf: string | null; includeStale: boolean } {
  return { asOf: cleanAsOf(data.as_of), includeStale: boolParam(data.include_stale, "include_stale", false) };
}

/** The facts those leave out (lifecycle.ts `hidden`), or null: none. `pending`: the memory's
 * review is "before", so the facts not reviewed yet are left out too (searching.py `_hidden`). */
const leftOut = (ask: { asOf: string | null; includeStale: boolean }, pending: boolean): Clause | null =>
  (ask.includeStale ? null : hiddenBy(ask.asOf, pending));

export class Searcher extends Part {
  constructor(state: State, private reader: Reader, private background: Background) {
    super(state);
  }

  /** Whether recall leaves out the facts not reviewed yet (the memory's review is "before"). */
  private get pending(): boolean {
    return this.state.review.mode === "before";
  }

  /** The query's vector, its expandable terms' vectors (hybrid recall only; a term the vocabulary
   * holds keeps its stored vector) and a warning when the model is down (searching.py `_query_vectors`). */
  private async embedQuery(query: string, f: Fusion, mode: Mode): Promise<[Float32Array | null, Float32Array[] | null, string | null]> {
    if (this.state.full) return [null, null, `${this.state.full} (memory_full: keyword-only recall)`];
    const asked = mode === "hybrid" ? expandableTerms(f, query) : [];
    try {
      if (asked.length) await this.background.vocabulary();  // a memory from before it: its words first
      const stored = this.vocab.vectors(asked);
      const lacking = asked.filter((t) => !stored.has(t));
      // One model call at most (none for a query asked before): a text's vector does not depend
      // on the others in its batch.
      const [qvec, ...fresh] = await this.state.textVectors.embed([query, ...lacking], (t) => this.embedder.embed(t));
      lacking.forEach((t, i) => stored.set(t, fresh[i]));
      return [qvec, asked.length ? asked.map((t) => stored.get(t)!) : null, null];
    } catch (e) {
      return [null, null, `the embedding model failed (${(e as Error).message}): keyword-only recall`];
    }
  }

  /** Vocabulary words close to the query's terms (recall.ts `expand`), with how many facts hold
   * each; a word no fact holds any more, or too many (`expansionKept`), is left out (searching.py `_expansions`). */
  private expansions(query: string, termVectors: Float32Array[] | null, f: Fusion): Expansion[] {
    if (!termVectors || !f.expand) return [];
    return expand(terms(query, f.alias_self), this.vocab.closest(termVectors), f.expand)
      .map(([word, term, cosine]) => ({ word, term, cosine, facts: this.reader.having(word) }))
      .filter((e) => expansionKept(e.facts));
  }

  /** The FTS5 query and the expansions in it, hybrid recall only (searching.py `_rank`). */
  private plan(query: string, termVectors: Float32Array[] | null, f: Fusion, mode: Mode = "hybrid") {
    if (mode === "vector") return { match: "", expansions: [] };
    const expansions = mode === "hybrid" ? this.expansions(query, termVectors, f) : [];
    return { match: matchOf(f, query, expansions.map((e) => e.word)), expansions };
  }

  /** The keyword list, the vector list, every fused hit best first and the query's information
   * (method "info"): the candidates this object finds, ranked by recall.ts `fuse` (synchronous:
   * no write can land between). `match` holds the `expansions` (see `plan`). Both lists leave
   * out the `hidden` facts before taking their depth. */
  private rank(query: string, match: string, expansions: Expansion[], qvec: Float32Array | null, type: FactType | null, f: Fusion,
    mode: Mode = "hybrid", hidden: Set<number> = new Set()) {
    const kw = mode === "vector" ? [] : this.reader.keyword(match, type, f.depth, hidden);
    const vec = mode !== "keyword" && qvec && this.vectors.size ? this.vectors.search(qvec, type, f.depth, null, hidden) : [];
    const words = expansions.map((e) => e.word);
    const { counts, info } = kw.length ? this.reader.termCounts(infoTerms(f, query, words), expansions) : { counts: [], info: null };
    return { kw, vec, info, counts, fused: fuse(kw.map(([id, s]) => [id, -s]), vec, f, info) };
  }

  /** recall.ts `rerank` over the fused top `f.rerank`, and what it did (null when nothing), as
   * searching.py `_rerank`. `facts` holds the top's rows, read before: the model call is the one
   * await, and after it nothing is read, only reordered. The model failing leaves the order. */
  private async rerankTop(query: string, fused: Fused[], f: Fusion, facts: Map<number, Fact>): Promise<[Fused[], Reranked | null]> {
    const head = fused.slice(0, f.rerank);
    const plan = rerankPlan(query, head.map((h) => facts.get(h.id)!.text), f.alias_self);
    if (!plan) return [fused, null];
    // A fact with nothing left but the shared words (and punctuation) is not sent: the model
    // refuses an empty text, and there is nothing of it to compare. Its cosine is 0.
    const sent = plan.facts.filter(hasToken);
    const read = this.state.textVectors.generation;  // the rows were read with no await since
    let vectors: Float32Array[];
    try {
      // One call, as the query's, or none when recall holds every text (text_vectors.ts).
      vectors = await this.state.textVectors.embed([plan.query, ...sent], (t) => this.embedder.embed(t), read);
    } catch (e) {
      console.error("reranking failed; the fused order stands", e);
      return [fused, null];
    }
    let next = 1;
    const cosines = plan.facts.map((t) => (hasToken(t) ? dot(vectors[next++], vectors[0]) : 0));
    const done = {
      shared: plan.shared, query: plan.query, facts: head.map((h, i) => ({ id: h.id, text: plan.facts[i], cosine: cosines[i] })),
    };
    return [[...rerank(head, cosines), ...fused.slice(head.length)], done];
  }

  /** A recall's body, checked; no `fusion` is the memory's own settings. */
  asked(data: Record<string, unknown>): RecallAsk {
    const type = optionalStr(data, "type");
    const query = checkQuery(data.query, type);
    const limit = intParam(data.limit, "limit", 15, 1, MAX_LIMIT);
    const debug = data.debug ?? false;
    if (typeof debug !== "boolean") throw invalid("debug must be true or false");
    const fusion = fusionParam(data, this.state.fusion);
    const mode = choiceParam(data.mode, "mode", "hybrid", MODES);
    return { query, type: type as FactType | null, limit, debug, fusion, mode, ...answeredFrom(data) };
  }

  async recall(ask: RecallAsk): Promise<Answer & Record<string, unknown>> {
    const { query, type, limit, debug, fusion: f } = ask;
    let mode = ask.mode;
    const [qvec, termVectors, warning] = mode === "keyword" ? [null, null, null] : await this.embedQuery(query, f, mode);
    if (!qvec && mode !== "keyword") mode = "keyword";  // the model is down: say so, answer by words
    // From here to the rerank nothing awaits, so the ranking and the rows it names are one
    // consistent view; the rerank's model call only reorders rows already read.
    const started = performance.now();
    const { match, expansions } = this.plan(query, termVectors, f, mode);
    const { kw, vec, info, counts, fused: all } = this.rank(query, match, expansions, qvec, type, f, mode,
      this.reader.hiddenIds(leftOut(ask, this.pending)));
    const top = all.slice(0, Math.max(limit, mode === "hybrid" ? f.rerank : 0));
    const wanted = new Set(top.map((h) => h.id));
    let marked = new Map<number, string>();
    if (debug) {
      for (const [id] of [...kw, ...vec]) wanted.add(id);
      marked = new Map(this.reader.matching(match, kw.map(([id]) => id), true));
    }
    const facts = this.reader.getMany(wanted);
    const edited = ask.asOf ? editedAfter(this.state.sql, top.map((h) => h.id), ask.asOf) : null;
    const older = ask.asOf ? new Map<number, number>() : olderOf(this.state.sql, top.map((h) => h.id));
    // Ranking and reading the rows, without the embedding (on Cloudflare the clock only moves
    // between I/O, so there it reads 0; locally it is real).
    const rankMs = performance.now() - started;
    const [ranked, reranked] = mode === "hybrid" ? await this.rerankTop(query, top, f, facts) : [top, null];
    const byId = new Map(ranked.map((h) => [h.id, h]));
    const fused = newerFirst(ranked.map((h) => h.id), older).map((id) => byId.get(id)!).slice(0, limit);
    const bm25 = new Map(kw);
    const cosine = new Map(vec);
    const out: Answer & Record<string, unknown> = {
      results: fused.map((h) => ({
        fact: facts.get(h.id)!, current: current(facts.get(h.id)!, ask.asOf), reviewed: facts.get(h.id)!.reviewed_at !== null,
        score: score(h), via: via(h.kw_rank, h.vec_rank),
        kw_rank: h.kw_rank, vec_rank: h.vec_rank,
        bm25: bm25.get(h.id) ?? null, cosine: cosine.get(h.id) ?? null, parts: { kw: h.kw_part, vec: h.vec_part, rerank: h.rerank_part },
        may_be_outdated: older.has(h.id),
        ...(edited ? { edited_since: edited.has(h.id) } : {}),
      })),
      mode: warning ? "keyword-only" : mode,
    };
    if (warning) out.warning = warning;
    if (debug) {
      out.kw = kw.map(([id, s], i) => ({ fact: facts.get(id), rank: i + 1, bm25: s, highlighted: marked.get(id) ?? facts.get(id)!.text }));
      out.vec = vec.map(([id, s], i) => ({ fact: facts.get(id), rank: i + 1, cosine: s }));
      out.match = match;
      out.expansions = shown(expansions);
      out.rerank = reranked;
      out.information = info;
      out.terms = counts;
      out.fusion = f;
      out.timing = { rank_ms: rankMs };
    }
    return out;
  }

  async explain(data: Record<string, unknown>) {
    const type = optionalStr(data, "type");
    const query = checkQuery(data.query, type);
    const id = intParam(data.id, "id", 0, 1, Number.MAX_SAFE_INTEGER);
    const f = fusionParam(data, this.state.fusion);
    const from = answeredFrom(data);
    this.reader.get(id);  // an unknown id is a 404 before the model spends time on the query
    const [qvec, termVectors, warning] = await this.embedQuery(query, f, "hybrid");
    const fact = this.reader.get(id);  // again after the await: it may have been deleted meanwhile
    const { match, expansions } = this.plan(query, termVectors, f);
    // Ranks among the facts recall answers from: a fact left out has its scores and no rank.
    const hidden = leftOut(from, this.pending);
    const hiddenIds = this.reader.hiddenIds(hidden);
    // (none hidden, no clause: FTS5 probes a NOT IN list once for every fact the query matches)
    const [leaveOut, leaveOutArgs] = leavingOut(hiddenIds.size ? hidden : null);
    const queryTerms = new Set(this.reader.tokens(matchTerms(match).join(" ")));
    const factTerms = this.sql.exec<{ term: string }>("SELECT term FROM fts_terms WHERE doc = ? ORDER BY offset", id).toArray().map((r) => r.term);
    let bm25: number | null = null;
    let kwRank: number | null = null;
    if (match) {
      // rowid checked here too: see `matching` on the object's SQLite and rowid constraints.
      const row = this.sql.exec("SELECT rowid AS id, bm25(facts_fts) AS s FROM facts_fts WHERE facts_fts MATCH ? AND rowid = ?", match, id)
        .toArray().find((r) => r.id === id);
      if (row && (!type || fact.type === type)) bm25 = row.s as number;
      if (bm25 !== null && !hiddenIds.has(id)) {
        const [typeSql, typeArgs] = type ? [" AND facts.type = ?", [type]] : ["", []];
        kwRank = 1 + this.sql.exec<{ n: number }>(
          "SELECT count(*) AS n FROM (SELECT bm25(facts_fts) AS s, facts_fts.rowid AS id FROM facts_fts"
            + ` JOIN facts ON facts.id = facts_fts.rowid WHERE facts_fts MATCH ?${typeSql}${leaveOut}) WHERE s < ? OR (s = ? AND id < ?)`,
          match, ...typeArgs, ...leaveOutArgs, bm25, bm25, id,
        ).one().n;
      }
    }
    const [vecRank, cosine] = qvec ? this.vectors.rankOf(qvec, id, type as FactType | null, hiddenIds) : [null, null];
    const { fused: all, info } = this.rank(query, match, expansions, qvec, type as FactType | null, f, "hybrid", hiddenIds);
    // As recall reranks (hybrid): the top's rows read before the model call, nothing after it.
    const top = qvec ? this.reader.getMany(all.slice(0, f.rerank).map((h) => h.id)) : new Map<number, Fact>();
    const [fused] = qvec ? await this.rerankTop(query, all, f, top) : [all];
    const at = fused.findIndex((h) => h.id === id);
    const hit = at >= 0 ? fused[at] : null;
    const parts = hit ? { kw: hit.kw_part, vec: hit.vec_part, rerank: hit.rerank_part } : { kw: 0, vec: 0, rerank: 0 };
    const out: Record<string, unknown> = {
      fact, match, query_terms: [...queryTerms].sort(), fact_terms: factTerms,
      matched_terms: [...queryTerms].filter((t) => factTerms.includes(t)).sort(),
      bm25, kw_rank: kwRank, cosine, vec_rank: vecRank, current: current(fact, from.asOf), depth: f.depth,
      kw_contribution: parts.kw, vec_contribution: parts.vec, rerank_contribution: parts.rerank,
      score: parts.kw + parts.vec + parts.rerank, information: info, expansions: shown(expansions), fused_rank: hit ? at + 1 : null, fusion: f,
    };
    if (warning) out.warning = warning;
    return out;
  }
}

/** Whether a fact was current at `asOf`, or is now (a result's `current`). */
const current = (fact: Fact, asOf: string | null) => isCurrent(fact.valid_until, fact.created_at, asOf);
