"""Issue 32, the owner's third walk, in a real browser on both memories (the local service, a
`serve --dir` folder, and a Durable Object behind the Worker): what the agent was given on the
Recalls page, a strip that names the service and keeps to its health, adopting a setting into one
of the owner's own memories, the debugger's "what outranked it", and the dashboard's evaluation
records kept apart per memory service. Every walk ends with a clean console (the pages' CSP)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from dashboard.memory import forget_status
from dashboard.models import EvalCase
from tests.memory_folder import FolderService
from tests.test_browser import browser_type_launch_args, sign_in  # noqa: F401 (a fixture)
from tests.test_browser_console import console_errors

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PERSONAL = Path(__file__).resolve().parent.parent / "dashboard" / "evalsets" / "personal.json"
KIND = {"python": "local service", "worker": "Cloudflare Worker"}


@dataclass
class Desk:
    """One memory service as the dashboard is pointed at it: its base URL, its secret, the owner's
    memory there (the dashboard's first) and a second memory of the owner's."""

    backend: str
    base: str
    secret: str
    owner: str
    second: str

    def url_of(self, name: str) -> str:
        return self.base if name == "default" else f"{self.base}/memories/{name}"

    def api(self) -> httpx.Client:
        """The owner's memory over HTTP, as the agent reaches it."""
        return httpx.Client(base_url=self.url_of(self.owner), headers={"X-Memory-Secret": self.secret}, timeout=60)

    def point(self, settings) -> None:
        """Point the dashboard at this service, its owner's memory first."""
        settings.MEMORY_URL, settings.MEMORY_SECRET, settings.MEMORY_NAMES = self.base, self.secret, [self.owner]
        forget_status()


@pytest.fixture(scope="module")
def local_desk(tmp_path_factory):
    s = FolderService(tmp_path_factory.mktemp("walk32") / "memories").start(memories=("default", "work"))
    yield Desk("python", s.url, s.secret, "default", "work")
    s.stop()


@pytest.fixture(scope="module")
def worker_desk(worker_host):
    tag = uuid.uuid4().hex[:8]
    owner, second = worker_host.memory(f"home-{tag}"), worker_host.memory(f"work-{tag}")
    return Desk("worker", worker_host.url, worker_host.secret, owner.name, second.name)


@pytest.fixture(scope="module", params=["local", "worker"])
def desk(request) -> Desk:
    return request.getfixturevalue(f"{request.param}_desk")


@pytest.fixture
def walk(desk, settings, page: Page, live_server, owner):
    """Signed in on the dashboard pointed at `desk`; the console's errors collected from the start."""
    desk.point(settings)
    errors = console_errors(page)
    sign_in(page, live_server)
    page.set_default_timeout(30_000)  # two busy cores, a model behind each write and recall
    return page, errors


def add(api: httpx.Client, text: str) -> int:
    r = api.post("/facts", json={"text": text})
    assert r.status_code in (200, 201), r.text
    return r.json()["fact"]["id"]


def test_the_recalls_page_shows_what_the_agent_was_given_beside_todays_text(walk, desk, live_server):
    page, errors = walk
    tag = uuid.uuid4().hex[:6]
    with desk.api() as api:
        kept = add(api, f"The spare key {tag} hangs behind the kitchen door.")
        edited = add(api, f"The spare key {tag} is under the blue flowerpot.")
        deleted = add(api, f"The spare key {tag} was lent to the neighbour Ines.")
        question = f"where is the spare key {tag}"
        r = api.post("/recall", headers={"X-Memory-Client": "claude-code 2.1.0"}, json={"query": question, "limit": 3})
        assert r.status_code == 200, r.text
        assert {h["fact"]["id"] for h in r.json()["results"]} == {kept, edited, deleted}

    # The owner edits one of the facts the agent got and deletes another, from the facts page.
    page.goto(live_server.url + f"/?q={tag}")
    row = page.locator(f"#fact-{edited}")
    row.get_by_role("link", name="Edit").click()
    row.get_by_label("Text").fill(f"The spare key {tag} is in the red box in the shed.")
    row.get_by_role("button", name="Save").click()
    expect(page.locator(f"#fact-{edited} td.text")).to_have_text(f"The spare key {tag} is in the red box in the shed.")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"#fact-{deleted}").get_by_role("link", name="Delete").click()
    expect(page.locator(f"#fact-{deleted}")).to_contain_text("deleted.")

    page.get_by_role("link", name="Recalls", exact=True).click()
    recall = page.locator("table.recalls tbody tr", has_text=question)
    expect(recall).to_have_count(1)
    expect(recall).to_contain_text("claude-code 2.1.0")
    then_edited = recall.locator("ol.got li", has=page.locator(f"a[href='/facts/{edited}/']"))
    expect(then_edited.locator("a.given")).to_have_text(f"The spare key {tag} is under the blue flowerpot.")  # as the agent got it
    expect(then_edited.locator(".badge.flag-edited")).to_have_text("edited since")
    expect(then_edited.locator(".now-text")).to_have_text(f"now: The spare key {tag} is in the red box in the shed.")
    then_deleted = recall.locator("ol.got li", has_text=f"#{deleted}")
    expect(then_deleted.locator(".given")).to_have_text(f"The spare key {tag} was lent to the neighbour Ines.")  # its last text
    expect(then_deleted.locator(".badge.flag-deleted")).to_have_text("deleted since")
    then_kept = recall.locator("ol.got li", has=page.locator(f"a[href='/facts/{kept}/']"))
    expect(then_kept.locator(".badge")).to_have_count(1)  # its via only: neither edited nor deleted
    expect(then_kept.locator(".now-text")).to_have_count(0)

    # Debug: the then/now band says the same, beside what the memory answers now.
    recall.get_by_role("link", name="Debug").click()
    band = page.locator("#then-now")
    expect(band).to_contain_text("claude-code 2.1.0")
    expect(band.locator(f"tr[data-fact-id='{edited}'] .given")).to_have_text(f"The spare key {tag} is under the blue flowerpot.")
    expect(band.locator(f"tr[data-fact-id='{edited}'] .now-text")).to_contain_text("in the red box in the shed")
    expect(band.locator(f"tr[data-fact-id='{deleted}'] .given")).to_have_text(f"The spare key {tag} was lent to the neighbour Ines.")
    expect(band.locator(f"tr[data-fact-id='{deleted}']")).to_contain_text("deleted since")

    # The deleted fact's link leads to the trash, where it is, and Undo is offered.
    page.go_back()
    page.locator("table.recalls tbody tr", has_text=question).locator("ol.got li", has_text=f"#{deleted}") \
        .get_by_role("link", name="in the trash").click()
    expect(page.get_by_role("heading", name="Trash", exact=True)).to_be_visible()
    expect(page.locator("main")).to_contain_text(f"The spare key {tag} was lent to the neighbour Ines.")
    page.wait_for_timeout(300)
    assert errors == []


