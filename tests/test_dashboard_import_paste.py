"""The list pasted on the Import page (issue 51 §3): what the owner copied out of ChatGPT's or
Claude's memory settings, read as a file would be (the format found from the text), dry run and
imported on both memories over real HTTP; a paste beside a file, or nothing at all, refused saying
why, with the pasted text kept in its box."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests.html import page, soup
from tests.test_dashboard_imports import counts, finish, job_url

pytestmark = pytest.mark.django_db

PASTED = """Saved memories:
- Prefers window seats on long flights (paste).
- Is allergic to shellfish (paste).
- Has a cousin called Ravi who lives in Leeds (paste).
"""


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_a_pasted_list_is_read_dry_run_and_imported_like_a_file(owner_client, live_memory):
    form = page(owner_client.get(reverse("import"))).select_one("#upload-form")
    assert form.select_one("textarea#id_pasted") is not None and not form.select_one("#id_file").has_attr("required")
    url = job_url(owner_client.post(reverse("import"), {"format": "auto", "pasted": PASTED}))
    html = page(owner_client.get(url))
    assert html.select_one("h1").text == "Import pasted list"
    assert "Read as list" in " ".join(html.select_one("#read-as").text.split())
    assert html.select_one("#import-read").text.startswith("3 facts read")
    dry = finish(owner_client, url, "dry-run")
    assert counts(dry) == {"store": 3, "merged": 0, "proposed": 0, "refused": 0}
    done = finish(owner_client, url, "import-go")
    assert done.select_one("#import-stored").text == "3"
    with live_memory.client() as api:
        texts = {f["text"] for f in api.get("/facts", params={"q": "paste", "limit": 10}).json()["facts"]}
        [add] = [e for e in api.get("/history", params={"op": "add", "limit": 1}).json()["entries"]]
    assert texts == {"Prefers window seats on long flights (paste).", "Is allergic to shellfish (paste).",
                     "Has a cousin called Ravi who lives in Leeds (paste)."}
    assert add["note"] == "import of pasted list (list)"


def test_a_paste_beside_a_file_or_nothing_at_all_is_refused_and_the_paste_is_kept(owner_client, live_memory):
    both = owner_client.post(reverse("import"), {"format": "auto", "pasted": PASTED,
                                                 "file": SimpleUploadedFile("a.txt", b"- The owner likes figs.\n")})
    assert both.status_code == 400 and "not both" in soup(both).select_one("#upload-problem").text
    assert soup(both).select_one("#id_pasted").text == PASTED  # nothing the owner pasted is lost
    blank = owner_client.post(reverse("import"), {"format": "auto", "pasted": "  \n\n"})
    assert blank.status_code == 400 and "Choose a file to upload, or paste the list" in soup(blank).text
