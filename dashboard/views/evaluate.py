"""Recall quality: evaluation cases, their hit@1 / hit@5 / MRR per mode, and A/B comparisons."""

from __future__ import annotations

import json

from django.contrib import messages
from django.db.models import Count, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.defaultfilters import pluralize
from django.urls import get_script_prefix, reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memories.client import BadRequest, NotFound, ServiceUnavailable

from .. import audit
from ..evaluation import (EVAL_PREFIX, SHIPPED, SetError, compare, facts_by_id, load_set, parse_set, read_set_file, run,
                          set_memory, shipped_names)
from ..forms import parse_id
from ..memory import NAME, adopt_choices, first, forget_status, memory, owner_memories
from ..models import EvalCase, EvalRun
from ..problems import owner_mistake
from .recalls import debug_url

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


def visible(request: HttpRequest) -> Q:
    """The cases (and runs) of this page: those saved from this memory's debugger, and every
    imported set's, which run in a memory of their own whichever memory the owner is in."""
    return Q(memory=request.memory) | Q(memory__startswith=EVAL_PREFIX)


def selected_cases(request: HttpRequest, data=None):
    data = request.GET if data is None else data
    suites = data.getlist("suite")
    cases = EvalCase.objects.filter(visible(request))
    return cases.filter(suite__in=suites) if suites else cases


def set_counts(request: HttpRequest) -> list[dict]:
    """Each set this page can run: its name, the memory it runs on and its number of cases."""
    rows = EvalCase.objects.filter(visible(request)).values_list("suite", "memory").annotate(n=Count("id")).order_by("suite", "memory")
    return [{"suite": suite, "memory": name, "n": n} for suite, name, n in rows]


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


def by_suite(cases, fusion_text: str, request: HttpRequest | None = None):
    """{suite, memory, report} for each set among the cases, each run on the memory its cases
    belong to, or the error that stopped the run."""
    out, error = [], None
    for suite, name in sorted(set((c.suite, c.memory) for c in cases)):
        report, error = run_or_explain(name, [c for c in cases if c.suite == suite and c.memory == name], fusion_text)
        if error:
            break
        out.append({"suite": suite, "memory": name, "report": report,
                    "recall": in_memory(request, name, reverse("recall")) if request else ""})
    return out, error


@require_http_methods(["GET", "POST"])
def evaluation(request: HttpRequest) -> HttpResponse:
    """GET shows the sets and the earlier runs; POST runs the chosen sets (a run is kept, so
    reloading the page must not run it again)."""
    data = request.POST if request.method == "POST" else request.GET
    context: dict = {"sets": set_counts(request), "fusion": data.get("fusion", ""), "chosen": data.getlist("suite")}
    loaded = {s["suite"] for s in context["sets"]}
    context["shipped_missing"] = [n for n in shipped_names() if n not in loaded]
    context["only_saved"] = loaded <= {"mine"}  # the cases saved from recalls' own set, or none
    error = None
    if request.method == "POST":
        cases = list(selected_cases(request, data))
        reports, error = by_suite(cases, context["fusion"], request) if cases else ([], None)
        if error:
            messages.error(request, error)
        context["reports"] = reports
        for row in reports:
            report = row["report"]
            EvalRun.objects.create(memory=row["memory"], suite=row["suite"], fusion=report.fusion, cases=len(report.results),
                                   metrics=report.metrics())
    context["runs"] = run_history(request)
    return render(request, "evaluate.html", context, status=400 if error else 200)


def run_history(request: HttpRequest, limit: int = 30) -> list[dict]:
    """The latest runs, each with the change in hybrid hit@1 and MRR since the run of the same set before it."""
    runs = list(EvalRun.objects.filter(visible(request))[: limit + 20])
    rows = []
    for i, r in enumerate(runs[:limit]):
        previous = next((p for p in runs[i + 1:] if p.suite == r.suite and p.memory == r.memory), None)
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
    context: dict = {"a": a_text, "b": b_text, "rows": [], "chosen": request.GET.getlist("suite"),
                     "sets": set_counts(request), **adopt_choices(request.memory)}
    error = None
    if request.GET.get("run") and cases:  # only reads the memories (no run is kept): a GET, so a comparison can be linked
        reports_a, error = by_suite(cases, a_text, request)
        reports_b, error_b = by_suite(cases, b_text) if not error else ([], None)
        error = error or error_b
        if error:
            messages.error(request, error)
        expected = {c.id: c.expected_ids[0] for c in cases if c.expected_ids}
        for row_a, row_b in zip(reports_a, reports_b):
            ra, rb = row_a["report"], row_b["report"]
            better, worse = compare(ra, rb)
            # Each change opens the debugger under B, the case's expected fact pinned.
            under_b = urlencode({f"f_{k}": v for k, v in (rb.fusion or {}).items()})

            def link(c, recall=row_a["recall"], under_b=under_b):
                query = urlencode({"q": c.question, "pin": expected.get(c.case_id, "")})
                return {"change": c, "href": f"{recall}?{query}{'&' + under_b if under_b else ''}"}

            context["rows"].append({"suite": row_a["suite"], "memory": row_a["memory"], "a": ra.metrics(), "b": rb.metrics(),
                                    "better": [link(c) for c in better], "worse": [link(c) for c in worse],
                                    "fusion_a": ra.fusion, "fusion_b": rb.fusion, "recall": row_a["recall"],
                                    "b_json": json.dumps(rb.fusion or {"preset": "default"})})
    return render(request, "evaluate_compare.html", context, status=400 if error else 200)