def test_the_strip_names_the_service_hides_the_secret_and_a_bad_id_leaves_it_healthy(walk, desk, live_server):
    page, errors = walk
    strip = page.locator("#service-status")
    expect(page.locator("#service-kind")).to_have_text(KIND[desk.backend])
    expect(strip).to_contain_text(desk.url_of(desk.owner))
    expect(strip).to_contain_text("reachable")
    for path in ("/", "/recalls/", "/evaluate/", "/calibrate/", "/audit/"):
        page.goto(live_server.url + path)
        expect(page.locator("#service-kind")).to_have_text(KIND[desk.backend])
        assert desk.secret not in page.content(), path

    for bad, says in (("/facts/0/", "There is no fact #0: fact ids go from 1 to"),
                      ("/facts/999999/", "There is no fact #999999 in the memory.")):
        response = page.goto(live_server.url + bad)
        assert response.status == 404, bad
        expect(page.get_by_role("heading", name="Not found")).to_be_visible()  # the dashboard's own 404 page
        expect(page.locator("main")).to_contain_text(says)
        expect(page.get_by_role("heading", name=re.compile("memory service", re.I))).to_have_count(0)
        assert desk.secret not in page.content()
        page.get_by_role("link", name="Back to the facts").click()
        expect(page.get_by_role("heading", name="Facts")).to_be_visible()
        expect(strip).not_to_contain_text("answering with errors")
        expect(strip).to_have_class(re.compile(r"\bok\b"))
        expect(page.locator("#service-kind")).to_have_text(KIND[desk.backend])
        errors[:] = [e for e in errors if "status of 404" not in e]  # the 404 page's own status, reported by Chromium
    page.wait_for_timeout(300)
    assert errors == []


