"""Adding a fact: a text over the limit is refused with how much to cut (never cut short), the
most similar facts are shown after a store, and a near duplicate can be stored anyway. Against
the real service and model."""

import re
import uuid

import pytest
from django.urls import reverse
from tests.html import soup

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true", "HX-Target": "add-panel"}


def add(client, text, type="fact", source="test", **extra):
    return client.post(reverse("fact_add"), {"text": text, "type": type, "source": source, **extra}, headers=HTMX)


def added_id(response) -> int:
    return int(re.search(r"/facts/(\d+)/", soup(response).select_one("#add-result a")["href"]).group(1))


def test_the_text_box_has_a_counter_and_no_maxlength_that_cuts_a_paste(owner_client, live_memory):
    box = soup(owner_client.get(reverse("facts"))).select_one("#add-panel textarea[name=text]")
    assert not box.has_attr("maxlength")  # a browser cuts a 10,000-character paste at maxlength without a word
    assert box["data-max-chars"] == "8000"
    assert soup(owner_client.get(reverse("facts"))).select_one("#id_text-chars").text == "0 / 8,000 characters"


def test_a_text_over_the_limit_is_refused_with_how_much_to_cut(owner_client, live_memory):
    with live_memory.client() as api:
        before = api.get("/facts").json()["total"]
    response = add(owner_client, "x" * 10000)  # a 10,000-character paste
    assert response.status_code == 422
    page = soup(response)
    assert page.select_one("#add-panel .errorlist").text == \
        "A fact holds at most 8,000 characters; this text has 10,000. Shorten it by 2,000."
    assert page.select_one("#id_text-chars").text == "10,000 / 8,000 characters"
    assert "over" in page.select_one("#id_text-chars")["class"]
    assert len(page.select_one("#add-panel textarea").text.strip()) == 10000  # the owner's text is kept to shorten
    with live_memory.client() as api:
        assert api.get("/facts").json()["total"] == before


def test_after_a_store_the_most_similar_facts_are_listed_with_links(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    first = added_id(add(owner_client, f"The owner's passport expires in 2028 ({tag})."))
    add(owner_client, f"Leo's school is the Montessori on Kanaalweg ({tag}).")
    response = add(owner_client, f"Owner passport expiry: 2028 ({tag}).")
    assert "Added" in soup(response).select_one("#add-result").text
    links = [a["href"] for a in soup(response).select("#similar ul.similar li a")]
    assert links[0] == reverse("fact_detail", args=[first])
    cosines = [float(li.select_one(".num").text) for li in soup(response).select("#similar li")]
    assert all(c >= 0.80 for c in cosines)  # the review floor
    assert cosines == sorted(cosines, reverse=True)


def test_a_store_with_nothing_similar_lists_nothing(owner_client, live_memory):
    response = add(owner_client, f"Zebras hum quietly at {uuid.uuid4().hex} o'clock.")
    assert "Added" in soup(response).select_one("#add-result").text
    assert soup(response).select_one("#similar") is None


def test_a_near_duplicate_can_be_stored_anyway_and_the_history_says_it_was_the_dashboards_decision(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    kept = added_id(add(owner_client, f"Priya is the owner's sister ({tag})."))
    refused = add(owner_client, f"Priya is the sister of the owner ({tag}).")
    assert "near match" in soup(refused).select_one("#add-result").text
    form = soup(refused).select_one("#add-result form.store-anyway")
    assert form["method"] == "post" and form["action"] == reverse("fact_add")
    data = {i["name"]: i["value"] for i in form.select("input")}
    assert data["force"] == "yes" and data["text"] == f"Priya is the sister of the owner ({tag})."
    assert form.select_one("button").text == "Store anyway"

    stored = owner_client.post(form["action"], data, headers=HTMX)
    new = added_id(stored)
    assert new != kept
    with live_memory.client() as api:
        [entry] = api.get("/history", params={"fact_id": new}).json()["entries"]
    assert entry["client"] == "dashboard owner" and "client's decision" in entry["note"] and f"#{kept}" in entry["note"]


def test_an_exact_duplicate_offers_no_store_anyway(owner_client, live_memory):
    text = f"Mia likes tea ({uuid.uuid4().hex[:6]})."
    add(owner_client, text)
    again = add(owner_client, text.upper())
    assert "exact match" in soup(again).select_one("#add-result").text
    assert soup(again).select_one("form.store-anyway") is None


def test_without_javascript_a_near_duplicate_shows_the_page_with_store_anyway(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    add(owner_client, f"Priya is the owner's sister ({tag}).")
    response = owner_client.post(reverse("fact_add"), {"text": f"Priya is the sister of the owner ({tag}).", "type": "fact"})
    page = soup(response)
    assert response.status_code == 200 and page.select_one("h1").text == "Facts"
    assert "near match" in page.select_one("#add-result").text
    assert page.select_one("form.store-anyway button").text == "Store anyway"
    assert page.select_one("#fact-list")  # the whole page, the list too
