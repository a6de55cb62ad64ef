"""Import from another tool (issue 30 §3): upload a file and say its format (for a table, which
column holds what, seen on its first rows), then a dry run through the memory's own checks, then
the import of exactly what the dry run showed, in batches, with a progress bar, and the Inbox,
where the imported facts wait for review.

The file is read by memories.importers (one reader a format) and planned and stored by
memories.importers.plan, the CLI's own path, with the client as the memory. Between the requests
the upload and its plan stay in this process (`JOBS`, by a random id, for JOB_HOURS): the
dashboard runs as one process (scripts/run.py's runserver), and the dry run and the import each
run in a thread of it, so a big file is never cut off by a page's deadline. The memory is written
as `dashboard-import`, a client the memory does not count as the owner's review."""

from __future__ import annotations

import csv
import io
import json
import logging
import secrets
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from memories import importers
from memories.client import MemoryServiceError, StatusError
from memories.importers import plan as planning

from ..memory import forget_status, memory
from ..strip import with_strip

log = logging.getLogger(__name__)

CLIENT = "dashboard-import"  # X-Memory-Client of an import's writes: not the owner's review
FORMATS = {  # importers.formats(), with the words the page shows
    "chatgpt-list": "ChatGPT: the list copied from Settings › Personalization › Manage memories",
    "claude-list": "Claude: the list copied from its memory settings",
    "csv": "CSV with a header row",
    "json": "JSON: an array of objects",
    "jsonl": "JSON Lines: one object a line",
    "mem0": "mem0: get_all or its export",
    "letta": "Letta: an agent's archival passages",
}
TABLES = ("csv", "json", "jsonl")  # the formats read with a column mapping
ROLES = {"text": "Text", "type": "Type (fact, skill or log)", "source": "Source", "time": "Time (ISO-8601, or a date)"}
PREVIEW = 5  # rows the mapping's preview shows
SHOWN = 100  # lines each of the dry run's lists shows
JOB_HOURS = 6  # how long an upload and its plan are kept
MAX_JOBS = 20  # uploads kept at once (the oldest finished go first)
NAME_CHARS = 120  # of the file's name kept for the page and the history's note


@dataclass
class Job:
    """One upload, from its file to its import."""

    id: str
    memory: str  # the memory it imports into: its pages are that memory's only
    filename: str
    format: str
    path: Path  # the upload, in a temporary folder of its own
    size: int
    created: float = field(default_factory=time.time)
    mapping: dict = field(default_factory=dict)
    parsed: importers.Parsed | None = None  # the file as the reader read it with `mapping`: what the dry run is given
    error: str | None = None  # the file refused whole (importers.Malformed): nothing of it can be imported
    columns: list[str] = field(default_factory=list)  # a table's columns, for the mapping
    phase: str = "read"  # read, checking, planned, importing, imported, failed
    done: int = 0  # facts checked or stored so far
    total: int = 0
    plan: planning.Plan | None = None
    stored: int | None = None  # facts the import created
    problem: str | None = None  # what failed in the memory during the dry run or the import
    failed_in: str = ""  # "dry run" or "import"
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def running(self) -> bool:
        return self.phase in ("checking", "importing")

    @property
    def note(self) -> str:
        """The history's note of each fact it stores."""
        return f"import of {self.filename} ({self.format})"[:200]

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.done / self.total)) if self.total else 100


JOBS: dict[str, Job] = {}
_jobs_lock = threading.Lock()


def forget_jobs(keep: int = MAX_JOBS - 1) -> None:
    """Drop uploads older than JOB_HOURS, and the oldest finished ones past `keep` (never one running)."""
    with _jobs_lock:
        now = time.time()
        done = sorted((j for j in JOBS.values() if not j.running), key=lambda j: j.created)
        old = [j for j in done if now - j.created > JOB_HOURS * 3600]
        extra = done[: max(0, len(JOBS) - keep)]
        for job in {j.id: j for j in [*old, *extra]}.values():
            JOBS.pop(job.id, None)
            shutil.rmtree(job.path.parent, ignore_errors=True)