def import_personal(page: Page, live_server) -> None:
    """The shipped `personal` set, uploaded from the Recall quality page into a memory of its own."""
    page.goto(live_server.url + "/evaluate/")
    page.get_by_label("Set file (JSON: name, facts, cases)").set_input_files(str(PERSONAL))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("heading", name="Import set “personal”?")).to_be_visible()
    page.get_by_role("button", name=re.compile(r"^Import \d+ facts")).click()
    expect(page.locator("#alerts")).to_contain_text("Imported set “personal”: 29 cases", timeout=180_000)


def test_adopting_from_a_comparison_offers_only_the_owners_memories_and_stays_in_theirs(walk, desk, live_server):
    page, errors = walk
    import_personal(page, live_server)
    page.get_by_role("link", name="Compare two fusion settings").click()
    page.get_by_label("personal").check()
    page.get_by_label("B", exact=True).fill('{"preset": "default", "k": 20}')
    page.get_by_role("button", name="Compare").click()
    report = page.locator("#compare-personal")
    expect(report).to_contain_text("on memory eval-personal", timeout=180_000)

    target = report.get_by_label("in memory")
    options = target.locator("option").all_inner_texts()
    assert desk.owner in options and desk.second in options, options
    assert not [o for o in options if o.startswith("eval-")], options  # never an evaluation set's memory
    expect(target).to_have_value(desk.owner)  # the memory the owner is in
    report.get_by_role("button", name="Make B its default").click()

    expect(page.locator(".alert.success")).to_contain_text(f"Memory “{desk.owner}” now recalls with")
    expect(page).to_have_url(re.compile(r"^" + re.escape(live_server.url) + r"/audit/\?op=settings$"))  # the owner's own memory
    expect(page.locator("#leave-eval")).to_have_count(0)
    expect(page.locator("#service-status")).not_to_contain_text("eval-")
    expect(page.locator("#memory-settings")).to_contain_text("k 20")
    expect(page.locator("a.brand")).to_have_attribute("href", "/")
    page.locator("a.brand").click()
    expect(page).to_have_url(live_server.url + "/")
    expect(page.get_by_role("heading", name="Facts")).to_be_visible()
    with desk.api() as api:
        assert api.get("/settings").json()["fusion"]["k"] == 20
        with httpx.Client(base_url=desk.url_of("eval-personal"), headers={"X-Memory-Secret": desk.secret}) as evalset:
            assert evalset.get("/settings").json()["fusion"].get("k") != 20  # the set's memory untouched
        assert api.put("/settings", json={"fusion": {"preset": "default"}}).status_code == 200  # as it was, for the next walks

    # A link from the comparison opens the debugger in the set's memory; the logo still leads home.
    page.goto(live_server.url + "/evaluate/compare?run=1&suite=personal&a=seed&b=default")
    better = page.locator("#compare-personal ul.better a")
    expect(better.first).to_be_visible(timeout=180_000)
    better.first.click()
    expect(page).to_have_url(re.compile(r"/m/eval-personal/recall/\?q="))
    expect(page.locator("#leave-eval")).to_be_visible()
    expect(page.locator("a.brand")).to_have_attribute("href", "/")
    page.locator("a.brand").click()
    expect(page).to_have_url(live_server.url + "/")
    expect(page.locator("#service-status")).not_to_contain_text("eval-")
    page.wait_for_timeout(300)
    assert errors == []


