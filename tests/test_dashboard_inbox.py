"""The owner's review (issue 30 §2 and §4) against both memories over real HTTP with the real
model: the Inbox (an agent's unreviewed facts by client and day, what the memory found on write,
approve, edit, delete, replace and both true in place, each undone from its line, "approve all
from this client today" and "approve all shown" with their undo), the review setting and pending
facts, a fact's provenance, the facts list's client, source-prefix and review filters, and the
clients the audit log and the Recalls page suggest. Then what the owner sees when the memory is
down or older, CSRF and login, on a memory on httpx.MockTransport."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from django.test import Client
from django.urls import reverse

from tests.fake_memory import FakeMemory, fact
from tests.html import page, soup

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
AGENT = {"X-Memory-Client": "claude-code 2.1.0"}
OWNER = {"X-Memory-Client": "dashboard"}


@pytest.fixture(scope="module")
def service(either_service):
    """live_memory points the dashboard at this: each live test runs against both memories."""
    return either_service


def tag() -> str:
    return uuid.uuid4().hex[:6]


def add(api, text, headers=AGENT, **json):
    r = api.post("/facts", json={"text": text, **json}, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


def got(api, fid) -> dict:
    return api.get(f"/facts/{fid}").json()


def inbox_row(client, fid, **params):
    """A fact's row in the inbox, reading older pages until it is there."""
    params = dict(params)
    while True:
        html = page(client.get(reverse("inbox"), params))
        row = html.select_one(f"#inbox-{fid}")
        nxt = html.select_one("nav.pager a[rel=next]")
        if row is not None or nxt is None:
            return row, html
        params["cursor"] = re.search(r"cursor=([^&]+)", nxt["href"]).group(1)


def fields(form) -> dict:
    return {i["name"]: i["value"] for i in form.select("input[type=hidden]") if i["name"] != "csrfmiddlewaretoken"}


def submit(client, form, button=None, **extra):
    """Post an htmx form as the browser would: its hidden fields and the button's name and value."""
    data = {**fields(form), **({button["name"]: button["value"]} if button is not None and button.get("name") else {}),
            **extra}
    return client.post(form["hx-post"], data, headers=HTMX)


# -- the inbox ------------------------------------------------------------------------------

