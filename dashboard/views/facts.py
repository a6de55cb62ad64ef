"""Browse, search, add, edit and delete facts."""

from __future__ import annotations

import time
from dataclasses import replace
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from memories.client import BadRequest, Conflict, Fact, MemoryClient, NotFound, Page, ServiceUnavailable, TimedOut

from .. import audit
from ..forms import (DEFAULT_ORDER, DEFAULT_STATUS, MAX_ID, SORT_COLUMNS, STATUSES, FactFilter, FactForm, Validity,
                     end_of_day)
from ..forgetting import forget_records
from ..import_jobs import drop_mentioning
from ..memory import forget_status, mark_down, memory, model_waiting
from ..models import EvalCase
from ..problems import owner_mistake
from ..strip import with_count, with_strip
from .contradictions import row as proposal_row
from .history import clients_seen
from .recalls import returned

PAGE_SIZE = 50
BULK_LIMIT = 200


def expected_ids(name: str) -> set[int]:
    """The ids of the facts this memory's evaluation cases expect."""
    return {i for ids in EvalCase.objects.filter(memory=name).values_list("expected_ids", flat=True) for i in ids}


def cases_expecting(name: str, fact_ids) -> list[EvalCase]:
    wanted = set(fact_ids)
    return [c for c in EvalCase.objects.filter(memory=name) if wanted & set(c.expected_ids)]


def get_fact_or_404(request: HttpRequest, fact_id: int):
    if not 1 <= fact_id <= MAX_ID:  # asked here, in the dashboard's words: the memory would answer 422
        raise Http404(f"There is no fact #{fact_id}: fact ids go from 1 to {MAX_ID:,}.")
    try:
        return memory(request.memory).get(fact_id)
    except NotFound:
        deleted = audit.last_delete(memory(request.memory), fact_id)
        if deleted:
            when = timezone.localtime(deleted.at)
            raise Http404(f"Fact #{fact_id} was deleted on {when:%Y-%m-%d %H:%M} by {deleted.client or 'an unnamed client'}"
                          f"{f' ({deleted.note})' if deleted.note else ''}. It is in the trash, where Undo puts it back.") from None
        raise Http404(f"There is no fact #{fact_id} in the memory.") from None


def list_context(request: HttpRequest, filters: FactFilter, page=None) -> dict:
    if page is None:
        filters.is_valid()
        page = memory(request.memory).list_facts(limit=PAGE_SIZE, status=DEFAULT_STATUS)
    order = filters.cleaned_data.get("order") or DEFAULT_ORDER
    active = filters.active() if filters.is_valid() else {}
    when = filters.when() if filters.is_valid() else {}  # status and as_of: which facts' lives, not a filter of them
    keep = urlencode({**active, **when, **({"order": order} if order != DEFAULT_ORDER else {})})  # what page links keep
    return {"filters": filters, "active": active, "when": when, "keep": keep, "page": page,
            "query": request.GET.urlencode(),
            "expected": expected_ids(request.memory), "bulk_limit": BULK_LIMIT, "order": order, "statuses": STATUSES,
            "status": filters.cleaned_data.get("status") or DEFAULT_STATUS, "as_of": filters.cleaned_data.get("as_of"),
            "default_order": DEFAULT_ORDER, "sort": sort_links(request, {**active, **when}, order),
            "oldest_first": order.endswith("_asc"),
            "review_states": [("", "any"), ("unreviewed", "unreviewed"), ("reviewed", "reviewed")]}


def sort_links(request: HttpRequest, active: dict, order: str) -> dict[str, dict]:
    """The id, Created and Updated headers' links, by column: newest (highest) first, or the other
    way round when the list is in that order already; and the aria-sort of the column the list is
    in. They keep the filters (and the status and as-of) and the recall marks, not the page."""
    keep = {**active, **({"recalls": request.GET["recalls"]} if request.GET.get("recalls") else {})}
    links = {}
    for column in SORT_COLUMNS:
        ascending = order == f"{column}_asc"
        current = ascending or order == column
        then = f"{column}_asc" if current and not ascending else column
        query = urlencode({**keep, **({"order": then} if then != DEFAULT_ORDER else {})})
        links[column] = {"href": f"{reverse('facts')}?{query}" if query else reverse("facts"),
                         "sort": ("ascending" if ascending else "descending") if current else None}
    return links


