"""Choosing a pending fact on the Contradictions page approves it, as the Inbox's `r` does: in a
memory that reviews before, "New replaces old" with the agent's unreviewed fact would otherwise
leave the old one replaced and the new one waiting, and nothing recalled. Both memories."""

import re
import uuid

import pytest
from django.urls import reverse

from tests.html import soup

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
AGENT = {"X-Memory-Client": "walk-agent"}
OWNER = {"X-Memory-Client": "dashboard"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


@pytest.fixture
def reviewing_before(live_memory):
    with live_memory.client() as api:
        api.put("/settings", json={"review": {"mode": "before", "trusted": []}}).raise_for_status()
        yield api
        api.put("/settings", json={"review": {"mode": "after", "trusted": []}}).raise_for_status()


def add(api, text: str, headers: dict) -> dict:
    r = api.post("/facts", json={"text": text}, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


@pytest.mark.parametrize("resolution", ["replace", "keep_old"])
def test_the_fact_the_owner_keeps_is_approved_when_it_waited_for_review(owner_client, reviewing_before, resolution):
    api, t = reviewing_before, uuid.uuid4().hex[:6]
    # keep_old keeps the older one: here the agent's (pending) is the older, the owner's the newer.
    first, second = (OWNER, AGENT) if resolution == "replace" else (AGENT, OWNER)
    old = add(api, f"The {t} standup is at 9:30.", first)["id"]
    written = add(api, f"The {t} standup is at 10:00 now.", second)
    new = written["id"]
    assert [c["id"] for c in written["conflicts"]] == [old]
    kept = new if resolution == "replace" else old
    assert api.get(f"/facts/{kept}").json()["reviewed_at"] is None  # waiting for the owner

    r = owner_client.post(reverse("contradiction_resolve"), {"old": old, "new": new, "resolution": resolution}, headers=HTMX)
    line = soup(r).select_one(f"li#conflict-{old}-{new}.resolved").text
    assert f"#{kept} was waiting for review: approved" in re.sub(r"\s+", " ", line)
    assert api.get(f"/facts/{kept}").json()["reviewed_at"] is not None
    gone = old if resolution == "replace" else new
    assert api.get(f"/facts/{gone}").json()["superseded_by"] == kept
    inbox = {f["id"] for f in api.get("/facts", params={"reviewed": "false", "limit": 100}).json()["facts"]}
    assert kept not in inbox and gone not in inbox  # both decided: neither waits in the Inbox
    hits = api.post("/recall", json={"query": f"When is the {t} standup?", "log": False}).json()["results"]
    assert hits[0]["fact"]["id"] == kept


def test_keeping_both_approves_nothing(owner_client, reviewing_before):
    api, t = reviewing_before, uuid.uuid4().hex[:6]
    old = add(api, f"The {t} gym opens at 6:00.", OWNER)["id"]
    new = add(api, f"The {t} gym opens at 7:00 now.", AGENT)["id"]
    owner_client.post(reverse("contradiction_resolve"), {"old": old, "new": new, "resolution": "keep_both"}, headers=HTMX)
    assert api.get(f"/facts/{new}").json()["reviewed_at"] is None  # "both true" is not a review of either


def test_the_agents_fact_rejected_with_old_is_right_leaves_the_inbox(owner_client, reviewing_before):
    api, t = reviewing_before, uuid.uuid4().hex[:6]
    old = add(api, f"The {t} pool opens at 7:00.", OWNER)["id"]
    new = add(api, f"The {t} pool opens at 8:00 now.", AGENT)["id"]
    owner_client.post(reverse("contradiction_resolve"), {"old": old, "new": new, "resolution": "keep_old"}, headers=HTMX)
    rejected = api.get(f"/facts/{new}").json()
    assert rejected["superseded_by"] == old and rejected["reviewed_at"] is not None
    assert new not in {f["id"] for f in api.get("/facts", params={"reviewed": "false", "limit": 100}).json()["facts"]}
