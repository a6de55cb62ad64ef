"""The Import page's bounds (issue 45 §7): a file over IMPORT_MAX_FILE_BYTES refused from its size,
the bytes all uploads hold together bounded by IMPORT_HELD_BYTES, the file read off the request's
thread with a page that says so, a job its uploader's only, a job dropped when a forget for good
touches its facts, and hostile files (issue 45 §8) shown as refusals, never a 500. On
httpx.MockTransport, but the forget, which runs against the real service."""

from __future__ import annotations

import tempfile
import threading
import uuid
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from dashboard import import_jobs
from memories import importers
from tests.fake_memory import FakeMemory
from tests.html import page, soup
from tests.test_dashboard_imports import HTMX, OWNER, finish, job_id, job_url, upload

pytestmark = pytest.mark.django_db


def folders() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("memory-desk-import-*")}


def listed(lines: int, tag: str) -> bytes:
    return "".join(f"- The owner's fact number {n} ({tag}).\n" for n in range(lines)).encode()


@pytest.fixture(autouse=True)
def no_jobs(monkeypatch):
    """The uploads of this module's tests only: the bound counts every job of the process."""
    monkeypatch.setattr(import_jobs, "JOBS", {})


@pytest.fixture
def fake(mock_memory):
    memory = FakeMemory()
    mock_memory(memory)
    return memory


@pytest.fixture
def guest(django_user_model):
    """Another owner: what keeps them out of an upload is that it is not theirs, not their role."""
    from dashboard.models import Account

    user = django_user_model.objects.create_user("guest", password="another long password")
    Account.objects.create(user=user, role=Account.OWNER)
    client = Client()
    client.force_login(user)
    return client


def test_a_file_over_the_setting_is_refused_from_its_size_and_never_kept(owner_client, fake, settings):
    settings.IMPORT_MAX_FILE_BYTES = 1000
    before, kept = folders(), set(import_jobs.JOBS)
    content = listed(100, "big")
    big = upload(owner_client, "big.txt", content, "chatgpt-list")
    assert big.status_code == 413
    assert f"big.txt is {len(content):,} bytes; the limit is 1,000" in soup(big).select_one("#upload-problem").text
    assert folders() == before and set(import_jobs.JOBS) == kept  # not copied, not read
    assert "1000\xa0bytes" in page(owner_client.get(reverse("import"))).select_one("label[for=id_file]").text
    assert settings.FILE_UPLOAD_MAX_MEMORY_SIZE <= 2_621_440 and settings.DATA_UPLOAD_MAX_MEMORY_SIZE <= 2_621_440


def test_uploads_past_what_the_jobs_may_hold_together_are_refused_saying_so(owner_client, fake, settings):
    content = listed(10, uuid.uuid4().hex[:6])
    reading = len(content) + import_jobs.ITEM_BYTES * 11  # while read: the upload, and a line's worth a newline (and one)
    read = len(content) + import_jobs.ITEM_BYTES * 10  # once read: ten facts
    settings.IMPORT_HELD_BYTES = 2 * read + reading - 1
    first = job_url(upload(owner_client, "one.txt", content, "chatgpt-list"))
    job_url(upload(owner_client, "two.txt", content, "chatgpt-list"))
    third = upload(owner_client, "three.txt", content, "chatgpt-list")
    assert third.status_code == 413
    problem = soup(third).select_one("#upload-problem").text
    assert "Reading three.txt could take up to" in problem and "the uploads kept here hold" in problem
    assert "IMPORT_HELD_BYTES" in problem
    assert import_jobs.held_bytes() == 2 * read
    alone = upload(owner_client, "huge.txt", listed(50, "huge"), "chatgpt-list")
    assert alone.status_code == 413 and "Split the file" in soup(alone).select_one("#upload-problem").text
    # A finished upload makes room for a new one: here, the first, refused whole.
    import_jobs.JOBS[job_id(first)].error = "refused"
    assert upload(owner_client, "three.txt", content, "chatgpt-list").status_code == 302
    assert owner_client.get(first).status_code == 404


def test_a_new_mapping_is_not_read_when_its_reading_would_pass_the_bound(owner_client, fake, settings):
    url = job_url(upload(owner_client, "notes.csv", b"note,kind\nThe owner's bag is red.,fact\n", "csv"))
    job = import_jobs.JOBS[job_id(url)]
    assert job.parsed is None and job.columns == ["note", "kind"]  # no column named text: the owner maps one
    settings.IMPORT_HELD_BYTES = import_jobs.held_bytes()  # what it holds once read, not what reading it again takes
    answer = page(owner_client.post(reverse("import_mapping", args=[job.id]), {"text": "note"}, follow=True))
    assert "cannot be read again now" in answer.select_one("#alerts").text and job.phase == "read" and job.parsed is None
    settings.IMPORT_HELD_BYTES = 10**9
    owner_client.post(reverse("import_mapping", args=[job.id]), {"text": "note"})
    assert [i["text"] for i in job.parsed.items] == ["The owner's bag is red."]


