"""Evaluation sets: load them, run them against the memory, and compare two fusion settings.

A set file is JSON (see docs/recall-quality.md, "Evaluation set format"):

    {"name": "personal",
     "facts": [{"text": "...", "type": "fact", "source": "chat"}, ...],
     "cases": [{"question": "...", "expected": ["text of a fact above", ...], "type": "skill"?}, ...]}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from memories.client import Fact, MemoryClient, MemoryServiceError, NotFound

MODES = ("keyword", "vector", "hybrid")
TYPES = ("fact", "skill", "log")
MAX_TEXT = 8000  # the contract's limit on a fact's text
MAX_SOURCE = 200
FUSED_DEPTH = 100  # how far down the fused list a case's rank is looked for


EVAL_PREFIX = "eval-"  # a set that brings its own facts runs in a memory of its own, never in one the owner uses
LIST_LIMIT = 100  # the contract's largest page of GET /facts
LIST_ALL_UPTO = 2000  # a memory this small is read by pages; a larger one fact by fact


def set_memory(set_name: str) -> str:
    """The memory an imported set's facts go into and its cases run on: "eval-" and the set's
    name, as a memory name (1 to 64 letters, digits, '_', '.' or '-')."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", set_name).strip("-._") or "set"
    return (EVAL_PREFIX + slug)[:64].rstrip("-._")


def is_set_memory(name: str) -> bool:
    return name.startswith(EVAL_PREFIX)


def facts_by_id(client: MemoryClient, ids) -> dict[int, Fact | None]:
    """The facts with these ids in the memory, None for each that is gone. A small memory (an
    evaluation set's) is read in pages; a large one is asked for each fact."""
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    found: dict[int, Fact | None] = dict.fromkeys(wanted)
    page = client.list_facts(limit=LIST_LIMIT) if len(wanted) > 10 else None
    if page is not None and page.total <= LIST_ALL_UPTO:
        while True:
            for f in page.facts:
                if f.id in found:
                    found[f.id] = f
            if not page.next_cursor:
                return found
            page = client.list_facts(limit=LIST_LIMIT, cursor=page.next_cursor)
    for i in wanted:
        try:
            found[i] = client.get(i)
        except NotFound:
            pass
    return found


class SetError(ValueError):
    """A set file that is not of the documented format; the message says where."""


