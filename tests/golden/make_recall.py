"""Write tests/golden/recall.json from memories/recall/ranking.py: the cases the Worker's recall.ts must
answer the same way (worker/test/recall.test.ts reads them; tests/test_golden.py checks this
file still says what recall.py says). Run it after a deliberate change to recall.py."""

from __future__ import annotations

import json
import random
from dataclasses import asdict, replace
from pathlib import Path

from memories.writes.dedup import distinct
from memories.facts import text_key
from memories.recall.ranking import (DEFAULT, SEED, Fused, expand, expansion_kept, fuse, information, match_expression, rerank,
                             rerank_plan, terms, vocabulary_words)

QUERIES = [
    "Who is my sister?", "Who is Anna's sister?", "What does Mara do for work?", "where is my accountant's office",
    '"', "*", "NEAR", ":", "-", "(", ")", 'NEAR("a" "b", 2)', "col:term", "a AND OR NOT b", "🙂🙂", "",
    "I told me myself it is mine", "Ünïcödé Straße in München", "東京の天気", "snake_case and kebab-case 3.14",
    "What's the owner's dog called?", "boss manager supervisor boss", "x" * 40, " ".join(f"w{i}" for i in range(80)),
    "my my my", "It's 5 o'clock", "l'été à Paris", "ÉCOLE Élève", "Who does my husband work for?",
]

PAIRS = json.loads((Path(__file__).resolve().parents[2] / "memories" / "data" / "dedup_pairs.json").read_text(encoding="utf-8"))
# Where JavaScript's trim() and toLowerCase() differ from Python's strip() and casefold().
TEXTS = [
    "Straße", "STRASSE", "straẞe", "ΟΔΟΣ", "ὈΔΥΣΣΕΎΣ", "ﬁle", "µ", "İstanbul", "ıi", "ǅemal", "ſ", "Ꭰꭰᏸ",
    "\ufeffhello", "\x1chello\x1f", "\x85 hi \u3000", " \t\n padded \r\v\f", "\u00a0nbsp\u2029", "Ünïcödé", "🙂 EMOJI 🙂",
]
EDGE_PAIRS = [
    ("Call Jo at 02:00.", "Call Jo at 2:00."), ("It costs 12345678901234567890.", "It costs 12345678901234567891."),
    ("The owner can’t swim.", "The owner can swim."), ("No, not never.", "Yes."), ("Ünsal visits in Mai.", "ünsal visits in mai."),
    ("Meet on Saturdays.", "Meet on saturday."), ("", ""), ("🙂 2 🙂", "🙂 two 🙂"), ("O'Brien called.", "OBrien called."),
    ("0" * 8000, "0" * 7999 + "1"), ("Code 0" + "0" * 5000 + "7.", "Code 7."),
]


def fuse_cases() -> list[dict]:
    rng = random.Random(7)
    cases = []
    for fusion in (SEED, DEFAULT, replace(SEED, method="relative", kw_weight=0.5, vec_weight=2.0), replace(SEED, k=0),
                   replace(DEFAULT, depth=5), replace(SEED, method="ratio", phrases=True)):
        for _ in range(3):
            ids = rng.sample(range(1, 40), 20)
            kw = sorted(((i, rng.uniform(0.1, 12.0)) for i in ids[:12]), key=lambda p: -p[1])
            vec = sorted(((i, rng.uniform(-0.2, 0.95)) for i in ids[6:]), key=lambda p: -p[1])
            kw.append((ids[0] + 100, kw[-1][1]))  # a tie in each list
            vec.append((ids[7] + 100, vec[-1][1]))
            info = rng.choice([None, rng.uniform(0.5, 20.0)])
            fused = fuse(kw, vec, fusion, info)
            cases.append({
                "fusion": asdict(fusion), "kw": kw, "vec": vec, "info": info,
                "fused": [{"id": h.id, "kw_rank": h.kw_rank, "vec_rank": h.vec_rank, "kw_part": h.kw_part,
                           "vec_part": h.vec_part} for h in fused],
            })
    return cases


def expand_cases() -> list[dict]:
    """Closest-word lists with ties, words the query already holds, terms too short to expand."""
    rng = random.Random(11)
    words = ["manager", "supervisor", "boss", "employer", "husband", "wife", "married", "car", "vehicle", "zebra"]
    cases = []
    for query in ["who is Anna's boss", "boss boss manager", "my spouse's car", "x 42 of", "wife", "", "supervisor and boss"]:
        asked = terms(query)
        closest = []
        for _ in asked:
            near = [(w, round(rng.choice([0.9, 0.7, 0.65, 0.649999, 0.6, rng.uniform(0.3, 1.0)]), 6)) for w in rng.sample(words, 6)]
            closest.append(near)
        for bar in (0.65, 0.8):
            cases.append({"terms": asked, "closest": closest, "bar": bar, "expansions": [list(e) for e in expand(asked, closest, bar)]})
    return cases