def test_the_inbox_shows_an_agents_facts_by_client_and_day_with_what_the_memory_found(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        mine = add(api, f"The owner's standup is at 9:30 in room Kestrel ({t}).", headers=OWNER)["id"]
        dentist = add(api, f"The owner's dentist is Dr Kowalski in Leeds ({t}).", headers=OWNER)["id"]
        near = add(api, f"The owner's cat Pixel is afraid of the hoover ({t}).")["id"]
        forced = add(api, f"The owner's cat Pixel is scared of the hoover ({t}).", force=True)["id"]
        replacing = add(api, f"The owner's dentist is Dr Abara in Leeds ({t}).", supersedes=[dentist])["id"]
        proposing = add(api, f"The owner's standup is at 9:00 in room Kestrel ({t}).")
        total = api.get("/facts", params={"reviewed": "false", "limit": 1}).json()["total"]
    assert mine in [c["id"] for c in proposing["conflicts"]]
    row, html = inbox_row(owner_client, proposing["id"])
    assert html.select_one(f"#inbox-{mine}") is None and html.select_one(f"#inbox-{dentist}") is None  # the owner's own
    group = row.find_parent("section", class_="group")
    assert group.select_one("h2 .writer").text == "claude-code 2.1.0" and "today" in group.select_one("h2").text
    assert {f"inbox-{i}" for i in (near, forced, replacing, proposing["id"])} <= {li["id"] for li in group.select("li.item")}
    # What the memory found on write: its notes, linked, and the contradiction it opened.
    note = html.select_one(f"#inbox-{forced} .note")
    assert f"stored though a near duplicate of #{near}" in note.text
    assert note.select_one("a")["href"] == reverse("fact_detail", args=[near])
    assert f"replaces #{dentist}" in html.select_one(f"#inbox-{replacing} .note").text
    assert "Dr Kowalski" in html.select_one(f"#inbox-{replacing} .replaced-note").text
    conflict = row.select_one(".conflict-note")
    assert f"May replace #{mine}" in conflict.text and "differs: 9:30 / 9:00" in conflict.text
    assert [b.text for b in conflict.select("button")] == [f"Replace #{mine}", "Both true"]
    assert [b["data-key"] for b in row.select("[data-key]")] == ["r", "b", "a", "e", "d"]
    assert row.select_one("a[data-key=e]")["href"] == reverse("fact_edit", args=[proposing["id"]])
    assert html.select_one("#inbox-total").text.startswith(f"{total} facts wait for your review")
    assert html.select_one("#inbox-count").text == f"{total} unreviewed"  # the navigation's count
    assert html.select_one("header nav a[href='/inbox/'][aria-current=page]")
    assert "j" in html.select_one("#keys").text and html.select_one("script[src$='inbox.js']").get("nonce")
    assert html.select_one("#review-setting input[name=mode][value=after]").has_attr("checked")
    assert live_memory.secret not in html.text


def test_approve_is_done_in_place_and_undone_from_its_line(owner_client, live_memory):
    with live_memory.client() as api:
        fid = add(api, f"The owner's bike is a green Brompton ({tag()}).")["id"]
    row, _ = inbox_row(owner_client, fid)
    form = row.select_one("button[data-key=a]").find_parent("form")
    done = submit(owner_client, form)
    assert done.status_code == 200 and "<html" not in done.content.decode()
    line = soup(done).select_one(f"li#inbox-{fid}.done")
    assert f"Approved #{fid}" in line.text and "green Brompton" in line.text
    for oob in ("#inbox-count", "#inbox-total", "#service-status"):
        assert soup(done).select_one(f"{oob}[hx-swap-oob]") is not None
    with live_memory.client() as api:
        assert got(api, fid)["reviewed_at"] is not None
        [entry] = api.get("/history", params={"op": "review", "limit": 1}).json()["entries"]
        assert entry["client"] == "dashboard owner" and entry["after"]["ids"] == [fid]
    undo = line.select_one("form.undo")
    back = submit(owner_client, undo)
    again = soup(back).select_one(f"li#inbox-{fid}")
    assert "done" not in again["class"] and "undone" in again.text and again.select_one("button[data-key=a]")
    with live_memory.client() as api:
        assert got(api, fid)["reviewed_at"] is None
    twice = submit(owner_client, form)  # approved, then approved again from a stale row
    assert "Approved" in soup(twice).text
    assert "approved already" in soup(submit(owner_client, form)).select_one(f"#inbox-{fid}").text


def test_delete_is_done_in_place_and_undone_from_its_line(owner_client, live_memory):
    with live_memory.client() as api:
        fid = add(api, f"The owner was born on Mars ({tag()}).")["id"]
    row, _ = inbox_row(owner_client, fid)
    done = submit(owner_client, row.select_one("button[data-key=d]").find_parent("form"))
    line = soup(done).select_one(f"li#inbox-{fid}.done")
    assert f"Deleted #{fid}" in line.text and line.select_one("s")
    with live_memory.client() as api:
        assert api.get(f"/facts/{fid}").status_code == 404
        [entry] = api.get("/history", params={"fact_id": fid, "op": "delete"}).json()["entries"]
        assert entry["note"] == "deleted from the inbox"
    back = submit(owner_client, line.select_one("form.undo"))
    assert soup(back).select_one(f"li#inbox-{fid}:not(.done)") is not None
    with live_memory.client() as api:
        assert got(api, fid)["reviewed_at"] is None  # back as it was: still waiting
    gone = owner_client.post(reverse("inbox_delete"), {"id": 9_000_000_000}, headers=HTMX)
    assert gone.status_code == 200 and "gone already" in soup(gone).text


@pytest.mark.parametrize("resolution,says", [("replace", "replaces"), ("keep_both", "Both")])
def test_replace_and_both_true_resolve_approve_and_undo_together(owner_client, live_memory, resolution, says):
    t = tag()
    with live_memory.client() as api:
        old = add(api, f"The owner's gym is PureGym on King Street ({t}).", headers=OWNER)["id"]
        new = add(api, f"The owner's gym is Nuffield on King Street ({t}).")
        assert old in [c["id"] for c in new["conflicts"]]
        new = new["id"]
    row, _ = inbox_row(owner_client, new)
    form = row.select_one(f".conflict-note input[name=old][value='{old}']").find_parent("form")  # (other tests' gyms too)
    button = form.select_one(f"button[value={resolution}]")
    done = submit(owner_client, button.find_parent("form"), button)
    line = soup(done).select_one(f"li#inbox-{new}.done.success")
    assert says in line.text and "approved" in line.text
    with live_memory.client() as api:
        o, n = got(api, old), got(api, new)
        assert n["reviewed_at"] is not None
        assert o["superseded_by"] == (new if resolution == "replace" else None)
        open_now = {(c["old"]["id"], c["new"]["id"]) for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"]}
        assert (old, new) not in open_now
    back = submit(owner_client, line.select_one("form.undo"))
    again = soup(back).select_one(f"li#inbox-{new}")
    assert again.select_one(f".conflict-note input[name=old][value='{old}']")  # the pair is open again
    with live_memory.client() as api:
        assert got(api, new)["reviewed_at"] is None and got(api, old)["superseded_by"] is None


def test_edit_in_place_saves_and_approves_and_cancel_brings_the_row_back(owner_client, live_memory):
    with live_memory.client() as api:
        fid = add(api, f"The owner's nephew is called Tomm ({tag()}).")["id"]
    row, _ = inbox_row(owner_client, fid)
    editor = soup(owner_client.get(row.select_one("a[data-key=e]")["hx-get"], headers=HTMX))
    form = editor.select_one(f"li#inbox-{fid}.editing form.inline-edit")
    assert form["action"] == reverse("fact_edit", args=[fid])  # without JavaScript, the fact's own edit page
    text = form.select_one("textarea")
    assert text.has_attr("autofocus") and "Tomm" in text.text
    cancel = owner_client.get(form.select_one("button.cancel")["hx-get"], headers=HTMX)
    assert soup(cancel).select_one(f"li#inbox-{fid}:not(.editing) button[data-key=a]")
    saved = owner_client.post(form["hx-post"], {"text": text.text.replace("Tomm", "Tom"), "type": "fact", "source": "chat"},
                              headers=HTMX)
    line = soup(saved).select_one(f"li#inbox-{fid}.done")
    assert f"Saved and approved #{fid}" in line.text and line.select_one("form.undo")
    with live_memory.client() as api:
        f = got(api, fid)
        assert "called Tom " in f["text"] and f["source"] == "chat" and f["reviewed_at"] is not None
    back = soup(submit(owner_client, line.select_one("form.undo"))).select_one(f"li#inbox-{fid}")
    assert "holds what it held before" in back.text and "Tomm" in back.text  # written back by the dashboard: approved
    with live_memory.client() as api:
        assert "called Tomm " in got(api, fid)["text"]
    empty = owner_client.post(form["hx-post"], {"text": "", "type": "fact"}, headers=HTMX)
    assert empty.status_code == 422 and soup(empty).select_one(".editing .alert.error")
    assert owner_client.get(reverse("inbox_edit", args=[fid])).status_code == 302  # no JavaScript: the edit page


def test_approve_all_from_this_client_today_counts_and_undoes(owner_client, live_memory):
    t = tag()
    who = {"X-Memory-Client": f"night-agent-{t} 0.1"}
    with live_memory.client() as api:
        ids = [add(api, text, headers=who)["id"] for text in (
            f"The owner's train leaves at 7:12 ({t}).", f"The owner likes oat milk in coffee ({t}).",
            f"The owner's passport number ends in 443 ({t}).")]
        other = add(api, f"The owner's favourite tree is the rowan ({t}).")["id"]
    row, html = inbox_row(owner_client, ids[0])
    group = row.find_parent("section", class_="group")
    assert group.select_one(".writer").text == f"night-agent-{t} 0.1"
    form = group.select_one("form.approve-group")
    assert form.select_one("button").text.strip() == "Approve all 3 from this client today"
    done = submit(owner_client, form)
    answer = soup(done)
    banner = answer.select_one("#inbox-list #inbox-banner")
    assert "Approved 3 facts from this client" in banner.text
    assert all(answer.select_one(f"li#inbox-{i}.done") for i in ids)
    with live_memory.client() as api:
        assert all(got(api, i)["reviewed_at"] for i in ids) and got(api, other)["reviewed_at"] is None
    back = submit(owner_client, banner.select_one("form.undo"))
    assert all(soup(back).select_one(f"li#inbox-{i}:not(.done)") for i in ids)
    with live_memory.client() as api:
        assert not any(got(api, i)["reviewed_at"] for i in ids)
    # "Approve all shown": every fact the page showed, the others from other clients included.
    _, html = inbox_row(owner_client, ids[0])
    shown_form = html.select_one("form.approve-all")
    n = len(html.select("#inbox-list li.item"))
    assert shown_form.select_one("button").text == f"Approve all {n} shown"
    done = soup(submit(owner_client, shown_form))
    assert f"Approved {n} facts shown" in done.select_one("#inbox-banner").text
    assert not done.select("#inbox-list li.item:not(.done)")
    with live_memory.client() as api:
        assert got(api, other)["reviewed_at"] is not None
    submit(owner_client, done.select_one("#inbox-banner form.undo"))
    with live_memory.client() as api:
        assert got(api, other)["reviewed_at"] is None and not any(got(api, i)["reviewed_at"] for i in ids)


def test_a_clients_approve_all_reaches_past_the_page_and_the_inbox_pages(owner_client, live_memory, monkeypatch):
    from dashboard.views import inbox

    t = tag()
    who = {"X-Memory-Client": f"batch-agent-{t}"}
    with live_memory.client() as api:
        ids = [add(api, f"The owner's {what} is in the {where} ({t}).", headers=who)["id"]
               for what, where in (("umbrella", "hall cupboard"), ("passport", "desk drawer"), ("drill", "garage"))]
    monkeypatch.setattr(inbox, "PAGE_SIZE", 2)
    html = page(owner_client.get(reverse("inbox")))
    assert [int(li["data-id"]) for li in html.select("#inbox-list li.item")] == ids[:0:-1]  # the newest two
    assert html.select_one("form.approve-group button").text.strip() == "Approve all 3 from this client today"
    assert html.select_one("#approve-shown").text == "Approve all 2 shown"  # not the same: both offered
    assert ", the newest 2 here" in html.select_one("#inbox-total").text
    older = page(owner_client.get(reverse("inbox") + html.select_one("nav.pager a[rel=next]")["href"]))
    assert int(older.select_one("#inbox-list li.item")["data-id"]) == ids[0]
    assert older.select_one("nav.pager a")["href"] == reverse("inbox")
    done = soup(submit(owner_client, html.select_one("form.approve-group")))
    assert "Approved 3 facts" in done.select_one("#inbox-banner").text
    with live_memory.client() as api:
        assert all(got(api, i)["reviewed_at"] for i in ids)  # the one past the page too
    bad = owner_client.get(reverse("inbox"), {"cursor": "not-a-cursor"})
    assert bad.status_code == 400 and "does not exist" in soup(bad).select_one("#owner-problem").text


def test_without_javascript_each_action_comes_back_to_the_inbox_with_a_message(owner_client, live_memory):
    with live_memory.client() as api:
        a = add(api, f"The owner's locker is number 12 ({tag()}).")["id"]
        b = add(api, f"The owner's bank is Triodos ({tag()}).")["id"]
    r = owner_client.post(reverse("inbox_approve"), {"ids": a})
    assert r.status_code == 302 and r["Location"] == reverse("inbox")
    assert f"Approved #{a}" in page(owner_client.get(r["Location"])).select_one("#alerts").text
    r = owner_client.post(reverse("inbox_delete"), {"id": b})
    assert r.status_code == 302 and "Deleted" in page(owner_client.get(r["Location"])).select_one("#alerts").text
    with live_memory.client() as api:
        [entry] = api.get("/history", params={"fact_id": b, "op": "delete"}).json()["entries"]
    r = owner_client.post(reverse("inbox_undo"), {"entries": entry["id"], "id": b})
    assert r.status_code == 302
    with live_memory.client() as api:
        assert got(api, b)["reviewed_at"] is None and got(api, a)["reviewed_at"] is not None


# -- the review setting and pending facts ---------------------------------------------------

def test_the_review_setting_is_saved_and_pending_facts_are_marked(owner_client, live_memory):
    t = tag()
    try:
        r = owner_client.post(reverse("inbox_settings"), {"mode": "before", "trusted": f"ci-bot\n  import:notes-{t}\n\nci-bot"})
        assert r.status_code == 302
        html = page(owner_client.get(r["Location"]))
        assert "Review before" in html.select_one("#alerts").text
        assert html.select_one("#review-setting input[value=before]").has_attr("checked")
        assert html.select_one("#id_trusted").text == f"ci-bot\nimport:notes-{t}"
        with live_memory.client() as api:
            assert api.get("/settings").json()["review"] == {"mode": "before", "trusted": ["ci-bot", f"import:notes-{t}"]}
            pending = add(api, f"The owner's new number ends in 0412 ({t}).")
            trusted = add(api, f"The build server is called Hopper ({t}).", headers={"X-Memory-Client": "ci-bot 3.2"})
            by_source = add(api, f"The owner's notes app is Obsidian ({t}).", source=f"import:notes-{t}")
        assert pending["pending"] is True and trusted["fact"]["reviewed_at"] and by_source["fact"]["reviewed_at"]
        row, html = inbox_row(owner_client, pending["id"])
        assert row.select_one(".flag-pending").text == "pending: not recalled until approved"
        assert html.select_one(f"#inbox-{trusted['id']}") is None and html.select_one(f"#inbox-{by_source['id']}") is None
        listing = page(owner_client.get(reverse("facts"), {"q": t}))
        assert "pending: not recalled until approved" in listing.select_one(f"#fact-{pending['id']}").text
        assert listing.select_one(f"#fact-{trusted['id']} .flag-pending") is None
        detail = page(owner_client.get(reverse("fact_detail", args=[pending["id"]])))
        assert "pending: not recalled until approved" in detail.select_one("#review-state").text
        bad = owner_client.post(reverse("inbox_settings"), {"mode": "before", "trusted": "é" * 3})
        assert "was not changed" in page(owner_client.get(bad["Location"])).select_one("#alerts").text
        assert owner_client.post(reverse("inbox_settings"), {"mode": "sometimes"}).status_code == 400
    finally:
        with live_memory.client() as api:
            api.put("/settings", json={"review": {"mode": "after", "trusted": []}})


# -- provenance -----------------------------------------------------------------------------

def test_a_facts_page_says_who_wrote_it_when_and_whether_it_was_reviewed(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        fid = add(api, f"The owner's sister Priya lives in Lisbon ({t}).", source="chat")["id"]
        mine = add(api, f"The owner's allotment is plot 14 ({t}).", headers=OWNER)["id"]
    html = page(owner_client.get(reverse("fact_detail", args=[fid])))
    assert html.select_one("#written .writer").text == "claude-code 2.1.0" and html.select_one("#written time")["datetime"]
    assert "not reviewed yet" in html.select_one("#review-state").text
    assert "pending" not in html.select_one("#review-state").text  # review after: recalled already
    form = html.select_one("#review-state form")
    r = owner_client.post(form["action"], fields(form))
    assert r.status_code == 302 and r["Location"] == reverse("fact_detail", args=[fid])
    html = page(owner_client.get(r["Location"]))
    assert f"Approved #{fid}" in html.select_one("#alerts").text
    assert html.select_one("#review-state").text.startswith("reviewed on ") and not html.select("#approve-fact")
    mine_page = page(owner_client.get(reverse("fact_detail", args=[mine])))
    assert mine_page.select_one("#written .writer").text == "dashboard"
    assert mine_page.select_one("#review-state").text.startswith("reviewed on ")


def test_the_facts_list_filters_by_client_source_prefix_and_review(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        agent = add(api, f"The owner's boiler was serviced in March ({t}).")["id"]
        imported = add(api, f"The owner's boiler is a Vaillant ({t}).", headers={"X-Memory-Client": "cli"},
                       source="import:chatgpt")["id"]
        mine = add(api, f"The owner's boiler code is F28 ({t}).", headers=OWNER, source="manual")["id"]

    def ids(**params):
        html = page(owner_client.get(reverse("facts"), {"q": t, **params}))
        return {int(tr["data-fact-id"]) for tr in html.select("#fact-rows tr[data-fact-id]")}, html

    assert ids()[0] == {agent, imported, mine}
    assert ids(client="claude-code")[0] == {agent}  # the name without its version
    assert ids(client="claude-code 2.1.0")[0] == {agent}
    assert ids(source_prefix="import:")[0] == {imported}
    assert ids(reviewed="unreviewed")[0] == {agent, imported}
    found, html = ids(reviewed="reviewed", source_prefix="man")
    assert found == {mine}
    assert "reviewed" in html.select_one("#fact-count").text
    assert html.select_one("#id_reviewed option[selected]")["value"] == "reviewed"
    assert html.select_one("#id_source_prefix option[selected]")["value"] == "man"  # kept, though not suggested
    options = [o["value"] for o in html.select("#id_source_prefix option")]
    assert options[:2] == ["", "import:"] and "import:chatgpt" in options
    assert {"claude-code 2.1.0", "claude-code", "cli", "dashboard"} <= {o["value"] for o in html.select("#clients option")}
    assert "client=claude-code" in page(owner_client.get(reverse("facts"), {"client": "claude-code"})).select_one(
        "th.sortable a")["href"]
    bad = owner_client.get(reverse("facts"), {"client": "Zoë"})
    assert bad.status_code == 400 and "printable ASCII" in soup(bad).select_one("#filter-problem").text
    # "Select all matching" keeps the new filters.
    bulk = page(owner_client.get(reverse("facts"), {"q": t, "reviewed": "unreviewed"})).select_one("#bulk-all")
    assert {i["name"]: i["value"] for i in bulk.select("input[type=hidden]")}.get("reviewed") == "unreviewed"


def test_the_audit_log_and_the_recalls_page_suggest_the_clients_seen(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        fid = add(api, f"The owner's kayak is yellow ({t}).")["id"]
        api.post("/recall", json={"query": f"kayak colour {t}", "limit": 3}, headers={"X-Memory-Client": "opencode 0.9"})
        api.post("/facts/review", json={"ids": [fid]}, headers=OWNER)
    audit = page(owner_client.get(reverse("audit")))
    assert {"claude-code 2.1.0", "claude-code", "dashboard"} <= {o["value"] for o in audit.select("#clients option")}
    assert audit.select_one("#id_client")["list"] == "clients"
    assert "review" in [o["value"] for o in audit.select("#id_op option")]
    review = audit.select_one("tr.action-review")
    assert f"#{fid}" in review.text and "reviewed" in review.text
    undo = review.select_one("form")
    r = owner_client.post(undo["action"], {"next": "audit"})
    assert r.status_code == 302
    assert "wait in the Inbox again" in page(owner_client.get(r["Location"])).select_one("#alerts").text
    with live_memory.client() as api:
        assert got(api, fid)["reviewed_at"] is None
    recalls = page(owner_client.get(reverse("recalls")))
    assert {"opencode 0.9", "opencode"} <= {o["value"] for o in recalls.select("#clients option")}


# -- on a memory on httpx.MockTransport -----------------------------------------------------

def refused(request):
    raise httpx.ConnectError("refused")


@pytest.mark.parametrize("method,name,args,data", [
    ("get", "inbox", [], {}),
    ("post", "inbox_approve", [], {"ids": "1"}),
    ("post", "inbox_approve", [], {"ids": "1,2", "place": "shown", "shown": "1,2"}),
    ("post", "inbox_delete", [], {"id": 1}),
    ("post", "inbox_resolve", [], {"id": 2, "old": 1, "resolution": "replace"}),
    ("post", "inbox_undo", [], {"entries": "5", "id": 1}),
    ("post", "inbox_settings", [], {"mode": "after", "trusted": ""}),
    ("get", "inbox_row", [1], {}),
    ("get", "fact_detail", [1], {}),
    ("get", "facts", [], {"client": "claude-code", "reviewed": "unreviewed", "source_prefix": "import:"}),
])
def test_a_down_service_is_a_plain_page_never_a_500(owner_client, mock_memory, method, name, args, data):
    mock_memory(refused)
    response = getattr(owner_client, method)(reverse(name, args=args), data)
    assert response.status_code == 503
    html = response.content.decode()
    assert "not reachable" in html and "http://memory.test" in html
    assert "Traceback" not in html and "mock-secret" not in html


def test_an_htmx_action_on_a_down_service_says_so_beside_the_row(owner_client, mock_memory):
    mock_memory(refused)
    response = owner_client.post(reverse("inbox_approve"), {"ids": "1"}, headers={**HTMX, "HX-Target": "inbox-1"})
    assert response.status_code == 503 and response["HX-Retarget"] == "#inbox-1"
    assert "not reachable" in response.content.decode() and "<html" not in response.content.decode()


def test_a_memory_without_the_review_says_so_and_counts_nothing(owner_client, mock_memory):
    """A memory from before the review has no `review` setting and ignores `reviewed`: the
    inbox says so rather than calling every fact unreviewed."""
    mock_memory(FakeMemory(fact(1, "Priya is the owner's sister."), fact(2, "Leo swims on Tuesdays.")))
    html = page(owner_client.get(reverse("inbox")))
    assert "older version of the memory contract" in html.select_one("#inbox-unsupported").text
    assert html.select_one("#inbox-count").text == ""
    facts = page(owner_client.get(reverse("facts")))
    assert facts.select_one("#fact-count").text == "2 facts" and not facts.select(".flag-pending")
    detail = page(owner_client.get(reverse("fact_detail", args=[1])))
    assert detail.select_one("#review-state") is None and "no longer holds" in detail.select_one("#written").text


@pytest.mark.parametrize("name,data,says", [
    ("inbox_approve", {"ids": "x"}, "Nothing to approve"),
    ("inbox_approve", {"ids": str(2 ** 63)}, "Nothing to approve"),
    ("inbox_delete", {"id": "0"}, "Nothing to delete"),
    ("inbox_resolve", {"id": 1, "old": 1, "resolution": "replace"}, "not a pair"),
    ("inbox_resolve", {"id": 2, "old": 1, "resolution": "keep_old"}, "Unknown choice"),
    ("inbox_undo", {"entries": "", "id": 1}, "Nothing to undo"),
    ("inbox_settings", {"mode": "never"}, "Unknown review mode"),
])
def test_a_form_the_inbox_cannot_act_on_is_a_400_without_asking_the_memory(owner_client, mock_memory, name, data, says):
    fake = FakeMemory()
    mock_memory(fake)
    response = owner_client.post(reverse(name), data)
    assert response.status_code == 400 and says in soup(response).select_one("#owner-problem").text
    assert not [r for r in fake.requests if r.method != "GET"]


def test_the_inbox_actions_need_the_csrf_token(owner, mock_memory):
    mock_memory(FakeMemory())
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    for name in ("inbox_approve", "inbox_delete", "inbox_resolve", "inbox_undo", "inbox_settings"):
        assert client.post(reverse(name), {"ids": "1", "id": 1, "old": 2, "resolution": "replace", "entries": "3",
                                           "mode": "after"}).status_code == 403
    assert client.post(reverse("inbox_edit", args=[1]), {"text": "x"}, headers=HTMX).status_code == 403


def test_the_inbox_needs_the_owners_login(client, mock_memory):
    fake = FakeMemory()
    mock_memory(fake)
    for response in (client.get(reverse("inbox")), client.get(reverse("inbox_row", args=[1])),
                     client.post(reverse("inbox_approve"), {"ids": "1"}),
                     client.post(reverse("inbox_settings"), {"mode": "before"})):
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert fake.requests == []