def job_of(request: HttpRequest, job_id: str) -> Job:
    job = JOBS.get(job_id)
    if job is None or job.memory != request.memory:  # another memory's upload is not this memory's page
        raise Http404("There is no such upload: it was kept for a few hours, or by a dashboard since restarted. "
                      "Upload the file again.")
    return job


def shown_name(name: str) -> str:
    name = "".join(c for c in Path(name or "upload").name if c.isprintable()).strip()
    return name[:NAME_CHARS] or "upload"


def columns_of(job: Job) -> list[str]:
    """A table's columns when its reader refused the default mapping (no column it knows holds the
    text), so the owner can map one: the header row, or the objects' keys. For the page only: what
    is imported is always what the reader reads."""
    try:
        text = job.path.read_text(encoding="utf-8-sig")
        if job.format == "csv":
            return next(csv.reader(io.StringIO(text, newline="")), [])
        records = json.loads(text) if job.format == "json" else [json.loads(line) for line in text.splitlines() if line.strip()]
        return list(dict.fromkeys(k for r in records if isinstance(r, dict) for k in r)) if isinstance(records, list) else []
    except (ValueError, csv.Error, OSError):
        return []


def read(job: Job, mapping: dict) -> None:
    """Read the file as its format with `mapping`: job.parsed, or job.error with the line."""
    job.mapping, job.plan, job.phase, job.problem = mapping, None, "read", None
    try:
        job.parsed, job.error = importers.read(job.format, job.path, mapping), None
        job.columns = job.parsed.columns
    except importers.Malformed as e:
        job.parsed, job.error = None, str(e).replace(str(job.path), job.filename)
        job.columns = columns_of(job) if job.format in TABLES else []


def unique(items: list[dict]) -> int:
    """How many facts the dry run sends: a line the file already had is not sent again (plan.dry_run)."""
    return len({(i["type"], i["text"].strip().casefold()) for i in items})


def run_in_background(job: Job, phase: str, total: int, work, then: str) -> None:
    """`work(progress)` in a thread of its own, the job in `phase` meanwhile and in `then` after
    (or failed, saying why). The strip's status is read again before the page can see it done."""
    job.phase, job.done, job.total, job.problem = phase, 0, total, None

    def progress(n: int) -> None:
        job.done += n

    def main() -> None:
        try:
            work(progress)
        except Exception as e:  # noqa: BLE001 (the page says what failed; a thread's exception would go unseen)
            if isinstance(e, StatusError):
                job.problem = f"the memory answered {e.status} {e.code}: {e.message}"
            elif isinstance(e, MemoryServiceError):
                job.problem = str(e)
            else:
                log.exception("import %s failed", job.id)
                job.problem = f"{type(e).__name__}: {e}"
            job.failed_in, final = "dry run" if phase == "checking" else "import", "failed"
        else:
            job.done, final = job.total, then
        forget_status()  # the navigation's counts: a page that sees it done counts again
        job.phase = final

    threading.Thread(target=main, name=f"import-{job.id}", daemon=True).start()


# -- the pages ------------------------------------------------------------------------------

