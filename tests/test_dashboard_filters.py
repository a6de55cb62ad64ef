"""The facts list never turns a filter it cannot run into "every fact": a search past the
memory's limit, one of spaces only, a type or source no fact can have is refused with what was
wrong, and "select all matching" is offered, and done, only under a filter that runs. On a fake
memory, then on the real service."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from django.urls import reverse

from tests.fake_memory import FakeMemory, fact
from tests.html import page, soup

pytestmark = pytest.mark.django_db

HTMX_LIST = {"HX-Request": "true", "HX-Target": "fact-list"}


def memory_of(mock_memory, n: int = 58) -> FakeMemory:
    fake = FakeMemory(*(fact(i, f"The owner's fact number {i}.") for i in range(1, n + 1)))
    mock_memory(fake)
    return fake


def rows(html) -> list[int]:
    return [int(tr["data-fact-id"]) for tr in html.select("#fact-rows tr[data-fact-id]")]


def assert_refused(response, says: str) -> None:
    """A 400 whose list holds no fact, no count of facts and no "select all", and says why."""
    assert response.status_code == 400, response.content[:500]
    html = soup(response)
    assert says in html.select_one("#filter-problem").text
    assert rows(html) == [] and html.select_one("#bulk-all") is None
    assert html.select_one("#fact-count").text.startswith("No facts listed")
    assert "matching" not in html.select_one("#fact-count").text


def deletes(fake: FakeMemory) -> list[httpx.Request]:
    return [r for r in fake.requests if r.method == "DELETE"]


def test_a_search_of_501_letters_is_run_not_dropped(owner_client, mock_memory):
    """The owner's walk: 501 letters listed all 58 facts "matching" them."""
    fake = memory_of(mock_memory)
    q = "z" * 501
    html = page(owner_client.get(reverse("facts"), {"q": q}))
    assert rows(html) == [] and html.select_one("#fact-count").text == f"0 facts matching “{q}”"
    assert html.select_one("#bulk-all") is None
    assert [r.url.params["q"] for r in fake.requests if r.url.path == "/facts" and "q" in r.url.params] == [q]


def test_a_search_past_the_memorys_limit_is_refused_with_the_limit(owner_client, mock_memory):
    memory_of(mock_memory)
    assert_refused(owner_client.get(reverse("facts"), {"q": "z" * 8001}), "at most 8000 characters")


@pytest.mark.parametrize("q", [" ", "   ", "\t\n"])
def test_a_search_of_spaces_only_is_refused(owner_client, mock_memory, q):
    memory_of(mock_memory)
    assert_refused(owner_client.get(reverse("facts"), {"q": q}), "only spaces")


def test_surrounding_spaces_of_a_search_go_and_the_count_names_what_was_searched(owner_client, mock_memory):
    fake = memory_of(mock_memory)
    html = page(owner_client.get(reverse("facts"), {"q": "  number 7.  "}))
    assert rows(html) == [7] and html.select_one("#fact-count").text == "1 fact matching “number 7.”"
    assert "number 7." in [r.url.params.get("q") for r in fake.requests]


@pytest.mark.parametrize("params,says", [
    ({"type": "opinion"}, "There is no type “opinion”"),
    ({"source": "s" * 201}, "A source is at most 200 characters"),
    ({"source": "  "}, "The source is only spaces"),
    ({"q": "owner", "type": "opinion"}, "There is no type “opinion”"),
    ({"q": "nul\x00"}, "Null characters are not allowed"),
])
def test_a_type_or_source_no_fact_can_have_is_refused(owner_client, mock_memory, params, says):
    memory_of(mock_memory)
    assert_refused(owner_client.get(reverse("facts"), params), says)


def test_the_live_search_gets_the_refusal_in_the_list_it_swaps(owner_client, mock_memory):
    memory_of(mock_memory)
    response = owner_client.get(reverse("facts"), {"q": "   "}, headers=HTMX_LIST)
    assert_refused(response, "only spaces")
    assert "<html" not in response.content.decode() and soup(response).select_one("section#fact-list")


def test_a_page_link_keeps_the_filters_it_ran(owner_client, mock_memory, monkeypatch):
    from dashboard.views import facts as facts_view

    def paged(request):
        answer = fake(request)
        if request.url.path == "/facts" and request.method == "GET" and not request.url.params.get("cursor"):
            body = json.loads(answer.content)
            return httpx.Response(200, json={**body, "next_cursor": "abc"})
        return answer

    fake = FakeMemory(*(fact(i, f"The owner's fact number {i}.") for i in range(1, 4)))
    mock_memory(paged)
    monkeypatch.setattr(facts_view, "PAGE_SIZE", 1)
    html = page(owner_client.get(reverse("facts"), {"q": "  owner's ", "type": "", "order": "id"}))
    assert html.select_one("nav.pager a[rel=next]")["href"] == "?q=owner%27s&order=id&cursor=abc"


def test_select_all_matching_is_not_offered_without_a_filter(owner_client, mock_memory):
    memory_of(mock_memory)
    html = page(owner_client.get(reverse("facts")))
    assert html.select_one("#fact-count").text == "58 facts"
    assert html.select_one("#bulk-all") is None
    offered = page(owner_client.get(reverse("facts"), {"q": "owner"})).select_one("#bulk-all")
    assert offered.select_one("button").text == "Select all 58 matching…"
    assert {i["name"]: i["value"] for i in offered.select("input[type=hidden]") if i["name"] != "csrfmiddlewaretoken"} \
        == {"all": "yes", "q": "owner"}


