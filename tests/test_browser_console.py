"""The pages run clean under their own content-security-policy: no error in the browser console
and no `securitypolicyviolation` event on any page. Every page the dashboard's URLs name is
visited (tests/test_browser_console.py derives them from dashboard/urls.py, so a page added later
is visited too), on both memories, in the states that show the most: a pinned fact and what
outranked it, a logged recall's then/now, a comparison with its adopt select, a case's edit page,
a contradiction and an Inbox waiting, an import after its dry run, and a second memory's pages
(/m/NAME/...). The facts page's live search, the recall debugger and the Recalls page are used as
an owner would; the Inbox by keyboard and an import's upload, dry run and progress in
tests/test_browser_inbox.py."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

import httpx
import pytest
from django.urls import URLPattern, reverse
from playwright.sync_api import Page, expect

from dashboard import urls
from dashboard.memory import forget_status
from dashboard.models import EvalCase
from tests.memory_folder import FolderService
from tests.test_browser import add_fact, browser_type_launch_args, sign_in  # noqa: F401 (a fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Injected before any script of the page (Playwright's init scripts are not subject to its CSP).
CSP_LISTENER = """document.addEventListener("securitypolicyviolation", e => window.__cspViolation(
  `${e.effectiveDirective} blocked ${e.blockedURI || "inline"} in ${e.sourceFile || e.documentURI}:${e.lineNumber}`
  + (e.sample ? ` (${e.sample})` : "")), true);"""


def console_errors(page: Page) -> list[str]:
    """What went wrong on the page from now on: console errors, uncaught exceptions and every
    content-security-policy violation (its securitypolicyviolation event, besides the console's line)."""
    errors: list[str] = []
    page.on("console", lambda m: errors.append(f"{m.text} ({m.location.get('url') or 'no url'})") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.expose_function("__cspViolation", lambda text: errors.append(f"CSP violation: {text}"))
    page.add_init_script(CSP_LISTENER)
    return errors


def without_status(errors: list[str], status: int) -> None:
    """Drop Chromium's own line for a page answered `status` (a 404 page is meant to say 404)."""
    errors[:] = [e for e in errors if f"status of {status}" not in e]


def test_a_csp_violation_is_caught(page: Page, live_server, live_memory):
    errors = console_errors(page)
    page.goto(live_server.url + "/login/")
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<p style=\"color: red\">inline</p>')")
    page.wait_for_timeout(300)
    assert any(e.startswith("CSP violation: style-src-attr blocked inline") for e in errors), errors


def test_live_search_on_the_facts_page_leaves_the_console_clean(page: Page, live_server, live_memory, owner):
    errors = console_errors(page)
    sign_in(page, live_server)
    add_fact(page, "Priya is the owner's sister.")
    page.reload()
    search = page.get_by_role("searchbox", name="Search")
    search.press_sequentially("sis", delay=80)  # as the owner types
    expect(page.locator("#fact-count")).to_contain_text("matching “sis”")
    for word in ("sister", "priya", "nothing like it"):
        search.fill(word)
        expect(page.locator("#fact-count")).to_contain_text(f"matching “{word}”")
    page.locator("#id_type_filter").select_option("fact")
    expect(page).to_have_url(re.compile(r"type=fact"))
    page.go_back()
    expect(page).to_have_url(re.compile(r"q=nothing"))
    search.fill("priya")
    expect(page.locator("#fact-count")).to_contain_text("1 fact matching “priya”")
    page.locator("#fact-list").get_by_role("link", name="Edit").first.click()  # the inline editor, swapped in
    expect(page.locator("form.inline-edit textarea")).to_be_focused()
    page.wait_for_timeout(300)
    assert errors == []


def test_the_recall_debugger_and_the_recalls_page_leave_the_console_clean(page: Page, live_server, live_memory, owner):
    errors = console_errors(page)
    sign_in(page, live_server)
    add_fact(page, "Anna's sister is Lena.")
    page.goto(live_server.url + "/recall/")
    page.get_by_label("Query").fill("Who is Anna's sister?")
    page.get_by_role("button", name="Recall").click()
    expect(page.get_by_role("heading", name=re.compile("Fused"))).to_be_visible()
    page.locator("#columns li[data-fact-id]").first.click()
    with live_memory.client() as api:
        api.post("/recall", headers={"X-Memory-Client": "claude-code 2.1"}, json={"query": "who is lena", "limit": 5})
    page.goto(live_server.url + "/recalls/")
    expect(page.locator("table.recalls tbody tr").first).to_be_visible()
    page.get_by_label("Query contains").press_sequentially("lena", delay=50)  # the Recalls page's live filter
    expect(page).to_have_url(re.compile(r"q=lena"))
    expect(page.locator("table.recalls tbody tr")).to_have_count(1)
    page.get_by_label("returned nothing").check()
    expect(page).to_have_url(re.compile(r"empty=1"))
    page.wait_for_timeout(300)
    assert errors == []


# -- every page, on both memories ---------------------------------------------------------

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "imports" / "chatgpt.txt"
AGENT = {"X-Memory-Client": "claude-code 2.1.0"}
# Pages the URL patterns name once more with a query that shows more of them, and pages that are not found.
MORE = ["/duplicates/?threshold=0.5", "/?status=all", "/?reviewed=unreviewed&client=dashboard&source_prefix=import:",
        "/recall/?q=sister&as_of=2026-01-01&include_stale=on", "/facts/999999/", "/facts/0/", "/no-such-page/"]


@dataclass
class Desk:
    """One memory service as the dashboard is pointed at it: the owner's memory there (the
    dashboard's first) and a second memory of the owner's (at /m/NAME/)."""

    base: str
    secret: str
    owner: str
    second: str

    def api(self, name: str | None = None) -> httpx.Client:
        name = name or self.owner
        url = self.base if name == "default" else f"{self.base}/memories/{name}"
        return httpx.Client(base_url=url, headers={"X-Memory-Secret": self.secret}, timeout=60)

    def point(self, settings) -> None:
        settings.MEMORY_URL, settings.MEMORY_SECRET, settings.MEMORY_NAMES = self.base, self.secret, [self.owner, self.second]
        forget_status()


@pytest.fixture(scope="module")
def local_desk(tmp_path_factory):
    s = FolderService(tmp_path_factory.mktemp("console") / "memories").start(memories=("default", "work"))
    yield Desk(s.url, s.secret, "default", "work")
    s.stop()


@pytest.fixture(scope="module")
def worker_desk(worker_host):
    tag = uuid.uuid4().hex[:8]
    return Desk(worker_host.url, worker_host.secret, worker_host.memory(f"home-{tag}").name,
                worker_host.memory(f"work-{tag}").name)


@pytest.fixture(scope="module", params=["local", "worker"])
def desk(request) -> Desk:
    return request.getfixturevalue(f"{request.param}_desk")


def stored(api: httpx.Client, text: str, **kw) -> dict:
    r = api.post("/facts", json={"text": text}, **kw)
    assert r.status_code in (200, 201), r.text
    return r.json()


def routes() -> list[URLPattern]:
    return [p for p in urls.urlpatterns if isinstance(p, URLPattern) and p.name]


def visit(page: Page, errors: list[str], url: str, what: str) -> int:
    response = page.goto(url)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(100)  # a violation's event reaches the test after the page's own work
    if response.status >= 400:  # the page's own status (a 404 page, a 400 for a page asked wrongly)
        without_status(errors, response.status)
    if page.evaluate("document.doctype === null"):  # a fragment htmx swaps into a page, opened on its own:
        errors[:] = [e for e in errors if not e.endswith("/favicon.ico)")]  # no <link rel=icon>, so Chromium asks
    assert errors == [], f"{what} ({url}): {errors}"
    return response.status


def walk_routes(page: Page, errors: list[str], base: str, args: dict, prefix: str = "") -> dict[str, str]:
    """Every named URL of dashboard/urls.py in the memory at `prefix` ("" or "m/NAME/"): a page
    (GET answers HTML) is opened in the browser; an action (GET answers 405, Allow: POST) and a
    download are only noted. {name: "page" | "action" | "download" | "skipped"}, skipped when its
    arguments are not in `args` and GET is allowed."""
    seen: dict[str, str] = {}
    for p in routes():
        names = list(p.pattern.converters)
        url = base + "/" + prefix + reverse(p.name, kwargs={n: args.get(n, 1) for n in names}).lstrip("/")
        r = page.request.get(url, max_redirects=0)
        if r.status == 405:
            assert "POST" in r.headers.get("allow", ""), f"{p.name}: 405 without POST allowed ({r.headers})"
            seen[p.name] = "action"
            continue
        if not all(n in args for n in names):
            seen[p.name] = "skipped"
            continue
        kind = r.headers.get("content-type", "")
        if "attachment" in r.headers.get("content-disposition", "") or not kind.startswith("text/html"):
            assert r.status == 200, f"{p.name}: {r.status}"
            seen[p.name] = "download"
            continue
        status = visit(page, errors, url, p.name)
        assert status < 400 or (p.name, status) == ("fact_bulk_undo", 400), f"{p.name} ({url}): {status}"
        seen[p.name] = "page"
    return seen


def test_every_page_leaves_the_console_clean_on_both_memories(desk, settings, page: Page, live_server, owner):
    desk.point(settings)
    errors = console_errors(page)
    sign_in(page, live_server)
    page.set_default_timeout(30_000)  # two busy cores, a model behind each write and recall
    base, tag = live_server.url, uuid.uuid4().hex[:6]

    with desk.api() as api:
        stored(api, f"Lena {tag} is Anna's sister.")
        stored(api, f"Lena {tag} is the sister of Anna.")  # a near-duplicate pair for the duplicates page
        for text in (f"Lena {tag} is the owner's sister; she lives in Utrecht.", f"The owner's sister Lena {tag} works as a nurse.",
                     f"Lena {tag} has a dog called Biscuit.", f"The owner's brother Tom {tag} lives in Ghent."):
            stored(api, text, headers=AGENT)  # the agent's: they wait in the Inbox
        old = stored(api, f"The owner's dentist {tag} is Dr Kowalski in Leeds.", headers=AGENT)["id"]
        new = stored(api, f"The owner's dentist {tag} is Dr Abara in Leeds.", headers=AGENT)
        assert old in [c["id"] for c in new["conflicts"]], new["conflicts"]  # a contradiction waits
        gone = stored(api, f"The owner's old bike {tag} was sold in May.")["id"]
        assert api.delete(f"/facts/{gone}").status_code in (200, 204)  # something in the trash
        question = f"where does my sister Lena {tag} live"
        r = api.post("/recall", headers=AGENT, json={"query": question, "limit": 5})  # a logged recall
        assert r.status_code == 200, r.text
    with desk.api(desk.second) as api:
        elsewhere = stored(api, f"The work laptop {tag} is a ThinkPad.")["id"]

    # The debugger with a pinned fact below two others: "what outranked it", then saved as a case.
    visit(page, errors, f"{base}/recall/?{urlencode({'q': question})}", "the recall debugger")
    fused = page.locator("#fused-title ~ ol.ranked li[data-fact-id]")
    expect(fused.nth(2)).to_be_visible()
    pin = int(fused.nth(2).get_attribute("data-fact-id"))
    visit(page, errors, f"{base}/recall/?{urlencode({'q': question, 'pin': pin})}", "the debugger, a fact pinned")
    expect(page.get_by_role("heading", name="What outranked it")).to_be_visible()
    expect(page.locator("#outranked table.outranked tbody tr")).to_have_count(2)
    page.get_by_role("button", name="This is the fact I expected: save as an evaluation case").click()
    expect(page.locator(".alert.success")).to_contain_text("Saved the case")
    page.wait_for_timeout(300)
    assert errors == [], errors
    case = EvalCase.objects.get(memory=desk.owner, question=question).id

    # The debugger from the logged recall: its then/now band.
    visit(page, errors, f"{base}/recalls/", "the Recalls page")
    page.locator("table.recalls tbody tr", has_text=question).get_by_role("link", name="Debug").click()
    expect(page.locator("#then-now")).to_contain_text("claude-code 2.1.0")
    page.wait_for_timeout(300)
    assert errors == [], f"the debugger on a logged recall: {errors}"

    # The set run, and a comparison that has run, with its adopt select.
    visit(page, errors, f"{base}/evaluate/", "Recall quality")
    page.get_by_label("mine (1)").check()
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#report-mine")).to_be_visible()
    assert errors == [], f"a run on Recall quality: {errors}"
    compare = {"run": 1, "suite": "mine", "a": "seed", "b": json.dumps({"preset": "default", "k": 20})}
    visit(page, errors, f"{base}/evaluate/compare?{urlencode(compare)}", "a comparison")
    expect(page.locator("#compare-mine").get_by_label("in memory")).to_have_value(desk.owner)

    # The queues with something in them.
    visit(page, errors, f"{base}/contradictions/", "Contradictions")
    expect(page.locator(f"#conflict-{old}-{new['id']}")).to_be_visible()
    visit(page, errors, f"{base}/inbox/", "the Inbox")
    expect(page.locator(f"#inbox-{pin}")).to_be_visible()

    # An import after its dry run.
    visit(page, errors, f"{base}/import/", "Import")
    page.get_by_label("Format").select_option("chatgpt-list")
    page.get_by_label(re.compile("^File")).set_input_files(str(FIXTURE))
    page.get_by_role("button", name="Upload and read it").click()
    expect(page.locator("#import-read")).to_contain_text("8 facts read")
    job = re.search(r"/import/([^/]+)/", page.url).group(1)
    page.get_by_role("button", name="Dry run", exact=True).click()
    expect(page.locator("#dry-run-counts")).to_be_visible(timeout=120_000)
    page.wait_for_load_state("networkidle")
    assert errors == [], f"an import's dry run: {errors}"

    # Every named URL, in the owner's memory and in the second one, then a few more.
    seen = walk_routes(page, errors, base, {"fact_id": pin, "case_id": case, "job_id": job})
    assert not [n for n, kind in seen.items() if kind == "skipped"], seen
    assert {p.name for p in routes()} == set(seen)
    for name in ("facts", "fact_detail", "fact_edit", "inbox", "inbox_edit", "import", "import_job", "contradictions",
                 "recall", "recalls", "trash", "audit", "evaluation", "evaluation_compare", "eval_cases", "eval_case_edit",
                 "calibrate", "duplicates", "login"):
        assert seen[name] == "page", (name, seen[name])
    inside = walk_routes(page, errors, base, {"fact_id": elsewhere}, prefix=f"m/{quote(desk.second)}/")
    about_facts = {p.name for p in routes() if set(p.pattern.converters) <= {"fact_id"}}  # a case or an upload is its memory's
    assert {n for n, kind in inside.items() if kind == "page"} == {n for n, kind in seen.items() if kind == "page"} & about_facts
    expect(page.locator("#service-status")).to_contain_text(desk.second)
    for path in MORE:
        visit(page, errors, base + path, path)
    page.context.clear_cookies()  # signed out
    visit(page, errors, base + "/login/", "/login/ signed out")
    visit(page, errors, base + "/recall/", "a page signed out")
