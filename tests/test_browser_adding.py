"""Adding and editing in a real browser: the character count as the owner types, a paste over the
limit refused with a message (never cut short), "Store anyway", and the inline editor's cursor."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.test_browser import add_fact, browser_type_launch_args, fact_id_from_result, sign_in  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def signed_in(page: Page, live_server, live_memory, owner) -> Page:
    return sign_in(page, live_server)


def test_a_paste_over_the_limit_is_kept_counted_and_refused_with_a_message(signed_in: Page):
    page = signed_in
    box = page.locator("#add-panel").get_by_label("Text")
    box.press_sequentially("Leo")
    expect(page.locator("#id_text-chars")).to_have_text("3 / 8,000 characters")
    box.fill("x" * 10_000)  # a paste
    assert page.evaluate("document.getElementById('id_text').value.length") == 10_000  # not cut to 8,000
    message = "A fact holds at most 8,000 characters; this text has 10,000. Shorten it by 2,000."
    expect(page.locator("#id_text-chars")).to_have_text(message)
    requests = []
    page.on("request", lambda r: requests.append(r.url) if "/facts/new" in r.url else None)
    page.get_by_role("button", name="Add", exact=True).click()
    assert page.evaluate("document.getElementById('id_text').validationMessage") == message
    page.wait_for_timeout(300)
    assert requests == [] and page.locator("#add-result").count() == 0
    box.fill("x" * 8_000)
    expect(page.locator("#id_text-chars")).to_have_text("8,000 / 8,000 characters")
    assert page.evaluate("document.getElementById('id_text').validationMessage") == ""


def test_store_anyway_then_the_similar_facts_link_to_each_other(signed_in: Page):
    page = signed_in
    add_fact(page, "Priya is the owner's sister.")
    first = fact_id_from_result(page)
    add_fact(page, "Priya is the sister of the owner.")
    expect(page.locator("#add-result")).to_contain_text("near match")
    page.get_by_role("button", name="Store anyway").click()
    expect(page.locator("#add-result")).to_contain_text("Added")
    expect(page.locator(f"#similar a[href='/facts/{first}/']")).to_be_visible()


def test_the_inline_editor_opens_with_the_cursor_at_the_end_of_the_text(signed_in: Page):
    page = signed_in
    add_fact(page, "Leo swims on Wednesdays.")
    fid = fact_id_from_result(page)
    page.reload()
    page.locator(f"#fact-{fid}").get_by_role("link", name="Edit").click()
    text = page.locator(f"#edit-text-{fid}")
    expect(text).to_be_focused()
    assert text.evaluate("t => [t.selectionStart, t.value.length]") == [24, 24]
    page.keyboard.type(" And Fridays.")
    page.keyboard.press("Enter")
    expect(page.locator(f"#fact-{fid} td.text")).to_have_text(re.compile("Wednesdays. And Fridays.$"))