def test_the_file_is_read_in_a_thread_of_its_own_while_the_page_says_it_is_reading(owner_client, fake, monkeypatch):
    monkeypatch.setattr(import_jobs, "READ_WAIT", 0.05)
    readers, release, threads = importers.formats(), threading.Event(), []

    def slow(text, mapping):
        threads.append(threading.current_thread())
        assert release.wait(10)
        return readers["chatgpt-list"](text, mapping)

    monkeypatch.setattr(importers, "formats", lambda: {**readers, "chatgpt-list": slow})
    url = job_url(upload(owner_client, "slow.txt", listed(3, "slow"), "chatgpt-list"))
    assert threads and threads[0] is not threading.current_thread() and threads[0].name.startswith("import-")
    reading = page(owner_client.get(url))
    assert "Reading the file" in reading.select_one("#import-progress").text
    assert reading.select_one("#dry-run") is None and reading.select_one("#import-read") is None
    progress = owner_client.get(reverse("import_progress", args=[job_id(url)]), headers=HTMX)
    assert soup(progress).select_one("#import-progress") is not None
    assert "being read" in page(owner_client.get(reverse("import"))).select_one(".recent-imports").text
    release.set()
    threads[0].join(10)
    done = owner_client.get(reverse("import_progress", args=[job_id(url)]), headers=HTMX)
    assert done["HX-Retarget"] == "#import-job"
    assert soup(done).select_one("#import-read").text.startswith("3 facts read")


def test_an_upload_is_its_uploaders_only(owner_client, guest, fake):
    url = job_url(upload(owner_client, "mine.txt", listed(2, "mine"), "chatgpt-list"))
    jid = job_id(url)
    assert guest.get(url).status_code == 404
    assert guest.get(reverse("import_progress", args=[jid]), headers=HTMX).status_code == 404
    for name in ("import_mapping", "import_dry_run", "import_run"):
        assert guest.post(reverse(name, args=[jid])).status_code == 404
    assert page(guest.get(reverse("import"))).select_one(f".recent-imports a[href='{url}']") is None
    assert page(owner_client.get(reverse("import"))).select_one(f".recent-imports a[href='{url}']") is not None
    assert page(owner_client.get(url)).select_one("#import-read").text.startswith("2 facts read")
    assert fake.requests and all(r.url.path != "/facts/batch" for r in fake.requests)  # the guest's dry run sent nothing


def test_hostile_files_are_refusals_on_their_page_never_a_500(owner_client, fake):
    deep = page(owner_client.get(job_url(upload(owner_client, "deep.json", b"[" * 100_000, "json"))))
    assert "nested too deeply" in deep.select_one("#import-malformed").text
    lines = b'{"text": "The owner keeps bees."}\n' + b"[" * 100_000 + b"\n"
    jsonl = page(owner_client.get(job_url(upload(owner_client, "deep.jsonl", lines, "jsonl"))))
    assert jsonl.select_one("#import-read").text.startswith("1 fact read, 1 line refused")
    keys = b'[{"text": "The owner keeps bees.", "\\ud800": "x"}]'  # a key a page cannot encode as it is
    odd = page(owner_client.get(job_url(upload(owner_client, "keys.json", keys, "json"))))
    assert [o["value"] for o in odd.select("#map-text option")] == ["", "text", "\\ud800"]
    unmapped = page(owner_client.get(job_url(upload(owner_client, "nokey.json", b'[{"\\ud800": "x"}]', "json"))))
    assert "no column holds the text" in unmapped.select_one("#import-malformed").text


def test_forget_for_good_drops_the_uploads_that_name_or_hold_the_fact(owner_client, live_memory):
    t = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        teacher = api.post("/facts", json={"text": f"The owner's piano teacher is Ms Adeyemi ({t})."}, headers=OWNER).json()
        secret = api.post("/facts", json={"text": f"The owner's alarm code is 7281 ({t})."}, headers=OWNER).json()
    proposing = job_url(upload(owner_client, "teacher.txt", f"- The owner's piano teacher is Mr Castell ({t}).\n".encode(),
                               "claude-list"))
    dry = finish(owner_client, proposing, "dry-run")
    assert f"#{teacher['id']}" in dry.select_one("#plan-proposed").text  # the plan quotes the fact's text
    holding = job_url(upload(owner_client, "notes.csv", f"text,aside\nThe owner's gate is blue ({t}).,{secret['fact']['text']}\n"
                             .encode(), "csv"))  # in a column not mapped: in the file only
    other = job_url(upload(owner_client, "other.txt", f"- The owner grows leeks ({t}).\n".encode(), "claude-list"))
    folder = import_jobs.JOBS[job_id(proposing)].path.parent

    owner_client.post(reverse("fact_forget", args=[teacher["id"]]))
    assert owner_client.get(proposing).status_code == 404 and not folder.exists()
    assert owner_client.get(holding).status_code == 200 and owner_client.get(other).status_code == 200
    owner_client.post(reverse("fact_forget", args=[secret["id"]]))
    assert owner_client.get(holding).status_code == 404 and owner_client.get(other).status_code == 200


def test_a_job_dropped_while_its_thread_runs_stops_at_its_next_batch(fake):
    job = import_jobs.Job("x", "default", None, "f.txt", "chatgpt-list", Path("/nonexistent/upload"), 1)
    batches, dropped = [], threading.Event()

    def work(progress):
        for _ in range(5):
            batches.append(1)
            progress(1)
            if len(batches) == 2:
                job.dropped = True
                dropped.set()

    import_jobs.run_in_background(job, "importing", 5, work, "imported")
    job.thread.join(10)
    assert dropped.is_set() and len(batches) == 3 and job.phase == "importing"  # stopped: never "imported"