@require_POST
def settings_adopt(request: HttpRequest) -> HttpResponse:
    """"Make B this memory's default": the memory keeps B as its own recall settings (used by
    every recall that sends none, the agent's included), recorded in its history with an undo."""
    name = request.POST.get("memory") or adopt_choices(request.memory)["target"]
    back = reverse("evaluation_compare")
    try:
        fusion = parse_fusion(request.POST.get("fusion", "")) or {"preset": "default"}
    except ValueError as e:
        return owner_mistake(request, "Those settings cannot be kept", f"The settings are not valid: {e}.", back=back)
    if not NAME.fullmatch(name):
        return owner_mistake(request, "There is no such memory", "A memory name is 1 to 64 letters, digits, _ . -.", back=back)
    # One of the owner's memories, or the evaluation memory this very page is about (the debugger
    # opened in it); an evaluation set's memory is never chosen for the owner.
    if name not in owner_memories() and name != request.memory:
        return owner_mistake(request, "Choose one of your memories", f"“{name}” is not one of your memories "
                             f"({', '.join(owner_memories())}): choose one of them under “in memory”.", back=back)
    try:
        memory(name).put_settings(fusion)
    except BadRequest as e:
        return owner_mistake(request, "The memory refused those settings", e.message, status=422, back=back)
    forget_status()
    messages.success(request, f"Memory “{name}” now recalls with {json.dumps(fusion)} by default, the agent's recalls "
                              "included. The audit log has the change, where Undo puts the old settings back.")
    return redirect(in_memory(request, name, reverse("audit")) + "?op=settings")


def parse_ids(text: str) -> list[int] | None:
    """Accepted answer ids from "12, 40 41", or None if any is not a fact id."""
    ids = [parse_id(t) for t in text.replace(",", " ").split()]
    return sorted(set(ids)) if ids and None not in ids else None


def missing_facts(name: str, ids: list[int]) -> list[int]:
    return [i for i, f in facts_by_id(memory(name), ids).items() if f is None]


def in_memory(request: HttpRequest, name: str, url: str) -> str:
    """A URL of this request's memory (as reverse() gives it) in the memory `name` instead."""
    here = url[len(get_script_prefix()):]
    root = getattr(request, "memory_root", "/")
    return f"{root}{'' if name == first() else f'm/{name}/'}{here}"


def answers(request: HttpRequest, name: str, ids: list[int], facts: dict) -> list[dict]:
    """Each expected fact of a case: its id, its text (None when the memory no longer holds it)
    and a link into the memory the case runs on."""
    return [{"id": i, "text": facts[i].text if facts.get(i) else None,
             "href": in_memory(request, name, reverse("fact_detail", args=[i]))} for i in ids]


def with_answers(request: HttpRequest, cases) -> list:
    """The cases, each with .answers: its expected facts read from its own memory."""
    cases = list(cases)
    facts: dict[str, dict] = {}
    for name in sorted(set(c.memory for c in cases)):
        facts[name] = facts_by_id(memory(name), [i for c in cases if c.memory == name for i in c.expected_ids])
    for c in cases:
        c.answers = answers(request, c.memory, c.expected_ids, facts[c.memory])
    return cases


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
    came_from = parse_id(request.POST.get("recall", ""))  # a logged recall, from "It should have been"
    if came_from:
        back = recall_back(request, came_from, expected) or back
        audit.record(request, "eval_case", expected, note=f"case “{question}” in “{suite}”, from recall #{came_from}")
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


