"""The owner's side of the fact lifecycle (issue 29 §3) against both memories over real HTTP with
the real model: the Contradictions queue (side by side, the differing words marked, who wrote
each, three choices in place, each undoable, paging), the near-duplicates that leave the queue's
pairs to it, and the choices after an add (the facts' lives elsewhere: test_dashboard_facts_lives.py). Then
what the owner sees when the memory is down or old, CSRF and login, on a memory on
httpx.MockTransport."""

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


@pytest.fixture(scope="module")
def service(either_service):
    """live_memory points the dashboard at this: each live test runs against both memories."""
    return either_service


def tag() -> str:
    return uuid.uuid4().hex[:6]


def add(api, text, **kw):
    r = api.post("/facts", json={"text": text, **kw.pop("json", {})}, **kw)
    assert r.status_code == 201, r.text
    return r.json()


def pair(api, old: str, new: str, *, agent_wrote_old: bool = False) -> tuple[int, int]:
    """Two facts, the second's write proposing the first."""
    o = add(api, old, headers=AGENT if agent_wrote_old else {})
    n = add(api, new)
    assert o["id"] in [c["id"] for c in n["conflicts"]], n["conflicts"]
    return o["id"], n["id"]


def open_pairs(api) -> set[tuple[int, int]]:
    found, cursor = set(), None
    while True:
        body = api.get("/conflicts", params={"limit": 100, **({"cursor": cursor} if cursor else {})}).json()
        found |= {(c["old"]["id"], c["new"]["id"]) for c in body["conflicts"]}
        cursor = body["next_cursor"]
        if not cursor:
            return found


def queue_row(client, old: int, new: int, **params):
    """The pair's row on the Contradictions page, reading older pages until it is there."""
    params = dict(params)
    while True:
        html = page(client.get(reverse("contradictions"), params))
        row = html.select_one(f"#conflict-{old}-{new}")
        nxt = html.select_one("nav.pager a[rel=next]")
        if row is not None or nxt is None:
            return row, html
        params["cursor"] = re.search(r"cursor=([^&]+)", nxt["href"]).group(1)


def resolve(client, old: int, new: int, resolution: str, **extra):
    return client.post(reverse("contradiction_resolve"), {"old": old, "new": new, "resolution": resolution, **extra},
                       headers=HTMX)


# -- the queue ------------------------------------------------------------------------------

