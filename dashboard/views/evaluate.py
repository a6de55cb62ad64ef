"""Recall quality: evaluation cases, their hit@1 / hit@5 / MRR per mode, and A/B comparisons."""

from __future__ import annotations

import json

from django.contrib import messages
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memories.client import BadRequest, NotFound, ServiceUnavailable

from .. import audit
from ..evaluation import SetError, compare, load_set, parse_set, run
from ..forms import parse_id
from ..memory import forget_status, memory
from ..models import EvalCase, EvalRun
from ..problems import owner_mistake

MAX_UPLOAD = 5 * 1024 * 1024


MAX_FUSION = 2000  # characters; the settings are a handful of names and numbers


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a number the memory can use")


def _finite(text: str) -> float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{text} is not a finite number")
    return value


def parse_fusion(text: str) -> dict | None:
    """A preset name or a flat JSON object of names to finite numbers, strings or booleans;
    ValueError with a sentence for anything else (NaN, 1e999, nesting: the owner's typo)."""
    text = (text or "").strip()
    if not text:
        return None
    if len(text) > MAX_FUSION:
        raise ValueError(f"they are longer than {MAX_FUSION} characters")
    if not text.startswith("{"):
        if not text.replace("-", "").replace("_", "").isalnum():
            raise ValueError("a preset is a single word such as default or seed")
        return {"preset": text}
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite)
    except RecursionError:
        raise ValueError("they are nested too deeply") from None
    if not isinstance(value, dict):
        raise ValueError("fusion settings must be a JSON object")
    for name, v in value.items():
        if not isinstance(v, (str, int, float, bool)) or (isinstance(v, int) and not -10**9 < v < 10**9):
            raise ValueError(f"“{name}” must be a number, a word or true/false")
    return value


def selected_cases(request: HttpRequest):
    suites = request.GET.getlist("suite")
    cases = EvalCase.objects.filter(memory=request.memory)
    return cases.filter(suite__in=suites) if suites else cases


def run_or_explain(name: str, cases, fusion_text: str):
    """(report, error message) of the cases on the memory `name`."""
    try:
        fusion = parse_fusion(fusion_text)
    except ValueError as e:
        shown = fusion_text if len(fusion_text) <= 80 else fusion_text[:80] + "…"
        return None, f"Fusion settings “{shown}” are not a preset or a JSON object: {e}"
    try:
        return run(memory(name), cases, fusion), None
    except BadRequest as e:
        return None, f"The memory refused these fusion settings: {e.message}"


def by_suite(name: str, cases, fusion_text: str):
    """(suite, report) for each suite among the cases, or the error that stopped the run."""
    out, error = [], None
    for suite in sorted(set(c.suite for c in cases)):
        report, error = run_or_explain(name, [c for c in cases if c.suite == suite], fusion_text)
        if error:
            break
        out.append((suite, report))
    return out, error


@require_GET
def evaluation(request: HttpRequest) -> HttpResponse:
    cases = list(selected_cases(request))
    counts = dict(EvalCase.objects.filter(memory=request.memory).values_list("suite").annotate(n=Count("id")).order_by("suite"))
    context: dict = {"counts": counts, "fusion": request.GET.get("fusion", ""), "chosen": request.GET.getlist("suite")}
    error = None
    if request.GET.get("run") and cases:
        reports, error = by_suite(request.memory, cases, context["fusion"])
        if error:
            messages.error(request, error)
        context["reports"] = reports
        for suite, report in reports:
            EvalRun.objects.create(memory=request.memory, suite=suite, fusion=report.fusion, cases=len(report.results),
                                   metrics=report.metrics())
    context["runs"] = run_history(request.memory)
    return render(request, "evaluate.html", context, status=400 if error else 200)


def run_history(name: str, limit: int = 30) -> list[dict]:
    """The latest runs, each with the change in hybrid hit@1 and MRR since the run of the same set before it."""
    runs = list(EvalRun.objects.filter(memory=name)[: limit + 20])
    rows = []
    for i, r in enumerate(runs[:limit]):
        previous = next((p for p in runs[i + 1:] if p.suite == r.suite), None)
        hybrid = r.metrics.get("hybrid", {})
        row = {"run": r, "hybrid": hybrid}
        if previous:
            before = previous.metrics.get("hybrid", {})
            row["hit1_delta"] = hybrid.get("hit1", 0) - before.get("hit1", 0)
            row["mrr_delta"] = hybrid.get("mrr", 0.0) - before.get("mrr", 0.0)
        rows.append(row)
    return rows


