"""Word-level differences between two facts, for reviewing near-duplicates side by side."""

from __future__ import annotations

import difflib
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


def histogram(scores: list[float], low: float = 0.5, high: float = 1.0, bins: int = 50) -> list[dict]:
    """Counts of nearest-neighbour cosines in equal bins from low to high (lower scores go in the first)."""
    width = (high - low) / bins
    counts = [0] * bins
    for s in scores:
        i = min(bins - 1, max(0, int((s - low) / width)))
        counts[i] += 1
    return [{"low": low + i * width, "high": low + (i + 1) * width, "count": c} for i, c in enumerate(counts)]


def chart(bins: list[dict], threshold: float, width: int = 500, plot_h: int = 100) -> dict:
    """SVG geometry for the histogram: one bar per bin, the threshold line, ticks every 0.1."""
    low, high = bins[0]["low"], bins[-1]["high"]
    peak = max(b["count"] for b in bins) or 1
    step = width / len(bins)

    def x(value: float) -> float:
        return round((value - low) / (high - low) * width, 1)

    bars = []
    for i, b in enumerate(bins):
        h = round(b["count"] / peak * plot_h, 1) if b["count"] else 0
        bars.append({**b, "x": round(i * step, 1), "w": round(step - 1, 1), "y": round(plot_h - h, 1), "h": h,
                     "caught": b["low"] >= threshold - 1e-9})
    ticks = [{"x": x(low + i * 0.1) if i < 5 else width - 20, "label": f"{low + i * 0.1:.1f}"} for i in range(6)]
    return {"bars": bars, "threshold_x": x(threshold), "plot_h": plot_h, "width": width, "height": plot_h + 16, "ticks": ticks}
