"""The facts' lives as the owner sees them (issue 29 §3), against both memories over real HTTP with
the real model: the facts list's status and "as of", a fact's validity and chain, the debugger's
as_of and include_stale, and the Recalls page's "replaced by"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from memories.facts import stamp
from tests.html import page, soup
from tests.test_dashboard_contradictions import AGENT, add, tag

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


# -- the facts list -------------------------------------------------------------------------

def replaced_pair(api, t: str, days_ago: int = 10) -> tuple[dict, dict]:
    """An old fact stored `days_ago` days ago and replaced now by a new one."""
    old = add(api, f"The owner's dentist is Dr Kowalski in Leeds ({t}).",
              json={"created_at": stamp(datetime.now(UTC) - timedelta(days=days_ago))})["fact"]
    new = add(api, f"The owner's dentist is Dr Abara in Leeds ({t}).", json={"supersedes": [old["id"]]})["fact"]
    return api.get(f"/facts/{old['id']}").json(), new


def row_of(html, fid):
    return html.select_one(f"#fact-rows tr#fact-{fid}")


def test_the_facts_list_shows_current_facts_first_and_marks_the_others(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old, new = replaced_pair(api, t)
        gone = add(api, f"The owner is in Porto for a wedding ({t}).",
                   json={"created_at": stamp(datetime.now(UTC) - timedelta(days=4)),
                         "valid_until": stamp(datetime.now(UTC) - timedelta(days=1))})["fact"]
    now = page(owner_client.get(reverse("facts"), {"q": t}))
    assert row_of(now, new["id"]) and row_of(now, old["id"]) is None and row_of(now, gone["id"]) is None
    assert now.select_one("#id_status option[selected]")["value"] == "current"

    everything = page(owner_client.get(reverse("facts"), {"q": t, "status": "all"}))
    row = row_of(everything, old["id"])
    assert "stale" in row["class"]
    mark = row.select_one(".flag-replaced")
    day = old["valid_until"][:10]
    assert mark.text.strip() == f"replaced by #{new['id']} on {day}"
    assert mark.select_one("a")["href"] == reverse("fact_detail", args=[new["id"]])
    assert row_of(everything, gone["id"]).select_one(".flag-expired").text.startswith("expired ")
    assert "stale" not in (row_of(everything, new["id"]).get("class") or [])
    assert everything.select_one("#fact-count").text.startswith("3 facts, current or not")

    replaced = page(owner_client.get(reverse("facts"), {"q": t, "status": "replaced"}))
    assert [tr["data-fact-id"] for tr in replaced.select("#fact-rows tr[data-fact-id]")] == [str(old["id"])]
    assert replaced.select_one("#fact-count").text.startswith("1 replaced fact")
    expired = page(owner_client.get(reverse("facts"), {"q": t, "status": "expired"}))
    assert [tr["data-fact-id"] for tr in expired.select("#fact-rows tr[data-fact-id]")] == [str(gone["id"])]
    # The status is kept by the sort headers and the page links.
    assert "status=replaced" in replaced.select_one("th.sortable a")["href"]


def test_the_facts_list_as_of_a_day_shows_the_memory_as_it_was(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old, new = replaced_pair(api, t)
    day = (datetime.now(UTC) - timedelta(days=5)).date().isoformat()
    then = page(owner_client.get(reverse("facts"), {"q": t, "as_of": day}))
    assert row_of(then, old["id"]) and row_of(then, new["id"]) is None  # current then; the new one not yet stored
    assert "replaced by" in row_of(then, old["id"]).text  # what became of it since
    assert then.select_one("#as-of-hint") and f"as of {day}" in then.select_one("#fact-count").text
    assert then.select_one("#id_as_of")["value"] == day
    today = page(owner_client.get(reverse("facts"), {"q": t, "as_of": datetime.now(UTC).date().isoformat()}))
    assert row_of(today, new["id"]) and row_of(today, old["id"]) is None  # today is now
    later = (datetime.now(UTC) + timedelta(days=2)).date().isoformat()
    future = owner_client.get(reverse("facts"), {"q": t, "as_of": later})
    assert future.status_code == 400 and "has not come yet" in soup(future).select_one("#filter-problem").text
    assert owner_client.get(reverse("facts"), {"as_of": "yesterday"}).status_code == 400


# -- a fact's page --------------------------------------------------------------------------

def test_a_facts_page_shows_its_validity_and_its_chain(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old, new = replaced_pair(api, t)
        newest = add(api, f"The owner's dentist is Dr Brennan in Leeds ({t}).",
                     json={"supersedes": [new["id"]]})["fact"]
    html = page(owner_client.get(reverse("fact_detail", args=[old["id"]])))
    assert "replaced" in html.select_one("#validity").text
    links = [a["href"] for a in html.select("#replaced-by a")]
    assert links == [reverse("fact_detail", args=[new["id"]]), reverse("fact_detail", args=[newest["id"]])]
    middle = page(owner_client.get(reverse("fact_detail", args=[new["id"]])))
    assert [a["href"] for a in middle.select("ul.replaced a")] == [reverse("fact_detail", args=[old["id"]])]
    assert middle.select_one("button[value=unreplace]")
    top = page(owner_client.get(reverse("fact_detail", args=[newest["id"]])))
    assert "current, with no end" in top.select_one("#validity").text
    assert [a["href"] for a in top.select("ul.replaced a")] == [reverse("fact_detail", args=[new["id"]])]


def test_a_facts_page_marks_it_replaced_sets_its_end_and_takes_both_back(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        a = add(api, f"The owner's landlord is Mr Okafor ({t}).")["id"]
        b = add(api, f"The owner's landlord is Ms Lindqvist ({t}).")["id"]
    url = reverse("fact_validity", args=[a])
    r = owner_client.post(url, {"action": "replace", "superseded_by": b}, follow=True)
    assert f"Fact #{a} is replaced by #{b}." in r.content.decode()
    with live_memory.client() as api:
        assert api.get(f"/facts/{a}").json()["superseded_by"] == b
        [entry] = api.get("/history", params={"fact_id": a, "limit": 1}).json()["entries"]
        assert entry["client"] == "dashboard owner" and entry["note"] == "lifecycle, from its page"
    # b cannot be replaced by a, which it replaced: the memory's refusal, in words.
    loop = owner_client.post(reverse("fact_validity", args=[b]), {"action": "replace", "superseded_by": a}, follow=True)
    assert "Nothing was changed" in soup(loop).select_one("#alerts").text
    owner_client.post(url, {"action": "unreplace"})
    day = (datetime.now(UTC) + timedelta(days=30)).date()
    r = owner_client.post(url, {"action": "until", "valid_until": day.isoformat()}, follow=True)
    assert f"current until {day:%Y-%m-%d} 23:59" in r.content.decode()
    with live_memory.client() as api:
        fact_now = api.get(f"/facts/{a}").json()
        assert fact_now["superseded_by"] is None
        assert fact_now["valid_until"].startswith(f"{day.isoformat()}T23:59:59.999999")
    owner_client.post(url, {"action": "forever"})
    with live_memory.client() as api:
        assert api.get(f"/facts/{a}").json()["valid_until"] is None
    empty = owner_client.post(url, {"action": "replace", "superseded_by": ""}, follow=True)
    assert "Give the id" in soup(empty).select_one("#alerts").text


# -- the recall debugger and the Recalls page -----------------------------------------------

def test_the_debugger_recalls_as_of_a_day_and_with_stale_facts_marked(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old, new = replaced_pair(api, t)
    q = f"Who is the owner's dentist in Leeds {t}?"
    now = page(owner_client.get(reverse("recall"), {"q": q}))
    fused = now.select("#columns section:nth-of-type(3) li[data-fact-id]")
    assert str(old["id"]) not in [li["data-fact-id"] for li in fused]

    stale = page(owner_client.get(reverse("recall"), {"q": q, "include_stale": "on", "pin": old["id"]}))
    [li] = stale.select(f"#columns section:nth-of-type(3) li[data-fact-id='{old['id']}']")
    assert li.select_one(".flag-replaced").text == f"replaced by #{new['id']}"
    assert not stale.select(f"#columns li[data-fact-id='{new['id']}'] .flag-replaced")
    assert stale.select_one("#id_include_stale").has_attr("checked")
    assert "include_stale=on" in stale.select_one("#columns .why a")["href"]  # "pin" keeps it

    day = (datetime.now(UTC) - timedelta(days=5)).date().isoformat()
    then = page(owner_client.get(reverse("recall"), {"q": q, "as_of": day, "pin": new["id"]}))
    ids = [li["data-fact-id"] for li in then.select("#columns section:nth-of-type(3) li[data-fact-id]")]
    assert str(old["id"]) in ids and str(new["id"]) not in ids
    assert day in then.select_one("#recall-when").text
    pinned = page(owner_client.get(reverse("recall"), {"q": q, "pin": old["id"]}))
    assert "not current now" in pinned.select_one("#pin-current").text


def test_the_debugger_as_of_a_day_marks_a_fact_whose_text_was_edited_since(owner_client, live_memory):
    t = tag()
    created = stamp(datetime.now(UTC) - timedelta(days=10))
    with live_memory.client() as api:
        fid = api.post("/facts", json={"text": f"The owner's piano teacher is Ms Oduya {t}.", "created_at": created}).json()["id"]
        same = api.post("/facts", json={"text": f"The owner's piano is an upright Yamaha {t}.", "created_at": created}).json()["id"]
        api.patch(f"/facts/{fid}", json={"text": f"The owner's piano teacher is Mr Lindqvist {t}."})
    day = (datetime.now(UTC) - timedelta(days=5)).date().isoformat()
    then = page(owner_client.get(reverse("recall"), {"q": f"Who teaches the owner piano {t}?", "as_of": day}))
    fused = {li["data-fact-id"]: li for li in then.select("#columns section:nth-of-type(3) li[data-fact-id]")}
    assert fused[str(fid)].select_one(".flag-edited").text == "edited since"
    assert fused[str(same)].select_one(".flag-edited") is None
    now = page(owner_client.get(reverse("recall"), {"q": f"Who teaches the owner piano {t}?"}))
    assert not now.select("#columns .flag-edited")


def test_the_recalls_page_says_what_replaced_a_recalled_fact(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old = add(api, f"The owner's physiotherapist is Ana Ruiz ({t}).")["id"]
        api.post("/recall", json={"query": f"who is the owner's physiotherapist {t}", "limit": 3}, headers=AGENT)
        new = add(api, f"The owner's physiotherapist is Ben Cole ({t}).", json={"supersedes": [old]})["id"]
    listing = page(owner_client.get(reverse("recalls"), {"q": t}))
    mark = listing.select_one("table.recalls .flag-replaced")
    assert mark.text == f"replaced by #{new}" and mark.select_one("a")["href"] == reverse("fact_detail", args=[new])
    assert not listing.select("table.recalls .flag-edited")  # the replacement is the news, not an edit
    debug = listing.select_one("table.recalls td.actions a")["href"]
    band = page(owner_client.get(debug)).select_one(f"#then-now tr[data-fact-id='{old}']")
    assert f"replaced by #{new}" in band.text


# -- adding a fact --------------------------------------------------------------------------


def test_the_end_of_a_day_is_its_last_microsecond_utc():
    from dashboard.forms import AsOfDay, end_of_day

    assert end_of_day(datetime(2026, 3, 1).date()) == "2026-03-01T23:59:59.999999Z"
    assert AsOfDay.time(datetime.now(UTC).date()) is None  # today is now