def sources(request: HttpRequest) -> list[str]:
    """The sources of the newest facts, for the source filter's suggestions: no route of the
    contract lists a memory's sources."""
    newest = memory(request.memory).list_facts(limit=100).facts
    return sorted({f.source for f in newest if f.source}, key=str.lower)


PREFIXES_SHOWN = 8  # seen sources the "source starts with" select offers, after "any import"


def suggestions(request: HttpRequest) -> dict:
    """What the filters suggest: the newest facts' sources (for the source, and a few as
    prefixes) and the clients the newest history entries name (no route lists either)."""
    seen = sources(request)
    prefixes = ["import:", *[s for s in seen if s != "import:"][:PREFIXES_SHOWN]]
    wanted = request.GET.get("source_prefix", "").strip()
    if wanted and wanted not in prefixes:  # one typed into the URL stays chosen
        prefixes.append(wanted)
    return {"sources": seen, "prefixes": prefixes, "clients": clients_seen(memory(request.memory), op="add")}


def no_such_page(request: HttpRequest, why: str) -> HttpResponse:
    return owner_mistake(request, "That page of facts does not exist",
                         f"The address asks for something the memory cannot list ({why}). "
                         "Page links carry a cursor for one order of the list; one edited by hand, from another "
                         "order or from an older memory no longer works.",
                         back=reverse("facts"), back_label="The newest facts")


@require_GET
@vary_on_headers("HX-Request")
def fact_list(request: HttpRequest) -> HttpResponse:
    filters = FactFilter(request.GET)
    if not filters.is_valid():
        if "cursor" in filters.errors:
            return no_such_page(request, "the cursor is longer than any the memory gives")
        # The list says why, in place of its rows: no filter is dropped (that would be every fact).
        context = {**list_context(request, filters, page=Page([], None, 0)), "form": FactForm()}
        template = "facts/list.html#fact-list" if request.htmx and request.htmx.target == "fact-list" else "facts/list.html"
        return render(request, template, {**context, **suggestions(request)}, status=400)
    f = filters.cleaned_data
    try:
        page = memory(request.memory).list_facts(**filters.listing(), **filters.lifecycle(), limit=PAGE_SIZE,
                                                 cursor=f["cursor"] or None, order=f["order"] or None)
    except BadRequest as e:
        # Only what the owner typed reaches the memory here: a mangled ?cursor= or filter.
        return no_such_page(request, e.message)
    if not request.htmx:
        landed(request)
    context = {**list_context(request, filters, page), "form": FactForm()}
    if request.GET.get("recalls") == "1":  # mark the facts no logged recall returned
        context["log"] = returned(memory(request.memory))
    if request.htmx and request.htmx.target == "fact-list":
        return render(request, "facts/list.html#fact-list", context)
    return render(request, "facts/list.html", {**context, **suggestions(request)})


SIMILAR_SHOWN = 5  # the most similar facts shown after an add
FALLBACK_FLOOR = 0.80  # the contract's review floor, for a memory that does not say its own


def similar_facts(client, fact_id: int) -> list[tuple]:
    """The facts nearest a new one at or above the memory's review floor, most similar first
    ([] from a memory without neighbours, or while its pairs are being built)."""
    try:
        neighbours = client.neighbours(fact_id, limit=SIMILAR_SHOWN)
        floor = review_floor(client)
    except (NotFound, ServiceUnavailable):
        return []
    # A replaced or expired fact is no duplicate of a new one: the memory's dedup leaves it out too.
    return [(fact, cosine) for fact, cosine in neighbours if cosine >= floor and fact.status == "current"]


