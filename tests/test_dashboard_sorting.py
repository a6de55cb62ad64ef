"""The facts table sorts by id, Created or Updated: each header is a link (a real href, live by
htmx like the filters), the column the list is in says so with aria-sort, and the filters and the
page links keep the order. Against both memories over real HTTP."""

import uuid
from urllib.parse import parse_qs, urlsplit

import pytest
from bs4 import BeautifulSoup
from django.urls import reverse

from dashboard.views import facts as facts_view
from tests.html import page

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def store(api, tag: str) -> dict[str, int]:
    """Three facts whose order by created, by updated and by id all differ: {name: id}."""
    facts = {"old": ("2024-01-01", "2024-03-01"), "mid": ("2024-02-01", "2024-02-01"), "new": ("2024-01-15", "2024-01-15")}
    texts = {"old": "The piano was tuned in spring", "mid": "Rosa's birthday is in June", "new": "The car needs new tyres"}
    r = api.post("/facts/batch", json={"facts": [
        {"text": f"{texts[k]} ({tag}).", "source": tag, "created_at": f"{c}T08:00:00Z", "updated_at": f"{u}T08:00:00Z"}
        for k, (c, u) in facts.items()]})
    assert r.status_code == 200, r.text
    return {k: x["fact"]["id"] for k, x in zip(facts, r.json()["results"])}


def rows(soup: BeautifulSoup) -> list[int]:
    return [int(tr["data-fact-id"]) for tr in soup.select("#fact-rows tr[data-fact-id]")]


def headers(soup: BeautifulSoup) -> dict[str, object]:
    """The sortable headers by their link's text: (aria-sort or None, the link's query)."""
    out = {}
    for th in soup.select("table.facts thead th.sortable"):
        link = th.select_one("a[href]")
        assert link["hx-get"] == link["href"] and link["hx-target"] == "#fact-list" and link.get("hx-push-url") == "true"
        assert urlsplit(link["href"]).path == reverse("facts")
        label = link.find(string=True, recursive=False).strip()
        out[label] = (th.get("aria-sort"), {k: v[0] for k, v in parse_qs(urlsplit(link["href"]).query).items()})
    return out


def test_the_id_created_and_updated_headers_sort_the_list_and_say_which_way(owner_client, live_memory):
    tag = uuid.uuid4().hex[:8]
    with live_memory.client() as api:
        ids = store(api, tag)
    old, mid, new = ids["old"], ids["mid"], ids["new"]

    newest = page(owner_client.get(reverse("facts"), {"source": tag}))
    assert rows(newest) == [mid, new, old]
    assert headers(newest) == {  # newest first by created: the default, which no link spells out
        "#": (None, {"source": tag, "order": "id"}),
        "Created": ("descending", {"source": tag, "order": "created_asc"}),
        "Updated": (None, {"source": tag, "order": "updated"}),
    }
    assert newest.select_one("input[name=order][form=fact-filters]") is None

    updated = page(owner_client.get(reverse("facts"), {"source": tag, "order": "updated"}))
    assert rows(updated) == [old, mid, new]
    assert headers(updated)["Updated"] == ("descending", {"source": tag, "order": "updated_asc"})
    assert headers(updated)["Created"] == (None, {"source": tag})
    # The filters' form carries the order, from inside the part htmx swaps.
    kept = updated.select_one("#fact-list input[type=hidden][name=order]")
    assert kept["value"] == "updated" and updated.select_one(f"form#{kept['form']}.filters")

    ascending = page(owner_client.get(reverse("facts"), {"source": tag, "order": "id_asc"}))
    assert rows(ascending) == [old, mid, new]
    assert headers(ascending)["#"] == ("ascending", {"source": tag, "order": "id"})
    assert [th.get("aria-sort") for th in ascending.select("thead th")].count("ascending") == 1
    assert rows(page(owner_client.get(reverse("facts"), {"source": tag, "order": "id"}))) == [new, mid, old]
    assert rows(page(owner_client.get(reverse("facts"), {"source": tag, "order": "created_asc"}))) == [old, new, mid]
    assert rows(page(owner_client.get(reverse("facts"), {"source": tag, "order": "updated_asc"}))) == [new, mid, old]


def test_a_sort_link_answers_htmx_with_the_list_alone(owner_client, live_memory):
    tag = uuid.uuid4().hex[:8]
    with live_memory.client() as api:
        ids = store(api, tag)
    r = owner_client.get(reverse("facts"), {"source": tag, "order": "updated_asc"}, HTTP_HX_REQUEST="true",
                         HTTP_HX_TARGET="fact-list")
    soup = page(r)
    assert soup.select_one("section#fact-list") and not soup.select_one("form.filters")
    assert rows(soup) == [ids["new"], ids["mid"], ids["old"]]
    assert headers(soup)["Updated"] == ("ascending", {"source": tag, "order": "updated"})


def test_page_links_keep_the_order(owner_client, live_memory, monkeypatch):
    monkeypatch.setattr(facts_view, "PAGE_SIZE", 2)
    tag = uuid.uuid4().hex[:8]
    with live_memory.client() as api:
        ids = store(api, tag)
    first = page(owner_client.get(reverse("facts"), {"source": tag, "order": "updated_asc"}))
    assert rows(first) == [ids["new"], ids["mid"]]
    older = first.select_one("nav.pager a[rel=next]")
    assert older.text.strip() == "Newer »"
    query = parse_qs(urlsplit(older["href"]).query)
    assert query["order"] == ["updated_asc"] and query["cursor"]
    second = page(owner_client.get(reverse("facts") + older["href"]))
    assert rows(second) == [ids["old"]]
    back = second.select_one("nav.pager a:not([rel])")
    assert back.text.strip() == "« Oldest" and parse_qs(urlsplit(back["href"]).query)["order"] == ["updated_asc"]
    assert rows(page(owner_client.get(reverse("facts") + back["href"]))) == [ids["new"], ids["mid"]]


def test_a_cursor_from_another_order_is_the_owners_mistake_not_a_crash(owner_client, live_memory, monkeypatch):
    monkeypatch.setattr(facts_view, "PAGE_SIZE", 1)
    tag = uuid.uuid4().hex[:8]
    with live_memory.client() as api:
        store(api, tag)
    cursor = parse_qs(urlsplit(page(owner_client.get(reverse("facts"), {"source": tag, "order": "id"}))
                               .select_one("nav.pager a[rel=next]")["href"]).query)["cursor"][0]
    r = owner_client.get(reverse("facts"), {"source": tag, "order": "updated", "cursor": cursor})
    assert r.status_code == 400
    assert "order=id, not order=updated" in r.content.decode()


def test_an_order_the_memory_does_not_know_is_the_default(owner_client, live_memory):
    tag = uuid.uuid4().hex[:8]
    with live_memory.client() as api:
        ids = store(api, tag)
    soup = page(owner_client.get(reverse("facts"), {"source": tag, "order": "-created"}))
    assert rows(soup) == [ids["mid"], ids["new"], ids["old"]]
    assert headers(soup)["Created"][0] == "descending"
