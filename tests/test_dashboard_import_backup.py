"""A backup uploaded on the Import page (issue 51 §3), on both memories over real HTTP: into an
empty memory it is restored as it was (ids, times, replaced facts, pairs, settings), as the CLI
restores one; into a memory that holds facts it is said to be a backup, and only its current facts
are offered, as new ones: a fact the backup holds as replaced never comes back as current."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.html import page
from tests.test_dashboard_imports import counts, finish, job_url
from tests.test_nothing_lost import kept_pairs, new_memory

pytestmark = pytest.mark.django_db


def point_at(settings, memory) -> None:
    settings.MEMORY_URL, settings.MEMORY_SECRET = memory.url, memory.secret


def upload(client, content: bytes):
    return client.post(reverse("import"), {"format": "auto", "file": SimpleUploadedFile("memory-backup.jsonl", content)})


def source_with_a_past(api) -> None:
    """Facts, one replaced by a later one, an open proposal, and settings of the memory's own."""
    for text in ("Priya is the owner's sister.", "The owner prefers metric units.", "Water the plants every Sunday."):
        assert api.post("/facts", json={"text": text, "source": "chat"}).status_code == 201
    utrecht = api.post("/facts", json={"text": "The owner lives in Utrecht."}).json()["id"]
    moved = api.post("/facts", json={"text": "The owner moved to Porto.", "supersedes": [utrecht]})
    assert moved.status_code == 201, moved.text
    api.post("/facts", json={"text": "The team standup is at 9:30."})
    api.post("/facts", json={"text": "The team standup is at 10:00."})  # a proposal, left open
    assert api.put("/settings", json={"threshold": 0.99}).status_code == 200


@pytest.mark.parametrize("kind", ["python", "worker"])
def test_a_backup_goes_back_as_it_was_into_an_empty_memory_and_only_as_current_facts_elsewhere(
        kind, owner_client, settings, request, tmp_path):
    source = new_memory(kind, request, tmp_path)
    with source.client() as api:
        source_with_a_past(api)
        facts, pairs = api.get("/facts", params={"limit": 100}).json()["facts"], kept_pairs(api)
        duplicate = api.get("/settings").json()["thresholds"]["duplicate"]
    assert any(f["superseded_by"] for f in facts) and pairs
    point_at(settings, source)
    backup = b"".join(owner_client.get(reverse("export")).streaming_content)

    target = new_memory(kind, request, tmp_path)
    point_at(settings, target)
    url = job_url(upload(owner_client, backup))
    html = page(owner_client.get(url))
    assert "Read as backup" in " ".join(html.select_one("#read-as").text.split())
    found = " ".join(html.select_one("#backup-found").text.split())
    assert f"{len(facts)} facts (1 replaced), {len(pairs)} pair" in found and "and its settings" in found
    assert "This memory is empty" in found and html.select_one("#dry-run") is None  # a restore, not a merge
    done = finish(owner_client, url, "restore-go")
    assert done.select_one("#restore-stored").text == str(len(facts))
    with target.client() as copy:
        assert copy.get("/facts", params={"limit": 100}).json()["facts"] == facts  # ids, times, replaced, as they were
        assert kept_pairs(copy) == pairs
        assert copy.get("/settings").json()["thresholds"]["duplicate"] == duplicate
        answer = copy.post("/recall", json={"query": "Where does the owner live?"}).json()["results"]
        assert "Utrecht" not in " ".join(h["fact"]["text"] for h in answer)  # still replaced

    again = job_url(upload(owner_client, backup))  # now into a memory that holds facts
    html = page(owner_client.get(again))
    found = " ".join(html.select_one("#backup-found").text.split())
    assert f"This memory holds {len(facts)} facts" in found and "not restored as it was" in found
    assert html.select_one("#restore-go") is None
    assert owner_client.post(reverse("import_restore", args=[again.rstrip("/").rsplit("/", 1)[1]])).status_code == 302
    dry = finish(owner_client, again, "dry-run")
    assert counts(dry) == {"store": 0, "merged": len(facts) - 1, "proposed": 0, "refused": 0}
    assert "replaced by #" in dry.select_one("#plan-not-memories").text and "Utrecht" not in dry.select_one("#plan-merged").text
    with target.client() as copy:
        assert copy.get("/facts", params={"limit": 100}).json()["facts"] == facts  # nothing restored twice


def test_a_replaced_fact_of_a_backup_is_not_brought_back_into_another_memory(owner_client, settings, request, tmp_path):
    source = new_memory("python", request, tmp_path)
    with source.client() as api:
        source_with_a_past(api)
    point_at(settings, source)
    backup = b"".join(owner_client.get(reverse("export")).streaming_content)
    other = new_memory("python", request, tmp_path)
    with other.client() as api:
        api.post("/facts", json={"text": "Leo's bedtime is 8 pm."})
    point_at(settings, other)
    url = job_url(upload(owner_client, backup))
    dry = finish(owner_client, url, "dry-run")
    stored = [li.text for li in dry.select("#plan-store li")]
    assert counts(dry)["store"] == 6 and not any("Utrecht" in s for s in stored) and any("Porto" in s for s in stored)
    finish(owner_client, url, "import-go")
    with other.client() as api:
        texts = [f["text"] for f in api.get("/facts", params={"limit": 100}).json()["facts"]]
    assert "The owner moved to Porto." in texts and "The owner lives in Utrecht." not in texts


def test_a_broken_backup_line_is_refused_with_its_line_and_nothing_is_restored(owner_client, settings, request, tmp_path):
    target = new_memory("python", request, tmp_path)
    point_at(settings, target)
    content = (b'{"id": 1, "text": "The owner likes figs.", "type": "fact", "source": "", "created_at": "2026-01-01T00:00:00Z"}\n'
               b'{"id": 2, "text": "", "type": "fact", "created_at": "2026-01-01T00:00:00Z"}\n'
               b'{"id": "3", "text": "x", "created_at": "2026-01-01T00:00:00Z"}\n')
    html = page(owner_client.get(job_url(upload(owner_client, content))))
    assert "1 fact read, 2 lines refused" in html.select_one("#import-read").text
    found = html.select_one("#backup-found").text
    assert "restored whole or not at all" in found and "line 2 text is empty" in " ".join(found.split())
    assert "line 3 its id is not a positive whole number" in " ".join(found.split()) and html.select_one("#restore-go") is None
    with target.client() as api:
        assert api.get("/facts", params={"limit": 1}).json()["total"] == 0