@require_GET
def evaluation_compare(request: HttpRequest) -> HttpResponse:
    a_text, b_text = request.GET.get("a", "seed"), request.GET.get("b", "default")
    cases = list(selected_cases(request))
    suites = EvalCase.objects.filter(memory=request.memory).values_list("suite", flat=True)
    context: dict = {"a": a_text, "b": b_text, "rows": [], "chosen": request.GET.getlist("suite"),
                     "counts": dict.fromkeys(sorted(set(suites)), 0)}
    error = None
    if request.GET.get("run") and cases:
        reports_a, error = by_suite(request.memory, cases, a_text)
        reports_b, error_b = by_suite(request.memory, cases, b_text) if not error else ([], None)
        error = error or error_b
        if error:
            messages.error(request, error)
        for (suite, ra), (_, rb) in zip(reports_a, reports_b):
            better, worse = compare(ra, rb)
            context["rows"].append({"suite": suite, "a": ra.metrics(), "b": rb.metrics(), "better": better, "worse": worse,
                                    "fusion_a": ra.fusion, "fusion_b": rb.fusion})
    return render(request, "evaluate_compare.html", context, status=400 if error else 200)


def parse_ids(text: str) -> list[int] | None:
    """Accepted answer ids from "12, 40 41", or None if any is not a fact id."""
    ids = [parse_id(t) for t in text.replace(",", " ").split()]
    return sorted(set(ids)) if ids and None not in ids else None


def missing_facts(name: str, ids: list[int]) -> list[int]:
    client = memory(name)
    missing = []
    for i in ids:
        try:
            client.get(i)
        except NotFound:
            missing.append(i)
    return missing


@require_POST
def case_add(request: HttpRequest) -> HttpResponse:
    """From the recall debugger: "this is the fact I expected" for this question. A case that
    exists already gains the fact as one more accepted answer."""
    question = (request.POST.get("question") or "").strip()
    type = request.POST.get("type") or ""
    expected = parse_id(request.POST.get("expected", ""))
    back = reverse("recall") + "?" + urlencode({"q": question, "type": type, "pin": expected or ""})
    if not question or expected is None or type not in ("", "fact", "skill", "log"):
        return owner_mistake(request, "That case cannot be saved",
                             "A case needs a question and the id of the expected fact (a whole number from 1).",
                             back=back, back_label="Back to the recall debugger")
    if missing_facts(request.memory, [expected]):
        return owner_mistake(request, f"There is no fact #{expected}",
                             f"The memory holds no fact #{expected}, so it cannot be a case's answer.", status=404,
                             back=back, back_label="Back to the recall debugger")
    suite = (request.POST.get("suite") or "mine").strip()[:100]
    case = EvalCase.objects.filter(memory=request.memory, suite=suite, question=question).first()
    if case is None:
        case = EvalCase.objects.create(memory=request.memory, suite=suite, question=question, expected_ids=[expected], type=type)
        messages.success(request, f"Saved the case “{question}” → fact #{expected} in set “{suite}”.")
    else:
        case.expected_ids = sorted(set(case.expected_ids) | {expected})
        case.type = type
        case.save(update_fields=["expected_ids", "type"])
        messages.success(request, f"The case “{question}” in set “{suite}” now accepts "
                                  + ", ".join(f"#{i}" for i in case.expected_ids) + ".")
    return redirect(back)


@require_GET
def case_list(request: HttpRequest) -> HttpResponse:
    cases = EvalCase.objects.filter(memory=request.memory)
    suite = request.GET.get("suite", "")
    if suite:
        cases = cases.filter(suite=suite)
    suites = sorted(set(cases.values_list("suite", flat=True)))
    return render(request, "evaluate_cases.html", {"cases": cases, "suite": suite, "suites": suites})


