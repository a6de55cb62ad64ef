"""Calibration: the numbers that belong to the embedding model, measured on the memory's own model.

The duplicate threshold, the review floor and the expansion cut-off were measured on MiniLM
(memories/model/models.py); another model's cosines sit in another range (multilingual-e5-small puts
unrelated sentences near 0.8), so MiniLM's 0.97 may merge distinct facts or miss every rewording.
This puts the shipped pair set (memories/data/dedup_pairs.json: rewordings that say one thing,
look-alikes that say different things) and some of the shipped evaluation sets through the
memory's own embedder, in memories of their own ("eval-calibration", "eval-<set>": the same
service, so the same model), never the owner's, and recommends:

- the duplicate threshold: the lowest, in steps of 0.005, at which no look-alike would merge
  (the write-time guard of a number, date, name or negation counted) and cosine alone puts at
  most 30% of the look-alikes at or above it. On MiniLM that gives 0.97, the threshold measured
  on it: the guard is trusted with no more of the look-alikes than it is there (11 of 40);
- the review floor: the lowest rewording's cosine less 0.05, rounded down to 0.05 (0.80 on
  MiniLM), so the duplicates page keeps every rewording, with room to spare;
- the expansion cut-off: the value of GRID with the most hit@1 (then MRR) on the tuning sets;
  the unseen sets are run beside it and shown, never used to choose.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from django.conf import settings

from memories.client import MemoryClient

from .diff import histogram
from .evaluation import first_rank, metrics

PAIRS_FILE = Path(settings.BASE_DIR) / "memories" / "data" / "dedup_pairs.json"
SETS_DIR = Path(settings.BASE_DIR) / "dashboard" / "evalsets"
MEMORY = "eval-calibration"
LOWEST = 0.5  # the lowest threshold GET /duplicates takes: a pair below it is shown as "below 0.5"
STEP = 0.005
GUARD_SHARE = 0.30  # of the look-alikes, the most cosine alone may put over the threshold
FLOOR_MARGIN = 0.05
BATCH = 100  # POST /facts/batch takes at most 100
# Expansion cut-offs tried (0: expansion off), and the sets they are tried on: tuning sets were
# read while choosing MiniLM's settings ("seen"); the unseen ones never were (docs/recall-quality.md).
GRID = (0.0, 0.55, 0.65, 0.75, 0.85, 0.95)
TUNING = ("personal", "work", "skills_logs", "travel_health", "household4")
UNSEEN = ("agentlog", "homefinance")
DEPTH = 30  # how far down the recall a case's answer is looked for


@dataclass
class Pair:
    kind: str  # "same" (a rewording) or "distinct" (a look-alike)
    a: str
    b: str
    score: float | None  # None: below LOWEST
    distinct: str | None  # why the write-time guard keeps them apart, or None

    def merges_at(self, threshold: float) -> bool:
        """A write of b over a would return a's id at this threshold."""
        return self.score is not None and self.score >= threshold and self.distinct is None


def load_pairs() -> dict[str, list[list[str]]]:
    data = json.loads(PAIRS_FILE.read_text(encoding="utf-8"))
    return {"same": data["same"], "distinct": data["distinct"]}


def clear(client: MemoryClient) -> None:
    """Delete every fact of the calibration memory, so a run measures only the pair set."""
    while True:
        page = client.list_facts(limit=100)
        if not page.facts:
            return
        for f in page.facts:
            client.delete(f.id, note="calibration: a fresh run")


def measure_pairs(client: MemoryClient) -> list[Pair]:
    """Each pair's cosine on the memory's model and the guard's reason, through the contract:
    every text stored (force: rewordings must not be merged on the way in), then the memory's
    own all-pairs listing down to LOWEST."""
    pairs = load_pairs()
    clear(client)
    texts = list(dict.fromkeys(t for kind in pairs.values() for p in kind for t in p))
    ids: dict[str, int] = {}
    for i in range(0, len(texts), BATCH):
        batch = texts[i : i + BATCH]
        for text, result in zip(batch, client.add_many([{"text": t, "force": True, "source": "calibration"} for t in batch])):
            ids[text] = result.fact.id
    found, _ = client.duplicates(LOWEST, type="fact", limit=10000)
    scored = {(min(p.a.id, p.b.id), max(p.a.id, p.b.id)): (p.score, p.distinct) for p in found}
    out = []
    for kind, items in pairs.items():
        for a, b in items:
            key = (min(ids[a], ids[b]), max(ids[a], ids[b]))
            score, reason = scored.get(key, (None, None))
            out.append(Pair(kind, a, b, score, reason))
    return out


def grid(pairs: list[Pair]) -> list[float]:
    """Candidate thresholds, STEP apart, from the lowest scored pair (at least LOWEST) to 1."""
    scores = [p.score for p in pairs if p.score is not None]
    low = math.floor(min(scores, default=LOWEST) / STEP) * STEP
    return [round(low + i * STEP, 3) for i in range(round((1 - low) / STEP) + 1)]