def review_floor(client) -> float:
    """The memory's review floor (GET /duplicates/nearest says it), once per memory and process:
    the answer lists facts too, which is not worth fetching on every add."""
    if client.base_url not in _floors:
        try:
            _, floor = client.nearest()
        except NotFound:
            floor = None  # a memory without the histogram's route
        _floors[client.base_url] = floor if floor is not None else FALLBACK_FLOOR
    return _floors[client.base_url]


_floors: dict[str, float] = {}


@require_POST
def fact_add(request: HttpRequest) -> HttpResponse:
    """Store a fact; a near duplicate is refused unless the owner says "store anyway" (`force`,
    which the memory's history records as the dashboard's decision). An exact one never is."""
    form = FactForm(request.POST)
    force = request.POST.get("force") == "yes"
    result = None
    client = memory(request.memory)
    if form.is_valid():
        try:
            result = client.add(**form.cleaned_data, force=force)
        except BadRequest as e:
            form.add_error("text", e.message)
        except ServiceUnavailable as e:
            form.add_error(None, f"The memory cannot store facts right now: {e.message}")
        except TimedOut as e:
            return slow_add(request, form, e)
    similar, proposals = [], []
    if result is not None:
        forget_status()
        if result.created:  # (the memory's history records it, as "dashboard" and the person)
            similar = similar_facts(client, result.fact.id)
            # What the new fact may replace, with the queue's three choices (views/contradictions.py).
            proposals = [proposal_row(replace(p, new=result.fact)) for p in result.conflicts]
            form = FactForm(initial={"type": result.fact.type, "source": result.fact.source})
    if not request.htmx:
        if result is not None and result.created:
            messages.success(request, f"Added fact #{result.fact.id}.")
            return redirect("fact_detail", fact_id=result.fact.id)  # its page lists the nearest facts
        if result is not None and result.match != "near":
            messages.warning(request, f"Already stored as fact #{result.fact.id} ({result.match} match).")
            return redirect("fact_detail", fact_id=result.fact.id)
    context = {"form": form, "result": result, "similar": similar, "proposals": proposals, "place": "added"}
    if not request.htmx:  # a near duplicate, or a text refused: the page again, with "Store anyway" or the reason
        return render(request, "facts/list.html", {**list_context(request, FactFilter({})), **context, **suggestions(request)},
                      status=200 if result is not None else 422)
    response = render(request, "facts/list.html#add-panel", context, status=200 if result is not None else 422)
    return with_strip(request, with_count(request, response) if result is not None and result.created else response)


PENDING_FOR = 300  # seconds an add that timed out is looked for on the facts page before it counts as lost


def slow_add(request: HttpRequest, form: FactForm, error: TimedOut) -> HttpResponse:
    """The memory did not answer an add in time. It may still store it (a Worker waiting on its
    model finishes the write when the model answers), so the owner is told so, the model named
    when it is what the write waits for, and the next facts page says whether it landed."""
    mark_down(error, request.memory)
    seconds = model_waiting(request.memory)
    why = (f"its embedding model has been working on one call for {seconds} s (Workers AI or the Worker's EMBEDDER_URL; "
           "on the local service its MEMORY_EMBEDDER): check that the model runs. "
           if seconds else "")
    text = (f"The memory did not answer within {settings.MEMORY_TIMEOUT:g} s: {why}The fact may still be stored, once the "
            "memory finishes the write. Reload the facts list in a moment: it says whether the fact landed. Adding it "
            "again is safe (an exact repeat returns the stored fact).")
    request.session[f"pending_add:{request.memory}"] = {**form.cleaned_data, "at": time.time()}
    if not request.htmx:
        messages.warning(request, text)
        return redirect("facts")
    form.add_error(None, text)
    context = {"form": form, "result": None, "similar": [], "proposals": [], "place": "added"}
    # 202: the memory may yet act on it (and a 5xx would not save the session that remembers it).
    return with_strip(request, render(request, "facts/list.html#add-panel", context, status=202))


