"""Word-level differences between two facts, for reviewing near-duplicates side by side."""

from __future__ import annotations

import difflib
import math
import re

WORD = re.compile(r"\S+|\s+")


def word_diff(a: str, b: str) -> tuple[list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Each text as (chunk, differs) runs: the words not in the other text are flagged."""
    wa, wb = WORD.findall(a), WORD.findall(b)
    left: list[tuple[str, bool]] = []
    right: list[tuple[str, bool]] = []
    matcher = difflib.SequenceMatcher(a=[w.lower() for w in wa], b=[w.lower() for w in wb], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        same = op == "equal"
        if i2 > i1:
            left.append(("".join(wa[i1:i2]), not same))
        if j2 > j1:
            right.append(("".join(wb[j1:j2]), not same))
    return left, right


# What the contract calls a word's surrounding punctuation (docs/memory-api.md, "Lifecycle").
EDGES = ".,;:!?()[]{}\"'\u201c\u201d\u2018\u2019"


def same(word: str) -> str:
    """How the memory compares the words of a proposal: case-folded, a curly apostrophe as a straight one."""
    return word.casefold().replace("\u2019", "'")


def marked(text: str, words: list[str]) -> list[tuple[str, bool]]:
    """The text as (chunk, differs) runs, each of `words` (a proposal's `differs.old` or `.new`)
    flagged wherever the text has it, its surrounding punctuation left unmarked."""
    wanted = {same(w) for w in words}
    runs: list[tuple[str, bool]] = []
    for token in WORD.findall(text):
        core = token.strip(EDGES)
        if not token.isspace() and core and same(core) in wanted:
            start = token.index(core)
            runs += [(token[:start], False), (core, True), (token[start + len(core):], False)]
        elif not token.isspace() and same(token) in wanted:
            runs.append((token, True))
        else:
            runs.append((token, False))
    merged: list[tuple[str, bool]] = []
    for chunk, flag in runs:
        if merged and not flag and not merged[-1][1]:
            merged[-1] = (merged[-1][0] + chunk, False)
        elif chunk:
            merged.append((chunk, flag))
    return merged


BIN = 0.01  # the threshold moves in steps of 0.01, so it always falls on a bin edge
SCALE_LOW = 0.5  # the slider's lowest value: the slider and the chart share one scale, 0.50 to 1.00


def histogram(scores: list[float], low: float = SCALE_LOW, high: float = 1.0, width: float = BIN) -> list[dict]:
    """Counts of nearest-neighbour cosines in equal bins from low to high (the slider's range);
    a score under low is not in any bin (the caller says how many there are)."""
    bins = max(1, round((high - low) / width))
    counts = [0] * bins
    for s in scores:
        if s >= low - 1e-9:
            counts[min(bins - 1, max(0, math.floor((s - low) / width + 1e-9)))] += 1
    return [{"low": round(low + i * width, 4), "high": round(low + (i + 1) * width, 4), "count": c} for i, c in enumerate(counts)]


def chart(bins: list[dict], threshold: float, width: int = 1000, plot_h: int = 120, known_from: float | None = None) -> dict:
    """SVG geometry for the histogram: one bar per bin (those at or above the threshold marked),
    the threshold line (always inside: the slider cannot leave the scale), ticks every 0.1 at
    their true place, the tallest bar's count on the axis, and a shaded band from the scale's
    low end up to `known_from`, where the memory lists no fact (below its review floor)."""
    low, high = bins[0]["low"], bins[-1]["high"]
    tallest = max(b["count"] for b in bins)
    step = width / len(bins)

    def x(value: float) -> float:
        return round((min(max(value, low), high) - low) / (high - low) * width, 1)

    bars = []
    for i, b in enumerate(bins):
        h = round(b["count"] / tallest * plot_h, 1) if b["count"] else 0
        if h:
            bars.append({**b, "x": round(i * step, 1), "w": round(max(step - 1, 0.5), 1), "y": round(plot_h - h, 1), "h": h,
                         "caught": b["low"] >= threshold - 1e-9})
    first = math.ceil(low * 10 - 1e-9)
    ticks = []
    for t in range(first, 11):
        value = t / 10
        anchor = "start" if value <= low + 1e-9 else "end" if value >= high - 1e-9 else "middle"
        ticks.append({"x": x(value), "label": f"{value:.1f}", "anchor": anchor})
    unknown = x(known_from) if known_from is not None and known_from > low + 1e-9 else 0
    return {"bars": bars, "threshold_x": x(threshold), "plot_h": plot_h, "width": width, "height": plot_h + 16,
            "ticks": ticks, "tallest": tallest, "low": low, "unknown_w": unknown, "known_from": known_from}