def test_where_is_fact_n_says_its_rank_and_what_outranked_it(walk, desk, live_server):
    page, errors = walk
    tag = uuid.uuid4().hex[:6]
    with desk.api() as api:
        for text in (f"Lena {tag} is the owner's sister; she lives in Utrecht.", f"The owner's sister Lena {tag} works as a nurse.",
                     f"Lena {tag} has a dog called Biscuit.", f"The owner's brother Tom {tag} lives in Ghent."):
            add(api, text)
    page.get_by_role("link", name="Recall debugger", exact=True).click()
    page.get_by_label("Query").fill(f"where does my sister Lena {tag} live")
    page.get_by_role("button", name="Recall").click()
    fused = page.locator("#fused-title ~ ol.ranked li[data-fact-id]")
    expect(fused.first).to_be_visible()
    assert fused.count() >= 3
    above = [int(fused.nth(i).get_attribute("data-fact-id")) for i in range(2)]
    pin = int(fused.nth(2).get_attribute("data-fact-id"))

    page.get_by_role("spinbutton", name="Where is fact #").fill(str(pin))
    page.get_by_role("button", name="Recall").click()
    expect(page).to_have_url(re.compile(rf"pin={pin}"))
    expect(page.get_by_role("heading", name=f"Where is fact #{pin}?")).to_be_visible()
    expect(page.locator("#pin-fused")).to_contain_text("rank 3 with score")
    expect(page.get_by_role("heading", name="What outranked it")).to_be_visible()
    outranked = page.locator("#outranked")
    expect(outranked).to_contain_text("The 2 facts above it")
    expect(outranked).to_contain_text(f"than #{pin}")
    rows = outranked.locator("table.outranked tbody tr")
    expect(rows).to_have_count(2)
    for rank, fid in enumerate(above, start=1):
        row = rows.nth(rank - 1)
        assert row.get_attribute("data-fact-id") == str(fid)
        expect(row.locator("td").first).to_have_text(str(rank))
        expect(row.get_by_role("link", name=f"#{fid}")).to_have_attribute("href", f"/facts/{fid}/")
        expect(row.locator("td.by .badge")).to_have_text(re.compile(r"^(keyword|vector|rerank|rerank order|expansion|tie)$"))
    expect(page.locator(f'#columns li.pinned[data-fact-id="{pin}"]')).not_to_have_count(0)

    top = above[0]
    page.get_by_role("spinbutton", name="Where is fact #").fill(str(top))
    page.get_by_role("button", name="Recall").click()
    expect(page.locator("#pin-fused")).to_contain_text("rank 1 with score")
    expect(page.locator("#outranked")).to_contain_text("Nothing: it comes first.")
    page.wait_for_timeout(300)
    assert errors == []


def test_evaluation_records_never_leak_to_the_other_service(walk, desk, local_desk, worker_desk, settings, live_server):
    page, errors = walk
    other = worker_desk if desk is local_desk else local_desk
    tag = uuid.uuid4().hex[:6]
    with desk.api() as api:
        fid = add(api, f"The owner's bike {tag} is kept in the blue shed.")
    question = f"where is my bike {tag}"

    # On this service: a case saved from the debugger, the shipped set imported and run.
    page.get_by_role("link", name="Recall debugger", exact=True).click()
    page.get_by_label("Query").fill(question)
    page.get_by_role("spinbutton", name="Where is fact #").fill(str(fid))
    page.get_by_role("button", name="Recall").click()
    page.get_by_role("button", name="This is the fact I expected: save as an evaluation case").click()
    expect(page.locator(".alert.success")).to_contain_text(f"Saved the case “{question}” → fact #{fid} in set “mine”")
    import_personal(page, live_server)
    page.get_by_label("personal (29)").check()
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#report-personal tr.mode-hybrid")).to_contain_text("/29", timeout=180_000)
    expect(page.locator("#run-history")).to_contain_text("personal")
    assert EvalCase.objects.count() == 30

    def seen(path: str):
        page.goto(live_server.url + path)
        return page.locator("main")

    # The dashboard pointed at the other service: none of it is listed there.
    other.point(settings)
    main = seen("/evaluate/")
    expect(page.locator("#service-kind")).to_have_text(KIND[other.backend])
    expect(main.locator("fieldset.suites")).to_contain_text("No cases yet.")
    expect(main.locator("input[name=suite]")).to_have_count(0)
    expect(page.locator("#run-history")).to_have_count(0)
    expect(page.locator("#shipped-sets")).to_be_visible()  # nothing loaded here: the shipped sets are offered
    main = seen("/evaluate/cases/all")
    expect(main.locator("table.cases tbody tr")).to_have_count(1)
    expect(main).to_contain_text("No cases.")
    expect(main).not_to_contain_text(question)
    main = seen("/evaluate/compare")
    expect(main).to_contain_text("No cases yet.")

    # And back: this service's records are all there again.
    desk.point(settings)
    main = seen("/evaluate/cases/all")
    expect(page.locator("#service-kind")).to_have_text(KIND[desk.backend])
    expect(main).to_contain_text(question)
    expect(main.locator("table.cases tbody tr")).to_have_count(30)
    main.locator("table.cases tbody tr", has_text=question).get_by_role("link", name="Edit").click()  # its own page too
    expect(page.get_by_label("Question")).to_have_value(question)
    main = seen("/evaluate/")
    expect(main.get_by_label("personal (29)")).to_be_visible()
    expect(main.get_by_label("mine (1)")).to_be_visible()
    expect(page.locator("#run-history")).to_contain_text("personal")
    page.wait_for_timeout(300)
    assert errors == []
