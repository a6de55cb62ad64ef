"""The owner works through a queue of three contradictions in a real browser, on both memories:
one of each choice, one by its keyboard shortcut, each in place with no reload, one undone and
decided again; the navigation's count goes down as they go, and the memory holds what was chosen."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.test_browser import browser_type_launch_args, shot, sign_in  # noqa: F401 (a fixture)
from tests.test_browser_console import console_errors

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AGENT = {"X-Memory-Client": "claude-code 2.1.0"}
PAIRS = [  # (old, new): far enough apart in meaning that no write proposes another pair's fact
    ("The owner's dentist is Dr Kowalski in Leeds.", "The owner's dentist is Dr Abara in Leeds."),
    ("Leo's swimming lesson is on Tuesdays at 5 pm.", "Leo's swimming lesson is on Thursdays at 5 pm."),
    ("The office wifi password is heron-42.", "The office wifi password is kestrel-17."),
]


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def stored(api, text: str, **kw) -> dict:
    r = api.post("/facts", json={"text": text}, **kw)
    assert r.status_code == 201, r.text
    return r.json()


def queue_of_three(api) -> list[tuple[int, int]]:
    """The three pairs, the agent's writes proposing each; any other proposal is decided first,
    so the queue holds exactly these."""
    pairs = []
    for old, new in PAIRS:
        o = stored(api, old, headers=AGENT)["id"]
        n = stored(api, new, headers=AGENT)
        assert o in [c["id"] for c in n["conflicts"]], n["conflicts"]
        pairs.append((o, n["id"]))
    for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"]:
        if (c["old"]["id"], c["new"]["id"]) not in pairs:
            api.post("/conflicts/resolve",
                     json={"old": c["old"]["id"], "new": c["new"]["id"], "resolution": "keep_both"})
    assert api.get("/conflicts").json()["total"] == 3
    return pairs


def test_the_owner_resolves_a_queue_of_three_one_by_keyboard(page: Page, live_server, live_memory, owner):
    errors = console_errors(page)
    with live_memory.client() as api:
        (o1, n1), (o2, n2), (o3, n3) = queue_of_three(api)
    sign_in(page, live_server)
    count = page.locator("#conflict-count")
    expect(count).to_have_text("3 open")
    page.get_by_role("link", name=re.compile("^Contradictions")).click()
    expect(page.get_by_role("heading", name="Contradictions")).to_be_visible()
    expect(page.locator("#conflicts > li.conflict")).to_have_count(3)
    newest = page.locator(f"#conflict-{o3}-{n3}")
    expect(newest).to_have_class(re.compile(r"\bfocused\b"))  # the first pair is the focused one
    expect(newest.locator(".side.old mark")).to_have_text(["heron-42"])
    expect(newest.locator(".side.new mark")).to_have_text(["kestrel-17"])
    expect(newest.locator(".side.old .writer")).to_have_text("claude-code 2.1.0")
    expect(page.locator("#keys")).to_contain_text("both true")
    shot(page, "contradictions-queue")
    page.evaluate("window.notReloaded = true")

    # 1. The newest pair: a click on the default choice.
    newest.get_by_role("button", name="New replaces old").click()
    expect(page.locator(f"#conflict-{o3}-{n3}.resolved")).to_contain_text(f"#{n3} replaces #{o3}")
    expect(count).to_have_text("2 open")
    expect(page.locator("#conflicts-total")).to_have_text("2 open contradictions")

    # 2. The next pair, by keyboard: the focus moved on to it by itself; b is "both true".
    second = page.locator(f"#conflict-{o2}-{n2}")
    expect(second).to_have_class(re.compile(r"\bfocused\b"))
    expect(second).to_be_focused()
    page.keyboard.press("b")
    expect(page.locator(f"#conflict-{o2}-{n2}.resolved")).to_contain_text(f"Both #{o2} and #{n2} are true")
    expect(count).to_have_text("1 open")
    # u right after a decision undoes it, though the focus moved on to the next pair (as on the Inbox).
    expect(page.locator(f"#conflict-{o1}-{n1}")).to_be_focused()
    page.keyboard.press("u")
    expect(page.locator(f"#conflict-{o2}-{n2}:not(.resolved)")).to_contain_text("undone: open again")
    expect(count).to_have_text("2 open")
    page.locator(f"#conflict-{o2}-{n2}").get_by_role("button", name="Both true").click()
    expect(page.locator(f"#conflict-{o2}-{n2}.resolved")).to_contain_text(f"Both #{o2} and #{n2} are true")
    expect(count).to_have_text("1 open")

    # 3. The last: "old is right", undone from its line, and decided again by keyboard.
    page.locator(f"#conflict-{o1}-{n1}").get_by_role("button", name="Old is right").click()
    line = page.locator(f"#conflict-{o1}-{n1}.resolved")
    expect(line).to_contain_text(f"#{o1} is right")
    expect(count).to_be_empty()
    line.get_by_role("button", name="Undo").click()
    back = page.locator(f"#conflict-{o1}-{n1}:not(.resolved)")
    expect(back).to_contain_text("undone: open again")
    expect(back.locator(".side.new mark")).to_have_text(["Abara"])
    expect(count).to_have_text("1 open")
    expect(back).to_be_focused()
    page.keyboard.press("o")
    expect(page.locator(f"#conflict-{o1}-{n1}.resolved")).to_contain_text(f"#{o1} is right")
    expect(count).to_be_empty()
    expect(page.locator("#conflicts-total")).to_have_text("0 open contradictions")
    assert page.evaluate("window.notReloaded === true")  # all in place: no page load
    shot(page, "contradictions-resolved")

    with live_memory.client() as api:
        fact = {i: api.get(f"/facts/{i}").json() for i in (o1, n1, o2, n2, o3, n3)}
        assert api.get("/conflicts").json()["total"] == 0
    assert fact[o3]["superseded_by"] == n3 and fact[n3]["superseded_by"] is None
    assert fact[o2]["superseded_by"] is None and fact[n2]["superseded_by"] is None
    assert fact[n1]["superseded_by"] == o1 and fact[o1]["superseded_by"] is None

    page.reload()
    expect(page.locator("#conflicts li.empty")).to_contain_text("No contradictions wait for you")
    # The facts list shows what was replaced, greyed, with what replaced it.
    page.get_by_role("link", name="Facts", exact=True).click()
    page.get_by_label("Status").select_option("replaced")
    expect(page).to_have_url(re.compile(r"status=replaced"))
    expect(page.locator(f"#fact-{o3} .flag-replaced")).to_contain_text(f"replaced by #{n3} on ")
    expect(page.locator(f"#fact-{n1} .flag-replaced")).to_contain_text(f"replaced by #{o1} on ")
    expect(page.locator(f"#fact-{o2}")).to_have_count(0)
    page.wait_for_timeout(300)
    assert errors == []
