"""The uploads the Import page keeps between its requests (dashboard/views/imports.py).

Each upload is a Job in this process (`JOBS`, by a random id), of the memory it imports into and
of the dashboard user who uploaded it: any other memory's or user's request for it is a 404. The
dashboard runs as one process (scripts/run.py's runserver); reading the file, the dry run and the
import each run in a thread of it, so a big file neither holds a request nor meets its deadline.

What the jobs hold together is bounded by settings.IMPORT_HELD_BYTES: each counts its upload's
size and ITEM_BYTES for each fact or refused line read from it, and while it is read, the most its
reading may take, counted from the file as the upload is copied (its lines, or a JSON document's
objects and commas). An upload that would pass the bound is refused on the upload page. A job is
kept JOB_HOURS, at most MAX_JOBS at once (the oldest finished go first, or to make room for a new
one), and goes when the owner forgets for good a fact it holds (drop_mentioning)."""

from __future__ import annotations

import csv
import io
import json
import logging
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.template.defaultfilters import filesizeformat

from memories import importers
from memories.client import ImportRunning, MemoryServiceError, StatusError
from memories.importers import plan as planning
from memories.importers.facts import text_key

from .memory import forget_status

log = logging.getLogger(__name__)

JOB_HOURS = 6  # how long an upload and its plan are kept
MAX_JOBS = 20  # uploads kept at once
TABLES = ("csv", "json", "jsonl")  # the formats read with a column mapping
DOCUMENTS = ("json", "mem0", "letta", "claude-ai")  # one JSON document, whatever its lines
# What a file read holds, counted before it is read. Measured with tracemalloc on files of 50,000
# short facts: 290-400 bytes a fact kept, 380-1,320 at the reading's peak (the decoded records
# beside the facts); the dry run keeps a result beside each. So ITEM_BYTES a line, or a JSON
# document's object (each makes a fact or a refused line at most), and ELEMENT_BYTES a comma of a
# document (an element that is no object: a refused line, 93 bytes kept, 138 at the peak).
ITEM_BYTES = 1_000
ELEMENT_BYTES = 150
READ_WAIT = 2.0  # seconds an upload's request waits for its reading, so a small file's page shows it read
RUNNING = ("reading", "checking", "importing", "restoring")  # the phases a thread of the job is in
FAILED_IN = {"reading": "reading of the file", "checking": "dry run", "importing": "import", "restoring": "restore"}


class Dropped(Exception):
    """The job was dropped while its thread ran (a forget touched it): the thread stops there."""


@dataclass
class Job:
    """One upload, from its file to its import."""

    id: str
    memory: str  # the memory it imports into: its pages are that memory's only
    user: int | None  # the dashboard user who uploaded it: its pages are theirs only
    filename: str
    format: str
    path: Path  # the upload, in a temporary folder of its own
    size: int
    estimate: int = 0  # the most bytes its reading may hold (keep()), beside the upload's size
    created: float = field(default_factory=time.time)
    mapping: dict = field(default_factory=dict)
    parsed: importers.Parsed | None = None  # the file as the reader read it with `mapping`: what the dry run is given
    error: str | None = None  # the file refused whole (importers.Malformed): nothing of it can be imported
    columns: list[str] = field(default_factory=list)  # a table's columns, for the mapping
    phase: str = "reading"  # reading, read, checking, planned, importing, imported, failed
    done: int = 0  # facts checked or stored so far
    total: int = 0
    plan: planning.Plan | None = None
    stored: int | None = None  # facts the import created
    imported: set[int] = field(default_factory=set)  # their ids
    problem: str | None = None  # what failed in the memory during the dry run or the import
    busy: str | None = None  # the memory refused this job's first batch: another import runs into it
    started: float = 0.0  # time.monotonic() when its phase began: the progress bar's time left
    failed_in: str = ""  # FAILED_IN's words for the phase that failed
    read_as: str = ""  # with the format "auto": why the file was read as `format` (importers.detect)
    restored: object = None  # a backup restored as it was (backup_restore.Restored)
    dropped: bool = False
    thread: threading.Thread | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def running(self) -> bool:
        return self.phase in RUNNING

    @property
    def note(self) -> str:
        """The history's note of each fact it stores."""
        return f"import of {self.filename} ({self.format})"[:200]

    @property
    def percent(self) -> int:
        return min(100, round(100 * self.done / self.total)) if self.total else 100

    @property
    def time_left(self) -> str:
        """The rest of the phase at its pace so far, as "about 2 min left (310 facts/s)"; "" until a batch is done."""
        spent = time.monotonic() - self.started
        if not self.done or self.done >= self.total or spent <= 0:
            return ""
        rate = self.done / spent
        left = (self.total - self.done) / rate
        said = f"{left:.0f} s" if left < 90 else f"{left / 60:.0f} min" if left < 5400 else f"{left / 3600:.1f} h"
        return f"about {said} left ({rate:,.0f} facts/s)"

    @property
    def held(self) -> int:
        """The bytes it holds, as IMPORT_HELD_BYTES counts them: once read, ITEM_BYTES a fact or refused line."""
        if self.phase == "reading":
            return self.size + self.estimate
        parsed = self.parsed
        return self.size + (ITEM_BYTES * (len(parsed.items) + len(parsed.refused)) if parsed else 0)

    def facts_named(self) -> set[int]:
        """The memory's facts it names: those its dry run would merge into or propose replacing,
        and those its import created."""
        named = set(self.imported)
        if self.plan is not None:
            named |= {r.fact.id for _, r in self.plan.merged}
            named |= {p.old.id for item, proposals in self.plan.proposed for p in proposals
                      if self.plan.line_of(item, p.old.id) is None}  # (a line of the file has no id yet)
        return named


