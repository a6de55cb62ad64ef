"""The contradictions queue at a person's size (issue 46 §2): its pairs grouped by what their old
fact is about, an import's pairs under the import, and "both true for all of these" deciding a
group at once, undoable at once. Against both memories over real HTTP with the real model."""

from __future__ import annotations

import uuid

import httpx

import pytest
from django.urls import reverse

from dashboard.subjects import subject
from tests.html import page, soup

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def add(api, text: str) -> dict:
    r = api.post("/facts", json={"text": text})
    assert r.status_code == 201, r.text
    return r.json()


def proposed(api, old: str, new: str) -> tuple[int, int]:
    o = add(api, old)["id"]
    n = add(api, new)
    assert o in [c["id"] for c in n["conflicts"]], (old, new, n["conflicts"])
    return o, n["id"]


def open_pairs(api) -> set[tuple[int, int]]:
    body = api.get("/conflicts", params={"limit": 100}).json()
    return {(c["old"]["id"], c["new"]["id"]) for c in body["conflicts"]}


@pytest.mark.parametrize("text,about", [
    ("The standup is at 9:30.", "the standup"),
    ("Kerensa Aldous is Fitzroy Aldous's mother.", "Kerensa Aldous"),
    ("Umar's sister is Ingrid.", "Umar"),
    ("Biscuit the dog weighs 12 kg.", "Biscuit"),
    ("Has a son named Callum who is 9.", "the owner"),
    ("User works as a physiotherapist.", "the owner"),
    ("The owner's rent is 1,450 a month.", "the owner"),
    ("I live in Porto.", "the owner"),
])
def test_a_pair_is_about_what_its_old_fact_opens_with(text, about):
    assert subject(text) == about


def test_pairs_about_one_subject_are_one_group_and_both_true_for_all_decides_them(owner_client, live_memory):
    name = "Ottilie" + uuid.uuid4().hex[:4]
    with live_memory.client() as api:
        first = proposed(api, f"{name}'s swimming lesson is on Tuesdays at 5 pm.",
                         f"{name}'s swimming lesson is on Thursdays at 5 pm.")
        second = proposed(api, f"{name}'s piano teacher is Ms Adeyemi.", f"{name}'s piano teacher is Mr Castell.")
    html = page(owner_client.get(reverse("contradictions")))
    heading = next(g for g in html.select("#conflicts > li.group") if name in g.h2.text)
    assert heading.h2.text.split()[:2] == ["About", name] and "2 pairs" in heading.h2.text
    # The group's pairs follow its heading, before the next heading.
    rows = []
    for sibling in heading.find_next_siblings("li"):
        if "group" in sibling.get("class", []):
            break
        rows.append(sibling["id"])
    assert set(rows) == {f"conflict-{o}-{n}" for o, n in (first, second)}
    form = heading.select_one("form.resolve-all")
    assert form.button.text == "Both true for all 2"
    fields = [(i["name"], i["value"]) for i in form.select("input[type=hidden]") if i["name"] != "csrfmiddlewaretoken"]
    done = owner_client.post(reverse("contradiction_keep_all"), dict_of(fields), headers=HTMX)
    assert done.status_code == 200
    answer = soup(done)
    assert "Marked 2 pairs both true" in answer.select_one("li.group.resolved").text
    assert {li["id"] for li in answer.select("li[hx-swap-oob=delete]")} == set(rows)
    assert answer.select_one("#conflicts-total[hx-swap-oob]") is not None
    with live_memory.client() as api:
        assert not {first, second} & open_pairs(api)
    undo = answer.select_one("form.undo")
    entries = [i["value"] for i in undo.select("input[name=entry]")]
    assert len(entries) == 2
    undone = owner_client.post(reverse("contradiction_undo_all"), {"entry": entries}, headers=HTMX)
    assert undone.status_code == 204 and undone.headers["HX-Refresh"] == "true"
    with live_memory.client() as api:
        assert {first, second} <= open_pairs(api)


