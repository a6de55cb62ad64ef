"""Imports from other tools on the dashboard (issue 30 §3) against both memories over real HTTP
with the real model: an upload read as its format, a table's column mapping with its preview, the
dry run (stores nothing; what would be stored, merged with the fact each matches, repeated lines,
proposed replacements, refused lines), the import of exactly what it showed with its progress,
the history's note, the Inbox; a malformed file shown with its line, the size limit. Then a down
memory, CSRF and login, on httpx.MockTransport."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import httpx
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from tests.fake_memory import FakeMemory
from tests.html import page, soup

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"
HTMX = {"HX-Request": "true"}
OWNER = {"X-Memory-Client": "dashboard"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def tag() -> str:
    return uuid.uuid4().hex[:6]


def upload(client, name: str, content: bytes, format: str):
    return client.post(reverse("import"), {"format": format, "file": SimpleUploadedFile(name, content)})


def job_url(response) -> str:
    assert response.status_code == 302, response.content[:500]
    return response["Location"]


def job_id(url: str) -> str:
    return re.search(r"/import/([^/]+)/", url).group(1)


def finish(client, url: str, button: str, timeout: float = 60):
    """Press the job's button (htmx), then poll its progress until the section comes back whole."""
    form = page(client.get(url)).select_one(f"#{button}").find_parent("form")
    fields = {i["name"]: i["value"] for i in form.select("input[type=hidden]")}  # what htmx sends with it
    answer = soup(client.post(form["hx-post"], fields, headers=HTMX))
    deadline = time.monotonic() + timeout
    while answer.select_one("#import-progress") is not None:
        assert time.monotonic() < deadline, "the job did not finish"
        bar = answer.select_one("#import-progress progress")
        assert int(bar["value"]) <= int(bar["max"])
        time.sleep(0.1)
        response = client.get(reverse("import_progress", args=[job_id(url)]), headers=HTMX)
        answer = soup(response)
        if answer.select_one("#import-progress") is None:
            assert response["HX-Retarget"] == "#import-job"
    return answer


def counts(html) -> dict:
    return {k: int(html.select_one(f"#count-{k}").text) for k in ("store", "merged", "proposed", "refused")}


def history_of(api, fid) -> list[dict]:
    return api.get("/history", params={"fact_id": fid}).json()["entries"]


def test_a_chatgpt_list_is_read_dry_run_and_imported_as_it_showed(owner_client, live_memory):
    with live_memory.client() as api:
        before = api.get("/facts", params={"limit": 1}).json()["total"]
        entries_before = api.get("/history", params={"limit": 1}).json()["entries"]
    content = (FIXTURES / "chatgpt.txt").read_bytes()
    url = job_url(upload(owner_client, "chatgpt.txt", content, "chatgpt-list"))
    html = page(owner_client.get(url))
    assert html.select_one("h1").text == "Import chatgpt.txt" and html.select_one("#import-mapping") is None
    assert html.select_one("#import-read").text.startswith("8 facts read")
    preview = [tr.select("td")[1].text for tr in html.select("#import-preview tbody tr")]
    assert preview == ["Prefers metric units for all measurements.", "Has a sister called Priya who lives in Lisbon.",
                       "Is allergic to penicillin.", "Works as a data engineer at Northwind.", "Is learning Portuguese."]
    assert html.select_one("#import-go") is None  # no import before its dry run

    dry = finish(owner_client, url, "dry-run")
    assert counts(dry) == {"store": 7, "merged": 1, "proposed": 0, "refused": 0}
    assert "line 10" in dry.select_one("#plan-merged").text and "repeats an earlier line" in dry.select_one("#plan-merged").text
    assert len(dry.select("#plan-store li")) == 7
    assert dry.select_one("#import-go").text == "Import 7 facts"
    with live_memory.client() as api:  # the dry run stored nothing and recorded nothing
        assert api.get("/facts", params={"limit": 1}).json()["total"] == before
        assert api.get("/history", params={"limit": 1}).json()["entries"] == entries_before

    done = finish(owner_client, url, "import-go")
    assert done.select_one("#import-stored").text == "7" and "as the dry run said" in done.select_one("#import-done").text
    assert done.select_one("#to-inbox")["href"] == reverse("inbox")
    assert counts(done) == {"store": 7, "merged": 1, "proposed": 0, "refused": 0}
    assert done.select_one("#dry-run") is None and done.select_one("#import-go") is None  # imported once
    with live_memory.client() as api:
        facts = api.get("/facts", params={"source": "import:chatgpt", "limit": 100}).json()["facts"]
        assert api.get("/facts", params={"limit": 1}).json()["total"] == before + 7
        assert len(facts) == 7 and all(f["reviewed_at"] is None for f in facts)
        [add] = [e for e in history_of(api, facts[0]["id"]) if e["op"] == "add"]
        assert add["client"] == "dashboard-import owner" and add["note"] == "import of chatgpt.txt (chatgpt-list)"
    inbox = page(owner_client.get(reverse("inbox")))
    shown = {int(li["data-id"]) for li in inbox.select("#inbox-list li.item")}
    assert {f["id"] for f in facts} <= shown
    assert "import of chatgpt.txt (chatgpt-list)" in inbox.select_one(f"#inbox-{facts[0]['id']} .note").text
    assert "dashboard-import" in inbox.select_one(f"#inbox-{facts[0]['id']}").find_parent("section").select_one(".writer").text
    # The same file again: every line is a fact the memory holds now.
    again = job_url(upload(owner_client, "chatgpt.txt", content, "chatgpt-list"))
    dry = finish(owner_client, again, "dry-run")
    assert counts(dry) == {"store": 0, "merged": 8, "proposed": 0, "refused": 0}
    assert dry.select_one("#import-nothing") is not None
    merged = dry.select_one("#plan-merged")
    assert f"#{facts[-1]['id']}" in merged.text and "(exact)" in merged.text
    assert page(owner_client.get(reverse("import"))).select_one(f".recent-imports a[href='{url}']")


