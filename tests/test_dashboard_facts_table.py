"""The facts table: short cells that never break mid-word, long text behind an expand, a source
picker, "select all N matching" for bulk delete with "Undo all" after it, and an inline editor
with the cursor in the text. Against the real service."""

import uuid

import pytest
from django.urls import reverse

from dashboard.views import bulk_delete as bulk_delete_view
from tests.html import page

pytestmark = pytest.mark.django_db


def store(api, text, type="fact", source="owner") -> int:
    return api.post("/facts", json={"text": text, "type": type, "source": source}).json()["id"]


def test_ids_types_and_sources_never_wrap_on_facts_trash_and_audit(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        fid = store(api, f"The dentist is on Tuesday ({tag}).", "log", "calendar")
        api.delete(f"/facts/{fid}")
        api.post(f"/history/{api.get('/history', params={'fact_id': fid, 'op': 'delete'}).json()['entries'][0]['id']}/undo")
    row = page(owner_client.get(reverse("facts"))).select_one(f"#fact-{fid}")
    cells = row.select("td")
    assert "num" in cells[1]["class"]  # the id
    assert "nowrap" in cells[3]["class"] and cells[3].text.strip() == "log"
    assert "nowrap" in cells[4]["class"] and cells[4].text.strip() == "calendar"
    audit = page(owner_client.get(reverse("audit"), {"fact": fid}))
    assert {s.text for s in audit.select("table.history span.nowrap")} >= {"log", "calendar"}
    with live_memory.client() as api:
        api.delete(f"/facts/{fid}")
    [trashed] = [r for r in page(owner_client.get(reverse("trash"))).select("table.history tbody tr") if tag in r.text]
    assert "nowrap" in trashed.select("td")[4]["class"] and trashed.select("td")[4].text.strip() == "log"


def test_long_text_is_shortened_with_an_expand_and_short_text_is_not(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    long_text = f"The owner's long note ({tag}): " + "the garden needs water every evening in summer. " * 30
    with live_memory.client() as api:
        long_id = store(api, long_text)
        short_id = store(api, f"Short note ({tag}).")
    listing = page(owner_client.get(reverse("facts")))
    details = listing.select_one(f"#fact-{long_id} td.text details")
    assert len(details.select_one("summary").text) < 400 and "show all" in details.select_one("summary").text
    assert long_text.strip() in details.text
    assert listing.select_one(f"#fact-{short_id} td.text details") is None
    assert listing.select_one(f"#fact-{short_id} td.text").text == f"Short note ({tag})."


def test_the_source_filter_suggests_the_sources_of_the_newest_facts(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        store(api, f"Lunch with Anna ({tag}).", source=f"calendar-{tag}")
        store(api, f"Anna likes tulips ({tag}).", source=f"chat-{tag}")
    listing = page(owner_client.get(reverse("facts")))
    source = listing.select_one("#id_source_filter")
    options = [o["value"] for o in listing.select(f"datalist#{source['list']} option")]
    assert {f"calendar-{tag}", f"chat-{tag}"} <= set(options)
    assert len(options) == len(set(options))


def test_select_all_matching_deletes_what_the_filters_match_and_undo_all_puts_it_back(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        ids = [store(api, f"Grocery item {n}: {word} ({tag}).") for n, word in enumerate(["milk", "bread", "eggs"])]
        other = store(api, f"Something else entirely ({uuid.uuid4().hex[:6]}).")
    listing = page(owner_client.get(reverse("facts"), {"q": tag}))
    form = listing.select_one("form#bulk-all")
    assert form.select_one("button").text == "Select all 3 matching…"
    data = {i["name"]: i["value"] for i in form.select("input")}
    assert data["q"] == tag and data["all"] == "yes"

    confirm = page(owner_client.post(form["action"], data))
    shown = [int(i["value"]) for i in confirm.select("form input[name=ids]")]
    assert sorted(shown) == sorted(ids) and other not in shown
    assert "All 3 facts matching" in confirm.select_one("#matching").text
    done = owner_client.post(reverse("fact_bulk_delete"), {"ids": shown, "confirm": "yes"})
    assert done.status_code == 302 and done["Location"].startswith(reverse("fact_bulk_undo"))
    with live_memory.client() as api:
        assert all(api.get(f"/facts/{i}").status_code == 404 for i in ids)
        assert api.get(f"/facts/{other}").status_code == 200

    undo_page = page(owner_client.get(done["Location"]))
    undo = undo_page.select_one("form#undo-all")
    assert undo.select_one("button").text == "Undo all 3"
    entries = [i["value"] for i in undo.select("input[name=entry]")]
    back = owner_client.post(undo["action"], {"entry": entries}, follow=True)
    assert "Put back 3 facts" in page(back).select_one("#alerts").text
    with live_memory.client() as api:
        assert all(api.get(f"/facts/{i}").status_code == 200 for i in ids)
        restores = [api.get("/history", params={"fact_id": i}).json()["entries"][0] for i in ids]
    assert {(e["op"], e["client"]) for e in restores} == {("restore", "dashboard owner")}


def test_select_all_matching_stops_at_the_cap_and_says_so(owner_client, live_memory, monkeypatch):
    monkeypatch.setattr(bulk_delete_view, "BULK_LIMIT", 2)  # what "all matching" takes at most
    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        ids = [store(api, f"Capped item {n} ({tag}).") for n in range(3)]
    confirm = page(owner_client.post(reverse("fact_bulk_delete"), {"all": "yes", "q": tag}))
    shown = [int(i["value"]) for i in confirm.select("form input[name=ids]")]
    assert shown == ids[:0:-1]  # the newest two
    assert "The newest 2 of the 3 facts matching" in confirm.select_one("#matching").text


def test_undo_all_undoes_deletes_only(owner_client, live_memory):
    with live_memory.client() as api:
        fid = store(api, f"Kept fact ({uuid.uuid4().hex[:6]}).")
        [added] = api.get("/history", params={"fact_id": fid}).json()["entries"]
    assert owner_client.post(reverse("fact_bulk_undo"), {"entry": [added["id"]]}).status_code == 302
    with live_memory.client() as api:
        assert api.get(f"/facts/{fid}").status_code == 200  # an add in a crafted link is not undone


def test_the_inline_editor_puts_the_cursor_in_the_text(owner_client, live_memory):
    with live_memory.client() as api:
        fid = store(api, f"Leo swims ({uuid.uuid4().hex[:6]}).")
    editor = page(owner_client.get(reverse("fact_edit", args=[fid]), headers={"HX-Request": "true"}))
    assert editor.select_one(f"textarea#edit-text-{fid}").has_attr("autofocus")
