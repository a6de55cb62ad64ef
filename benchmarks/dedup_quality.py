"""Near-duplicate dedup on write, measured on memories/data/dedup_pairs.json with the real model.

    .venv/bin/python benchmarks/dedup_quality.py [--threshold 0.97]

Prints, at the write threshold, how many look-alikes would be merged (must be 0) and how many
rewordings are caught, by cosine alone and with the guard of memories/writes/dedup.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memories.writes.dedup import distinct  # noqa: E402
from memories.model.embeddings import MiniLM  # noqa: E402

PAIRS = ROOT / "memories" / "data" / "dedup_pairs.json"


def measure(model, threshold: float) -> dict:
    pairs = json.loads(PAIRS.read_text(encoding="utf-8"))
    out = {}
    for kind in ("same", "distinct"):
        a = model.embed([p[0] for p in pairs[kind]])
        b = model.embed([p[1] for p in pairs[kind]])
        cos = (a * b).sum(axis=1)
        near = [p for p, c in zip(pairs[kind], cos) if c >= threshold]
        kept = [p for p in near if distinct(*p) is None]
        out[kind] = {"n": len(pairs[kind]), "cosine": len(near), "guarded": len(kept),
                     "refused": [p for p in pairs[kind] if p not in kept and kind == "same"],
                     "merged": kept if kind == "distinct" else []}
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--threshold", type=float, default=0.97)
    args = parser.parse_args()
    m = measure(MiniLM(), args.threshold)
    print(f"threshold {args.threshold}, model all-MiniLM-L6-v2 int8")
    print("| pairs | n | merged by cosine alone | merged with the guard |")
    print("|---|---|---|---|")
    print(f"| rewordings (should merge) | {m['same']['n']} | {m['same']['cosine']} | {m['same']['guarded']} |")
    print(f"| look-alikes (must not) | {m['distinct']['n']} | {m['distinct']['cosine']} | {m['distinct']['guarded']} |")
    for p in m["distinct"]["merged"]:
        print("  WRONGLY MERGED:", p)


if __name__ == "__main__":
    main()
