"""A viewer reads every page an owner reads and changes nothing: every URL of dashboard/urls.py walked
as a viewer, GET and POST with a valid CSRF token, on the real memory service."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup
from django.test import Client
from django.urls import reverse

from dashboard.models import Account, EvalCase
from dashboard.roles import OWNERS_ONLY
from tests.test_dashboard_security import PUBLIC, all_patterns

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}
# What a POST may carry, so a refusal is never the form's: every field any form of the desk reads.
FORM = {"text": "Vera wrote this.", "type": "fact", "source": "chat", "ids": "1", "id": "1", "a": "1", "b": "2",
        "action": "keep_a", "resolution": "replace", "mode": "before", "trusted": "vera-bot", "question": "q",
        "expected_ids": "1", "name": "vera-memory", "entries": "1", "entry": "1", "role": "owner", "username": "vera2",
        "valid_until": "2030-01-01", "confirm": "yes", "suite": "mine", "target": "default"}


def example_url(route: str) -> str:
    """A route with each id 1 and each job id a made-up one."""
    return "/" + re.sub(r"<str:\w+>", "no-such-job", re.sub(r"<int:\w+>", "1", route))


AGENT = {"X-Memory-Client": "claude-code 2.1.0"}


@pytest.fixture
def seeded(live_memory, owner):
    """Something on every page to act on: fact #1 by the owner, an agent's facts waiting in the
    Inbox (one a contradiction of #1, one a near-duplicate), a delete in the trash; and an
    evaluation case #1."""
    with live_memory.client() as api:
        if not api.get("/facts/1").is_success:
            api.post("/facts", json={"text": "Priya lives in Lisbon.", "type": "fact"}, headers={"X-Memory-Client": "dashboard"})
            api.post("/facts", json={"text": "Priya lives in Porto.", "type": "fact"}, headers=AGENT)
            api.post("/facts", json={"text": "The spare house key is with the neighbour at number 14.", "type": "fact"},
                     headers=AGENT)
            api.post("/facts", json={"text": "The spare house key is with the neighbour at no. 14.", "type": "fact",
                                     "force": True}, headers=AGENT)
            gone = api.post("/facts", json={"text": "The boiler was serviced in May.", "type": "fact"}, headers=AGENT)
            api.delete(f"/facts/{gone.json()['id']}", headers=AGENT)
    EvalCase.objects.create(id=1, question="Where does Priya live?", expected_ids=[1])
    return live_memory


@pytest.fixture
def viewer(django_user_model):
    user = django_user_model.objects.create_user("vera", password="a long viewer password")
    Account.objects.create(user=user, role=Account.VIEWER)
    return user


def signed_in(user) -> tuple[Client, str]:
    """A client that checks CSRF as a browser's request is checked, and its token."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.get(reverse("facts"))
    return client, client.cookies["csrftoken"].value


def history(service) -> list[dict]:
    with service.client() as api:
        return api.get("/history", params={"limit": 100}).json()["entries"]


def routes():
    return [(p.name, example_url(route)) for p, route in all_patterns() if p.name not in PUBLIC | {"logout"}]


def test_no_post_of_a_viewer_is_let_through(seeded, viewer):
    before, settings_before = history(seeded), None
    with seeded.client() as api:
        settings_before = api.get("/settings").json()
    client, token = signed_in(viewer)
    for name, url in routes():
        for headers in ({}, HTMX):
            response = client.post(url, FORM, headers={"X-CSRFToken": token, **headers})
            text = response.content.decode()
            assert response.status_code == 403, (name, url, response.status_code)
            assert "You are signed in as vera, a viewer" in text and "Nothing was changed" in text, (name, url)
            assert "CSRF verification failed" not in text  # refused as a viewer, not for the token
    assert history(seeded) == before  # not one write, delete, review, resolve, undo or setting
    with seeded.client() as api:
        assert api.get("/settings").json() == settings_before
    assert EvalCase.objects.count() == 1 and not Account.objects.filter(user__username="vera2").exists()


def test_a_viewer_gets_every_page_an_owner_gets_without_a_way_to_change_it(seeded, viewer, owner):
    client, _ = signed_in(viewer)
    owner_client = Client()
    owner_client.force_login(owner)
    pages, owners_forms = 0, set()
    for name, url in routes():
        theirs, ours = client.get(url), owner_client.get(url)
        assert theirs.status_code != 500, (name, url)
        if name in OWNERS_ONLY:
            assert theirs.status_code == 403 and ours.status_code in (200, 405), (name, url)
            continue
        assert theirs.status_code == ours.status_code, (name, url, theirs.status_code, ours.status_code)
        if theirs.status_code != 200 or not theirs["Content-Type"].startswith("text/html"):
            continue
        pages += 1
        if writes(BeautifulSoup(ours.content, "html.parser")):
            owners_forms.add(name)
        html = BeautifulSoup(theirs.content, "html.parser")
        posts = [f.get("action") for f in html.select("form") if (f.get("method") or "").lower() == "post"]
        assert set(posts) <= {reverse("logout")}, (name, url, posts)  # signing out is all a viewer may send (a row: nothing)
        assert not html.select("[hx-post], [hx-put], [hx-patch], [hx-delete]"), (name, url)
        assert "Accounts" not in [a.text for a in html.select("nav.account a")]
    assert pages >= 15
    # What the owner could do there (so the walk looked at pages with something to hide):
    assert {"facts", "fact_detail", "inbox", "contradictions", "duplicates", "trash", "audit", "recall", "evaluation",
            "eval_cases", "eval_case_edit", "import", "calibrate"} <= owners_forms


def writes(html: BeautifulSoup) -> list:
    return [f for f in html.select("form") if (f.get("method") or "").lower() == "post" and f.get("action") != reverse("logout")]


def test_the_account_menu_says_who_is_signed_in_and_as_what(seeded, viewer, owner):
    client, _ = signed_in(viewer)
    menu = BeautifulSoup(client.get(reverse("facts")).content, "html.parser").select_one("nav.account")
    assert menu.select_one(".who").text.split() == ["vera", "viewer"]
    owner_client = Client()
    owner_client.force_login(owner)
    menu = BeautifulSoup(owner_client.get(reverse("facts")).content, "html.parser").select_one("nav.account")
    assert menu.select_one(".who").text.split() == ["owner"] and menu.select_one("a").text == "Accounts"


def test_a_viewer_may_debug_a_recall_and_sign_out(seeded, viewer):
    client, token = signed_in(viewer)
    debugged = client.get(reverse("recall"), {"q": "Where does Priya live?"})
    assert debugged.status_code == 200 and "Priya lives in Lisbon." in debugged.content.decode()
    assert client.get(reverse("export")).status_code == 200
    out = client.post(reverse("logout"), headers={"X-CSRFToken": token})
    assert out.status_code == 302 and client.get(reverse("facts")).status_code == 302  # signed out: to the sign-in page


def test_a_viewers_htmx_write_is_answered_beside_what_they_clicked(seeded, viewer):
    client, token = signed_in(viewer)
    response = client.post(reverse("fact_delete", args=[1]), headers={"X-CSRFToken": token, "HX-Target": "fact-1", **HTMX})
    assert response.status_code == 403 and response["HX-Retarget"] == "#fact-1"
    assert "Only an owner may change this" in response.content.decode()


def test_a_viewer_made_an_owner_may_change_from_the_next_request(seeded, viewer):
    client, token = signed_in(viewer)
    assert client.post(reverse("fact_add"), FORM, headers={"X-CSRFToken": token}).status_code == 403
    Account.objects.filter(user=viewer).update(role=Account.OWNER)
    assert client.post(reverse("fact_add"), FORM, headers={"X-CSRFToken": token}).status_code == 302
    entry = history(seeded)[0]
    assert (entry["op"], entry["client"], entry["after"]["text"]) == ("add", "dashboard vera", "Vera wrote this.")
