"""The model's own rate on an import's texts (issue 49 §3), its ways of batching side by side in one
run, rounds interleaved so the machine's hour weighs on each alike:

    .venv/bin/python benchmarks/embed_bench.py [--texts 2048] [--rounds 5]

Each `embed` call gets as many texts as the import gives the model: 256 (`import --db`, the
engine's import_batches) or 100 (a `POST /facts/batch` of `import --url`); and one text a call, as a
recall embeds its query, since the thread count is the recall's too. Within a call the
texts go through ONNX Runtime BATCH_SIZE at a time, sorted either by their length in characters
(the code before) or in tokens (embeddings.py now), with 1 or 2 intra-op threads. Prints the
median texts/s of each, and how far the vectors of each way lie from embedding each text alone.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import memories  # noqa: E402, F401  (first: it sets OpenBLAS's idle-thread timeout before numpy loads)

import numpy as np  # noqa: E402
import synthetic  # noqa: E402

from memories.model.embeddings import BATCH_SIZE, MiniLM  # noqa: E402


def by_characters(model: MiniLM, texts: list[str]) -> np.ndarray:
    """The batching before: texts sorted by their length in characters, each batch tokenized and padded."""
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    out = np.empty((len(texts), model.dims), dtype=np.float32)
    for start in range(0, len(order), BATCH_SIZE):
        idx = order[start : start + BATCH_SIZE]
        out[idx] = model._embed_rows([e.ids for e in model.tokenizer.encode_batch([texts[i] for i in idx])])
    return out


def timed(embed, texts: list[str], call: int) -> float:
    """texts/s, embedding `texts` in calls of `call`."""
    started = time.perf_counter()
    for i in range(0, len(texts), call):
        embed(texts[i : i + call])
    return len(texts) / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--texts", type=int, default=2048)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    texts = [f["text"] for f in synthetic.facts(args.texts, seed=31)]  # import_bench.py's facts
    models = {threads: MiniLM(threads=threads) for threads in (1, 2)}
    ways = {f"{sort}, {threads} thread{'s' if threads > 1 else ''}": (fn, model)
            for threads, model in models.items()
            for sort, fn in (("characters", lambda m, t: by_characters(m, t)), ("tokens", lambda m, t: m.embed(t)))}
    print(f"# {datetime.now():%Y-%m-%d %H:%M} on {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load average {' / '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"{len(texts)} synthetic texts, {args.rounds} rounds interleaved")
    for fn, model in ways.values():
        fn(model, texts[:64])  # warm
    rates: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.rounds):
        for call in (1, 100, 256):  # a recall's query alone, then the import's calls
            for name, (fn, model) in ways.items():
                some = texts[:128] if call == 1 else texts
                rates.setdefault((name, call), []).append(timed(lambda t: fn(model, t), some, call))
    for (name, call), found in rates.items():
        print(f"{name:24} calls of {call}: {statistics.median(found):6.0f} texts/s (runs {min(found):.0f}-{max(found):.0f})")
    sample = texts[:200]
    alone = np.vstack([models[2].embed([t]) for t in sample])
    for name, (fn, model) in ways.items():
        got = np.vstack([fn(model, sample[i : i + 100]) for i in range(0, len(sample), 100)])
        cosines = (got * alone).sum(axis=1)
        print(f"{name:24} against each text alone: max |difference| {np.abs(got - alone).max():.2e}, "
              f"least cosine {cosines.min():.6f}")
    print(f"# load average after: {' / '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
