"""The owner's tasks in a real browser: Debian's Chromium driven by Playwright, real service behind."""

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.conftest import OWNER_PASSWORD

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # live_server beside Playwright's event loop
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture(scope="session")
def browser_type_launch_args():
    # Fail, do not skip, when the browser is missing: CI installs it (.ci/run).
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install chromium"
    return {"executable_path": CHROMIUM, "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                                                  "--disable-component-update", "--disable-sync", "--no-first-run"]}


@pytest.fixture
def signed_in(page: Page, live_server, live_memory, owner):
    return sign_in(page, live_server)


def sign_in(page: Page, live_server) -> Page:
    page.set_default_timeout(15_000)
    page.goto(live_server.url + "/")
    expect(page).to_have_url(re.compile(r"/login/"))
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Facts")).to_be_visible()
    return page


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def add_fact(page: Page, text: str, type: str = "fact") -> None:
    page.evaluate("document.getElementById('add-result')?.remove()")  # wait for this add's answer, not the last one's
    page.locator("#add-panel").get_by_label("Text").fill(text)
    page.locator("#add-panel").get_by_label("Type").select_option(type)
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.locator("#add-result")).to_be_visible()


def fact_id_from_result(page: Page) -> int:
    href = page.locator("#add-result a").get_attribute("href")
    return int(re.search(r"/facts/(\d+)/", href).group(1))


def test_search_add_and_see_a_duplicate_flagged(signed_in: Page):
    page = signed_in
    add_fact(page, "Priya is the owner's sister.")
    expect(page.locator("#add-result")).to_contain_text("Added")
    fid = fact_id_from_result(page)
    expect(page.locator(f"#fact-{fid}")).to_contain_text("Priya is the owner's sister.")

    add_fact(page, "priya is the OWNER's sister.")
    expect(page.locator("#add-result")).to_contain_text("Already in memory")
    expect(page.locator("#add-result")).to_contain_text("exact match")
    expect(page.locator("#add-result a")).to_have_attribute("href", f"/facts/{fid}/")

    page.get_by_role("searchbox", name="Search").fill("sister")
    expect(page.locator("#fact-count")).to_contain_text("matching “sister”")
    expect(page).to_have_url(re.compile(r"q=sister"))
    shot(page, "facts-search")


def test_edit_inline(signed_in: Page):
    page = signed_in
    add_fact(page, "Leo swims on Wednesdays.")
    fid = fact_id_from_result(page)
    page.reload()
    row = page.locator(f"#fact-{fid}")
    row.get_by_role("link", name="Edit").click()
    page.locator(f"#fact-{fid}").get_by_label("Text").fill("Leo plays chess on Fridays.")
    page.locator(f"#fact-{fid}").get_by_role("button", name="Save").click()
    expect(page.locator(f"#fact-{fid} td.text")).to_have_text("Leo plays chess on Fridays.")
    shot(page, "facts-edited")


def test_delete_with_confirmation_and_see_it_gone(signed_in: Page):
    page = signed_in
    add_fact(page, "The owner's cat is called Pixel.")
    fid = fact_id_from_result(page)
    page.reload()
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"#fact-{fid}").get_by_role("link", name="Delete").click()
    expect(page.locator(f"#fact-{fid}")).to_contain_text("deleted.")
    page.locator(f"#fact-{fid}").get_by_role("button", name="Undo").click()  # changed my mind...
    expect(page.locator(f"#fact-{fid} td.text")).to_have_text("The owner's cat is called Pixel.")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"#fact-{fid}").get_by_role("link", name="Delete").click()  # ...and back again
    expect(page.locator(f"#fact-{fid}")).to_contain_text("deleted.")
    page.reload()
    expect(page.locator(f"#fact-{fid}")).to_have_count(0)
    page.goto(page.url.split("/", 3)[0] + "//" + page.url.split("/")[2] + "/recall/?q=cat+called+Pixel")
    expect(page.locator(f'#columns li[data-fact-id="{fid}"]')).to_have_count(0)
    shot(page, "deleted-gone-from-recall")


