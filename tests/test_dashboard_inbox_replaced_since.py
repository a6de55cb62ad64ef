"""The Inbox says what a waiting fact replaced (issue 51 §4), also when the agent replaced it after
the write (MCP's memory_supersede, a PATCH of the old fact's superseded_by), not only when the
write named it in `supersedes`; on both memories over real HTTP."""

from __future__ import annotations

import uuid

import pytest
from django.urls import reverse

from tests.html import page

pytestmark = pytest.mark.django_db

AGENT = {"X-Memory-Client": "claude-code 2.1.0"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_a_fact_replaced_after_the_write_is_said_on_the_replacing_facts_row(owner_client, live_memory):
    t = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        old = api.post("/facts", json={"text": f"The owner's dentist is Dr Alvarez ({t})."}, headers=AGENT).json()["id"]
        new = api.post("/facts", json={"text": f"The owner now sees Dr Okafor for the teeth ({t})."}, headers=AGENT).json()["id"]
        unrelated = api.post("/facts", json={"text": f"The owner's bike is a blue Gazelle ({t})."}, headers=AGENT).json()["id"]
        before = page(owner_client.get(reverse("inbox"))).select_one(f"#inbox-{new}")
        assert before.select_one(".replaced-note") is None  # nothing replaced yet
        r = api.patch(f"/facts/{old}", json={"superseded_by": new, "note": f"replaced by #{new}"}, headers=AGENT)
        assert r.status_code == 200, r.text
    html = page(owner_client.get(reverse("inbox")))
    note = html.select_one(f"#inbox-{new} .replaced-note")
    assert note is not None and f"It replaced #{old}" in note.text and "Dr Alvarez" in note.text
    assert html.select_one(f"#inbox-{unrelated} .replaced-note") is None