def landed(request: HttpRequest) -> None:
    """An add that timed out (slow_add): once the memory holds the fact, say so; past PENDING_FOR,
    say it was not stored."""
    pending = request.session.get(f"pending_add:{request.memory}")
    if not pending:
        return
    text = pending["text"].strip().casefold()
    found = [f for f in memory(request.memory).list_facts(q=pending["text"].strip(), type=pending["type"], limit=10).facts
             if f.text.strip().casefold() == text]
    short = pending["text"] if len(pending["text"]) <= 80 else pending["text"][:80] + "…"
    if found:
        messages.success(request, f"The fact that timed out landed after all: it is stored as fact #{found[0].id} "
                                  f"(“{short}”).")
    elif time.time() - pending["at"] > PENDING_FOR:
        messages.warning(request, f"The fact that timed out (“{short}”) was not stored. Add it again.")
    else:
        messages.info(request, f"The fact that timed out (“{short}”) is not stored yet: the memory may still be "
                               "working on it. Reload this page in a moment.")
        return
    del request.session[f"pending_add:{request.memory}"]


@require_GET
def fact_detail(request: HttpRequest, fact_id: int) -> HttpResponse:
    fact = get_fact_or_404(request, fact_id)
    client = memory(request.memory)
    try:
        neighbours = client.neighbours(fact_id, limit=10)
    except NotFound:
        neighbours = None  # a memory without this extension of the contract
    return render(request, "facts/detail.html", {
        "fact": fact, "neighbours": neighbours, "recalled": recalled(client, fact_id), "written": written(client, fact_id),
        "replaced_by": replaced_by(client, fact),
        "replaced": replaced(client, fact_id), "validity": Validity(), "replaced_scan": REPLACED_SCAN * 100})


def written(client: MemoryClient, fact_id: int):
    """Its add entry: which client wrote it, when, and what the memory noted (None when the
    history no longer holds it: trimmed, or forgotten for good)."""
    try:
        entries, _ = client.history(fact_id=fact_id, op="add", limit=1)
    except NotFound:  # a memory of contract v2 keeps no history
        return None
    return entries[0] if entries else None


CHAIN_SHOWN = 5  # steps of "replaced by" followed from a fact's page
REPLACED_SCAN = 5  # pages of 100 replaced facts read for those a fact replaced


def replaced_by(client: MemoryClient, fact: Fact) -> list[dict]:
    """What replaced the fact, and what replaced that, up to CHAIN_SHOWN steps: [{"id", "fact"
    (None: deleted since)}]. A chain cannot loop (the memory refuses it); a hand-made one stops."""
    chain, at, seen = [], fact.superseded_by, {fact.id}
    while at is not None and at not in seen and len(chain) < CHAIN_SHOWN:
        seen.add(at)
        try:
            step = client.get(at)
        except NotFound:
            step = None
        chain.append({"id": at, "fact": step})
        at = step.superseded_by if step else None
    return chain


def replaced(client: MemoryClient, fact_id: int) -> dict:
    """The facts this one replaced: the replaced facts whose superseded_by names it, read from
    the most recently changed replaced facts (a replacement decided later, on the queue or by an
    edit, is an edit of the old fact: this fact's own history does not hold it), at most
    REPLACED_SCAN pages. {"facts", "complete": every replaced fact was read}."""
    found, cursor = [], None
    for _ in range(REPLACED_SCAN):
        page = client.list_facts(status="replaced", order="updated", limit=100, cursor=cursor)
        found += [f for f in page.facts if f.superseded_by == fact_id]
        cursor = page.next_cursor
        if not cursor:
            break
    return {"facts": found, "complete": cursor is None}


