"""The owner's review in a real browser, on both memories. An agent saves 20 facts through the real
MCP server (`python -m memories mcp`, one stdio session, as tests/test_mcp.py drives it): two are
duplicates the memory merges, two replace the owner's facts (`supersedes`), one contradicts a fact
of the owner's, one is wrong, one has a typo. The owner clears the Inbox by keyboard alone
(approve, undo one with u and approve it again, edit the typo, delete the wrong one, replace by r),
with no page load, the navigation's count going down to nothing, and the memory holds what each
key did. Then an import: the ChatGPT fixture uploaded, dry run, imported, and its facts in the
Inbox in the number the dry run said."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.test_browser import browser_type_launch_args, shot, sign_in  # noqa: F401 (a fixture)
from tests.test_browser_console import console_errors
from tests.test_mcp import data, run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "imports" / "chatgpt.txt"
OWNER = {"X-Memory-Client": "dashboard"}
OWNERS = {  # what the owner stored, from this dashboard: reviewed when written
    "standup": "The owner's team standup is at 9:30.",
    "dentist": "The owner's dentist is Dr Kowalski in Leeds.",
    "gym": "The owner's gym is PureGym on King Street.",
    "sister": "The owner's sister Priya lives in Lisbon.",
}
OTHERS = [  # the agent's plain facts, far apart in meaning
    "Leo's swimming lesson is on Tuesdays at 5 pm.",
    "The wifi password at the cabin is heron-42.",
    "Biscuit the dog is fed twice a day, at 7 and at 18.",
    "How to reset the router: hold the back button for ten seconds.",
    "The car's next MOT is due in October.",
    "Grandma Ines prefers phone calls on Sunday mornings.",
    "The recycling goes out on Thursday evenings.",
    "The spare house key is with the neighbour at number 14.",
    "The owner's library card number is 2290.",
    "Tomorrow's flight to Oslo leaves from gate B7.",
    "The boiler's pressure should sit between 1 and 1.5 bar.",
    "The owner's bank card ends in 4417.",
]
TYPO = "The owner's favourite band is Radiohed."


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def agent_saves(service, owners: dict[str, int]) -> list[dict]:
    """The agent's 20 saves, in order, through the MCP server under its client's name."""
    from mcp_types import Implementation

    saves = [
        {"text": OTHERS[0]}, {"text": OTHERS[1]},
        {"text": "the owner's sister Priya lives in Lisbon."},  # 1: a duplicate of the owner's fact
        {"text": "The owner's dentist is Dr Abara in Leeds.", "supersedes": [owners["dentist"]]},  # replaces
        {"text": OTHERS[2]}, {"text": OTHERS[3], "type": "skill"}, {"text": OTHERS[4]},
        {"text": "The owner was born on Mars."},  # wrong
        {"text": OTHERS[5]}, {"text": TYPO},
        {"text": "The owner's gym is Nuffield on King Street.", "supersedes": [owners["gym"]]},  # replaces
        {"text": OTHERS[6]}, {"text": OTHERS[7]},
        {"text": "Leo's swimming lesson is on Tuesdays at 5 pm."},  # 2: a duplicate of its own first save
        {"text": OTHERS[8]}, {"text": OTHERS[9]}, {"text": OTHERS[10]}, {"text": OTHERS[11]},
        {"text": "The owner's team standup is at 9:00."},  # contradicts the owner's 9:30, without supersedes
        {"text": "The owner keeps receipts in a blue folder."},
    ]
    assert len(saves) == 20

    async def steps(client):
        return [data(await client.call_tool("memory_save", save)) for save in saves]

    return run(service, steps, client_info=Implementation(name="claude-code", version="2.1.0"))


def test_the_owner_clears_an_agents_inbox_by_keyboard(page: Page, live_server, live_memory, owner):
    errors = console_errors(page)
    with live_memory.client() as api:
        owners = {k: api.post("/facts", json={"text": v}, headers=OWNER).json()["id"] for k, v in OWNERS.items()}
        for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"]:  # the owner's own, settled
            api.post("/conflicts/resolve", json={"old": c["old"]["id"], "new": c["new"]["id"], "resolution": "keep_both"})
    saved = agent_saves(live_memory, owners)
    merged = [s for s in saved if not s["created"]]
    assert [s["id"] for s in merged] == [owners["sister"], saved[0]["id"]]  # the two duplicates: nothing stored
    ids = {s["fact"]["text"]: s["id"] for s in saved if s["created"]}
    assert len(ids) == 18
    wrong, typo = ids["The owner was born on Mars."], ids[TYPO]
    standup = ids["The owner's team standup is at 9:00."]
    assert owners["standup"] in [p["id"] for p in saved[18]["may_replace"]]
    with live_memory.client() as api:
        waiting = api.get("/facts", params={"reviewed": "false", "limit": 1}).json()["total"]
    assert waiting == 18

    sign_in(page, live_server)
    count = page.locator("#inbox-count")
    expect(count).to_have_text("18 unreviewed")
    page.get_by_role("link", name=re.compile("^Inbox")).click()
    expect(page.get_by_role("heading", name="Inbox", exact=True)).to_be_visible()
    rows = page.locator("#inbox-list li.item")
    expect(rows).to_have_count(18)
    expect(page.locator("#inbox-list .group .writer")).to_have_text(["claude-code 2.1.0"])
    expect(page.locator("#inbox-list form.approve-group button")).to_have_text("Approve all 18 from this client today")
    dentist_row = page.locator(f"#inbox-{ids['The owner' + chr(39) + 's dentist is Dr Abara in Leeds.']}")
    expect(dentist_row.locator(".note")).to_contain_text(f"replaces #{owners['dentist']}")
    expect(dentist_row.locator(".replaced-note")).to_contain_text("Dr Kowalski")
    expect(page.locator(f"#inbox-{standup} .conflict-note").first).to_contain_text(
        f"May replace #{owners['standup']} “The owner's team standup is at 9:30.” (differs: 9:30 / 9:00)")
    first = rows.first
    expect(first).to_have_class(re.compile(r"\bfocused\b"))  # the newest is the focused one (and inbox.js has run)
    page.keyboard.press("?")
    expect(page.locator("#keys")).not_to_have_attribute("open", "")
    page.keyboard.press("?")
    expect(page.locator("#keys")).to_have_attribute("open", "")
    shot(page, "inbox-queue")
    page.evaluate("window.notReloaded = true")

    newest = int(first.get_attribute("data-id"))
    assert newest == ids["The owner keeps receipts in a blue folder."]

    # a approves the focused fact; u undoes it (it waits again, focused); a approves it again.
    page.keyboard.press("a")
    expect(page.locator(f"#inbox-{newest}.done")).to_contain_text(f"Approved #{newest}")
    expect(count).to_have_text("17 unreviewed")
    group = page.locator("#inbox-list form.approve-group")  # "approve all" counts what still waits
    expect(group.locator("button")).to_have_text("Approve all 17 from this client today")
    assert str(newest) not in group.locator("input[name=ids]").input_value().split(",")
    expect(page.locator("#inbox-list li.item.focused")).not_to_have_attribute("id", f"inbox-{newest}")
    page.keyboard.press("u")
    back = page.locator(f"#inbox-{newest}:not(.done)")
    expect(back).to_contain_text("undone: waiting again")
    expect(back).to_be_focused()
    expect(count).to_have_text("18 unreviewed")
    expect(group.locator("button")).to_have_text("Approve all 18 from this client today")  # and again after the undo
    with live_memory.client() as api:
        assert api.get(f"/facts/{newest}").json()["reviewed_at"] is None
    page.keyboard.press("a")
    expect(page.locator(f"#inbox-{newest}.done")).to_be_visible()

    # The rest, one key each, as the focus moves on by itself: d for the wrong fact, r for the
    # one that replaces the owner's standup, e for the typo (Enter saves), a for every other.
    did = {}
    for _ in range(17):
        focused = page.locator("#inbox-list li.item.focused")
        expect(focused).to_have_count(1)
        fid = int(focused.get_attribute("data-id"))
        assert fid not in did, f"#{fid} came round again"
        expect(focused).to_be_focused()
        if fid == wrong:
            page.keyboard.press("d")
            expect(page.locator(f"#inbox-{fid}.done")).to_contain_text(f"Deleted #{fid}")
        elif fid == standup:
            page.keyboard.press("r")
            expect(page.locator(f"#inbox-{fid}.done")).to_contain_text(f"#{fid} replaces #{owners['standup']}")
        elif fid == typo:
            page.keyboard.press("e")
            box = page.locator(f"#inbox-{fid} textarea")
            expect(box).to_be_focused()
            page.keyboard.press("Backspace")  # the cursor is at the end: "Radiohed." less its "d."
            page.keyboard.press("Backspace")
            page.keyboard.type("ad.")
            page.keyboard.press("Enter")
            expect(page.locator(f"#inbox-{fid}.done")).to_contain_text(f"Saved and approved #{fid}")
        else:
            page.keyboard.press("a")
            expect(page.locator(f"#inbox-{fid}.done")).to_contain_text(f"Approved #{fid}")
        did[fid] = True
    assert set(did) | {newest} == set(ids.values())
    expect(count).to_be_empty()
    expect(page.locator("#inbox-total")).to_have_text("0 facts wait for your review")
    assert page.evaluate("window.notReloaded === true")  # all in place: no page load
    shot(page, "inbox-cleared")

    with live_memory.client() as api:
        facts = {fid: api.get(f"/facts/{fid}") for fid in ids.values()}
        assert facts.pop(wrong).status_code == 404  # in the trash
        assert all(r.json()["reviewed_at"] for r in facts.values())
        assert facts[typo].json()["text"] == "The owner's favourite band is Radiohead."
        assert api.get(f"/facts/{owners['standup']}").json()["superseded_by"] == standup
        assert api.get(f"/facts/{owners['dentist']}").json()["superseded_by"] == ids["The owner's dentist is Dr Abara in Leeds."]
        assert api.get(f"/facts/{owners['gym']}").json()["superseded_by"] == ids["The owner's gym is Nuffield on King Street."]
        assert len(api.get("/facts", params={"q": "sister Priya lives in Lisbon"}).json()["facts"]) == 1
        assert api.get("/facts", params={"reviewed": "false", "limit": 1}).json()["total"] == 0
        [deleted] = api.get("/history", params={"fact_id": wrong, "op": "delete"}).json()["entries"]
        assert deleted["client"] == "dashboard owner"  # the desk, and who was signed in
    page.reload()
    expect(page.locator("#inbox-empty")).to_contain_text("Nothing waits for your review")
    page.wait_for_timeout(300)
    assert errors == []


def test_an_import_lands_in_the_inbox_in_the_number_its_dry_run_said(page: Page, live_server, live_memory, owner):
    errors = console_errors(page)
    with live_memory.client() as api:
        waiting = api.get("/facts", params={"reviewed": "false", "limit": 1}).json()["total"]
    sign_in(page, live_server)
    page.get_by_role("link", name="import them from another tool").click()
    page.get_by_label("Format").select_option("chatgpt-list")
    page.get_by_label(re.compile("^File")).set_input_files(str(FIXTURE))
    page.get_by_role("button", name="Upload and read it").click()
    expect(page.get_by_role("heading", name="Import chatgpt.txt")).to_be_visible()
    expect(page.locator("#import-read")).to_contain_text("8 facts read")
    page.evaluate("window.notReloaded = true")
    page.get_by_role("button", name="Dry run", exact=True).click()
    expect(page.locator("#dry-run-counts")).to_be_visible()
    store = int(page.locator("#count-store").inner_text())
    merged = int(page.locator("#count-merged").inner_text())
    assert (store, merged) == (7, 1) or (store, merged) == (0, 8)  # a second run on one memory: all there already
    expect(page.locator("#plan-merged")).to_contain_text("repeats an earlier line")
    shot(page, "import-dry-run")
    if store:
        page.get_by_role("button", name=f"Import {store} facts").click()
        expect(page.locator("#import-done")).to_contain_text("as the dry run said")
        expect(page.locator("#import-stored")).to_have_text(str(store))
        expect(page.locator("#inbox-count")).to_have_text(f"{waiting + store} unreviewed")
    assert page.evaluate("window.notReloaded === true")  # dry run, progress and import in place
    page.locator("#import-done a#to-inbox" if store else "header nav a[href='/inbox/']").click()
    expect(page.get_by_role("heading", name="Inbox", exact=True)).to_be_visible()
    imported = page.locator("#inbox-list li.item", has_text="import of chatgpt.txt (chatgpt-list)")
    expect(imported).to_have_count(store)
    if store:
        group = page.locator("#inbox-list .group", has=page.locator(".writer", has_text="dashboard-import"))
        expect(group.locator("form.approve-group button")).to_have_text(f"Approve all {store} from this client today")
    with live_memory.client() as api:
        facts = api.get("/facts", params={"source": "import:chatgpt", "limit": 100}).json()["facts"]
        assert len(facts) == 7 and (not store or all(f["reviewed_at"] is None for f in facts))
    page.wait_for_timeout(300)
    assert errors == []
