"""From an agent's bad recall to a saved evaluation case, in a real browser, on both memories:
the agent recalls through the MCP server, the owner opens Recalls, debugs it, marks the fact it
should have got, and the case is there and runs."""

import re
import uuid

import pytest
from playwright.sync_api import Page, expect

from dashboard.memory import first
from dashboard.models import EvalCase
from tests.test_browser import browser_type_launch_args, sign_in  # noqa: F401 (a fixture)
from tests.test_mcp import data, run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_a_bad_agent_recall_becomes_a_case_in_three_clicks(page: Page, live_server, live_memory, owner):
    from mcp_types import Implementation

    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        right = api.post("/facts", json={"text": f"The owner's dentist is Dr Okafor ({tag})."}).json()["id"]
        api.post("/facts", json={"text": f"The owner's dentist appointment is on Friday ({tag})."})
    question = f"who is my dentist {tag}"

    async def steps(client):
        return data(await client.call_tool("memory_search", {"query": question, "limit": 5}))

    run(live_memory, steps, client_info=Implementation(name="claude-code", version="2.1.0"))

    sign_in(page, live_server)
    page.get_by_role("link", name="Recalls", exact=True).click()
    row = page.locator("table.recalls tbody tr", has_text=question)
    expect(row).to_contain_text("claude-code 2.1.0")
    row.get_by_role("link", name="Debug").click()  # click 1
    expect(page.locator("#then-now")).to_contain_text("claude-code 2.1.0")
    band = page.locator(f"#then-now tr[data-fact-id='{right}']")
    expect(band).to_be_visible()
    band.get_by_role("button", name=f"It should have been #{right}").click()  # click 2
    expect(page.locator(".alert.success")).to_contain_text("from recalls")
    case = EvalCase.objects.get(suite="from recalls", question=question)
    assert case.expected_ids == [right] and case.memory == first()  # the memory it was saved from

    page.goto(live_server.url + "/evaluate/cases/all?suite=from+recalls")
    expect(page.locator("body")).to_contain_text(question)
    expect(page).to_have_url(re.compile(r"suite=from"))