def parse_set(data: object) -> tuple[str, list[dict], list[dict]]:
    """(name, facts, cases) from a decoded set file, or SetError naming every problem."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise SetError("the file must hold a JSON object with \"name\", \"facts\" and \"cases\"")
    name = data.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > 100:
        problems.append("\"name\" must be a non-empty string of at most 100 characters")
    facts, cases = data.get("facts"), data.get("cases")
    if not isinstance(facts, list) or not facts:
        problems.append("\"facts\" must be a non-empty list")
        facts = []
    if not isinstance(cases, list) or not cases:
        problems.append("\"cases\" must be a non-empty list")
        cases = []
    texts = set()
    for i, f in enumerate(facts):
        where = f"facts[{i}]"
        if not isinstance(f, dict) or not isinstance(f.get("text"), str) or not f["text"].strip():
            problems.append(f"{where} needs a non-empty \"text\"")
            continue
        if len(f["text"].strip()) > MAX_TEXT:
            problems.append(f"{where}.text is {len(f['text'].strip())} characters; the memory takes at most {MAX_TEXT}")
        if f.get("type", "fact") not in TYPES:
            problems.append(f"{where}.type must be one of {', '.join(TYPES)}")
        if not isinstance(f.get("source", ""), str) or len(f.get("source", "")) > MAX_SOURCE:
            problems.append(f"{where}.source must be a string of at most {MAX_SOURCE} characters")
        texts.add(f["text"].strip())
    for i, c in enumerate(cases):
        where = f"cases[{i}]"
        if not isinstance(c, dict) or not isinstance(c.get("question"), str) or not c["question"].strip():
            problems.append(f"{where} needs a non-empty \"question\"")
            continue
        expected = c.get("expected")
        if not isinstance(expected, list) or not expected or not all(isinstance(e, str) for e in expected):
            problems.append(f"{where}.expected must be a non-empty list of fact texts")
            continue
        for e in expected:
            if e.strip() not in texts:
                problems.append(f"{where}.expected names a fact that is not in \"facts\": {e[:60]!r}")
        if c.get("type") not in (None, "", *TYPES):
            problems.append(f"{where}.type must be one of {', '.join(TYPES)}")
    if problems:
        raise SetError("; ".join(problems[:20]) + (f"; and {len(problems) - 20} more" if len(problems) > 20 else ""))
    return name.strip(), facts, cases


def load_set(client: MemoryClient, data: object, *, added: Callable[[Fact], object] | None = None,
             undone: Callable[[object], None] | None = None, memory: str = "default") -> tuple[str, int, int]:
    """Store a set's facts in the memory (dedup returns ids of those already there) and its cases
    in the dashboard, as cases of the memory called `memory` (the one `client` reaches):
    (suite name, facts stored anew, cases loaded).

    All or nothing: every fact is checked before any is stored, and if the memory refuses one
    midway the facts this call added are deleted again before the error is raised. `added(fact)`
    is told of each new fact (the dashboard audits it); `undone(what added returned)` of each
    one taken back."""
    from .models import EvalCase

    name, facts, cases = parse_set(data)
    ids: dict[str, int] = {}
    new: list[tuple[Fact, object]] = []
    client.create_memory(memory)  # a set's memory is made explicitly (there already: nothing changes)
    try:
        for f in facts:
            result = client.add(f["text"].strip(), f.get("type", "fact"), f.get("source", ""))
            ids[f["text"].strip()] = result.fact.id
            if result.created:
                new.append((result.fact, added(result.fact) if added else None))
    except MemoryServiceError:
        for fact, note in reversed(new):
            try:
                client.delete(fact.id)
            except MemoryServiceError:
                continue  # still stored, so its audit entry stays true
            if undone:
                undone(note)
        raise
    for c in cases:
        EvalCase.objects.update_or_create(
            memory=memory, suite=name, question=c["question"].strip(),
            defaults={"expected_ids": sorted({ids[e.strip()] for e in c["expected"]}), "type": c.get("type") or ""},
        )
    return name, len(new), len(cases)


def metrics(ranks: list[int | None]) -> dict:
    """hit@1, hit@5 (as counts and fractions) and mean reciprocal rank; None is a miss."""
    n = len(ranks)
    hit1 = sum(1 for r in ranks if r == 1)
    hit5 = sum(1 for r in ranks if r is not None and r <= 5)
    mrr = sum(1 / r for r in ranks if r) / n if n else 0.0
    return {"n": n, "hit1": hit1, "hit5": hit5, "hit1_rate": hit1 / n if n else 0.0,
            "hit5_rate": hit5 / n if n else 0.0, "mrr": mrr}


def first_rank(ids: list[int], expected: set[int]) -> int | None:
    return next((i for i, fid in enumerate(ids, start=1) if fid in expected), None)


@dataclass
class CaseResult:
    case_id: int
    question: str
    type: str
    expected: list[int]
    ranks: dict[str, int | None]  # mode -> rank of the first expected fact
    top: str = ""  # the text the hybrid recall put first
    answers: list[tuple[int, str | None]] = field(default_factory=list)  # each expected fact: (id, text), None if gone
    top_id: int | None = None


@dataclass
class Report:
    fusion: dict
    results: list[CaseResult] = field(default_factory=list)
    gone: list[CaseResult] = field(default_factory=list)  # cases none of whose expected facts exist: not scored

    def metrics(self) -> dict[str, dict]:
        return {mode: metrics([r.ranks[mode] for r in self.results]) for mode in MODES}

    def failures(self) -> list[CaseResult]:
        return [r for r in self.results if r.ranks["hybrid"] != 1]


def run(client: MemoryClient, cases, fusion: dict | None = None) -> Report:
    """Ask every case's question once (debug recall gives all three lists) and rank the expected
    facts. A case whose expected facts are all gone is not asked: it is listed, not scored a miss."""
    report = Report(fusion=fusion or {})
    cases = list(cases)
    facts = facts_by_id(client, [i for c in cases for i in c.expected_ids])
    for case in cases:
        answers = [(i, facts[i].text if facts.get(i) else None) for i in case.expected_ids]
        expected = {i for i, text in answers if text is not None}
        if not expected:
            report.gone.append(CaseResult(case.id, case.question, case.type, list(case.expected_ids), {}, answers=answers))
            continue
        result = client.recall(case.question, type=case.type or None, limit=FUSED_DEPTH, debug=True, fusion=fusion, log=False)
        ranks = {
            "keyword": first_rank([h.fact.id for h in result.kw], expected),
            "vector": first_rank([h.fact.id for h in result.vec], expected),
            "hybrid": first_rank([h.fact.id for h in result.results], expected),
        }
        if not report.results:  # the settings the memory used: a preset named in the request, spelled out
            report.fusion = result.fusion or report.fusion
        top = result.results[0].fact if result.results else None
        report.results.append(CaseResult(case.id, case.question, case.type, list(case.expected_ids), ranks,
                                         top.text if top else "", answers, top.id if top else None))
    return report


@dataclass
class Change:
    question: str
    case_id: int
    a: int | None
    b: int | None

    @property
    def better(self) -> bool:
        return (self.b or 10**9) < (self.a or 10**9)


def compare(a: Report, b: Report) -> tuple[list[Change], list[Change]]:
    """Cases whose hybrid rank got better under b, and those that got worse."""
    changes = [Change(ra.question, ra.case_id, ra.ranks["hybrid"], rb.ranks["hybrid"])
               for ra, rb in zip(a.results, b.results) if ra.ranks["hybrid"] != rb.ranks["hybrid"]]
    return [c for c in changes if c.better], [c for c in changes if not c.better]


SETS = Path(__file__).resolve().parent / "evalsets"
# Sets about the demo owner or nobody in particular; the holdout*.json sets are other households:
# each goes into a memory of its own anyway (docs/recall-quality.md).
SHIPPED = [SETS / "personal.json", SETS / "lookalikes.json"]


@cache
def shipped_names() -> list[str]:
    """The shipped sets' names, read once (the evaluation page asks whether they are loaded)."""
    return [json.loads(p.read_text(encoding="utf-8"))["name"] for p in SHIPPED]


def read_set_file(path: Path) -> tuple[object, str]:
    """A set file's content and the memory it goes into (eval-NAME, never one the owner uses);
    OSError or ValueError (bad JSON) when it cannot be read. load_set checks its format."""
    data = json.loads(path.read_text(encoding="utf-8"))
    target = set_memory(data["name"].strip()) if isinstance(data, dict) and isinstance(data.get("name"), str) else "default"
    return data, target