def test_a_table_is_mapped_column_by_column_with_a_preview(owner_client, live_memory):
    t = tag()
    content = (f"note,kind,when,origin\nThe owner's locksmith is Sam Reid ({t}).,fact,2025-03-01,notes app\n"
               f"How to bleed the radiators: key at the top ({t}).,skill,,notes app\n,fact,,notes app\n").encode()
    url = job_url(upload(owner_client, "notes.csv", content, "csv"))
    html = page(owner_client.get(url))
    problem = html.select_one("#import-malformed").text
    assert "no column holds the text" in problem and "Nothing of it was stored" in problem
    assert html.select_one("#dry-run") is None
    form = html.select_one("#import-mapping")
    assert [o["value"] for o in form.select("#map-text option")] == ["", "note", "kind", "when", "origin"]
    mapped = soup(owner_client.post(form["hx-post"], {"text": "note", "type": "kind", "time": "when", "source": "origin"},
                                    headers=HTMX))
    rows = [[td.text for td in tr.select("td")] for tr in mapped.select("#import-preview tbody tr")]
    assert rows[0][:4] == ["2", f"The owner's locksmith is Sam Reid ({t}).", "fact", "import:csv:notes app"]
    assert rows[0][4].startswith("2025-03-01") and rows[1][2] == "skill" and rows[1][4] == "now"
    assert mapped.select_one("#import-read").text.startswith("2 facts read, 1 line refused")
    assert mapped.select_one("#map-type option[selected]")["value"] == "kind"
    dry = finish(owner_client, url, "dry-run")
    assert counts(dry) == {"store": 2, "merged": 0, "proposed": 0, "refused": 1}
    assert "line 4" in dry.select_one("#plan-refused").text
    finish(owner_client, url, "import-go")
    with live_memory.client() as api:
        [f] = api.get("/facts", params={"q": f"locksmith is Sam Reid ({t})"}).json()["facts"]
        assert f["source"] == "import:csv:notes app" and f["created_at"].startswith("2025-03-01")  # both provenances


