"""A ranking candidate measured but not (yet) built: query terms expanded to the memory's own words
that the embedding model finds close ("boss" -> "manager", "spouse" -> "husband", "meal" -> "food").

    .venv/bin/python benchmarks/expansion_trial.py [--sets relations,confirm] [--tau 0.65]

The vocabulary is every word of the memory's facts (stop words, digits and words of one or two
letters left out), each embedded alone by the same MiniLM. Each query term adds its 3 closest
vocabulary words at cosine >= tau to the FTS5 query; the keyword part is then BM25 over all the
terms divided by all their information, as the default's does for the query's own terms. The
vector list and the fusion are the default's. Prints hit@1 and hit@5 for the default and the
candidate, per set, seen and unseen apart (ablation.py's lists).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import memories  # noqa: E402, F401  (first: it sets OpenBLAS's idle-thread timeout before numpy loads)

import numpy as np  # noqa: E402
from ablation import SEEN, UNSEEN, load  # noqa: E402

from memories.embeddings import MiniLM  # noqa: E402
from memories.recall import DEFAULT, STOP_WORDS, TOKEN, fuse, information, quote, terms  # noqa: E402

CLOSEST = 3


def vocabulary(memory) -> list[str]:
    texts = [row[0] for row in memory.db.execute("SELECT text FROM facts")]
    return sorted({w for t in texts for w in TOKEN.findall(t.lower())
                   if w not in STOP_WORDS and not w.isdigit() and len(w) > 2})


def expand(model, query_terms: list[str], words: list[str], matrix: np.ndarray, tau: float) -> list[str]:
    extra: list[str] = []
    asked = [t for t in query_terms if len(t) > 2 and not t.isdigit()]
    if not asked:
        return extra
    similar = model.embed(asked) @ matrix.T
    for row in similar:
        for j in np.argsort(-row)[:CLOSEST]:
            if row[j] >= tau and words[j] not in query_terms and words[j] not in extra:
                extra.append(words[j])
    return extra


def first_rank(ids: list[int], expected: set[int]) -> int | None:
    return next((i for i, fid in enumerate(ids, 1) if fid in expected), None)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sets", default=",".join(SEEN + UNSEEN))
    parser.add_argument("--tau", type=float, default=0.65)
    args = parser.parse_args()
    model = MiniLM()
    print("| set | seen? | default hit@1 | hit@5 | expanded hit@1 | hit@5 | vector hit@1 | hit@5 |\n|---|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        memory, cases = load(model, name)
        words = vocabulary(memory)
        matrix = model.embed(words)
        rows = memory.count()

        def having(term: str) -> int:
            return memory.db.execute("SELECT count(*) FROM facts_fts WHERE facts_fts MATCH ?", (quote(term),)).fetchone()[0]

        ranks: dict[str, list] = {"default": [], "expanded": [], "vector": []}
        for question, expected, type in cases:
            vec = memory.vectors.search(model.embed([question])[0], type, DEFAULT.depth)
            asked = terms(question)
            ranks["vector"].append(first_rank([fid for fid, _ in vec], expected))
            for label, used in (("default", asked), ("expanded", asked + expand(model, asked, words, matrix, args.tau))):
                match = " OR ".join(quote(t) for t in used)
                kw = memory._keyword(match, type, DEFAULT.depth) if match else []
                info = information(rows, [having(t) for t in used]) if used else None
                fused = fuse([(fid, -s) for fid, s in kw], vec, DEFAULT, info)
                ranks[label].append(first_rank([h.id for h in fused], expected))
        cells = [f"{sum(r == 1 for r in rs)} | {sum(1 for r in rs if r and r <= 5)}" for rs in ranks.values()]
        print(f"| {name} ({len(cases)}) | {'seen' if name in SEEN else 'unseen'} | " + " | ".join(cells) + " |", flush=True)
        memory.close()


if __name__ == "__main__":
    main()
