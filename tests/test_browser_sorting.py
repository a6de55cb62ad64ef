"""Sorting the facts table in a real browser, on the real service: the id, Created and Updated
headers re-sort the list in place (htmx), the address keeps the order, a second click turns it
round, and the filters keep it."""

import re
import uuid

import pytest
from playwright.sync_api import Page, expect

from tests.test_browser import browser_type_launch_args, shot, sign_in  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def signed_in(page: Page, live_server, live_memory, owner) -> Page:
    return sign_in(page, live_server)


def row_ids(page: Page) -> list[int]:
    return [int(i) for i in page.locator("#fact-rows tr[data-fact-id]").evaluate_all(
        "rows => rows.map(r => r.dataset.factId)")]


def header(page: Page, name: str):
    return page.locator("table.facts thead th", has=page.get_by_role("link", name=name, exact=True))


def test_the_headers_sort_the_list_in_place_and_the_filters_keep_the_order(signed_in: Page, live_server, live_memory):
    page = signed_in
    tag = uuid.uuid4().hex[:8]
    times = {"old": ("2024-01-01", "2024-03-01"), "mid": ("2024-02-01", "2024-02-01"), "new": ("2024-01-15", "2024-01-15")}
    texts = {"old": "The piano was tuned in spring", "mid": "Rosa's birthday is in June", "new": "The car needs new tyres"}
    with live_memory.client() as api:
        r = api.post("/facts/batch", json={"facts": [
            {"text": f"{texts[k]} ({tag}).", "source": tag, "created_at": f"{c}T08:00:00Z", "updated_at": f"{u}T08:00:00Z"}
            for k, (c, u) in times.items()]})
        old, mid, new = (x["fact"]["id"] for x in r.json()["results"])

    page.goto(f"{live_server.url}/?source={tag}")
    expect(header(page, "Created")).to_have_attribute("aria-sort", "descending")
    assert row_ids(page) == [mid, new, old]
    page.evaluate("window.sameDocument = true")  # gone if a click loaded a new page

    page.get_by_role("link", name="Updated", exact=True).click()
    expect(page).to_have_url(re.compile(r"order=updated(&|$)"))
    expect(header(page, "Updated")).to_have_attribute("aria-sort", "descending")
    expect(page.locator("table.facts thead th[aria-sort]")).to_have_count(1)
    assert row_ids(page) == [old, mid, new]

    page.get_by_role("link", name="Updated", exact=True).click()
    expect(page).to_have_url(re.compile(r"order=updated_asc"))
    expect(header(page, "Updated")).to_have_attribute("aria-sort", "ascending")
    assert row_ids(page) == [new, mid, old]

    page.get_by_role("searchbox", name="Search").fill("the")  # matches two of the three
    expect(page.locator("#fact-count")).to_contain_text("matching “the”")
    expect(page).to_have_url(re.compile(r"q=the.*order=updated_asc|order=updated_asc.*q=the"))
    assert row_ids(page) == [new, old]

    page.get_by_role("link", name="# (id)", exact=True).click()
    expect(page).to_have_url(re.compile(r"order=id(&|$)"))
    expect(header(page, "# (id)")).to_have_attribute("aria-sort", "descending")
    assert row_ids(page) == [new, old]
    expect(page).to_have_url(re.compile(r"q=the"))
    assert page.evaluate("window.sameDocument") is True
    shot(page, "facts-sorted")

    page.reload()  # the address alone gives the same list
    expect(header(page, "# (id)")).to_have_attribute("aria-sort", "descending")
    assert row_ids(page) == [new, old]