JOBS: dict[str, Job] = {}
_jobs_lock = threading.Lock()


def held_bytes() -> int:
    return sum(j.held for j in JOBS.values())


def _drop(job: Job) -> None:
    """(With _jobs_lock held.) Its pages 404 from now; a thread running for it stops at its next batch."""
    job.dropped = True
    JOBS.pop(job.id, None)
    shutil.rmtree(job.path.parent, ignore_errors=True)


def _make_room(room: int) -> None:
    """(With _jobs_lock held.) Drop uploads older than JOB_HOURS, then, oldest first and never one
    running, those past MAX_JOBS - 1, and finished ones (imported, failed, refused whole) while
    `room` more bytes would not fit. One read or planned stays: its owner may be about to import it."""
    now = time.time()
    for job in sorted((j for j in JOBS.values() if not j.running), key=lambda j: j.created):
        finished = job.phase in ("imported", "failed") or job.error is not None
        if (now - job.created > JOB_HOURS * 3600 or len(JOBS) >= MAX_JOBS
                or finished and held_bytes() + room > settings.IMPORT_HELD_BYTES):
            _drop(job)


def forget_jobs() -> None:
    with _jobs_lock:
        _make_room(0)


def keep(upload, format: str) -> tuple[Path, int]:
    """Copy the upload into a temporary folder of its own, chunk by chunk (it is never held whole),
    and estimate on the way the most its reading may hold: ITEM_BYTES a line, or for a JSON
    document ITEM_BYTES an object and ELEMENT_BYTES a comma."""
    folder = Path(tempfile.mkdtemp(prefix="memory-desk-import-"))
    path = folder / "upload"
    estimate = ITEM_BYTES
    # "auto": the format is not known yet, so both counts, and the larger of the two.
    count_documents, count_lines = format in DOCUMENTS or format == "auto", format not in DOCUMENTS
    document, by_line = 0, 0
    with path.open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
            if count_documents:
                document += ITEM_BYTES * chunk.count(b"{") + ELEMENT_BYTES * chunk.count(b",")
            if count_lines:
                by_line += ITEM_BYTES * chunk.count(b"\n")
    return path, estimate + max(document, by_line)


def admit(job: Job) -> str | None:
    """Keep the job, or say why it cannot be kept (and drop its file): the bytes it would hold
    with those the jobs hold already, over IMPORT_HELD_BYTES."""
    limit = settings.IMPORT_HELD_BYTES
    with _jobs_lock:
        _make_room(job.held)
        others = held_bytes()
        if others + job.held <= limit:
            JOBS[job.id] = job
            return None
    shutil.rmtree(job.path.parent, ignore_errors=True)
    need = f"Reading {job.filename} could take up to {filesizeformat(job.held)} of the dashboard's memory"
    if job.held > limit:
        return f"{need}, more than the {filesizeformat(limit)} it keeps for imports (IMPORT_HELD_BYTES). Split the file."
    return (f"{need}, and the uploads kept here hold {filesizeformat(others)} of the {filesizeformat(limit)} it keeps "
            "for imports (IMPORT_HELD_BYTES). Import those first, or wait for them to finish.")


def job_for(job_id: str, memory: str, user: int | None) -> Job | None:
    job = JOBS.get(job_id)
    return job if job is not None and job.memory == memory and job.user == user else None


def recent(memory: str, user: int | None, n: int = 5) -> list[Job]:
    return sorted((j for j in JOBS.values() if j.memory == memory and j.user == user), key=lambda j: -j.created)[:n]


