"""Browse, search, add, edit and delete facts."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from memories.client import BadRequest, Conflict, NotFound, ServiceUnavailable

from .. import audit
from ..forms import MAX_ID, FactFilter, FactForm
from ..memory import forget_status, memory
from ..models import EvalCase
from ..problems import owner_mistake
from ..strip import with_count, with_strip

PAGE_SIZE = 50
BULK_LIMIT = 200


def expected_ids(name: str) -> set[int]:
    """The ids of the facts this memory's evaluation cases expect."""
    return {i for ids in EvalCase.objects.filter(memory=name).values_list("expected_ids", flat=True) for i in ids}


def cases_expecting(name: str, fact_ids) -> list[EvalCase]:
    wanted = set(fact_ids)
    return [c for c in EvalCase.objects.filter(memory=name) if wanted & set(c.expected_ids)]


def get_fact_or_404(request: HttpRequest, fact_id: int):
    if fact_id > MAX_ID:
        raise Http404(f"There is no fact #{fact_id}: ids go up to {MAX_ID}.")
    try:
        return memory(request.memory).get(fact_id)
    except NotFound:
        deleted = audit.last_delete(memory(request.memory), fact_id)
        if deleted:
            when = timezone.localtime(deleted.at)
            raise Http404(f"Fact #{fact_id} was deleted on {when:%Y-%m-%d %H:%M} by {deleted.client or 'an unnamed client'}"
                          f"{f' ({deleted.note})' if deleted.note else ''}. It is in the trash, where Undo puts it back.") from None
        raise Http404(f"There is no fact #{fact_id} in the memory.") from None


@require_GET
@vary_on_headers("HX-Request")
def fact_list(request: HttpRequest) -> HttpResponse:
    filters = FactFilter(request.GET)
    filters.is_valid()
    f = filters.cleaned_data
    try:
        page = memory(request.memory).list_facts(type=f.get("type") or None, source=f.get("source") or None,
                                                 q=f.get("q") or None, limit=PAGE_SIZE, cursor=f.get("cursor") or None)
    except BadRequest as e:
        # Only what the owner typed reaches the memory here: a mangled ?cursor= or filter.
        return owner_mistake(request, "That page of facts does not exist",
                             f"The address asks for something the memory cannot list ({e.message}). "
                             "Page links carry a cursor; one edited by hand or from an older memory no longer works.",
                             back=reverse("facts"), back_label="The newest facts")
    context = {"filters": filters, "page": page, "form": FactForm(), "query": request.GET.urlencode(),
               "expected": expected_ids(request.memory)}
    if request.htmx and request.htmx.target == "fact-list":
        return render(request, "facts/list.html#fact-list", context)
    return render(request, "facts/list.html", context)


@require_POST
def fact_add(request: HttpRequest) -> HttpResponse:
    form = FactForm(request.POST)
    result = None
    if form.is_valid():
        try:
            result = memory(request.memory).add(**form.cleaned_data)
        except BadRequest as e:
            form.add_error("text", e.message)
        except ServiceUnavailable as e:
            form.add_error(None, f"The memory cannot store facts right now: {e.message}")
    if result is not None:
        forget_status()
        if result.created:  # (the memory's history records it, as "dashboard")
            form = FactForm(initial={"type": result.fact.type, "source": result.fact.source})
    if not request.htmx:
        if result is not None and result.created:
            messages.success(request, f"Added fact #{result.fact.id}.")
            return redirect("facts")
        if result is not None:
            messages.warning(request, f"Already stored as fact #{result.fact.id} ({result.match} match).")
            return redirect("fact_detail", fact_id=result.fact.id)
    context = {"form": form, "result": result}
    response = render(request, "facts/list.html#add-panel", context, status=200 if result is not None else 422)
    return with_strip(request, with_count(request, response) if result is not None and result.created else response)


@require_GET
def fact_detail(request: HttpRequest, fact_id: int) -> HttpResponse:
    fact = get_fact_or_404(request, fact_id)
    client = memory(request.memory)
    try:
        neighbours = client.neighbours(fact_id, limit=10)
    except NotFound:
        neighbours = None  # a memory without this extension of the contract
    return render(request, "facts/detail.html", {"fact": fact, "neighbours": neighbours, "recalled": recalled(client, fact_id)})


