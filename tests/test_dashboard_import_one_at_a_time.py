"""The Import page while another import runs into the memory (issue 49 §1-2), against both
memories over real HTTP with the real model: the dry run, the import and a restore are refused
with the memory's own words on the page (never a 500), nothing of the file is stored, the button
is offered again, and once the other import ends the file goes in as its dry run showed. And the
progress bar says the time left."""

from __future__ import annotations

import time
import uuid

import pytest

from dashboard.import_jobs import Job
from tests.html import page
from tests.test_dashboard_imports import FIXTURES, finish, job_url, upload

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def hold(api, import_id: str, client: str = "cli alice") -> None:
    """Another import, started and not ended: one batch of it stored."""
    r = api.post("/facts/batch", json={"facts": [{"text": f"Held by import {import_id}.", "source": "held"}],
                                       "import_id": import_id}, headers={"X-Memory-Client": client})
    assert r.status_code == 200, r.text


def end(api, import_id: str) -> None:
    assert api.post("/facts/batch", json={"facts": [], "import_id": import_id, "import_done": True}).status_code == 200


def test_a_dry_run_and_an_import_wait_their_turn_with_a_message_not_a_500(owner_client, live_memory):
    other = uuid.uuid4().hex[:8]
    with live_memory.client() as api:
        before = api.get("/facts", params={"source": "import:chatgpt", "limit": 1}).json()["total"]
        hold(api, other)
        url = job_url(upload(owner_client, "chatgpt.txt", (FIXTURES / "chatgpt.txt").read_bytes(), "chatgpt-list"))
        busy = finish(owner_client, url, "dry-run")
        said = busy.select_one("#import-busy")
        assert said is not None and busy.select_one("#import-failed") is None
        assert "Another import is running into this memory by cli alice" in said.text
        assert "Nothing of this file was stored" in said.text and busy.select_one("#dry-run") is not None
        end(api, other)
        dry = finish(owner_client, url, "dry-run")
        assert dry.select_one("#import-busy") is None and dry.select_one("#import-go") is not None

        hold(api, other)  # another import starts between the dry run and the import
        busy = finish(owner_client, url, "import-go")
        assert "Another import is running" in busy.select_one("#import-busy").text
        assert busy.select_one("#import-go") is not None  # offered again
        assert api.get("/facts", params={"source": "import:chatgpt", "limit": 1}).json()["total"] == before
        shown = page(owner_client.get(url))  # the page itself, reloaded: the same message, a 200
        assert "Another import is running" in shown.select_one("#import-busy").text
        end(api, other)
        done = finish(owner_client, url, "import-go")
        assert done.select_one("#import-stored").text == "7" and done.select_one("#import-busy") is None
        # the dashboard's import ended: the memory takes the next at once
        hold(api, other)
        end(api, other)


def test_the_progress_bar_says_the_time_left_once_a_batch_is_done(tmp_path):
    job = Job("j", "default", 1, "big.jsonl", "jsonl", tmp_path / "upload", 1, phase="importing", total=100_000)
    job.started = time.monotonic() - 100
    assert job.time_left == ""  # no batch yet: no pace to go by
    job.done = 30_000  # 300 facts/s
    assert job.time_left == "about 4 min left (300 facts/s)"
    job.done, job.started = 99_000, time.monotonic() - 330
    assert job.time_left == "about 3 s left (300 facts/s)"
    job.done = 100_000
    assert job.time_left == ""
