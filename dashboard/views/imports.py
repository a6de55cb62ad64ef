"""Import from another tool (issue 30 §3): upload a file and say its format (for a table, which
column holds what, seen on its first rows), then a dry run through the memory's own checks, then
the import of exactly what the dry run showed, in batches, with a progress bar, and the Inbox,
where the imported facts wait for review. A list pasted in the page's box is read as a file would
be; a backup of a memory is restored as it was into an empty one (backup_restore.py).

The file is read by memories.importers (one reader a format) and planned and stored by
memories.importers.plan, the CLI's own path, with the client as the memory. Between the requests
the upload and its plan are a job of dashboard/import_jobs.py, the uploader's only, bounded in
bytes, read, checked and imported in threads of its own. An upload over IMPORT_MAX_FILE_BYTES is
refused from its size, before it is read (Django streams an upload over
FILE_UPLOAD_MAX_MEMORY_SIZE to a temporary file). The memory is written as `dashboard-import` and
the person who imports (`dashboard-import alice`), a client the memory does not count as the
owner's review."""

from __future__ import annotations

import secrets
import shutil
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memories import importers
from memories.client import MemoryServiceError
from memories.client.importing import Importing
from memories.importers import plan as planning
from memories.importers.backup_file import BackupFile

from .. import backup_restore
from .. import import_jobs as jobs
from ..import_jobs import TABLES, Job
from ..memory import client_name, memory
from ..strip import with_strip

CLIENT = "dashboard-import"  # X-Memory-Client of an import's writes: not the owner's review
FORMATS = {  # importers.formats(), with the words the page shows
    "auto": "Found from the file's content (Letta, mem0, the MCP memory server, ChatGPT, Claude, CSV, JSON, a list)",
    "list": "A list of memories, one a line (from any tool)",
    "chatgpt-list": "ChatGPT: the list copied from Settings › Personalization › Manage memories",
    "chatgpt-export": "ChatGPT: its data export holds no memory file; its memories are read from conversations.json "
                      "(Settings › Data controls › Export data)",
    "claude-list": "Claude: the list copied from its memory settings",
    "csv": "CSV with a header row",
    "json": "JSON: an array of objects",
    "jsonl": "JSON Lines: one object a line",
    "mem0": "mem0: get_all or its export, a CSV dump, or its Markdown export (mem0-export-*.md)",
    "letta": "Letta: an agent's archival passages",
    "mcp-memory": "MCP memory server: its memory.jsonl (entities' observations and relations)",
    "claude-ai": "Claude.ai: the memories.json of a data export (Settings › Privacy › Export data)",
    "claude-code": "Claude Code: its memory folder (MEMORY.md and the topic files), as a zip",
    "backup": "A backup of a memory (this dashboard's Export): restored as it was into an empty memory",
}
ROLES = {"text": "Text", "type": "Type (fact, skill or log)", "source": "Source", "time": "Time (ISO-8601, or a date)"}
PREVIEW = 5  # rows the mapping's preview shows
SHOWN = 100  # lines each of the dry run's lists shows
PASTED = "pasted list"  # the name a pasted list goes by, on the page and in the history's note
NAME_CHARS = 120  # of the file's name kept for the page and the history's note


def max_file_bytes() -> int:
    """The setting, never past what the readers take (importers.MAX_BYTES)."""
    return min(settings.IMPORT_MAX_FILE_BYTES, importers.MAX_BYTES)


def job_of(request: HttpRequest, job_id: str) -> Job:
    job = jobs.job_for(job_id, request.memory, request.user.pk)  # another memory's or user's upload is not theirs
    if job is None:
        raise Http404("There is no such upload: it was kept for a few hours, or by a dashboard since restarted. "
                      "Upload the file again.")
    return job


def shown_name(name: str) -> str:
    name = "".join(c for c in Path(name or "upload").name if c.isprintable()).strip()
    return jobs.printable(name[:NAME_CHARS]) or "upload"


def unique(items: list[dict]) -> int:
    """How many facts the dry run sends: a line the file already had is not sent again (plan.dry_run)."""
    return len({(i["type"], i["text"].strip().casefold()) for i in items})


def paste_chars() -> int:
    """The most a pasted list may hold: a form's fields take DATA_UPLOAD_MAX_MEMORY_SIZE bytes,
    and a character up to 4 of them. A longer list goes as a file."""
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE // 4