def drop_mentioning(memory: str, fact_id: int, text: str) -> int:
    """After a forget for good of fact `fact_id`: drop every upload of that memory that names the
    fact (its dry run or its import) or holds its text (its facts, or its file: a refused line or a
    column not mapped may hold it too), case-folded as the memory compares texts. The page, this
    process and the temporary folder then no longer hold what was forgotten. How many went."""
    key = text_key(text)
    with _jobs_lock:
        jobs = [j for j in JOBS.values() if j.memory == memory]
    gone = [j for j in jobs if mentions(j, fact_id, key)]
    with _jobs_lock:
        for job in gone:
            _drop(job)
    return len(gone)


def mentions(job: Job, fact_id: int, key: str) -> bool:
    if fact_id in job.facts_named():
        return True
    if not key:
        return False
    if job.parsed is not None and any(key in text_key(i["text"]) for i in job.parsed.items):
        return True  # (a JSON escape may hide it from the file's own text)
    try:
        return key in job.path.read_text(encoding="utf-8-sig", errors="replace").casefold()
    except OSError:
        return False


def printable(text: str) -> str:
    """A lone surrogate (a JSON key's \\ud800) as its escape: a page cannot encode it."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def columns_of(job: Job) -> list[str]:
    """A table's columns when its reader refused the default mapping (no column it knows holds the
    text), so the owner can map one: the header row, or the objects' keys. For the page only: what
    is imported is always what the reader reads."""
    try:
        text = job.path.read_text(encoding="utf-8-sig")
        if job.format == "csv":
            return next(csv.reader(io.StringIO(text, newline="")), [])
        records = (importers.load_json(text) if job.format == "json"
                   else [json.loads(line) for line in importers.lines(text) if line.strip()])
        return list(dict.fromkeys(k for r in records if isinstance(r, dict) for k in r)) if isinstance(records, list) else []
    except (ValueError, RecursionError, csv.Error, OSError):
        return []


def read(job: Job, mapping: dict) -> bool:
    """Read the file as its format with `mapping`, in a thread of its own: job.parsed, or job.error
    with the line. Waits READ_WAIT for it, so a small file's page shows it read. False, reading
    nothing, when the reading would not fit in IMPORT_HELD_BYTES now (a new mapping's, after other
    uploads took the room the first reading left)."""
    with _jobs_lock:
        others = sum(j.held for j in JOBS.values() if j is not job)
        if job.phase != "reading" and others + job.size + job.estimate > settings.IMPORT_HELD_BYTES:
            return False  # (a new job, "reading" from the start, was given its room by admit())
        job.mapping, job.plan, job.parsed, job.error, job.phase = mapping, None, None, None, "reading"

    def work(progress) -> None:
        try:
            parsed = importers.read(job.format, job.path, mapping)
        except importers.Malformed as e:
            job.error = printable(str(e).replace(str(job.path), job.filename))
            job.columns = [printable(c) for c in columns_of(job)] if job.format in TABLES else []
        else:
            job.parsed, job.columns = parsed, [printable(c) for c in parsed.columns]

    run_in_background(job, "reading", 0, work, "read")
    job.thread.join(READ_WAIT)
    return True


def run_in_background(job: Job, phase: str, total: int, work, then: str) -> None:
    """`work(progress)` in a thread of its own, the job in `phase` meanwhile and in `then` after
    (or failed, saying why). The strip's status is read again before the page can see it done."""
    before = job.phase  # where a refused job goes back to: nothing of it was stored
    job.phase, job.done, job.total, job.problem, job.busy = phase, 0, total, None, None
    job.started = time.monotonic()

    def progress(n: int) -> None:
        if job.dropped:
            raise Dropped
        job.done += n

    def main() -> None:
        try:
            work(progress)
        except Dropped:
            return
        except ImportRunning as e:
            if job.done:  # refused after batches of it were stored: it stopped there
                job.problem, job.failed_in, final = e.message, FAILED_IN[phase], "failed"
            else:  # refused before anything: the page offers it again
                job.busy, final = e.message[:1].upper() + e.message[1:], before
        except Exception as e:  # noqa: BLE001 (the page says what failed; a thread's exception would go unseen)
            if isinstance(e, StatusError):
                job.problem = f"the memory answered {e.status} {e.code}: {e.message}"
            elif isinstance(e, MemoryServiceError):
                job.problem = str(e)
            else:
                log.exception("import %s failed", job.id)
                job.problem = f"{type(e).__name__}: {e}"
            job.failed_in, final = FAILED_IN[phase], "failed"
        else:
            job.done, final = job.total, then
        forget_status()  # the navigation's counts: a page that sees it done counts again
        job.phase = final

    job.thread = threading.Thread(target=main, name=f"import-{job.id}", daemon=True)
    job.thread.start()