def test_resolve_a_pair_and_mark_another_not_a_duplicate(signed_in: Page, live_server, live_memory):
    page = signed_in
    add_fact(page, "The owner's passport expires in 2028.")
    a = fact_id_from_result(page)
    add_fact(page, "Owner passport expiry: 2028.")
    b = fact_id_from_result(page)
    add_fact(page, "Leo's school is the Montessori on Kanaalweg.")
    c = fact_id_from_result(page)
    add_fact(page, "Leo goes to the Montessori school on Kanaalweg.")
    d = fact_id_from_result(page)
    with live_memory.client() as api:  # each write proposed replacing the other: "both true" leaves them to this page
        for old, new in ((a, b), (c, d)):
            r = api.post("/conflicts/resolve", json={"old": old, "new": new, "resolution": "keep_both"})
            assert r.status_code == 200, r.text

    page.goto(live_server.url + "/duplicates/?threshold=0.85")
    expect(page.locator("figure.histogram svg")).to_be_visible()
    shot(page, "duplicates")
    page.evaluate("window.notReloaded = true")
    page.locator(f"#pair-{a}-{b}").get_by_role("button", name="Not a duplicate").click()
    expect(page.locator(f"#pair-{a}-{b}.resolved")).to_contain_text("not duplicates")  # in place (htmx)
    assert page.evaluate("window.notReloaded === true")  # no full reload to the top
    page.locator(f"#pair-{c}-{d}").get_by_role("button", name=f"Keep #{d}").click()
    expect(page.locator(f"#pair-{c}-{d}.resolved")).to_contain_text(f"deleted #{c}")
    page.reload()
    expect(page.locator(f"#pair-{a}-{b}")).to_have_count(0)
    expect(page.locator(f"#pair-{c}-{d}")).to_have_count(0)


def test_debug_a_recall_with_a_pinned_fact(signed_in: Page, live_server):
    page = signed_in
    add_fact(page, "Anna's sister is Lena.")
    sister = fact_id_from_result(page)
    add_fact(page, "Tom's brother is Anna.")
    page.goto(live_server.url + "/recall/")
    page.get_by_label("Query").fill("Who is Anna's sister?")
    page.get_by_label("Where is fact #").fill(str(sister))
    page.get_by_role("button", name="Recall").click()
    expect(page).to_have_url(re.compile(r"q=Who"))
    for column in ("Keyword", "Vector", "Fused"):
        expect(page.get_by_role("heading", name=re.compile(column))).to_be_visible()
    pinned = page.locator(f'#columns li.pinned[data-fact-id="{sister}"]')
    expect(pinned).to_have_count(3)
    expect(page.locator("#pin-kw")).to_contain_text("rank 1")

    other = page.locator("#columns section").nth(1).locator("li[data-fact-id]").nth(1)
    other_id = other.get_attribute("data-fact-id")
    other.click()
    selected = page.locator(f'#columns li.selected[data-fact-id="{other_id}"]')
    expect(selected).to_have_count(page.locator(f'#columns li[data-fact-id="{other_id}"]').count())
    shot(page, "recall-debugger")

    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "recall-debugger-390")


def test_keyboard_reaches_every_form_control_with_a_label(signed_in: Page):
    page = signed_in
    unlabelled = page.evaluate("""() => [...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
        .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')).map(el => el.outerHTML)""")
    assert unlabelled == []
    page.keyboard.press("Tab")
    expect(page.locator(":focus")).to_have_text("Skip to content")
    page.set_viewport_size({"width": 1280, "height": 800})
    shot(page, "facts-1280")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "facts-390")


