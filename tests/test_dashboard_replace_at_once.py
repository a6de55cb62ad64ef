"""The owner's side of the memory's proposals setting (issue 46 §2), against both memories over
real HTTP with the real model: the choice on the Contradictions page, what the add panel says
when a write replaced at once, and the pairs replaced at once listed as done."""

from __future__ import annotations

import re
import uuid

import pytest
from django.urls import reverse

from tests.html import page, soup

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}
AGENT = {"X-Memory-Client": "claude-code 2.1.0"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


@pytest.fixture
def propose_after(live_memory):
    yield
    with live_memory.client() as api:
        assert api.put("/settings", json={"proposals": "propose"}).status_code == 200


def test_the_owner_chooses_replace_at_once_and_sees_what_it_did(owner_client, live_memory, propose_after):
    html = page(owner_client.get(reverse("contradictions")))
    form = html.select_one("#proposals-setting")
    assert form.select_one("input[value=propose]").has_attr("checked")
    assert form.select_one("input[name=csrfmiddlewaretoken]")
    r = owner_client.post(reverse("contradiction_setting"), {"proposals": "replace"}, follow=True)
    assert r.status_code == 200 and "replaces the one fact it answers at once" in r.content.decode()
    with live_memory.client() as api:
        assert api.get("/settings").json()["proposals"] == "replace"
        t = uuid.uuid4().hex[:6]
        old = api.post("/facts", json={"text": f"The {t} climbing wall opens at 6:00 on weekdays."},
                       headers=AGENT).json()["id"]
    added = owner_client.post(reverse("fact_add"), {"text": f"The {t} climbing wall opens at 7:00 on weekdays.",
                                                    "type": "fact"}, headers=HTMX)
    answer = soup(added)
    new = int(re.search(r"/facts/(\d+)/", answer.select_one("#add-result a")["href"]).group(1))
    said = answer.select_one(f"#replaced-{old}")
    assert said is not None and "at once" in said.text and f"#{old}" in said.text
    assert answer.select_one("#add-conflicts") is None  # nothing left to decide
    html = page(owner_client.get(reverse("contradictions")))
    assert html.select_one("#proposals-setting input[value=replace]").has_attr("checked")
    done = html.select_one("#done-at-once")
    assert done is not None and f"#{new}" in done.text and f"#{old}" in done.text
    assert done.select_one(f"a[href='{reverse('audit')}?fact={new}']")
    assert html.select_one(f"#conflict-{old}-{new}") is None


def test_an_unknown_choice_is_a_clear_error(owner_client):
    r = owner_client.post(reverse("contradiction_setting"), {"proposals": "always"})
    assert r.status_code == 400 and "Unknown choice" in r.content.decode()
