"""Recall quality: evaluation cases, their hit@1 / hit@5 / MRR per mode, and A/B comparisons."""

from __future__ import annotations

import json

from django.contrib import messages
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_POST

from memories.client import BadRequest

from ..evaluation import SetError, compare, load_set, run
from ..memory import forget_status, memory
from ..models import EvalCase

MAX_UPLOAD = 5 * 1024 * 1024


def parse_fusion(text: str) -> dict | None:
    """A preset name or a JSON object; ValueError with a sentence for anything else."""
    text = (text or "").strip()
    if not text:
        return None
    if not text.startswith("{"):
        return {"preset": text}
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("fusion settings must be a JSON object")
    return value


def selected_cases(request: HttpRequest):
    suites = request.GET.getlist("suite")
    cases = EvalCase.objects.all()
    return cases.filter(suite__in=suites) if suites else cases


def run_or_explain(cases, fusion_text: str):
    """(report, error message)."""
    try:
        fusion = parse_fusion(fusion_text)
    except ValueError as e:
        return None, f"Fusion settings “{fusion_text}” are not a preset or a JSON object: {e}"
    try:
        return run(memory(), cases, fusion), None
    except BadRequest as e:
        return None, f"The memory refused these fusion settings: {e.message}"


def by_suite(cases, fusion_text: str):
    """(suite, report) for each suite among the cases, or the error that stopped the run."""
    out, error = [], None
    for suite in sorted(set(c.suite for c in cases)):
        report, error = run_or_explain([c for c in cases if c.suite == suite], fusion_text)
        if error:
            break
        out.append((suite, report))
    return out, error


@require_GET
def evaluation(request: HttpRequest) -> HttpResponse:
    cases = list(selected_cases(request))
    counts = dict(EvalCase.objects.values_list("suite").annotate(n=Count("id")).order_by("suite"))
    context: dict = {"counts": counts, "fusion": request.GET.get("fusion", ""), "chosen": request.GET.getlist("suite")}
    if request.GET.get("run") and cases:
        reports, error = by_suite(cases, context["fusion"])
        if error:
            messages.error(request, error)
        context["reports"] = reports
    return render(request, "evaluate.html", context)


@require_GET
def evaluation_compare(request: HttpRequest) -> HttpResponse:
    a_text, b_text = request.GET.get("a", "seed"), request.GET.get("b", "default")
    cases = list(selected_cases(request))
    context: dict = {"a": a_text, "b": b_text, "rows": [], "chosen": request.GET.getlist("suite"),
                     "counts": dict.fromkeys(sorted(set(EvalCase.objects.values_list("suite", flat=True))), 0)}
    if request.GET.get("run") and cases:
        reports_a, error = by_suite(cases, a_text)
        reports_b, error_b = by_suite(cases, b_text) if not error else ([], None)
        if error or error_b:
            messages.error(request, error or error_b)
        for (suite, ra), (_, rb) in zip(reports_a, reports_b):
            better, worse = compare(ra, rb)
            context["rows"].append({"suite": suite, "a": ra.metrics(), "b": rb.metrics(), "better": better, "worse": worse,
                                    "fusion_a": ra.fusion, "fusion_b": rb.fusion})
    return render(request, "evaluate_compare.html", context)


@require_POST
def case_add(request: HttpRequest) -> HttpResponse:
    """From the recall debugger: "this is the fact I expected" for this question."""
    question = (request.POST.get("question") or "").strip()
    type = request.POST.get("type") or ""
    try:
        expected = int(request.POST.get("expected", ""))
    except ValueError:
        expected = 0
    if not question or expected < 1 or type not in ("", "fact", "skill", "log"):
        messages.error(request, "A case needs a question and the id of the expected fact.")
    else:
        memory().get(expected)  # 404 page if it does not exist
        case, created = EvalCase.objects.update_or_create(
            suite=(request.POST.get("suite") or "mine").strip()[:100], question=question,
            defaults={"expected_ids": [expected], "type": type},
        )
        messages.success(request, f"{'Saved' if created else 'Updated'} the case “{question}” → fact #{expected} in set “{case.suite}”.")
    back = reverse("recall") + "?" + urlencode({"q": question, "type": type, "pin": expected or ""})
    return redirect(back)


@require_POST
def case_delete(request: HttpRequest, case_id: int) -> HttpResponse:
    deleted, _ = EvalCase.objects.filter(id=case_id).delete()
    messages.success(request, "Deleted the case." if deleted else "That case was already gone.")
    return redirect("evaluation")


@require_POST
def set_import(request: HttpRequest) -> HttpResponse:
    upload = request.FILES.get("file")
    if not upload:
        messages.error(request, "Choose a set file (JSON) to import.")
    elif upload.size > MAX_UPLOAD:
        messages.error(request, f"{upload.name} is larger than {MAX_UPLOAD // 1024 // 1024} MB.")
    else:
        try:
            name, created, cases = load_set(memory(), json.loads(upload.read().decode("utf-8")))
        except (UnicodeDecodeError, ValueError) as e:
            kind = "is not of the set format" if isinstance(e, SetError) else "is not JSON"
            messages.error(request, f"{upload.name} {kind}: {e}")
        else:
            forget_status()
            messages.success(request, f"Imported set “{name}”: {cases} cases, {created} new facts stored.")
    return redirect("evaluation")