def upload_problem(upload, fmt: str | None, pasted: str, limit: int) -> str | None:
    if pasted.strip():
        return "Upload a file or paste a list, not both: each is imported on its own."
    if fmt not in FORMATS:
        return "Choose the file's format: " + ", ".join(FORMATS) + "."
    if upload is None:
        return "Choose a file to upload, or paste the list."
    if upload.size > limit:  # from its size: nothing of it is read
        return f"{shown_name(upload.name)} is {upload.size:,} bytes; the limit is {limit:,}. Split the file and import each part."
    if upload.size == 0:
        return f"{shown_name(upload.name)} is empty."
    return None


# -- the pages ------------------------------------------------------------------------------

@require_http_methods(["GET", "POST"])
def import_start(request: HttpRequest) -> HttpResponse:
    """The upload form; a POST keeps the file and reads it, then shows its page."""
    limit = max_file_bytes()
    context = {"formats": FORMATS, "max_bytes": limit, "format": request.POST.get("format", "auto"), "max_paste": paste_chars(),
               "recent": jobs.recent(request.memory, request.user.pk)}
    if request.method == "GET":
        return render(request, "imports.html", context)
    upload, fmt, pasted = request.FILES.get("file"), request.POST.get("format"), request.POST.get("pasted", "")
    context["pasted"] = pasted  # kept in its box when the page says what is wrong
    if pasted.strip() and upload is None:  # the list as copied from the tool's settings: read as a file like any
        upload, pasted = SimpleUploadedFile(PASTED, pasted.encode("utf-8"), "text/plain"), ""
    problem = upload_problem(upload, fmt, pasted, limit)
    if problem:
        too_big = upload is not None and upload.size > limit and fmt in FORMATS
        return render(request, "imports.html", {**context, "problem": problem}, status=413 if too_big else 400)
    jobs.forget_jobs()
    path, estimate = jobs.keep(upload, fmt)
    read_as = ""
    if fmt == "auto":  # the format from the content, before anything is read as one
        try:
            fmt, read_as = importers.detected(path)
        except importers.Malformed as e:
            shutil.rmtree(path.parent, ignore_errors=True)  # (keep() gave it a folder of its own)
            name, said = shown_name(upload.name), str(e)  # (the owner's name for the file, never the server's path)
            problem = said.replace(str(path), name) if str(path) in said else f"{name}: {said}"
            return render(request, "imports.html", {**context, "problem": f"{problem}."}, status=400)
    job = Job(secrets.token_urlsafe(12), request.memory, request.user.pk, shown_name(upload.name), fmt, path, upload.size,
              estimate, read_as=read_as)
    problem = jobs.admit(job)
    if problem:
        return render(request, "imports.html", {**context, "problem": problem}, status=413)
    jobs.read(job, {})
    return redirect("import_job", job_id=job.id)


def job_context(job: Job) -> dict:
    # The phase before what it made: a thread may finish while the page is drawn, and a page that
    # saw it running shows the progress bar, one that saw it done shows what it made.
    phase = job.phase
    parsed, plan = job.parsed, job.plan
    context = {"job": job, "formats": FORMATS, "roles": ROLES, "table": job.format in TABLES, "shown": SHOWN,
               "phase": phase, "running": phase in jobs.RUNNING, "plan": plan}
    if parsed is not None:
        context.update(preview=parsed.items[:PREVIEW], items=len(parsed.items), refused_lines=parsed.refused[:PREVIEW],
                       refused=len(parsed.refused), not_memories=parsed.not_memories[:SHOWN])
    if plan is not None:
        proposing = {id(item) for item, _ in plan.proposed}
        context.update(counts=plan.counts(),
                       store=[(item, id(item) in proposing) for item in plan.store[:SHOWN]],
                       merged=plan.merged[:SHOWN], repeated=plan.repeated[:SHOWN],
                       proposed=[(item, [proposal_words(p, plan.line_of(item, p.old.id)) for p in ps])
                                 for item, ps in plan.proposed[:SHOWN]],
                       plan_refused=plan.refused[:SHOWN])
    return context | backup_context(job)


def proposal_words(p, line: int | None) -> dict:
    """`line`: the line of the file the old fact is, when it is one (it has no id yet)."""
    differs = p.differs or {}
    return {"id": p.old.id, "line": line, "text": p.old.text, "score": p.score, "old": " ".join(differs.get("old") or []),
            "new": " ".join(differs.get("new") or [])}


def backup_context(job: Job) -> dict:
    """A backup's counts, and whether it can be restored as it was here (an empty memory; None
    when the memory cannot say)."""
    if job.format != "backup" or not isinstance(job.parsed, BackupFile):
        return {}
    try:
        there = memory(job.memory).stats()["facts"]
    except MemoryServiceError:
        there = None
    return {"backup": job.parsed, "facts_there": there,
            "restorable": None if there is None else backup_restore.restorable(job.parsed, there)}