def recall_back(request: HttpRequest, recall_id: int, pin: int) -> str | None:
    """Back to the debugger on that recall, its then/now band and settings, the fact pinned."""
    try:
        logged = memory(request.memory).logged_recall(recall_id)
    except NotFound:
        return None
    return debug_url(logged) + "&" + urlencode({"pin": pin})


@require_GET
def case_list(request: HttpRequest) -> HttpResponse:
    cases = EvalCase.objects.filter(visible(request))
    suites = sorted(set(cases.values_list("suite", flat=True)))
    suite = request.GET.get("suite", "")
    if suite:
        cases = cases.filter(suite=suite)
    return render(request, "evaluate_cases.html", {"cases": with_answers(request, cases), "suite": suite, "suites": suites})


@require_http_methods(["GET", "POST"])
def case_edit(request: HttpRequest, case_id: int) -> HttpResponse:
    case = get_object_or_404(EvalCase.objects.filter(visible(request)), id=case_id)
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
        elif missing := missing_facts(case.memory, ids):
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
    with_answers(request, [case])
    return render(request, "evaluate_case_edit.html", {"case": case, "values": values, "errors": errors},
                  status=400 if errors else 200)


@require_POST
def case_delete(request: HttpRequest, case_id: int) -> HttpResponse:
    deleted, _ = EvalCase.objects.filter(visible(request), id=case_id).delete()
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
    """Two steps: the upload is checked and shown for confirmation (kept in the session
    meanwhile); the confirmation stores it, all or nothing. A set's facts go into a memory of its
    own ("eval-" and its name, created by the first write), never into one the owner uses."""
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
    replaced = EvalCase.objects.filter(memory=set_memory(name), suite=name).count()
    return render(request, "evaluate_import.html", {"name": name, "facts": facts, "cases": cases, "replaced": replaced,
                                                    "file": upload.name, "target": set_memory(name)})


def _import_confirmed(request: HttpRequest) -> HttpResponse:
    data = request.session.pop(f"pending_import:{request.memory}", None)
    if data is None:
        return owner_mistake(request, "Nothing to import", "That import was already done or cancelled; choose the file again.",
                             back=reverse("evaluation"))
    loaded = _load(request, data, set_memory(data["name"].strip()))
    if isinstance(loaded, HttpResponse):
        return loaded
    name, target, created, cases = loaded
    messages.success(request, f"Imported set “{name}”: {cases} case{pluralize(cases)}, {created} new fact{pluralize(created)} stored in the memory “{target}”.")
    return redirect("evaluation")


@require_POST
def shipped_load(request: HttpRequest) -> HttpResponse:
    """The shipped evaluation sets, each into a memory of its own, from the page (what `make
    evalsets` does): a new owner starts with more than the cases saved from recalls."""
    done = []
    for path in SHIPPED:
        data, target = read_set_file(path)
        loaded = _load(request, data, target)
        if isinstance(loaded, HttpResponse):
            return loaded
        name, target, created, cases = loaded
        done.append(f"“{name}” ({cases} case{pluralize(cases)}, {created} new fact{pluralize(created)} in “{target}”)")
    messages.success(request, f"Loaded the shipped sets: {', '.join(done)}. Choose them under Sets and Run.")
    return redirect("evaluation")


def _load(request: HttpRequest, data: dict, target: str) -> tuple[str, str, int, int] | HttpResponse:
    """A set into its own memory `target`, each fact recorded in the audit log: (name, target,
    facts stored anew, cases), or the page that says why nothing was stored."""
    try:
        name, created, cases = load_set(
            memory(target), data, memory=target,
            added=lambda fact: audit.record(request, "import", fact.id, after=fact, memory=target,
                                            note=f"from evaluation set “{data['name']}”"),
            undone=lambda entry: entry.delete(),  # taken back: it never happened
        )
    except NotFound:
        forget_status()
        return owner_mistake(request, "This memory service holds one memory",
                             f"An evaluation set runs in a memory of its own (“{target}”), never in yours, and the "
                             "service at this address serves only one (serve --db). Serve a folder of memories "
                             "(serve --dir, as make run does) or use the Worker. Nothing was stored.",
                             back=reverse("evaluation"))
    except (BadRequest, ServiceUnavailable) as e:
        forget_status()
        return owner_mistake(request, "The import was undone",
                             f"The memory refused one of the set's facts ({e.message}); the facts this import had "
                             "already added were deleted again, so nothing changed.", back=reverse("evaluation"))
    forget_status()
    return name, target, created, cases