@require_http_methods(["GET", "POST"])
def import_start(request: HttpRequest) -> HttpResponse:
    """The upload form; a POST keeps the file and reads it, then shows its page."""
    context = {"formats": FORMATS, "max_bytes": importers.MAX_BYTES, "format": request.POST.get("format", ""),
               "recent": sorted((j for j in JOBS.values() if j.memory == request.memory), key=lambda j: -j.created)[:5]}
    if request.method == "GET":
        return render(request, "imports.html", context)
    upload = request.FILES.get("file")
    fmt = request.POST.get("format")
    problem = None
    if fmt not in FORMATS:
        problem = "Choose the file's format: " + ", ".join(FORMATS) + "."
    elif upload is None:
        problem = "Choose a file to upload."
    elif upload.size > importers.MAX_BYTES:
        problem = (f"{shown_name(upload.name)} is {upload.size:,} bytes; the limit is {importers.MAX_BYTES:,}. "
                   "Split the file and import each part.")
    elif upload.size == 0:
        problem = f"{shown_name(upload.name)} is empty."
    if problem:
        too_big = upload is not None and upload.size > importers.MAX_BYTES and fmt in FORMATS
        return render(request, "imports.html", {**context, "problem": problem}, status=413 if too_big else 400)
    forget_jobs()
    folder = Path(tempfile.mkdtemp(prefix="memory-desk-import-"))
    path = folder / "upload"
    with path.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    job = Job(secrets.token_urlsafe(12), request.memory, shown_name(upload.name), fmt, path, upload.size)
    read(job, {})
    with _jobs_lock:
        JOBS[job.id] = job
    return redirect("import_job", job_id=job.id)


def job_context(job: Job) -> dict:
    parsed = job.parsed
    plan = job.plan
    context = {"job": job, "formats": FORMATS, "roles": ROLES, "table": job.format in TABLES, "shown": SHOWN}
    if parsed is not None:
        context.update(preview=parsed.items[:PREVIEW], items=len(parsed.items), refused_lines=parsed.refused[:PREVIEW],
                       refused=len(parsed.refused))
    if plan is not None:
        proposing = {id(item) for item, _ in plan.proposed}
        context.update(counts=plan.counts(),
                       store=[(item, id(item) in proposing) for item in plan.store[:SHOWN]],
                       merged=plan.merged[:SHOWN], repeated=plan.repeated[:SHOWN],
                       proposed=[(item, [proposal_words(p) for p in ps]) for item, ps in plan.proposed[:SHOWN]],
                       plan_refused=plan.refused[:SHOWN])
    return context


def proposal_words(p) -> dict:
    differs = p.differs or {}
    return {"id": p.old.id, "text": p.old.text, "score": p.score, "old": " ".join(differs.get("old") or []),
            "new": " ".join(differs.get("new") or [])}


@require_GET
def import_job(request: HttpRequest, job_id: str) -> HttpResponse:
    job = job_of(request, job_id)
    return render(request, "imports.html", {**job_context(job), "page": "job"})


@require_POST
def import_mapping(request: HttpRequest, job_id: str) -> HttpResponse:
    """A table's column mapping: the file read again with it, and its first rows shown. A plan
    made with another mapping is dropped: the dry run runs again."""
    job = job_of(request, job_id)
    with job.lock:
        if job.running or job.phase == "imported":
            messages.warning(request, "The mapping cannot change now: the file is being checked or was imported.")
        elif job.format in TABLES:
            read(job, {role: request.POST[role] for role in ROLES if request.POST.get(role)})
    if request.htmx:
        return render(request, "imports.html#job", job_context(job))
    return redirect("import_job", job_id=job.id)


@require_POST
def import_dry_run(request: HttpRequest, job_id: str) -> HttpResponse:
    """Check every fact of the file with the memory (POST /facts/batch with dry_run, 100 at a
    time): nothing is stored."""
    job = job_of(request, job_id)
    with job.lock:
        if job.parsed is None or job.running or job.phase == "imported":
            messages.warning(request, "There is nothing to check now." if job.parsed is None else
                             "The file is being checked or imported already.")
        else:
            parsed, client = job.parsed, memory(job.memory).named(CLIENT)

            def work(progress):
                job.plan = planning.dry_run(client, parsed.items, parsed.refused, progress)

            run_in_background(job, "checking", unique(parsed.items), work, "planned")
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
            plan, client = job.plan, memory(job.memory).named(CLIENT)

            def work(progress):
                results = planning.run(client, plan, job.note, progress)
                job.stored = sum(r.created for r in results)

            run_in_background(job, "importing", len(plan.store), work, "imported")
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