def test_the_service_down_page(page: Page, live_server, owner, settings):
    settings.MEMORY_URL = "http://127.0.0.1:9"
    page.goto(live_server.url + "/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="The memory service is not reachable")).to_be_visible()
    expect(page.locator("body")).to_contain_text("http://127.0.0.1:9")
    expect(page.locator("body")).not_to_contain_text("Traceback")
    shot(page, "service-down")


def test_recall_quality_import_run_and_compare(page: Page, live_server, live_memories, owner):
    page = sign_in(page, live_server)  # a set runs in a memory of its own: a service of several memories
    page.goto(live_server.url + "/evaluate/")
    page.get_by_label("Set file (JSON: name, facts, cases)").set_input_files(
        str(Path(__file__).resolve().parent.parent / "dashboard" / "evalsets" / "personal.json"))
    page.get_by_role("button", name="Import").click()
    expect(page.get_by_role("heading", name="Import set “personal”?")).to_be_visible()  # asked first
    page.get_by_role("button", name=re.compile(r"^Import \d+ facts")).click()
    expect(page.locator("#alerts")).to_contain_text("Imported set “personal”: 29 cases")
    page.get_by_label("personal (29)").check()
    page.get_by_role("button", name="Run").click()
    report = page.locator("#report-personal")
    expect(report.locator("tr.mode-hybrid")).to_contain_text("/29")
    shot(page, "recall-quality")

    page.goto(live_server.url + "/evaluate/compare?run=1&suite=personal&a=seed&b=default")
    expect(page.locator("#compare-personal .better-title")).not_to_have_text("Better under B (0)")
    shot(page, "recall-quality-compare")


def test_enter_saves_the_inline_edit_and_escape_cancels_it(signed_in: Page):
    page = signed_in
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    add_fact(page, "Mia likes tea.")
    fid = fact_id_from_result(page)
    page.reload()
    page.locator(f"#fact-{fid} input[type=checkbox]").check()  # a ticked row must not turn Enter into a bulk delete
    page.locator(f"#fact-{fid}").get_by_role("link", name="Edit").click()
    text = page.locator(f"#edit-text-{fid}")
    text.fill("Mia likes green tea.")
    text.press("Enter")
    expect(page.locator(f"#fact-{fid} td.text")).to_have_text("Mia likes green tea.")
    expect(page.get_by_role("heading", name=re.compile("Delete"))).to_have_count(0)

    page.locator(f"#fact-{fid}").get_by_role("link", name="Edit").click()
    page.locator(f"#edit-source-{fid}").fill("typo")
    page.locator(f"#edit-source-{fid}").press("Enter")  # Enter in a one-line field saves too
    expect(page.locator(f"#fact-{fid}")).to_contain_text("typo")

    page.locator(f"#fact-{fid}").get_by_role("link", name="Edit").click()
    page.locator(f"#edit-text-{fid}").fill("Something else entirely.")
    page.locator(f"#edit-text-{fid}").press("Escape")
    expect(page.locator(f"#fact-{fid} td.text")).to_have_text("Mia likes green tea.")
    page.reload()
    expect(page.locator(f"#fact-{fid} td.text")).to_have_text("Mia likes green tea.")
    assert not [e for e in errors if "Content Security Policy" in e], errors  # no inline style from htmx swaps


def test_long_unbroken_text_never_widens_the_page(signed_in: Page, live_server):
    page = signed_in
    add_fact(page, "https://example.org/" + "x" * 7980)
    fid = fact_id_from_result(page)
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        for path in ("/", "/audit/"):
            page.goto(live_server.url + path)
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (path, width)
    page.goto(live_server.url + "/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"#fact-{fid}").get_by_role("link", name="Delete").click()
    expect(page.locator(f"#fact-{fid}")).to_contain_text("deleted.")
    for width in (390, 1280):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(live_server.url + "/trash/")
        assert page.evaluate("document.documentElement.scrollWidth") <= width, ("/trash/", width)
    shot(page, "trash-long-text-1280")


def test_deleting_in_one_memory_leaves_the_other_untouched(page: Page, live_server, live_memories, owner):
    page.set_default_timeout(15_000)
    page.goto(live_server.url + "/login/")
    page.get_by_label("Username").fill("owner")
    page.get_by_label("Password").fill(OWNER_PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    text = "The owner's bike is kept in the blue shed."
    switcher = page.get_by_role("navigation", name="Memories")

    add_fact(page, text)
    home = fact_id_from_result(page)
    switcher.get_by_role("link", name="work").click()
    expect(page).to_have_url(re.compile(r"/m/work/$"))
    expect(page.locator("#service-status")).to_contain_text("/memories/work")
    add_fact(page, text)  # the same text: a fact of this memory, not a duplicate of the other's
    expect(page.locator("#add-result")).to_contain_text("Added")
    work = fact_id_from_result(page)
    assert home == work  # each memory numbers its own facts: the same id, two facts
    page.reload()
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f"#fact-{work}").get_by_role("link", name="Delete").click()
    expect(page.locator(f"#fact-{work}")).to_contain_text("deleted.")
    page.reload()
    expect(page.locator(f"#fact-{work}")).to_have_count(0)

    switcher.get_by_role("link", name="default").click()
    expect(page).to_have_url(live_server.url + "/")
    expect(page.locator(f"#fact-{home} td.text")).to_have_text(text)
    expect(switcher.locator("[aria-current]")).to_have_text("default")
    shot(page, "memories-delete-in-one-other-untouched")
