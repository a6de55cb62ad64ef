"""Issue 51, the owner's fourth walk, in a real browser on both memories, with an agent writing
over MCP (the `mcp` SDK's client on `python -m memories mcp`): an import that would bring back a
replaced fact says so and stores nothing (§1); an imported row dated before what the memory holds
is the pair's old fact, never proposed as replacing the newer (§2); the owner's list pasted in the
Import page's box, its subject-less lines merged into the agent's facts (§3); on Contradictions a
pending fact chosen as the replacement is approved, and `u` undoes the decision (§4). The named
memory that does not exist yet (§6) is the local folder's: a Durable Object exists for any name.
The walk ends with a clean console (the pages' CSP)."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import Page, expect

from tests.memory_folder import FolderService
from tests.test_browser import browser_type_launch_args, sign_in  # noqa: F401 (a fixture)
from tests.test_browser_console import console_errors
from tests.test_mcp import data, run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OWNER = {"X-Memory-Client": "dashboard"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def agent(service, saves: list[dict]) -> list[dict]:
    """The agent's saves, in order, in one MCP session under its client's name."""
    from mcp_types import Implementation

    async def steps(client):
        return [data(await client.call_tool("memory_save", save)) for save in saves]

    return run(service, steps, client_info=Implementation(name="claude-code", version="2.1.0"))


def import_page(page: Page, live_server) -> None:
    page.goto(live_server.url + "/import/")
    expect(page.get_by_role("heading", name="Import", exact=True)).to_be_visible()


def dry_run_and_import(page: Page) -> None:
    page.locator("#dry-run").click()
    expect(page.locator("#dry-run-counts")).to_be_visible(timeout=30_000)


def test_the_fourth_walk_imports_respect_what_is_true_now_and_the_queue_defaults_are_safe(
        page: Page, live_server, live_memory, owner, tmp_path):
    errors = console_errors(page)
    t = uuid.uuid4().hex[:4]
    utrecht, peanuts, standup, porto = agent(live_memory, [
        {"text": "The owner lives in Utrecht."},
        {"text": "The owner is allergic to peanuts."},
        {"text": f"The team standup ({t}) is at 10:00."},
        {"text": "The owner and family moved to Porto."},
    ])
    with live_memory.client() as api:
        r = api.patch(f"/facts/{utrecht['id']}", json={"superseded_by": porto["id"]}, headers=OWNER)
        assert r.status_code == 200, r.text
    sign_in(page, live_server)

    # §1 and §3: the list from ChatGPT pasted in the box, read as found from its text.
    import_page(page, live_server)
    page.locator("#id_pasted").fill("Saved memories:\n- Lives in Utrecht.\n- Is allergic to peanuts.\n"
                                    f"- Likes long walks by the sea ({t}).\n")
    page.get_by_role("button", name="Upload and read it").click()
    expect(page.locator("#read-as")).to_contain_text("Read as list")
    dry_run_and_import(page)
    expect(page.locator("#count-store")).to_have_text("1")
    expect(page.locator("#count-merged")).to_have_text("2")
    merged = page.locator("#plan-merged")
    expect(merged).to_contain_text(f"was said by an older fact, #{utrecht['id']}")
    expect(merged).to_contain_text(f"replaced by #{porto['id']}")
    expect(merged).to_contain_text(f"“Is allergic to peanuts.” is #{peanuts['id']}")  # the same fact without its subject
    page.locator("#import-go").click()
    expect(page.locator("#import-stored")).to_have_text("1", timeout=30_000)
    with live_memory.client() as api:
        assert api.get(f"/facts/{utrecht['id']}").json()["superseded_by"] == porto["id"]  # still replaced
        hits = api.post("/recall", json={"query": "Which city does the owner live in?"}).json()["results"]
        assert "Utrecht" not in " ".join(h["fact"]["text"] for h in hits)

    # §2: a CSV row dated before the agent's fact is the pair's old fact, never proposed over it.
    import_page(page, live_server)
    csv = tmp_path / "notes.csv"
    csv.write_text(f"text,time\nThe team standup ({t}) is at 9:15.,2026-11-03\n")
    page.locator("#id_file").set_input_files(str(csv))
    page.get_by_role("button", name="Upload and read it").click()
    expect(page.locator("#read-as")).to_contain_text("Read as csv")
    dry_run_and_import(page)
    assert page.locator("#count-proposed").text_content() == "0", page.locator("#plan-proposed").text_content()  # never over a newer fact
    page.locator("#import-go").click()
    expect(page.locator("#import-stored")).to_have_text("1", timeout=30_000)
    with live_memory.client() as api:
        [older] = [f for f in api.get("/facts", params={"q": t, "limit": 50}).json()["facts"] if "9:15" in f["text"]]
    page.goto(live_server.url + "/contradictions/")
    pair = page.locator(f"#conflict-{older['id']}-{standup['id']}")  # the import's row is the old side
    expect(pair.locator(".side.new")).to_contain_text("10:00")
    expect(pair.locator(".side.old")).to_contain_text("9:15")

    # §4: with review before, the agent's pending fact chosen on Contradictions is approved; u undoes.
    with live_memory.client() as api:
        assert api.put("/settings", json={"review": {"mode": "before", "trusted": []}}).status_code == 200
        gym = api.post("/facts", json={"text": f"The owner's gym ({t}) is PureGym on King Street."}, headers=OWNER).json()["id"]
    [nuffield] = agent(live_memory, [{"text": f"The owner's gym ({t}) is Nuffield on King Street."}])
    assert gym in [p["id"] for p in nuffield["may_replace"]]
    page.goto(live_server.url + "/contradictions/")
    row = page.locator(f"#conflict-{gym}-{nuffield['id']}")
    row.locator(".score").click()
    page.keyboard.press("r")
    done = page.locator(f"#conflict-{gym}-{nuffield['id']}.resolved")
    expect(done).to_contain_text(f"#{nuffield['id']} was waiting for review: approved, so it is recalled")
    with live_memory.client() as api:
        assert api.get(f"/facts/{nuffield['id']}").json()["reviewed_at"] is not None
        first = api.post("/recall", json={"query": f"Which gym ({t}) does the owner go to?"}).json()["results"][0]
        assert first["fact"]["id"] == nuffield["id"]
    page.keyboard.press("u")  # the latest decision, as on the Inbox
    expect(page.locator(f"#conflict-{gym}-{nuffield['id']}:not(.resolved)")).to_contain_text("undone: open again")
    with live_memory.client() as api:
        assert api.get(f"/facts/{gym}").json()["superseded_by"] is None
    assert errors == []


def test_a_named_memory_not_there_yet_is_created_from_its_page(page: Page, live_server, owner, settings, tmp_path):
    folder = FolderService(tmp_path / "memories").start()
    try:
        settings.MEMORY_URL, settings.MEMORY_SECRET = folder.url, folder.secret
        settings.MEMORY_NAMES = ["default", "garden"]  # (the test folder holds default and work)
        errors = console_errors(page)
        sign_in(page, live_server)
        page.goto(live_server.url + "/m/garden/")
        expect(page.locator("main")).to_contain_text("There is no memory named “garden” here yet")
        page.get_by_role("button", name=re.compile("Create")).click()
        expect(page.locator("main")).to_contain_text("Created the memory “garden”.")
        with folder.client() as api:
            assert "garden" in api.get("/memories").json()["memories"]
        assert [e for e in errors if "404" not in e or "/m/garden/" not in e] == []  # (its page's status: no memory yet)
    finally:
        folder.stop()