def test_the_import_stores_what_the_dry_run_showed_not_what_the_file_holds_since(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old = api.post("/facts", json={"text": f"The owner's piano teacher is Ms Adeyemi ({t})."}, headers=OWNER).json()["id"]
    lines = [f"- The owner's piano teacher is Mr Castell ({t}).", f"- The owner grows chillies on the balcony ({t})."]
    url = job_url(upload(owner_client, "claude.txt", "\n".join(lines).encode(), "claude-list"))
    dry = finish(owner_client, url, "dry-run")
    assert counts(dry) == {"store": 2, "merged": 0, "proposed": 1, "refused": 0}
    proposed = dry.select_one("#plan-proposed")
    assert f"#{old}" in proposed.text and "Ms Adeyemi" in proposed.text and "differs:" in proposed.text
    from dashboard.import_jobs import JOBS

    JOBS[job_id(url)].path.write_text(f"- Something else entirely ({t}).\n")  # the file changes under it: no matter
    finish(owner_client, url, "import-go")
    with live_memory.client() as api:
        found = api.get("/facts", params={"q": t, "limit": 10}).json()["facts"]
        assert sorted(f["text"] for f in found if f["id"] != old) == sorted(line[2:] for line in lines)
        new = next(f for f in found if "Castell" in f["text"])
        assert (old, new["id"]) in {(c["old"]["id"], c["new"]["id"]) for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"]}
    row = page(owner_client.get(reverse("inbox"))).select_one(f"#inbox-{new['id']}")
    assert f"May replace #{old}" in row.select_one(".conflict-note").text


def test_a_malformed_file_shows_its_line_and_stores_nothing(owner_client, live_memory):
    with live_memory.client() as api:
        before = api.get("/facts", params={"limit": 1}).json()["total"]
    url = job_url(upload(owner_client, "broken.jsonl", b'{"text": "fine"}\n{"text": "no end\n', "jsonl"))
    html = page(owner_client.get(url))
    assert "line 2: not JSON" in html.select_one("#import-malformed").text
    assert html.select_one("#dry-run") is None and html.select_one("#import-preview") is None
    latin = job_url(upload(owner_client, "latin.txt", "- Café au lait\n- Crème brûlée\n".encode("latin-1"), "chatgpt-list"))
    problem = page(owner_client.get(latin)).select_one("#import-malformed").text
    assert "latin.txt:1: not UTF-8 text" in problem and "/tmp" not in problem  # the owner's name, not the server's path
    nope = owner_client.post(reverse("import_dry_run", args=[job_id(url)]))
    assert nope.status_code == 302
    with live_memory.client() as api:
        assert api.get("/facts", params={"limit": 1}).json()["total"] == before


def test_a_file_over_the_limit_or_without_a_format_is_refused_saying_why(owner_client, live_memory, monkeypatch):
    from memories import importers

    monkeypatch.setattr(importers, "MAX_BYTES", 100)
    big = upload(owner_client, "big.txt", b"- The owner likes long files.\n" * 10, "chatgpt-list")
    assert big.status_code == 413 and "the limit is 100" in soup(big).select_one("#upload-problem").text
    none = upload(owner_client, "a.txt", b"- x\n", "word-doc")
    assert none.status_code == 400 and "Choose the file's format" in soup(none).select_one("#upload-problem").text
    empty = owner_client.post(reverse("import"), {"format": "csv"})
    assert empty.status_code == 400 and "Choose a file" in soup(empty).text
    form = page(owner_client.get(reverse("import"))).select_one("#upload-form")
    assert form["enctype"] == "multipart/form-data"
    assert [o["value"] for o in form.select("#id_format option")][1:] == [
        "auto", "list", "chatgpt-list", "chatgpt-export", "claude-list", "csv", "json", "jsonl", "mem0", "letta", "mcp-memory", "claude-ai",
        "claude-code", "backup"]
    assert form.select_one("#id_format option[selected]")["value"] == "auto"  # the default


def test_another_memorys_upload_or_one_forgotten_is_a_404(owner_client, live_memory):
    url = job_url(upload(owner_client, "chatgpt.txt", (FIXTURES / "chatgpt.txt").read_bytes(), "chatgpt-list"))
    from dashboard.import_jobs import JOBS

    JOBS[job_id(url)].memory = "work"
    assert owner_client.get(url).status_code == 404
    assert owner_client.post(reverse("import_run", args=[job_id(url)])).status_code == 404
    assert owner_client.get(reverse("import_job", args=["nothing-here"])).status_code == 404


# -- on a memory on httpx.MockTransport -----------------------------------------------------

def refused(request):
    raise httpx.ConnectError("refused")


def test_a_down_service_is_a_plain_page_and_a_dry_run_says_it_stopped(owner_client, mock_memory):
    mock_memory(refused)
    html = page(owner_client.get(reverse("import")))  # nothing to ask the memory yet: the page says it is down
    assert "not reachable" in html.select_one("#import-down").text and "http://memory.test" in html.text
    mock_memory(FakeMemory())  # up for the upload, down for the dry run
    url = job_url(upload(owner_client, "chatgpt.txt", (FIXTURES / "chatgpt.txt").read_bytes(), "chatgpt-list"))
    mock_memory(refused)
    response = owner_client.post(reverse("import_dry_run", args=[job_id(url)]), headers=HTMX)
    assert response.status_code == 200  # the job's page: the work is the thread's
    deadline = time.monotonic() + 10
    while soup(response).select_one("#import-progress") is not None and time.monotonic() < deadline:
        time.sleep(0.05)
        response = owner_client.get(reverse("import_progress", args=[job_id(url)]), headers=HTMX)
    failed = soup(response).select_one("#import-failed")
    assert "The dry run stopped" in failed.text and "cannot reach the memory service" in failed.text
    assert "Nothing was stored" in failed.text and "mock-secret" not in response.content.decode()


def test_the_import_forms_need_the_csrf_token(owner, mock_memory):
    mock_memory(FakeMemory())
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post(reverse("import"), {"format": "csv"}).status_code == 403
    for name in ("import_mapping", "import_dry_run", "import_run"):
        assert client.post(reverse(name, args=["x"])).status_code == 403


def test_the_import_pages_need_the_owners_login(client, mock_memory):
    fake = FakeMemory()
    mock_memory(fake)
    for response in (client.get(reverse("import")), client.get(reverse("import_job", args=["x"])),
                     client.get(reverse("import_progress", args=["x"])),
                     client.post(reverse("import"), {"format": "csv"})):
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert fake.requests == []


def test_a_proposal_of_an_earlier_line_names_the_line_and_the_queue_it_adds_is_said_first(owner_client, live_memory):
    t = tag()
    lines = [f"- The choir rehearses on Tuesdays at 19:00 ({t}).", f"- The choir rehearses on Tuesdays at 19:30 ({t})."]
    url = job_url(upload(owner_client, "choir.txt", "\n".join(lines).encode(), "list"))
    dry = finish(owner_client, url, "dry-run")
    assert counts(dry) == {"store": 2, "merged": 0, "proposed": 1, "refused": 0}
    proposed = " ".join(dry.select_one("#plan-proposed").text.split())
    assert "line 2" in proposed and "may replace line 1 of this file" in proposed  # no fact has the id it would get yet
    assert not dry.select("#plan-proposed a[href*='/facts/']")
    assert dry.select_one("#import-queue").text.startswith("1 proposal of a replacement joins the queue")
    finish(owner_client, url, "import-go")
    with live_memory.client() as api:
        found = {f["text"]: f["id"] for f in api.get("/facts", params={"q": t, "limit": 10}).json()["facts"]}
        pairs = {(c["old"]["id"], c["new"]["id"]) for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"]}
    assert (found[lines[0][2:]], found[lines[1][2:]]) in pairs  # the queue holds what the dry run said


def test_the_dry_run_reads_with_the_columns_the_page_showed(owner_client, live_memory):
    # Picks answered out of order can leave the job with another mapping than the page shows.
    t = tag()
    content = f"note,kind\nHow to reset the boiler: hold the red button ({t}).,skill\n".encode()
    url = job_url(upload(owner_client, "boiler.csv", content, "csv"))
    owner_client.post(reverse("import_mapping", args=[job_id(url)]), {"text": "note"})  # the job: type unmapped
    answer = soup(owner_client.post(reverse("import_dry_run", args=[job_id(url)]), {"text": "note", "type": "kind"},
                                    headers=HTMX))
    while answer.select_one("#import-progress") is not None:
        time.sleep(0.1)
        answer = soup(owner_client.get(reverse("import_progress", args=[job_id(url)]), headers=HTMX))
    assert answer.select_one("#plan-store") is not None, " ".join(answer.text.split())[-900:]
    assert "skill" in answer.select_one("#plan-store").text and "type = kind" in " ".join(answer.select_one("#import-read").text.split())
