"""The pages run clean under their own content-security-policy: no error in the browser console
on any page (each visited, and the facts page's live search, the recall debugger and the Recalls
page used as an owner would; the Inbox by keyboard and an import's upload, dry run and progress
in tests/test_browser_inbox.py)."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.test_browser import add_fact, browser_type_launch_args, sign_in  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def console_errors(page: Page) -> list[str]:
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    return errors


def test_live_search_on_the_facts_page_leaves_the_console_clean(page: Page, live_server, live_memory, owner):
    errors = console_errors(page)
    sign_in(page, live_server)
    add_fact(page, "Priya is the owner's sister.")
    page.reload()
    search = page.get_by_role("searchbox", name="Search")
    search.press_sequentially("sis", delay=80)  # as the owner types
    expect(page.locator("#fact-count")).to_contain_text("matching “sis”")
    for word in ("sister", "priya", "nothing like it"):
        search.fill(word)
        expect(page.locator("#fact-count")).to_contain_text(f"matching “{word}”")
    page.locator("#id_type_filter").select_option("fact")
    expect(page).to_have_url(re.compile(r"type=fact"))
    page.go_back()
    expect(page).to_have_url(re.compile(r"q=nothing"))
    search.fill("priya")
    expect(page.locator("#fact-count")).to_contain_text("1 fact matching “priya”")
    page.locator("#fact-list").get_by_role("link", name="Edit").first.click()  # the inline editor, swapped in
    expect(page.locator("form.inline-edit textarea")).to_be_focused()
    page.wait_for_timeout(300)
    assert errors == []


def test_the_recall_debugger_and_the_recalls_page_leave_the_console_clean(page: Page, live_server, live_memory, owner):
    errors = console_errors(page)
    sign_in(page, live_server)
    add_fact(page, "Anna's sister is Lena.")
    page.goto(live_server.url + "/recall/")
    page.get_by_label("Query").fill("Who is Anna's sister?")
    page.get_by_role("button", name="Recall").click()
    expect(page.get_by_role("heading", name=re.compile("Fused"))).to_be_visible()
    page.locator("#columns li[data-fact-id]").first.click()
    with live_memory.client() as api:
        api.post("/recall", headers={"X-Memory-Client": "claude-code 2.1"}, json={"query": "who is lena", "limit": 5})
    page.goto(live_server.url + "/recalls/")
    expect(page.locator("table.recalls tbody tr").first).to_be_visible()
    page.get_by_label("Query contains").press_sequentially("lena", delay=50)  # the Recalls page's live filter
    expect(page).to_have_url(re.compile(r"q=lena"))
    expect(page.locator("table.recalls tbody tr")).to_have_count(1)
    page.get_by_label("returned nothing").check()
    expect(page).to_have_url(re.compile(r"empty=1"))
    page.wait_for_timeout(300)
    assert errors == []


PAGES = ["/", "/facts/{fid}/", "/facts/{fid}/edit", "/facts/{fid}/delete", "/facts/{fid}/forget", "/duplicates/",
         "/duplicates/?threshold=0.5", "/contradictions/", "/inbox/", "/import/",
         "/?reviewed=unreviewed&client=dashboard&source_prefix=import:", "/recall/?q=sister&pin={fid}",
         "/recall/?q=sister&as_of=2026-01-01&include_stale=on", "/?status=all", "/recalls/", "/trash/", "/audit/",
         "/evaluate/",
         "/evaluate/cases/all", "/evaluate/compare", "/calibrate/", "/facts/999999/",
         "/no-such-page/"]


def test_every_page_leaves_the_console_clean(page: Page, live_server, live_memory, owner):
    errors = console_errors(page)
    sign_in(page, live_server)
    add_fact(page, "Lena is Anna's sister.")
    add_fact(page, "Lena is the sister of Anna.")  # a near-duplicate pair for the duplicates page
    fid = int(re.search(r"/facts/(\d+)/", page.locator("#add-result a").first.get_attribute("href")).group(1))
    for path in PAGES:
        response = page.goto(live_server.url + path.format(fid=fid))
        page.wait_for_load_state("networkidle")
        if response.status == 404:  # the page's own status, which Chromium reports as a console error
            errors[:] = [e for e in errors if "status of 404" not in e]
        assert errors == [], f"{path}: {errors}"
    page.context.clear_cookies()  # signed out
    page.goto(live_server.url + "/login/")
    page.wait_for_load_state("networkidle")
    assert errors == [], f"/login/: {errors}"