@require_GET
def import_job(request: HttpRequest, job_id: str) -> HttpResponse:
    job = job_of(request, job_id)
    return render(request, "imports.html", {**job_context(job), "page": "job"})


@require_POST
def import_restore(request: HttpRequest, job_id: str) -> HttpResponse:
    """A backup put back as it was, into an empty memory only (backup_restore.py)."""
    job = job_of(request, job_id)
    with job.lock:
        context = backup_context(job) if job.phase == "read" else {}
        if not context.get("restorable"):
            messages.warning(request, "This backup can be restored only into an empty memory, once: create a new memory "
                             "and import it there, or import its current facts here with a dry run.")
        else:
            backup, client = job.parsed, memory(job.memory).named(client_name(CLIENT))

            def work(progress):
                with Importing(client) as one:  # one import at a time into the memory
                    job.restored = backup_restore.restore(one, backup, progress)
                job.stored = job.restored.facts

            jobs.run_in_background(job, "restoring", len(backup.rows), work, "imported")
    return progress_or_page(request, job)


@require_POST
def import_mapping(request: HttpRequest, job_id: str) -> HttpResponse:
    """A table's column mapping: the file read again with it, and its first rows shown. A plan
    made with another mapping is dropped: the dry run runs again."""
    job = job_of(request, job_id)
    with job.lock:
        if job.running or job.phase == "imported":
            messages.warning(request, "The mapping cannot change now: the file is being read, checked or imported, or was imported.")
        elif job.format in TABLES and not jobs.read(job, {role: request.POST[role] for role in ROLES if request.POST.get(role)}):
            messages.warning(request, "The file cannot be read again now: the other uploads kept here hold the memory "
                             "its reading needs (IMPORT_HELD_BYTES). Try again once they are imported.")
    if request.htmx:
        return render(request, "imports.html#job", job_context(job))
    return redirect("import_job", job_id=job.id)


@require_POST
def import_dry_run(request: HttpRequest, job_id: str) -> HttpResponse:
    """Check every fact of the file with the memory (POST /facts/batch with dry_run, 100 at a
    time): nothing is stored."""
    job = job_of(request, job_id)
    shown = {role: request.POST[role] for role in ROLES if request.POST.get(role)}
    with job.lock:
        if job.format in TABLES and shown != job.mapping and not job.running and job.phase != "imported":
            jobs.read(job, shown)  # the columns the page showed: picks answered out of order left another
        if job.parsed is None or job.running or job.phase == "imported":
            messages.warning(request, "There is nothing to check now." if job.parsed is None else
                             "The file is being checked or imported already.")
        else:
            parsed, client = job.parsed, memory(job.memory).named(client_name(CLIENT))

            def work(progress):
                with Importing(client) as one:  # refused while another import runs: its answers would not hold
                    job.plan = planning.dry_run(one, parsed.items, parsed.refused, progress)

            jobs.run_in_background(job, "checking", unique(parsed.items), work, "planned")
    return progress_or_page(request, job)


@require_POST
def import_run(request: HttpRequest, job_id: str) -> HttpResponse:
    """Store exactly the facts the dry run said it would store, a batch at a time, each batch one
    transaction, every fact's history entry noting the file."""
    job = job_of(request, job_id)
    with job.lock:
        if job.phase != "planned" or job.plan is None:
            messages.warning(request, "Run the dry run first: the import stores what it showed."
                             if job.phase in ("read", "failed") else "This file is being checked or imported already.")
        else:
            plan, client = job.plan, memory(job.memory).named(client_name(CLIENT))

            def work(progress):
                with Importing(client) as one:  # one import at a time into the memory
                    results = planning.run(one, plan, job.note, progress)
                job.stored = sum(r.created for r in results)
                job.imported = {r.fact.id for r in results if r.created}  # what a forget of one drops the job for

            jobs.run_in_background(job, "importing", len(plan.store), work, "imported")
    return progress_or_page(request, job)


def progress_or_page(request: HttpRequest, job: Job) -> HttpResponse:
    if request.htmx:
        return with_strip(request, render(request, "imports.html#job", job_context(job)))
    return redirect("import_job", job_id=job.id)


@require_GET
def import_progress(request: HttpRequest, job_id: str) -> HttpResponse:
    """The progress bar (htmx polls it while the dry run or the import runs); once done, the
    job's whole section, in place of the bar."""
    job = job_of(request, job_id)
    if job.running:
        return render(request, "imports.html#progress", {"job": job})
    response = with_strip(request, render(request, "imports.html#job", job_context(job)))  # the counts, out of band
    response["HX-Retarget"] = "#import-job"
    response["HX-Reswap"] = "outerHTML"
    return response