@dataclass
class Row:
    threshold: float
    rewordings_merged: int
    lookalikes_merged: int  # with the guard: must be 0
    lookalikes_over: int  # by cosine alone, the guard left to keep apart


def table(pairs: list[Pair]) -> list[Row]:
    same = [p for p in pairs if p.kind == "same"]
    look = [p for p in pairs if p.kind == "distinct"]
    return [Row(t, sum(p.merges_at(t) for p in same), sum(p.merges_at(t) for p in look),
                sum(p.score is not None and p.score >= t for p in look)) for t in grid(pairs)]


@dataclass
class Recommendation:
    threshold: float | None  # None: no threshold in the grid is safe
    floor: float | None
    rows: list[Row] = field(default_factory=list)


def recommend(pairs: list[Pair]) -> Recommendation:
    rows = table(pairs)
    look = sum(p.kind == "distinct" for p in pairs)
    safe = [r for r in rows if r.lookalikes_merged == 0 and r.lookalikes_over <= GUARD_SHARE * look and r.threshold < 1]
    same = [p.score for p in pairs if p.kind == "same"]
    floor = None
    if same and None not in same:
        floor = max(LOWEST, math.floor((min(same) - FLOOR_MARGIN) / 0.05 + 1e-9) * 0.05)
    return Recommendation(safe[0].threshold if safe else None, round(floor, 2) if floor is not None else None, rows)


def bins(pairs: list[Pair]) -> list[dict]:
    """Bins of 0.01 (diff.histogram's, as the near-duplicates page draws them) from the lowest
    listed pair's to 1: how many rewordings (`same`) and look-alikes (`distinct`) fall in each."""
    scored = [p for p in pairs if p.score is not None]
    low = math.floor(min((p.score for p in scored), default=LOWEST) * 100 + 1e-9) / 100
    same, distinct = ([p.score for p in scored if p.kind == kind] for kind in ("same", "distinct"))
    return [{"lo": a["low"], "same": a["count"], "distinct": b["count"]}
            for a, b in zip(histogram(same, low), histogram(distinct, low))]


# -- the expansion cut-off -----------------------------------------------------------------

@cache  # shipped files: read once, not on every page that counts their cases
def set_file(name: str) -> dict:
    return json.loads((SETS_DIR / f"{name}.json").read_text(encoding="utf-8"))


def load_set_facts(client: MemoryClient, name: str) -> dict[str, int]:
    """The set's facts in its own memory (dedup returns the ids of those already there): text -> id."""
    facts = set_file(name)["facts"]
    ids: dict[str, int] = {}
    for i in range(0, len(facts), BATCH):
        batch = facts[i : i + BATCH]
        payload = [{"text": f["text"].strip(), "type": f.get("type", "fact"), "source": f.get("source", "")} for f in batch]
        for f, result in zip(payload, client.add_many(payload)):
            ids[f["text"]] = result.fact.id
    return ids


def run_set(client: MemoryClient, name: str, ids: dict[str, int], fusion: dict) -> list[int | None]:
    """The rank of each case's first expected fact in hybrid recall under `fusion` (None: not in the top DEPTH)."""
    ranks = []
    for case in set_file(name)["cases"]:
        expected = {ids[e.strip()] for e in case["expected"] if e.strip() in ids}
        result = client.recall(case["question"], type=case.get("type") or None, limit=DEPTH, fusion=fusion, log=False)
        ranks.append(first_rank([h.fact.id for h in result.results], expected))
    return ranks


def expansion_table(results: dict[str, dict[str, list]]) -> list[dict]:
    """results[cut-off][set] -> ranks, as rows: the cut-off, its tuning and unseen scores."""
    rows = []
    for value in GRID:
        got = results.get(str(value), {})
        if not all(s in got for s in (*TUNING, *UNSEEN)):
            continue
        rows.append({"expand": value,
                     "tuning": metrics([r for s in TUNING for r in got[s]]),
                     "unseen": metrics([r for s in UNSEEN for r in got[s]])})
    return rows


def best_expand(rows: list[dict]) -> float | None:
    """The cut-off with the most tuning hit@1, then MRR; ties go to the higher cut-off (fewer
    words join the query: less to search)."""
    if len(rows) < len(GRID):
        return None
    return max(rows, key=lambda r: (r["tuning"]["hit1"], r["tuning"]["mrr"], r["expand"]))["expand"]


def next_step(loaded: dict, results: dict) -> tuple | None:
    """What the expansion run does next: ("load", set) or ("run", cut-off, set) in order; None when done."""
    for name in (*TUNING, *UNSEEN):
        if name not in loaded:
            return ("load", name)
    for value in GRID:
        for name in (*TUNING, *UNSEEN):
            if name not in results.get(str(value), {}):
                return ("run", value, name)
    return None


def steps_total() -> int:
    return len(TUNING + UNSEEN) * (1 + len(GRID))


def recalls_total() -> int:
    return len(GRID) * sum(len(set_file(name)["cases"]) for name in (*TUNING, *UNSEEN))