def test_an_imports_pairs_are_under_the_import(owner_client, live_memory):
    t = uuid.uuid4().hex[:4]
    note = f"import of memories-{t}.json (json)"
    with live_memory.client() as api:
        olds = [add(api, f"The owner's dentist is Dr Kowalski in Leeds ({t}).")["id"],
                add(api, f"The gym opens at 6:00 on weekdays ({t}).")["id"]]
        r = api.post("/facts/batch", json={"note": note, "facts": [
            {"text": f"The owner's dentist is Dr Abara in Leeds ({t})."},
            {"text": f"The gym opens at 7:00 on weekdays ({t})."}]})
        assert r.status_code == 200, r.text
        news = [x["id"] for x in r.json()["results"]]
        assert all(o in [c["id"] for c in x["conflicts"]] for o, x in zip(olds, r.json()["results"])), r.json()
    html = page(owner_client.get(reverse("contradictions")))
    heading = next(g for g in html.select("#conflicts > li.group") if t in g.h2.text)
    assert heading.h2.text.startswith(f"From the {note}") and "2 pairs" in heading.h2.text
    ids = {i["value"] for i in heading.select("input[name=pair]")}
    assert ids == {f"{o}-{n}" for o, n in zip(olds, news)}


def test_a_single_pair_has_no_group_heading(owner_client, live_memory):
    name = "Wenceslas" + uuid.uuid4().hex[:4]
    with live_memory.client() as api:
        o, n = proposed(api, f"{name}'s birthday is on 3 May.", f"{name}'s birthday is on 9 May.")
    html = page(owner_client.get(reverse("contradictions")))
    assert html.select_one(f"#conflict-{o}-{n}") is not None
    assert not [g for g in html.select("#conflicts > li.group") if name in g.text]


@pytest.mark.parametrize("pairs", [[], ["12"], ["12-12"], ["a-b"], ["1-2"] * 21])
def test_a_group_form_that_names_no_pairs_is_a_clear_error(owner_client, pairs):
    r = owner_client.post(reverse("contradiction_keep_all"), {"pair": pairs})
    assert r.status_code == 400
    assert "not pairs of facts" in r.content.decode()


def test_a_pair_decided_since_is_left_alone_and_said(owner_client, live_memory):
    name = "Radomir" + uuid.uuid4().hex[:4]
    with live_memory.client() as api:
        a = proposed(api, f"{name}'s dentist is Dr Halloran.", f"{name}'s dentist is Dr Okafor.")
        api.delete(f"/facts/{a[1]}")
    r = owner_client.post(reverse("contradiction_keep_all"), {"pair": [f"{a[0]}-{a[1]}"]}, follow=True)
    assert r.status_code == 200
    assert f"Left alone, deleted or decided since: #{a[0]} and #{a[1]}" in r.content.decode()


def dict_of(fields: list[tuple[str, str]]) -> dict:
    out: dict = {}
    for k, v in fields:
        out.setdefault(k, []).append(v)
    return out


@pytest.mark.parametrize("name,form", [("contradiction_keep_all", {"pair": ["1-2", "3-4"]}),
                                       ("contradiction_undo_all", {"entry": ["7", "8"]}),
                                       ("contradiction_setting", {"proposals": "replace"})])
def test_a_memory_that_is_down_is_a_page_that_says_so(owner_client, mock_memory, name, form):
    def handler(request):
        raise httpx.ConnectError("refused")

    mock_memory(handler)
    r = owner_client.post(reverse(name), form)
    assert r.status_code == 503
    assert "memory service" in r.content.decode() and "Traceback" not in r.content.decode()


def test_undo_all_without_entries_is_a_clear_error(owner_client):
    r = owner_client.post(reverse("contradiction_undo_all"), {"entry": ["x"]})
    assert r.status_code == 400 and "Nothing to undo" in r.content.decode()