def rerank_plan_cases() -> list[dict]:
    """Shared words by token, in any case, possessives, letters outside ASCII, and each way to do nothing."""
    cosima = ["Cosima Jaramillo works as a glazier.", "Cosima Jaramillo is Freya Jaramillo's sister.",
              "COSIMA's wife is Sigrid Dahlberg.", "Cosima Jaramillo reports to Ulla Pereira.", "Rex sleeps."]
    cases = [
        ("who is Cosima Jaramillo's boss", cosima), ("cosima?", cosima), ("who is rex", cosima),
        ("who is cosima's boss", cosima[:1]), ("who is cosima's boss", []), ("my sister's dog", [
            "The owner's sister is Priya.", "Priya's dog is Rex.", "The owner's dog is Bo."]),
        ("Ünsal in München", ["Ünsal lives in München.", "ünsal works in MÜNCHEN-Pasing.", "Ünsal was born in Bonn."]),
        ("where does Ünsal work in München", ["Ünsal lives in München.", "ünsal works in MÜNCHEN-Pasing.", "Ünsal was born in Bonn."]),
        ("the the of", cosima), ("ice cream", ["I like ice cream.", "Ice is cold; cream is not.", "ICE-CREAM!"]),
        ("Who is my dentist?", ["The owner's dentist is Dr Okafor.", "The owner's dentist appointment is on Friday.",
                                "The owner's best friend from university is Ines."]),
    ]
    out = []
    for query, texts in cases:
        for alias_self in (False, True):
            plan = rerank_plan(query, texts, alias_self)
            out.append({"query": query, "texts": texts, "alias_self": alias_self,
                        "plan": None if plan is None else {"shared": plan.shared, "query": plan.query, "facts": plan.facts}})
    return out


def rerank_cases() -> list[dict]:
    """The fused top given each fact's cosine: ties, a fact that loses, cosines at or below 0."""
    rng = random.Random(13)
    cases = []
    for cosines in ([0.9, 0.2, 0.5, 0.95, 0.1], [0.3, 0.3, 0.3], [-0.1, -0.5], [0.0, 0.0], [0.5, -0.2, 0.4, 0.45]):
        head = [Fused(i + 1, rng.choice([None, i + 1]), i + 2, round(rng.uniform(0, 1), 6), round(1 - i * 0.1, 6))
                for i in range(len(cosines))]
        given = [{"id": h.id, "kw_rank": h.kw_rank, "vec_rank": h.vec_rank, "kw_part": h.kw_part, "vec_part": h.vec_part}
                 for h in head]
        done = rerank(head, cosines)
        cases.append({"head": given, "cosines": cosines,
                      "reranked": [{"id": h.id, "rerank_part": h.rerank_part} for h in done]})
    return cases


def build() -> dict:
    return {
        "match": [{"query": q, "phrases": p, "alias_self": a, "match": match_expression(q, p, a)}
                  for q in QUERIES for p in (False, True) for a in (False, True)]
        + [{"query": q, "phrases": False, "alias_self": False, "extra": extra, "match": match_expression(q, False, False, extra)}
           for q in ("Who is Anna's boss?", "") for extra in (["manager"], ["manager", 'we"ird'])],
        "vocabulary_words": [{"text": q, "words": vocabulary_words(q)} for q in QUERIES],
        "expand": expand_cases(),
        "expansion_kept": [{"facts": n, "kept": expansion_kept(n)} for n in (0, 1, 49_999, 50_000, 50_001, 1_000_000)],
        "information": [{"rows": rows, "having": having, "information": information(rows, having)}
                        for rows, having in [(0, []), (1, [0]), (1, [1]), (20, [0, 3, 12, 20]), (1000000, [1, 999999, 500000])]],
        "fuse": fuse_cases(),
        "rerank_plan": rerank_plan_cases(),
        "rerank": rerank_cases(),
        "text": [{"text": t, "strip": t.strip(), "key": text_key(t)} for t in TEXTS],
        "distinct": [{"a": a, "b": b, "reason": distinct(a, b)} for a, b in [*PAIRS["same"], *PAIRS["distinct"], *EDGE_PAIRS]],
    }


PATH = Path(__file__).with_name("recall.json")

if __name__ == "__main__":
    PATH.write_text(json.dumps(build(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {PATH}")