def test_the_queue_shows_a_pair_side_by_side_marked_dated_and_signed(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old = add(api, f"The owner's accountant is Maria Lopez ({t}).", headers=AGENT)["id"]
    added = owner_client.post(reverse("fact_add"), {"text": f"The owner's accountant is Tom Berg ({t}).",
                                                    "type": "fact"}, headers=HTMX)
    new = int(re.search(r"/facts/(\d+)/", soup(added).select_one("#add-result a")["href"]).group(1))
    row, html = queue_row(owner_client, old, new)
    assert row is not None
    assert [m.text for m in row.select(".side.old mark")] == ["Maria", "Lopez"]
    assert [m.text for m in row.select(".side.new mark")] == ["Tom", "Berg"]
    assert row.select_one(".side.old .writer").text == "claude-code 2.1.0"
    assert row.select_one(".side.new .writer").text == "dashboard owner"
    assert row.select_one(".side.old time")["datetime"] and row.select_one(".side.new time")["datetime"]
    assert "differs in a name" in row.select_one(".score").text
    buttons = [(b["value"], b.text) for b in row.select("form.resolve button")]
    assert buttons == [("replace", "New replaces old"), ("keep_both", "Both true"), ("keep_old", "Old is right")]
    assert "secondary" not in row.select_one("button[value=replace]").get("class", [])  # the default, primary
    assert row.select_one("form.resolve input[name=csrfmiddlewaretoken]")
    assert [a["href"] for a in row.select(".edit-links a")] == [reverse("fact_detail", args=[old]),
                                                                 reverse("fact_detail", args=[new])]
    assert html.select_one("#keys kbd") and "j" in html.select_one("#keys").text
    script = html.select_one("script[src$='contradictions.js']")
    assert script and script.get("nonce")
    assert live_memory.secret not in html.text


def test_the_navigation_counts_the_open_contradictions(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        pair(api, f"The owner's piano teacher is Ms Adeyemi ({t}).", f"The owner's piano teacher is Mr Castell ({t}).")
        total = api.get("/conflicts", params={"limit": 1}).json()["total"]
    html = page(owner_client.get(reverse("facts")))
    link = html.select_one(f"header nav a[href='{reverse('contradictions')}']")
    assert link.text.startswith("Contradictions")
    assert html.select_one("#conflict-count").text == f"{total} open"


@pytest.mark.parametrize("resolution,replaced,place", [("replace", "old", "gym"), ("keep_old", "new", "pool"),
                                                      ("keep_both", None, "climbing wall")])
def test_each_choice_is_done_in_place_and_undone_from_there(owner_client, live_memory, resolution, replaced, place):
    t = tag()
    with live_memory.client() as api:
        old, new = pair(api, f"The owner's {place} is PureGym on King Street ({t}).",
                        f"The owner's {place} is Nuffield on King Street ({t}).")
    row, _ = queue_row(owner_client, old, new)
    fields = {i["name"]: i["value"] for i in row.select("form.resolve input[type=hidden]")
              if i["name"] != "csrfmiddlewaretoken"}
    done = resolve(owner_client, resolution=resolution, **fields)
    assert done.status_code == 200
    line = soup(done).select_one(f"li#conflict-{old}-{new}.resolved")
    assert line is not None and "<html" not in done.content.decode()
    assert soup(done).select_one("#conflict-count[hx-swap-oob]") is not None  # the navigation's count, out of band
    assert soup(done).select_one("#conflicts-total[hx-swap-oob]") is not None  # and the queue's own
    with live_memory.client() as api:
        o, n = api.get(f"/facts/{old}").json(), api.get(f"/facts/{new}").json()
        assert (old, new) not in open_pairs(api)
    if replaced == "old":
        assert o["superseded_by"] == new and n["superseded_by"] is None and f"#{new} replaces #{old}" in line.text
    elif replaced == "new":
        assert n["superseded_by"] == old and o["superseded_by"] is None and f"#{old} is right" in line.text
    else:
        assert o["superseded_by"] is None and n["superseded_by"] is None and "Both" in line.text

    undo = line.select_one("form.undo")
    assert undo["hx-post"] == reverse("contradiction_undo") and undo["action"].startswith("/trash/")
    back = owner_client.post(undo["hx-post"], {i["name"]: i["value"] for i in undo.select("input")}, headers=HTMX)
    assert back.status_code == 200
    again = soup(back).select_one(f"li#conflict-{old}-{new}")
    assert "resolved" not in again["class"] and "undone" in again.text
    assert [m.text for m in again.select(".side.old mark")] == ["PureGym"]  # shown as it was, marks and all
    assert again.select("form.resolve button")
    with live_memory.client() as api:
        assert (old, new) in open_pairs(api)
        assert api.get(f"/facts/{old}").json()["superseded_by"] is None
        assert api.get(f"/facts/{new}").json()["superseded_by"] is None


def test_without_javascript_a_choice_comes_back_to_the_queue_and_the_audit_log_undoes_it(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old, new = pair(api, f"The owner's barber is Jon in Leith ({t}).",
                        f"The owner's barber is Sami in Leith ({t}).")
    r = owner_client.post(reverse("contradiction_resolve"), {"old": old, "new": new, "resolution": "replace"})
    assert r.status_code == 302 and r["Location"] == reverse("contradictions")
    listing = page(owner_client.get(r["Location"]))
    assert f"#{new} replaces #{old}" in listing.select_one("#alerts").text
    with live_memory.client() as api:
        [entry] = api.get("/history", params={"fact_id": old, "op": "edit", "limit": 1}).json()["entries"]
    back = owner_client.post(reverse("undo_delete", args=[entry["id"]]), {"next": "contradictions"})
    assert back.status_code == 302 and back["Location"] == reverse("contradictions")
    with live_memory.client() as api:
        assert api.get(f"/facts/{old}").json()["superseded_by"] is None and (old, new) in open_pairs(api)


def test_a_pair_decided_elsewhere_meanwhile_is_said_not_crashed(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old, new = pair(api, f"The owner's locker is number 12 ({t}).", f"The owner's locker is number 31 ({t}).")
        api.post("/conflicts/resolve", json={"old": old, "new": new, "resolution": "replace"}, headers=AGENT)
    r = resolve(owner_client, old, new, "keep_old")
    assert r.status_code == 200
    line = soup(r).select_one(f"li#conflict-{old}-{new}.resolved.warning")
    assert "Nothing was changed" in line.text and not line.select("form.undo")
    gone = resolve(owner_client, new, 9_000_000_000, "replace")  # new is current: the other id is no fact
    assert gone.status_code == 200 and "gone" in soup(gone).text


def test_the_queue_pages_with_the_cursor(owner_client, live_memory, monkeypatch):
    from dashboard.views import contradictions

    t = tag()
    with live_memory.client() as api:
        first = pair(api, f"The owner's tailor is Mr Osei ({t}).", f"The owner's tailor is Ms Varga ({t}).")
        second = pair(api, f"The owner's optician is in Bath ({t}).", f"The owner's optician is in Wells ({t}).")
    monkeypatch.setattr(contradictions, "PAGE_SIZE", 1)
    seen, url = [], reverse("contradictions")
    while url:
        html = page(owner_client.get(url))
        [row] = html.select("#conflicts > li.conflict")  # one a page
        seen.append((int(row["data-old"]), int(row["data-new"])))
        if len(seen) > 1:
            assert html.select_one("nav.pager a")["href"] == reverse("contradictions")  # back to the newest
        nxt = html.select_one("nav.pager a[rel=next]")
        url = reverse("contradictions") + nxt["href"] if nxt else None
    assert seen.index(second) < seen.index(first)  # newest first, each pair once
    assert len(seen) == len(set(seen))
    bad = owner_client.get(reverse("contradictions"), {"cursor": "not-a-cursor"})
    assert bad.status_code == 400 and "does not exist" in soup(bad).select_one("#owner-problem").text


# -- near-duplicates ------------------------------------------------------------------------

def test_near_duplicates_leave_open_contradictions_and_replaced_facts_out(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old, new = pair(api, f"The owner's passport expires in 2031 ({t}).", f"The owner's passport now expires in 2033 ({t}).")
        html = page(owner_client.get(reverse("duplicates"), {"threshold": "0.8"}))
        assert html.select_one(f"#pair-{old}-{new}") is None
        assert "on Contradictions" in html.select_one("#dup-elsewhere").text
        api.post("/conflicts/resolve", json={"old": old, "new": new, "resolution": "keep_both"})
        assert page(owner_client.get(reverse("duplicates"), {"threshold": "0.8"})).select_one(f"#pair-{old}-{new}")
        api.patch(f"/facts/{old}", json={"superseded_by": new})
    html = page(owner_client.get(reverse("duplicates"), {"threshold": "0.8"}))
    assert html.select_one(f"#pair-{old}-{new}") is None
    assert "replaced or expired fact" in html.select_one("#dup-elsewhere").text


def test_adding_a_fact_offers_the_three_choices_for_what_it_may_replace(owner_client, live_memory):
    t = tag()
    with live_memory.client() as api:
        old = add(api, f"The owner's bank is Triodos in Bristol ({t}).")["id"]
    r = owner_client.post(reverse("fact_add"), {"text": f"The owner's bank is Monzo in Bristol ({t}).", "type": "fact"},
                          headers={**HTMX, "HX-Target": "add-panel"})
    html = soup(r)
    new = int(re.search(r"/facts/(\d+)/", html.select_one("#add-result a")["href"]).group(1))
    item = html.select_one(f"#add-conflicts li#conflict-{old}-{new}")
    assert [m.text for m in item.select("mark")] == ["Triodos"]
    form = item.select_one("form.resolve")
    assert form["hx-post"] == reverse("contradiction_resolve") and form["hx-target"] == f"#conflict-{old}-{new}"
    assert [b.text for b in form.select("button")] == ["New replaces old", "Both true", "Old is right"]
    fields = {i["name"]: i["value"] for i in form.select("input[type=hidden]") if i["name"] != "csrfmiddlewaretoken"}
    assert fields["place"] == "added"
    done = resolve(owner_client, resolution="replace", **fields)
    line = soup(done).select_one(f"li#conflict-{old}-{new}.resolved.success")
    assert soup(done).select_one("#conflicts-total") is None  # the facts page has no queue count to update
    with live_memory.client() as api:
        assert api.get(f"/facts/{old}").json()["superseded_by"] == new
    undo = line.select_one("form.undo")
    back = owner_client.post(undo["hx-post"], {i["name"]: i["value"] for i in undo.select("input")}, headers=HTMX)
    again = soup(back).select_one(f"li#conflict-{old}-{new}.proposal")  # the add panel's line, not the queue's row
    assert again.select("form.resolve button") and "undone" in again.text
    # Without JavaScript the choice goes back to the new fact's page.
    nojs = owner_client.post(reverse("contradiction_resolve"), {**fields, "resolution": "keep_both"})
    assert nojs.status_code == 302 and nojs["Location"] == reverse("fact_detail", args=[new])


# -- on a memory on httpx.MockTransport -----------------------------------------------------

def refused(request):
    raise httpx.ConnectError("refused")


@pytest.mark.parametrize("method,name,args,data", [
    ("get", "contradictions", [], {}),
    ("post", "contradiction_resolve", [], {"old": 1, "new": 2, "resolution": "replace"}),
    ("post", "contradiction_undo", [], {"old": 1, "new": 2, "entry": 5}),
    ("get", "facts", [], {"status": "replaced", "as_of": "2026-01-01"}),
    ("get", "fact_detail", [1], {}),
    ("post", "fact_validity", [1], {"action": "forever"}),
    ("get", "recall", [], {"q": "who", "include_stale": "on", "as_of": "2026-01-01"}),
    ("get", "recalls", [], {}),
])
def test_a_down_service_is_a_plain_page_never_a_500(owner_client, mock_memory, method, name, args, data):
    mock_memory(refused)
    response = getattr(owner_client, method)(reverse(name, args=args), data)
    assert response.status_code == 503
    html = response.content.decode()
    assert "not reachable" in html and "http://memory.test" in html
    assert "Traceback" not in html and "mock-secret" not in html


def test_an_htmx_choice_on_a_down_service_says_so_beside_the_pair(owner_client, mock_memory):
    mock_memory(refused)
    response = owner_client.post(reverse("contradiction_resolve"), {"old": 1, "new": 2, "resolution": "replace"},
                                 headers={**HTMX, "HX-Target": "conflict-1-2"})
    assert response.status_code == 503 and response["HX-Retarget"] == "#conflict-1-2"
    assert "not reachable" in response.content.decode() and "<html" not in response.content.decode()


def test_a_memory_without_the_queue_still_serves_every_page(owner_client, mock_memory):
    """A memory of contract v3 answers /conflicts 404: the page says so, the count stays empty."""
    mock_memory(FakeMemory(fact(1, "Priya is the owner's sister."), fact(2, "Priya is the owner's older sister.")))
    html = page(owner_client.get(reverse("contradictions")))
    assert "older version of the memory contract" in html.text
    assert html.select_one("#conflict-count").text == ""
    assert page(owner_client.get(reverse("duplicates"))).select_one("#dup-results") is not None
    assert page(owner_client.get(reverse("facts"))).select_one("#fact-count").text == "2 facts"


@pytest.mark.parametrize("data,says", [
    ({"old": 1, "new": 1, "resolution": "replace"}, "not a pair"),
    ({"old": 1, "new": "x", "resolution": "replace"}, "not a pair"),
    ({"old": 1, "new": 2 ** 63, "resolution": "replace"}, "not a pair"),
    ({"old": 1, "new": 2, "resolution": "delete_both"}, "Unknown choice"),
])
def test_a_choice_the_form_cannot_make_is_a_400_without_asking_the_memory(owner_client, mock_memory, data, says):
    fake = FakeMemory()
    mock_memory(fake)
    response = owner_client.post(reverse("contradiction_resolve"), data)
    assert response.status_code == 400 and says in soup(response).select_one("#owner-problem").text
    assert not [r for r in fake.requests if r.url.path.startswith("/conflicts/")]


def test_choices_and_undo_need_the_csrf_token(owner, mock_memory):
    mock_memory(FakeMemory())
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    for name in ("contradiction_resolve", "contradiction_undo"):
        assert client.post(reverse(name), {"old": 1, "new": 2, "resolution": "replace", "entry": 3}).status_code == 403
    assert client.post(reverse("fact_validity", args=[1]), {"action": "forever"}).status_code == 403


def test_the_queue_and_its_choices_need_the_owners_login(client, mock_memory):
    fake = FakeMemory()
    mock_memory(fake)
    for response in (client.get(reverse("contradictions")),
                     client.post(reverse("contradiction_resolve"), {"old": 1, "new": 2, "resolution": "replace"})):
        assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    assert fake.requests == []


def test_the_queue_marks_words_as_the_memory_names_them(owner_client, mock_memory):
    """The memory's `differs` words, found in each text whatever their case, curly apostrophes or
    surrounding punctuation; an old fact's writer unknown once its history is gone."""
    old = fact(7, "The owner’s boss is “Dana” (from March).")
    new = fact(9, "The owner's boss is Ruth, since May.")
    fake = FakeMemory(old, new)

    def handler(request):
        if request.url.path == "/conflicts":
            return httpx.Response(200, json={"conflicts": [{"id": 3, "old": old, "new": new, "score": 0.81, "differs": {
                "kinds": ["date", "name"], "old": ["dana", "from", "March"], "new": ["Ruth", "since", "May"]}}],
                "next_cursor": None, "total": 1})
        return fake(request)

    mock_memory(handler)
    row = page(owner_client.get(reverse("contradictions"))).select_one("#conflict-7-9")
    assert [m.text for m in row.select(".side.old mark")] == ["Dana", "from", "March"]
    assert [m.text for m in row.select(".side.new mark")] == ["Ruth", "since", "May"]
    assert row.select_one(".side.old .diff").text == old["text"]  # nothing of the text lost around the marks
    assert "differs in a date or time, a name" in row.text
    assert row.select_one(".writer") is None  # the fake's history holds no add


def test_an_undo_that_would_overwrite_a_later_change_sends_the_owner_to_the_audit_log(owner_client, mock_memory):
    fake = FakeMemory()
    entry = {"id": 5, "at": "2026-11-30T06:00:00.000000Z", "client": "dashboard", "op": "edit", "fact_id": 2,
             "before": fact(2, "y"), "after": fact(2, "y"), "note": "", "undone_by": None}  # keep_old: the new fact's edit

    def handler(request):
        if request.url.path == "/history/5/undo":
            return httpx.Response(409, json={"error": {"code": "changed_since", "message": "fact 2 changed since",
                                                       "entry": 8, "current": fact(2, "x")}})
        if request.url.path == "/history/5":
            return httpx.Response(200, json=entry)
        return fake(request)

    mock_memory(handler)
    r = owner_client.post(reverse("contradiction_undo"), {"old": 1, "new": 2, "entry": 5}, headers=HTMX)
    line = soup(r).select_one("li#conflict-1-2.resolved")
    assert "changed since" in line.text and line.select_one("a")["href"] == reverse("audit") + "?fact=2"


def test_a_pair_whose_facts_carry_one_time_offers_no_choice_first(owner_client, live_memory):
    # Issue 51 §2: the highlighted "New replaces old" must not retire the truth when which is
    # newer is not known (an import's rows dated alike).
    t, when = tag(), "2026-11-01T09:00:00Z"
    with live_memory.client() as api:
        old = add(api, f"The pottery class ({t}) is on Mondays at 18:00.", json={"created_at": when})["id"]
        new = add(api, f"The pottery class ({t}) is on Mondays at 19:00.", json={"created_at": when})
        assert old in [c["id"] for c in new["conflicts"]], new["conflicts"]
        later = add(api, f"The pottery class ({t}) is on Mondays at 19:30.")  # today: newer than both
    html = page(owner_client.get(reverse("contradictions")))
    same = html.select_one(f"#conflict-{old}-{new['id']}")
    assert same.select_one(".unsure") is not None
    assert "secondary" in same.select_one("button[value=replace]")["class"]
    dated = html.select_one(f"#conflict-{new['id']}-{later['id']}")
    assert dated.select_one(".unsure") is None and "secondary" not in dated.select_one("button[value=replace]").get("class", [])
