"""The owner's inbox: what clients wrote that the owner has not reviewed yet (GET /facts?reviewed=
false), newest first, grouped by the client that wrote it and the day, each with what the memory
found on write (its add entry's note, the contradictions it opened as the new fact). Approve, edit,
delete, "replace #N" and "both true" in place, each undoable from the line that replaces the row;
"approve all from this client today" and "approve all shown"; and the memory's review setting.

Who wrote a fact is its add entry's client (GET /history?fact_id=&op=add): one look-up a fact,
so a page holds at most PAGE_SIZE facts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memories.client import (BadRequest, Conflict, Fact, HistoryEntry, MemoryClient, NotFound, Proposal)

from .. import audit
from ..forms import FactForm, parse_id
from ..memory import counted_unreviewed, forget_status, memory, review_mode
from ..problems import owner_mistake
from ..strip import with_strip
from .facts import save_edit

PAGE_SIZE = 30  # facts a page: each costs a look-up in the history (who wrote it)
CONFLICT_PAGES = 5  # pages of 100 open contradictions read for those the shown facts opened
REPLACED_PAGES = 2  # pages of 100 facts changed last read for those the shown facts replaced since
GROUP_MAX = 1000  # facts "approve all from this client today" approves at most
REVIEW_BATCH = 200  # ids a POST /facts/review takes
UNNAMED = "an unnamed client"
KINDS = {"number": "a number", "date": "a date or time", "negation": "a negation", "name": "a name",
         "word": "other words"}


@dataclass
class Item:
    """One unreviewed fact as the inbox shows it."""

    fact: Fact
    entry: HistoryEntry | None  # its add entry: who wrote it, when, and what the memory found (None: not in the history)
    proposals: list[dict] = field(default_factory=list)  # open contradictions where it is the new fact, closest first
    replaced_since: list[dict] = field(default_factory=list)  # facts it replaced after its write (memory_supersede)

    @property
    def writer(self) -> str | None:
        """The client that wrote it ("" unnamed), or None when the history no longer says."""
        return None if self.entry is None else self.entry.client

    @property
    def written_apart(self) -> bool:
        """Written well after the time it carries (an import's own dates)."""
        return self.entry is not None and abs((self.entry.at - self.fact.created_at).total_seconds()) > 60

    @property
    def replaced(self) -> list[dict]:
        """The facts its write replaced (an add with `supersedes`), as they were."""
        before = (self.entry.before or {}) if self.entry else {}
        at_write = [f for f in before.get("replaced") or [] if isinstance(f, dict) and "id" in f]
        ids = {f["id"] for f in at_write}
        return at_write + [f for f in self.replaced_since if f["id"] not in ids]


def writer_label(writer: str | None) -> str:
    if writer is None:
        return "a client the history no longer names"
    return writer or UNNAMED


def proposal_row(p: Proposal) -> dict:
    """A contradiction the fact opened: the old fact, and the words each holds that the other lacks."""
    differs = p.differs or {}
    return {"p": p, "old": p.old, "old_words": " ".join(differs.get("old") or []),
            "new_words": " ".join(differs.get("new") or []),
            "kinds": [KINDS.get(k, k) for k in differs.get("kinds") or []]}


def add_entry(client: MemoryClient, fact_id: int) -> HistoryEntry | None:
    entries, _ = client.history(fact_id=fact_id, op="add", limit=1)
    return entries[0] if entries else None


def opened(client: MemoryClient, fact_ids) -> dict[int, list[Proposal]]:
    """The open contradictions in which these facts are the new fact, by fact, closest first
    (from the newest CONFLICT_PAGES hundred open ones; {} from a memory without the queue)."""
    wanted, found, cursor = set(fact_ids), {}, None
    if not wanted:
        return {}
    for _ in range(CONFLICT_PAGES):
        try:
            pairs, cursor, _ = client.conflicts(limit=100, cursor=cursor)
        except NotFound:
            return {}
        for p in pairs:
            if p.new is not None and p.new.id in wanted:
                found.setdefault(p.new.id, []).append(p)
        if not cursor:
            break
    return {fid: sorted(ps, key=lambda p: (-p.score, p.old.id)) for fid, ps in found.items()}


def replaced_since(client: MemoryClient, fact_ids) -> dict[int, list[dict]]:
    """The facts these replaced after they were written (an agent's memory_supersede, a decision
    elsewhere), by the fact that replaced them: among the REPLACED_PAGES hundred facts changed
    last, since a replacement edits the fact it replaces."""
    wanted, found, cursor = set(fact_ids), {}, None
    for _ in range(REPLACED_PAGES if wanted else 0):
        page = client.list_facts(order="updated", limit=100, cursor=cursor)
        for f in page.facts:
            if f.superseded_by in wanted:
                found.setdefault(f.superseded_by, []).append({"id": f.id, "text": f.text})
        cursor = page.next_cursor
        if not cursor:
            break
    return found


def items_of(client: MemoryClient, facts: list[Fact]) -> list[Item]:
    waiting = [f.id for f in facts if not f.reviewed]
    proposals, since = opened(client, waiting), replaced_since(client, waiting)
    return [Item(f, add_entry(client, f.id), [proposal_row(p) for p in proposals.get(f.id, [])], since.get(f.id, []))
            for f in facts]


def day_of(fact: Fact) -> date:
    return timezone.localtime(fact.created_at).date()


def day_bounds(day: date) -> tuple[datetime, datetime]:
    start = timezone.make_aware(datetime.combine(day, time.min))
    return start, start + timedelta(days=1)


def contract_time(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def written_that_day(client: MemoryClient, writer: str, day: date) -> tuple[list[int], bool]:
    """The unreviewed facts `writer` stored on `day` (the dashboard's time zone), newest first, at
    most GROUP_MAX; and whether that is all of them. GET /facts?client= names the facts by their
    add entries, as the inbox does; `as_of` the day's end skips what came later."""
    start, end = day_bounds(day)
    as_of = contract_time(end - timedelta(microseconds=1)) if end <= timezone.now() else None
    ids: list[int] = []
    cursor = None
    while len(ids) < GROUP_MAX:
        page = client.list_facts(reviewed=False, client=writer, as_of=as_of, limit=100, cursor=cursor)
        ids += [f.id for f in page.facts if start <= f.created_at < end]
        cursor = page.next_cursor
        if not cursor or (page.facts and page.facts[-1].created_at < start):
            return ids[:GROUP_MAX], True
    return ids[:GROUP_MAX], False


def groups_of(client: MemoryClient, items: list[Item]) -> list[dict]:
    """The items by (day, client), in the list's order (newest first), each group with the ids
    its "approve all" approves: every unreviewed fact that client stored that day, when the
    history names the client, else those on the page."""
    found: dict[tuple, dict] = {}
    today = timezone.localdate()
    for item in items:
        day = day_of(item.fact)
        group = found.setdefault((day, item.writer), {"day": day, "writer": item.writer, "items": [],
                                                      "label": writer_label(item.writer), "today": day == today})
        group["items"].append(item)
    for n, group in enumerate(found.values()):
        group["id"] = f"group-{n}"
        here = [i.fact.id for i in group["items"] if not i.fact.reviewed]
        if group["writer"]:  # a name the memory can filter by ("" and None it cannot)
            ids, complete = written_that_day(client, group["writer"], group["day"])
            group["ids"], group["complete"] = list(dict.fromkeys([*here, *ids])), complete
        else:
            group["ids"], group["complete"] = here, True
        group["ids_text"] = ",".join(map(str, group["ids"]))
        group["named"] = bool(group["writer"])
    return list(found.values())


def parse_ids(value: str | list[str] | None, limit: int = GROUP_MAX) -> list[int] | None:
    """Fact ids from a form ("1,2,3" or several values), or None if one cannot be an id."""
    values = value if isinstance(value, list) else [value or ""]
    ids = [parse_id(v) for part in values for v in str(part).split(",") if v.strip()]
    if not ids or None in ids:
        return None
    return list(dict.fromkeys(ids))[:limit]


def settings_of(client: MemoryClient) -> dict | None:
    """The memory's review setting ({"mode", "trusted"}), or None from a memory that has none."""
    try:
        settings = client.settings()
    except NotFound:
        return None
    return settings["review"] if review_mode(settings) else None


def review_many(client: MemoryClient, ids: list[int]) -> tuple[list[int], list[int]]:
    """Review these facts, REVIEW_BATCH at a time: (the ids reviewed now, the history entries)."""
    reviewed, entries = [], []
    for i in range(0, len(ids), REVIEW_BATCH):
        done, entry = client.review(ids[i : i + REVIEW_BATCH])
        reviewed += done
        if entry is not None:
            entries.append(int(entry))
    return reviewed, entries


# -- the page -------------------------------------------------------------------------------

@require_GET
def inbox(request: HttpRequest) -> HttpResponse:
    client = memory(request.memory)
    review = settings_of(client)
    if review is None:  # a memory from before the review (contract v4 without it, or older)
        return render(request, "inbox.html", {"unsupported": True})
    cursor = request.GET.get("cursor") or None
    try:
        page = client.list_facts(reviewed=False, limit=PAGE_SIZE, cursor=cursor)
    except BadRequest as e:  # only a cursor typed or kept from another memory reaches the memory here
        return owner_mistake(request, "That page of the inbox does not exist",
                             f"The memory cannot page from there ({e.message}).",
                             back=reverse("inbox"), back_label="The newest unreviewed facts")
    counted_unreviewed(page.total, request.memory)
    return render(request, "inbox.html", {**list_context(client, page.facts, review), "total": page.total,
                                          "next_cursor": page.next_cursor, "cursor": cursor, "review": review,
                                          "trusted_text": "\n".join(review.get("trusted") or [])})


def list_context(client: MemoryClient, facts: list[Fact], review: dict, banner: dict | None = None) -> dict:
    items = items_of(client, facts)
    waiting = [i.fact.id for i in items if not i.fact.reviewed]
    groups = groups_of(client, items)
    # "Approve all shown" when it is not the one group's "approve all" by another name.
    all_shown = len(waiting) > 1 and (len(groups) > 1 or set(groups[0]["ids"]) != set(waiting))
    return {"groups": groups, "shown": ",".join(str(i.fact.id) for i in items), "all_shown": all_shown,
            "pending": review.get("mode") == "before", "banner": banner,
            "open_count": len(waiting), "open_ids": ",".join(map(str, waiting)), "group_max": GROUP_MAX}


def row_context(client: MemoryClient, fact: Fact, **extra) -> dict:
    review = settings_of(client) or {}
    [item] = items_of(client, [fact])
    return {"item": item, "pending": review.get("mode") == "before", **extra}


# -- one fact's actions ---------------------------------------------------------------------

def answer(request: HttpRequest, template: str, context: dict, back: str) -> HttpResponse:
    """htmx: the row's replacement, with the strip and both counts out of band; without
    JavaScript: back to the inbox (or the fact's page) with the note as a message."""
    if not request.htmx:
        level = context.get("level", "success")
        messages.add_message(request, getattr(messages, level.upper()), context.get("note", "Done."))
        return redirect(back)
    return with_strip(request, with_total(request, render(request, template, context)))


def with_total(request: HttpRequest, response: HttpResponse) -> HttpResponse:
    """The inbox's own count updates with each answer (out of band), from the strip's fresh status."""
    response.content += render_to_string("inbox.html#total", {"oob": True}, request).encode()
    return response


def back_to(request: HttpRequest, fact_id: int | None) -> str:
    """Where a form without JavaScript goes back to: the fact's page when it came from there, else the inbox."""
    if request.POST.get("next") == "fact" and fact_id is not None:
        return reverse("fact_detail", args=[fact_id])
    return reverse("inbox")


def done(fact_id: int, note: str, entries: list[int], *, level: str = "success", text: str = "", **extra) -> dict:
    return {"fact_id": fact_id, "note": note, "entries": entries, "entries_text": ",".join(map(str, entries)),
            "level": level, "text": text, **extra}


def fact_or_gone(client: MemoryClient, fact_id: int) -> Fact | None:
    try:
        return client.get(fact_id)
    except NotFound:
        return None


def gone(fact_id: int) -> dict:
    return done(fact_id, f"#{fact_id} is gone: deleted since. Nothing was changed.", [], level="warning")


@require_POST
def inbox_approve(request: HttpRequest) -> HttpResponse:
    """Approve one fact (its row, or its page), or many: a group's "approve all" or "approve all
    shown" (`place` group or shown), whose answer is the whole list again."""
    place = request.POST.get("place") or "row"
    ids = parse_ids(request.POST.getlist("ids"))
    if ids is None:
        return owner_mistake(request, "Nothing to approve", "The form names no fact, or a fact id that cannot be one.",
                             back=reverse("inbox"), back_label="The inbox")
    client = memory(request.memory)
    if place in ("group", "shown"):
        return approve_many(request, client, ids)
    fact_id = ids[0]
    try:
        reviewed, entries = review_many(client, [fact_id])
    except BadRequest:  # not a fact (any more): deleted meanwhile
        return answer(request, "inbox.html#done", gone(fact_id), back_to(request, None))
    forget_status()
    fact = fact_or_gone(client, fact_id)
    text = fact.text if fact else ""
    if reviewed:
        context = done(fact_id, f"Approved #{fact_id}.", entries, text=text)
    else:
        context = done(fact_id, f"#{fact_id} was approved already.", [], level="info", text=text)
    return answer(request, "inbox.html#done", context, back_to(request, fact_id))


def approve_many(request: HttpRequest, client: MemoryClient, ids: list[int]) -> HttpResponse:
    shown = parse_ids(request.POST.get("shown"), PAGE_SIZE * 2) or []
    try:
        reviewed, entries = review_many(client, ids)
    except BadRequest:  # one was deleted meanwhile: approve those still there
        still = client.facts(ids)
        reviewed, entries = review_many(client, [i for i in ids if i in still]) if still else ([], [])
    forget_status()
    n = len(reviewed)
    what = "from this client" if request.POST.get("place") == "group" else "shown"
    note = (f"Approved {n} fact{'s' if n != 1 else ''} {what}." if n else "They were approved already.")
    banner = {"note": note, "entries_text": ",".join(map(str, entries)), "level": "success" if n else "info"}
    if not request.htmx:
        messages.success(request, note + (" The audit log's Undo puts it back." if entries else ""))
        return redirect("inbox")
    return list_answer(request, client, shown, banner)


def list_answer(request: HttpRequest, client: MemoryClient, shown: list[int], banner: dict) -> HttpResponse:
    """The page's list again, of the facts it showed (those approved now as one-line results)."""
    review = settings_of(client) or {}
    found = client.facts(shown)
    facts = sorted(found.values(), key=lambda f: (f.created_at, f.id), reverse=True)
    context = {**list_context(client, facts, review, banner), "shown": ",".join(map(str, shown))}
    return with_strip(request, with_total(request, render(request, "inbox.html#list", context)))


@require_POST
def inbox_delete(request: HttpRequest) -> HttpResponse:
    fact_id = parse_id(request.POST.get("id"))
    if fact_id is None:
        return owner_mistake(request, "Nothing to delete", "The form names no fact.", back=reverse("inbox"),
                             back_label="The inbox")
    client = memory(request.memory)
    try:
        fact = client.delete(fact_id, note="deleted from the inbox")
    except NotFound:
        return answer(request, "inbox.html#done", done(fact_id, f"#{fact_id} is gone already: deleted since.", [],
                                                        level="info"), reverse("inbox"))
    forget_status()
    entry = audit.last_delete(client, fact_id)
    context = done(fact_id, f"Deleted #{fact_id}: it is in the trash.", [entry.id] if entry else [],
                   text=fact.text if fact else "", deleted=True)
    return answer(request, "inbox.html#done", context, reverse("inbox"))


@require_POST
def inbox_undo(request: HttpRequest) -> HttpResponse:
    """Undo what a result line did (its history entries, the last first): the row comes back as
    it is now; a bulk approval's undo brings the list back."""
    entries = parse_ids(request.POST.get("entries"), 20)
    place = request.POST.get("place") or "row"
    fact_id = parse_id(request.POST.get("id"))
    if entries is None or (place == "row" and fact_id is None):
        return owner_mistake(request, "Nothing to undo", "The form names no history entry.", back=reverse("inbox"),
                             back_label="The inbox")
    client = memory(request.memory)
    problem, changed = None, None
    for entry_id in reversed(entries):
        try:
            client.undo(entry_id)
        except NotFound:
            problem = f"History entry #{entry_id} is gone: the memory keeps its newest entries only."
        except Conflict as e:
            if e.code == "already_undone":
                continue
            if e.code == "changed_since":  # the audit log shows what it would overwrite, and asks
                changed = entry_id
                problem = "It changed since, so undoing it would overwrite that."
            else:
                problem = f"Could not undo: {e.message}."
        if problem:
            break
    forget_status()
    if not request.htmx:
        if problem:
            messages.warning(request, problem + " The audit log has every entry.")
        else:
            messages.success(request, "Undone.")
        return redirect("inbox")
    if place != "row":
        shown = parse_ids(request.POST.get("shown"), PAGE_SIZE * 2) or []
        banner = {"note": problem or "Undone: they wait for review again.", "level": "warning" if problem else "info",
                  "entries_text": "", "changed": changed}
        return list_answer(request, client, shown, banner)
    fact = fact_or_gone(client, fact_id)
    if problem or fact is None:
        context = done(fact_id, problem or f"Undone, but #{fact_id} is gone since.", [], level="warning", changed=changed)
        return answer(request, "inbox.html#done", context, reverse("inbox"))
    if fact.reviewed:  # an edit undone by this dashboard is an edit of the owner's: the memory counts it as reviewed
        context = done(fact_id, f"Undone: #{fact_id} holds what it held before, and stays approved (the dashboard "
                                "wrote it back).", [], level="info", text=fact.text)
        return answer(request, "inbox.html#done", context, reverse("inbox"))
    return with_strip(request, with_total(request, render(request, "inbox.html#row",
                                                          row_context(client, fact, undone=True))))


@require_GET
def inbox_row(request: HttpRequest, fact_id: int) -> HttpResponse:
    """One row as it is now: the editor's Cancel."""
    client = memory(request.memory)
    fact = fact_or_gone(client, fact_id)
    if fact is None:
        return render(request, "inbox.html#done", done(fact_id, f"#{fact_id} is gone: deleted since.", [], level="warning"))
    return render(request, "inbox.html#row", row_context(client, fact))


@require_http_methods(["GET", "POST"])
def inbox_edit(request: HttpRequest, fact_id: int) -> HttpResponse:
    """Edit in place: the row becomes an editor; Save stores the edit (the dashboard's edit
    reviews a fact it changes) and approves the fact if it is not yet. Without JavaScript the
    fact's own edit page does it."""
    if not request.htmx:
        return redirect("fact_edit", fact_id=fact_id)
    client = memory(request.memory)
    fact = fact_or_gone(client, fact_id)
    if fact is None:
        return render(request, "inbox.html#done", done(fact_id, f"#{fact_id} is gone: deleted since.", [], level="warning"))
    conflict = None
    if request.method == "POST":
        form = FactForm(request.POST)
        if form.is_valid():
            edited, conflict = save_edit(client, fact_id, form, note="edited in the inbox")
            if edited is not None:
                edits, _ = client.history(fact_id=fact_id, op="edit", limit=1)
                entries = [edits[0].id] if edits else []
                if not edited.reviewed:
                    _, more = review_many(client, [fact_id])
                    entries += more
                forget_status()
                return answer(request, "inbox.html#done",
                              done(fact_id, f"Saved and approved #{fact_id}.", entries, text=edited.text), reverse("inbox"))
        status = 409 if conflict else 422
    else:
        form = FactForm(initial={"text": fact.text, "type": fact.type, "source": fact.source})
        status = 200
    return render(request, "inbox.html#editor", {"fact": fact, "form": form, "conflict": conflict}, status=status)


# -- the review setting ---------------------------------------------------------------------

MODES = ("after", "before")


@require_POST
def inbox_settings(request: HttpRequest) -> HttpResponse:
    """The memory's review setting: after or before, and the clients and sources it trusts."""
    mode = request.POST.get("mode")
    trusted = list(dict.fromkeys(t.strip() for t in (request.POST.get("trusted") or "").splitlines() if t.strip()))
    if mode not in MODES:
        return owner_mistake(request, "Unknown review mode", "Choose “after” or “before”.", back=reverse("inbox"),
                             back_label="The inbox")
    try:
        memory(request.memory).put_settings(review={"mode": mode, "trusted": trusted})
    except BadRequest as e:  # a name too long, not ASCII, too many: the memory's words
        messages.error(request, f"The review setting was not changed: {e.message}.")
    except NotFound:
        messages.error(request, "This memory keeps no review setting: it speaks an older version of the contract.")
    else:
        forget_status()
        says = ("New facts from other clients are recalled at once and wait here for your look"
                if mode == "after" else "New facts from other clients are not recalled until you approve them")
        messages.success(request, f"Review {mode}: {says}"
                         + (f"; trusted: {', '.join(trusted)}." if trusted else "; no client or source is trusted.")
                         + " The audit log's Undo puts it back.")
    return redirect("inbox")
