"""The recall debugger's why in a real browser, on both memories: pin a look-alike from the fused
list, read what outranked it and by which part, and follow the open contradiction to its row in
the Contradictions queue; the console stays clean under the page's CSP."""

import pytest
from playwright.sync_api import Page, expect

from tests.test_browser import browser_type_launch_args, sign_in  # noqa: F401 (a fixture)
from tests.test_browser_console import console_errors

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_pinning_a_look_alike_shows_what_outranked_it_and_the_open_contradiction(page: Page, live_server, live_memory, owner):
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
    fused.locator(f"li[data-fact-id='{eight}']").get_by_role("link", name="pin").click()

    expect(page.get_by_role("heading", name=f"Where is fact #{eight}?")).to_be_visible()
    row = page.locator(f"table.outranked tr[data-fact-id='{seven}']")
    expect(row.locator("td.by")).to_have_text("rerank")
    expect(row.locator("td.part-rerank.gain")).to_be_visible()
    row.get_by_role("link", name=f"open contradiction with #{eight}").click()
    expect(page.locator(f"#conflict-{seven}-{eight}")).to_be_visible()
    page.wait_for_timeout(300)
    assert errors == []