@require_POST
def fact_validity(request: HttpRequest, fact_id: int) -> HttpResponse:
    """The fact page's lifecycle form: replaced by another fact, no longer replaced, valid until
    the end of a day, or no end (PATCH superseded_by / valid_until, one history entry each)."""
    get_fact_or_404(request, fact_id)
    form = Validity(request.POST)
    action = request.POST.get("action")
    changes: dict = {}
    if not form.is_valid():
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
    elif action == "replace":
        if form.cleaned_data["superseded_by"] is None:
            messages.error(request, "Give the id of the fact that replaces this one.")
        else:
            changes = {"superseded_by": form.cleaned_data["superseded_by"]}
    elif action == "unreplace":
        changes = {"superseded_by": None}
    elif action == "until":
        day = form.cleaned_data["valid_until"]
        if day is None:
            messages.error(request, "Give the last day this fact is true.")
        else:
            changes = {"valid_until": end_of_day(day)}
    elif action == "forever":
        changes = {"valid_until": None}
    else:
        messages.error(request, "Unknown change.")
    if changes:
        try:
            fact = memory(request.memory).edit(fact_id, **changes, note="lifecycle, from its page")
        except NotFound:
            raise Http404(f"Fact #{fact_id} is gone: deleted since.") from None
        except BadRequest as e:  # not current, a loop, itself, a day before it was stored: the memory's words
            messages.error(request, f"Nothing was changed: {e.message}.")
        else:
            forget_status()
            messages.success(request, validity_note(fact) + " The audit log's Undo puts it back.")
    return redirect("fact_detail", fact_id=fact_id)


def validity_note(fact: Fact) -> str:
    if fact.superseded_by is not None:
        return f"Fact #{fact.id} is replaced by #{fact.superseded_by}."
    if fact.valid_until is not None:
        state = "current until" if fact.status == "current" else "expired since"
        return f"Fact #{fact.id} is {state} {fact.valid_until:%Y-%m-%d %H:%M} UTC."
    return f"Fact #{fact.id} is current, with no end."


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


def save_edit(client, fact_id: int, form: FactForm, note: str = "") -> tuple[Fact | None, Fact | None]:
    """The form's edit sent to the memory: (the edited fact, None), or (None, the fact it would
    duplicate, or None) with the memory's refusal put on the form."""
    try:
        return client.edit(fact_id, **form.cleaned_data, note=note), None
    except Conflict as e:
        form.add_error("text", e.message if e.existing is None else "duplicate")  # the template names it once, with a link
        return None, e.existing
    except BadRequest as e:
        form.add_error("text", e.message)
    except ServiceUnavailable as e:
        form.add_error(None, f"The memory cannot re-embed this fact right now: {e.message}")
    return None, None


@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def fact_edit(request: HttpRequest, fact_id: int) -> HttpResponse:
    fact = get_fact_or_404(request, fact_id)
    conflict = None
    if request.method == "POST":
        form = FactForm(request.POST)
        if form.is_valid():
            edited, conflict = save_edit(memory(request.memory), fact_id, form)
            if edited is not None:
                fact = edited
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
    client = memory(request.memory)
    client.delete(fact_id)
    forget_status()
    if request.htmx:  # the row says deleted, with an Undo of the memory's history entry
        entry = audit.last_delete(client, fact_id)
        return with_strip(request, with_count(request, render(request, "facts/list.html#deleted-row", {"fact": fact, "entry": entry})))
    messages.success(request, f"Deleted fact #{fact_id}. It is in the trash if you want it back.")
    return redirect("facts")


@require_http_methods(["GET", "POST"])
def fact_forget(request: HttpRequest, fact_id: int) -> HttpResponse:
    """Delete a fact and purge it from the memory's history (the trash and the audit log), for a
    secret stored by mistake. GET asks first, saying it cannot be undone."""
    fact = get_fact_or_404(request, fact_id)
    if request.method == "GET":
        return render(request, "facts/forget.html", {"fact": fact, "cases": cases_expecting(request.memory, [fact_id])})
    client = memory(request.memory)
    try:
        client.delete(fact_id, note="forget for good")
    except NotFound:
        pass  # deleted meanwhile: its history is still to go
    purged = client.forget(fact_id)
    forget_records(request.memory, fact_id, [fact.text])  # the dashboard's own copies of it too
    drop_mentioning(request.memory, fact_id, fact.text)  # and an upload being imported that holds it
    forget_status()
    messages.success(request, f"Fact #{fact_id} is gone for good: deleted, and its {purged} history "
                     f"entr{'y' if purged == 1 else 'ies'} removed. The trash and the audit log no longer hold its text.")
    return redirect("facts")
