"""The memory's history names the person at the desk: the dashboard writes as `dashboard alice`, and
both memories count that as the owner's review exactly as they count `dashboard` (a name and what
follows a space are one client: memories/review/reviewing.py `named`); an import is `dashboard-import
alice`, not a review. Against the local service and the Worker, over real HTTP."""

from __future__ import annotations

import uuid

import pytest
from bs4 import BeautifulSoup
from django.test import Client
from django.urls import reverse

from dashboard.models import Account
from tests.test_dashboard_imports import finish, job_url, upload

pytestmark = pytest.mark.django_db
AGENT = {"X-Memory-Client": "claude-code 2.1.0"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


@pytest.fixture
def alice(django_user_model, service, settings) -> Client:
    settings.MEMORY_URL, settings.MEMORY_SECRET = service.url, service.secret
    user = django_user_model.objects.create_user("alice", password="a long password of alice's")
    Account.objects.create(user=user, role=Account.OWNER)
    client = Client()
    client.force_login(user)
    return client


def tag() -> str:
    return uuid.uuid4().hex[:6]


def last(api, fact_id: int, op: str) -> dict:
    return api.get("/history", params={"fact_id": fact_id, "op": op, "limit": 1}).json()["entries"][0]


def test_what_a_person_adds_edits_and_approves_is_theirs_and_reviewed(alice, service):
    t = tag()
    with service.client() as api:
        waiting = api.post("/facts", json={"text": f"The agent heard the gate code is 4417 ({t})."}, headers=AGENT).json()["id"]
        edited = api.post("/facts", json={"text": f"The agent heard the bins go out on Tuesday ({t})."}, headers=AGENT).json()["id"]
        assert api.get(f"/facts/{waiting}").json()["reviewed_at"] is None

    added = alice.post(reverse("fact_add"), {"text": f"Alice's sister lives in Ghent ({t}).", "type": "fact", "source": ""})
    assert added.status_code == 302
    fid = int(added["Location"].rstrip("/").rsplit("/", 1)[-1])
    alice.post(reverse("inbox_approve"), {"ids": str(waiting)})
    alice.post(reverse("fact_edit", args=[edited]), {"text": f"The bins go out on Wednesday ({t}).", "type": "fact", "source": ""})

    with service.client() as api:
        for fact_id, op in ((fid, "add"), (edited, "edit")):
            assert last(api, fact_id, op)["client"] == "dashboard alice", (fact_id, op)
        review = api.get("/history", params={"op": "review", "limit": 1}).json()["entries"][0]  # (one entry for its ids)
        assert review["client"] == "dashboard alice" and review["after"]["ids"] == [waiting]
        for fact_id in (fid, waiting, edited):
            assert api.get(f"/facts/{fact_id}").json()["reviewed_at"] is not None, fact_id
        theirs = api.get("/history", params={"client": "dashboard", "limit": 100}).json()["entries"]
        assert {e["fact_id"] for e in theirs} >= {fid, edited}  # "dashboard" still finds every person's writes

    audit = BeautifulSoup(alice.get(reverse("audit"), {"client": "dashboard alice"}).content, "html.parser")
    assert {tr.select("td")[1].text for tr in audit.select("table.history tbody tr")} == {"dashboard alice"}
    clients = {o["value"] for o in audit.select("#clients option")}
    assert {"dashboard alice", "dashboard"} <= clients  # the filter offers the person and the desk


def test_an_import_by_a_person_is_theirs_and_waits_for_review(alice, service):
    t = tag()
    content = f"Is learning Dutch ({t}).\nKeeps bees on the allotment ({t}).\n".encode()
    url = job_url(upload(alice, "list.txt", content, "list"))
    finish(alice, url, "dry-run")
    finish(alice, url, "import-go")
    with service.client() as api:
        facts = api.get("/facts", params={"q": t, "limit": 10}).json()["facts"]
        assert len(facts) == 2 and all(f["reviewed_at"] is None for f in facts)
        assert {last(api, f["id"], "add")["client"] for f in facts} == {"dashboard-import alice"}
    inbox = BeautifulSoup(alice.get(reverse("inbox")).content, "html.parser")
    assert "dashboard-import alice" in {w.text for w in inbox.select("#inbox-list .writer")}


def test_a_name_the_header_cannot_carry_is_escaped_and_cut_to_fit():
    from dashboard.memory import client_name, speak_for
    from memories.review.history import clean_client

    try:
        speak_for("josé")  # (createsuperuser takes any letter; the Accounts page only ASCII)
        assert client_name() == "dashboard jos\\xe9" and clean_client(client_name()) == client_name()
        speak_for("x" * 80)
        assert len(client_name("dashboard-import")) == 64 and client_name("dashboard-import").startswith("dashboard-import x")
    finally:
        speak_for(None)
    assert client_name() == "dashboard"