@pytest.mark.parametrize("posted,says", [
    ({}, "needs a search, a type or a source"),
    ({"q": "", "type": "", "source": ""}, "needs a search, a type or a source"),
    ({"q": "   "}, "only spaces"),
    ({"q": "z" * 8001}, "at most 8000 characters"),
    ({"type": "opinion"}, "There is no type “opinion”"),
    ({"q": "owner", "source": " "}, "The source is only spaces"),
])
@pytest.mark.parametrize("confirm", [False, True])
def test_select_all_matching_refuses_an_empty_or_invalid_filter_and_deletes_nothing(owner_client, mock_memory, posted,
                                                                                  says, confirm):
    fake = memory_of(mock_memory)
    data = {"all": "yes", **posted, **({"confirm": "yes"} if confirm else {})}
    response = owner_client.post(reverse("fact_bulk_delete"), data)
    assert response.status_code == 400 and says in response.content.decode()
    assert "Delete 58 facts" not in response.content.decode()
    assert deletes(fake) == [] and len(fake.facts) == 58


@pytest.mark.parametrize("ids", [["1", "x"], ["-1"], ["0"], [str(2**63)], ["1", " "]])
def test_a_selection_holding_something_not_a_fact_id_deletes_nothing(owner_client, mock_memory, ids):
    fake = memory_of(mock_memory)
    response = owner_client.post(reverse("fact_bulk_delete"), {"ids": ids, "confirm": "yes"})
    assert response.status_code == 302 and deletes(fake) == []


def test_the_count_after_an_add_under_a_refused_search_says_nothing_is_listed(owner_client, mock_memory):
    """dashboard/strip.py counts the page's own filters after an add: not every fact under a
    search that was refused."""
    fake = memory_of(mock_memory, 3)

    def handler(request):
        if request.url.path == "/facts" and request.method == "POST":
            body = json.loads(request.content)
            fake.facts[99] = fact(99, body["text"], body["type"], body["source"])
            return httpx.Response(201, json={"fact": fake.facts[99], "created": True, "id": 99})
        return fake(request)

    mock_memory(handler)
    response = owner_client.post(reverse("fact_add"), {"text": "Ada likes tea.", "type": "fact", "source": ""},
                                 headers={"HX-Request": "true", "HX-Target": "add-panel",
                                          "HX-Current-URL": "http://testserver/?q=%20%20"})
    assert response.status_code == 200
    count = soup(response).select_one("#fact-count[hx-swap-oob]")
    assert count.text.startswith("No facts listed") and "4 facts" not in count.text


# -- the real service ----------------------------------------------------------------------


def test_on_the_real_service_a_search_lists_what_it_says_or_is_refused(owner_client, live_memory):
    tag = uuid.uuid4().hex[:8]
    with live_memory.client() as api:
        ids = [api.post("/facts", json={"text": f"Walk fact {n}: {word} ({tag}).", "source": tag}).json()["id"]
               for n, word in enumerate(["tulips", "ferns", "moss"])]
        total = api.get("/facts", params={"limit": 1}).json()["total"]
    assert total >= 3

    long = page(owner_client.get(reverse("facts"), {"q": "z" * 501}))
    assert rows(long) == [] and long.select_one("#fact-count").text.startswith("0 facts matching")
    longest = page(owner_client.get(reverse("facts"), {"q": "z" * 8000}))  # the memory's own limit: it runs
    assert rows(longest) == [] and longest.select_one("#bulk-all") is None
    assert_refused(owner_client.get(reverse("facts"), {"q": "z" * 8001}), "at most 8000 characters")
    assert_refused(owner_client.get(reverse("facts"), {"q": "  "}), "only spaces")
    assert_refused(owner_client.get(reverse("facts"), {"type": "opinion"}), "There is no type")

    padded = page(owner_client.get(reverse("facts"), {"q": f"  ({tag})  "}))
    assert sorted(rows(padded)) == sorted(ids) and padded.select_one("#fact-count").text == f"3 facts matching “({tag})”"
    by_source = page(owner_client.get(reverse("facts"), {"source": tag}))
    assert sorted(rows(by_source)) == sorted(ids) and by_source.select_one("#bulk-all button").text == "Select all 3 matching…"


def test_on_the_real_service_select_all_under_a_refused_filter_deletes_nothing(owner_client, live_memory):
    tag = uuid.uuid4().hex[:8]
    with live_memory.client() as api:
        ids = [api.post("/facts", json={"text": f"Keep me {n} ({tag}).", "source": tag}).json()["id"] for n in range(3)]
        before = api.get("/facts", params={"limit": 1}).json()["total"]
    for posted in ({}, {"q": "   "}, {"q": "z" * 8001}, {"type": "opinion"}, {"source": "s" * 201}):
        for confirm in ({}, {"confirm": "yes"}):
            response = owner_client.post(reverse("fact_bulk_delete"), {"all": "yes", **posted, **confirm})
            assert response.status_code == 400, (posted, response.content[:300])
    with live_memory.client() as api:
        assert api.get("/facts", params={"limit": 1}).json()["total"] == before
        assert all(api.get(f"/facts/{i}").status_code == 200 for i in ids)
        assert api.get("/history", params={"op": "delete", "client": "dashboard"}).json()["entries"] == []

    confirm = page(owner_client.post(reverse("fact_bulk_delete"), {"all": "yes", "q": f" ({tag}) "}))
    assert sorted(int(i["value"]) for i in confirm.select("form input[name=ids]")) == sorted(ids)
