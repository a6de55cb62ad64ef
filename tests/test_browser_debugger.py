"""The recall debugger's why in a real browser, on both memories: pin the older fact of an open
contradiction from the fused list, read that the newer answer outranked it as the newer answer,
and follow the contradiction to its row in the Contradictions queue; the console stays clean
under the page's CSP."""

import pytest
from playwright.sync_api import Page, expect

from tests.test_browser import browser_type_launch_args, sign_in  # noqa: F401 (a fixture)
from tests.test_browser_console import console_errors

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_pinning_an_outdated_fact_shows_the_newer_answer_above_it_and_the_open_contradiction(page: Page, live_server, live_memory, owner):
    with live_memory.client() as api:
        seven = api.post("/facts", json={"text": "The owner's son is seven years old."}).json()["fact"]["id"]
        api.post("/facts", json={"text": "The owner's son is called Leo."})
        eight = api.post("/facts", json={"text": "The owner's son is eight years old."}).json()["fact"]["id"]
    errors = console_errors(page)
    sign_in(page, live_server)
    page.goto(live_server.url + "/recall/")
    page.get_by_label("Query").fill("how old is my son")
    page.get_by_role("button", name="Recall").click()
    fused = page.locator("#fused-title ~ ol.ranked")
    expect(fused.locator(f"li[data-fact-id='{eight}'] .badge.conflict a[href$='#conflict-{seven}-{eight}']")).to_have_text(f"#{seven}")
    expect(fused.locator(f"li[data-fact-id='{seven}'] .flag-outdated")).to_have_text("may be outdated")
    fused.locator(f"li[data-fact-id='{seven}']").get_by_role("link", name="pin").click()

    expect(page.get_by_role("heading", name=f"Where is fact #{seven}?")).to_be_visible()
    row = page.locator(f"table.outranked tr[data-fact-id='{eight}']")
    expect(row.locator("td.by")).to_have_text("newer answer")
    row.get_by_role("link", name=f"open contradiction with #{seven}").click()
    expect(page.locator(f"#conflict-{seven}-{eight}")).to_be_visible()
    page.wait_for_timeout(300)
    assert errors == []