def recalled(client, fact_id: int) -> dict:
    """How often the logged recalls returned a fact, its best rank there and when last (from the
    newest 100 such recalls for the rank), and how far back the log reaches."""
    found, _, total = client.recalls(fact_id=fact_id, limit=100)
    ranks = [next(i for i, r in enumerate(rec.results, 1) if r["id"] == fact_id) for rec in found]
    _, _, logged = client.recalls(limit=1)
    return {"times": total, "best": min(ranks) if ranks else None, "last": found[0] if found else None,
            "logged": logged}


@require_GET
def fact_row(request: HttpRequest, fact_id: int) -> HttpResponse:
    return render(request, "facts/list.html#fact-row", {"fact": get_fact_or_404(request, fact_id)})


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def fact_edit(request: HttpRequest, fact_id: int) -> HttpResponse:
    fact = get_fact_or_404(request, fact_id)
    conflict = None
    if request.method == "POST":
        form = FactForm(request.POST)
        if form.is_valid():
            try:
                fact = memory(request.memory).edit(fact_id, **form.cleaned_data)
            except Conflict as e:
                conflict = e.existing  # the template names it once, with a link
                form.add_error("text", e.message if conflict is None else "duplicate")
            except BadRequest as e:
                form.add_error("text", e.message)
            except ServiceUnavailable as e:
                form.add_error(None, f"The memory cannot re-embed this fact right now: {e.message}")
            else:
                if request.htmx:
                    return with_strip(request, render(request, "facts/list.html#fact-row", {"fact": fact, "saved": True}))
                messages.success(request, f"Saved fact #{fact.id}.")
                return redirect("fact_detail", fact_id=fact.id)
        status = 409 if conflict else 422
    else:
        form = FactForm(initial={"text": fact.text, "type": fact.type, "source": fact.source})
        status = 200
    context = {"fact": fact, "form": form, "conflict": conflict}
    template = "facts/list.html#fact-edit-row" if request.htmx else "facts/edit.html"
    return render(request, template, context, status=status)


@require_http_methods(["GET", "POST"])
def fact_delete(request: HttpRequest, fact_id: int) -> HttpResponse:
    """GET asks for confirmation; POST deletes (htmx confirms in the browser first)."""
    fact = get_fact_or_404(request, fact_id)
    if request.method == "GET":
        return render(request, "facts/delete.html", {"facts": [fact], "cases": cases_expecting(request.memory, [fact_id])})
    entry = audit.delete(request, memory(request.memory), fact_id, fact=fact)
    forget_status()
    if request.htmx:
        return with_strip(request, with_count(request, render(request, "facts/list.html#deleted-row", {"fact": fact, "entry": entry})))
    messages.success(request, f"Deleted fact #{fact_id}. It is in the trash if you want it back.")
    return redirect("facts")


@require_POST
def fact_bulk_delete(request: HttpRequest) -> HttpResponse:
    """First POST (from the list's checkboxes) shows what will go; the second, with confirm, deletes."""
    try:
        ids = sorted({int(i) for i in request.POST.getlist("ids")})[:BULK_LIMIT]
    except ValueError:
        ids = []
    if not ids:
        messages.warning(request, "Select at least one fact to delete.")
        return redirect("facts")
    client = memory(request.memory)
    if request.POST.get("confirm") != "yes":
        facts = []
        for i in ids:
            try:
                facts.append(client.get(i))
            except NotFound:
                pass
        return render(request, "facts/delete.html", {"facts": facts, "bulk": True,
                                                     "cases": cases_expecting(request.memory, [f.id for f in facts])})
    deleted = []
    for i in ids:
        try:
            audit.delete(request, client, i, note=f"bulk delete of {len(ids)}")
            deleted.append(i)
        except NotFound:
            pass  # already gone: the owner's intent holds
    forget_status()
    messages.success(request, f"Deleted {len(deleted)} fact{'s' if len(deleted) != 1 else ''}: "
                     + ", ".join(f"#{i}" for i in deleted) + ". They are in the trash if you want them back.")
    return redirect(reverse("facts"))
