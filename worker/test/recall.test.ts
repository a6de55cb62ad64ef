// The Worker's recall.ts against tests/golden/recall.json, which tests/test_golden.py checks
// against memories/recall/ranking.py: the two implementations cannot drift apart unnoticed.
import { describe, expect, it } from "vitest";
import golden from "../../tests/golden/recall.json";
import { distinct } from "../src/writes/dedup";
import { strip, textKey } from "../src/text";
import {
  type Fused, type Fusion, DEFAULT, SEED, expand, expansionKept, fuse, information, matchExpression, rerank, rerankPlan, vocabularyWords,
} from "../src/recall/ranking";

interface Golden {
  match: { query: string; phrases: boolean; alias_self: boolean; extra?: string[]; match: string }[];
  vocabulary_words: { text: string; words: string[] }[];
  expand: { terms: string[]; closest: [string, number][][]; bar: number; expansions: [string, string, number][] }[];
  expansion_kept: { facts: number; kept: boolean }[];
  information: { rows: number; having: number[]; information: number }[];
  distinct: { a: string; b: string; reason: string | null }[];
  text: { text: string; strip: string; key: string }[];
  fuse: { fusion: Fusion; kw: [number, number][]; vec: [number, number][]; info: number | null; fused: Record<string, number | null>[] }[];
  rerank_plan: { query: string; texts: string[]; alias_self: boolean; plan: { shared: string[]; query: string; facts: string[] } | null }[];
  rerank: { head: Omit<Fused, "rerank_part">[]; cosines: number[]; reranked: { id: number; rerank_part: number }[] }[];
}
const cases = golden as unknown as Golden;

describe("the FTS5 query builder", () => {
  it.each(cases.match)("$query (phrases $phrases, alias_self $alias_self, extra $extra)", (c) => {
    expect(matchExpression(c.query, c.phrases, c.alias_self, c.extra)).toBe(c.match);
  });
});

describe("query expansion", () => {
  it.each(cases.vocabulary_words)("the vocabulary of $text", (c) => expect(vocabularyWords(c.text)).toEqual(c.words));

  it.each(cases.expand.map((c, i) => ({ ...c, i })))("case $i: $terms at $bar", (c) => {
    expect(expand(c.terms, c.closest, c.bar)).toEqual(c.expansions);
  });

  it.each(cases.expansion_kept)("an expansion word $facts facts hold: kept $kept", (c) => expect(expansionKept(c.facts)).toBe(c.kept));

  it("is off in the seed preset and on in the default, as in recall.py", () => {
    const fusions = cases.fuse.map((c) => c.fusion);
    expect(fusions.find((f) => f.method === "rrf")).toEqual(SEED);
    expect(fusions.find((f) => f.method === "info" && f.depth === SEED.depth)).toEqual(DEFAULT);
  });
});

describe("a query's information", () => {
  it.each(cases.information)("$rows rows, $having", (c) => expect(information(c.rows, c.having)).toBeCloseTo(c.information, 12));
});

describe("fusion", () => {
  it.each(cases.fuse.map((c, i) => ({ ...c, i, method: c.fusion.method })))("case $i ($method)", (c) => {
    const fused = fuse(c.kw, c.vec, c.fusion, c.info);
    expect(fused.map((h) => h.id)).toEqual(c.fused.map((h) => h.id));
    fused.forEach((h, i) => {
      const want = c.fused[i];
      expect([h.kw_rank, h.vec_rank]).toEqual([want.kw_rank, want.vec_rank]);
      expect(h.kw_part).toBeCloseTo(want.kw_part as number, 12);
      expect(h.vec_part).toBeCloseTo(want.vec_part as number, 12);
    });
  });
});

describe("reranking the fused top", () => {
  it.each(cases.rerank_plan)("$query over $texts.length facts (alias_self $alias_self)", (c) => {
    expect(rerankPlan(c.query, c.texts, c.alias_self)).toEqual(c.plan);
  });

  it.each(cases.rerank.map((c, i) => ({ ...c, i })))("case $i: cosines $cosines", (c) => {
    const head: Fused[] = c.head.map((h) => ({ ...h, rerank_part: 0 }));
    const done = rerank(head, c.cosines);
    expect(done.map((h) => h.id)).toEqual(c.reranked.map((h) => h.id));
    // The same double arithmetic in the same order as Python: the same bits.
    expect(done.map((h) => h.rerank_part)).toEqual(c.reranked.map((h) => h.rerank_part));
  });
});

describe("the dedup guard", () => {
  it.each(cases.distinct)("$a / $b", (c) => expect(distinct(c.a, c.b)).toBe(c.reason));
});

describe("text as Python sees it", () => {
  it.each(cases.text)("$text", (c) => {
    expect(strip(c.text)).toBe(c.strip);
    expect(textKey(c.text)).toBe(c.key);
  });
});