@require_http_methods(["GET", "POST"])
def case_edit(request: HttpRequest, case_id: int) -> HttpResponse:
    case = get_object_or_404(EvalCase, id=case_id, memory=request.memory)
    errors: list[str] = []
    if request.method == "POST":
        question = (request.POST.get("question") or "").strip()
        type = request.POST.get("type") or ""
        ids = parse_ids(request.POST.get("expected_ids") or "")
        if not question:
            errors.append("The question is empty.")
        if type not in ("", "fact", "skill", "log"):
            errors.append("The type must be fact, skill, log or empty.")
        if ids is None:
            errors.append("Accepted answers must be fact ids (whole numbers from 1), separated by commas or spaces.")
        elif missing := missing_facts(request.memory, ids):
            errors.append("The memory holds no fact " + ", ".join(f"#{i}" for i in missing) + ".")
        clash = EvalCase.objects.filter(memory=case.memory, suite=case.suite, question=question).exclude(id=case.id).exists()
        if clash:
            errors.append(f"Set “{case.suite}” already has a case with this question.")
        if not errors:
            case.question, case.type, case.expected_ids = question, type, ids
            case.save(update_fields=["question", "type", "expected_ids"])
            messages.success(request, f"Saved the case “{question}”.")
            return redirect(reverse("eval_cases") + "?" + urlencode({"suite": case.suite}))
        values = {"question": question, "type": type, "expected_ids": request.POST.get("expected_ids", "")}
    else:
        values = {"question": case.question, "type": case.type, "expected_ids": ", ".join(map(str, case.expected_ids))}
    return render(request, "evaluate_case_edit.html", {"case": case, "values": values, "errors": errors},
                  status=400 if errors else 200)


@require_POST
def case_delete(request: HttpRequest, case_id: int) -> HttpResponse:
    deleted, _ = EvalCase.objects.filter(id=case_id, memory=request.memory).delete()
    messages.success(request, "Deleted the case." if deleted else "That case was already gone.")
    return redirect("eval_cases")


def read_set(raw: bytes) -> object:
    """The decoded set file; ValueError with a sentence for anything that is not JSON."""
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except UnicodeDecodeError:
        raise ValueError("it is not UTF-8 text") from None
    except RecursionError:
        raise ValueError("it is nested too deeply") from None


@require_POST
def set_import(request: HttpRequest) -> HttpResponse:
    """Two steps, because a set writes facts into the live memory: the upload is checked and
    shown for confirmation (kept in the session meanwhile); the confirmation stores it, all or nothing."""
    if request.POST.get("confirm") == "yes":
        return _import_confirmed(request)
    upload = request.FILES.get("file")
    if not upload:
        return owner_mistake(request, "No set file", "Choose a set file (JSON) to import.", back=reverse("evaluation"))
    if upload.size > MAX_UPLOAD:
        return owner_mistake(request, "That set file is too large",
                             f"{upload.name} is larger than {MAX_UPLOAD // 1024 // 1024} MB.", back=reverse("evaluation"))
    try:
        data = read_set(upload.read())
        name, facts, cases = parse_set(data)
    except ValueError as e:  # SetError and JSONDecodeError are ValueErrors
        kind = "is not of the set format" if isinstance(e, SetError) else "is not JSON"
        return owner_mistake(request, "That set file cannot be imported", f"{upload.name} {kind}: {e}",
                             back=reverse("evaluation"))
    request.session[f"pending_import:{request.memory}"] = data  # confirmed into this memory only
    replaced = EvalCase.objects.filter(memory=request.memory, suite=name).count()
    return render(request, "evaluate_import.html", {"name": name, "facts": facts, "cases": cases, "replaced": replaced,
                                                    "file": upload.name})


def _import_confirmed(request: HttpRequest) -> HttpResponse:
    data = request.session.pop(f"pending_import:{request.memory}", None)
    if data is None:
        return owner_mistake(request, "Nothing to import", "That import was already done or cancelled; choose the file again.",
                             back=reverse("evaluation"))
    try:
        name, created, cases = load_set(
            memory(request.memory), data, memory=request.memory,
            added=lambda fact: audit.record(request, "import", fact.id, after=fact, note=f"from evaluation set “{data['name']}”"),
            undone=lambda entry: entry.delete(),  # taken back: it never happened
        )
    except (BadRequest, ServiceUnavailable) as e:
        forget_status()
        return owner_mistake(request, "The import was undone",
                             f"The memory refused one of the set's facts ({e.message}); the facts this import had "
                             "already added were deleted again, so nothing changed.", back=reverse("evaluation"))
    forget_status()
    messages.success(request, f"Imported set “{name}”: {cases} cases, {created} new facts stored.")
    return redirect("evaluation")
