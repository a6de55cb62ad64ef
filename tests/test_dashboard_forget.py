"""Forget for good: a fact deleted and purged from the memory's history, after a confirmation
that says it cannot be undone; against the real service."""

import uuid

import pytest
from django.urls import reverse
from tests.html import page

pytestmark = pytest.mark.django_db


def test_the_fact_page_and_the_delete_confirmation_lead_to_forget_for_good(owner_client, live_memory):
    with live_memory.client() as api:
        fid = api.post("/facts", json={"text": f"The wifi password is hunter2 ({uuid.uuid4().hex[:6]})."}).json()["id"]
    forget = reverse("fact_forget", args=[fid])
    assert page(owner_client.get(reverse("fact_detail", args=[fid]))).select_one(f'a[href="{forget}"]').text == "Forget for good…"
    assert page(owner_client.get(reverse("fact_delete", args=[fid]))).select_one(f'#forget-instead a[href="{forget}"]')


def test_forget_for_good_asks_first_then_leaves_nothing_in_the_trash_or_the_history(owner_client, live_memory):
    text = f"The bank PIN is 7731 ({uuid.uuid4().hex[:6]})."
    with live_memory.client() as api:
        fid = api.post("/facts", json={"text": text}).json()["id"]
        api.patch(f"/facts/{fid}", json={"text": text + " Really."})
    confirm = page(owner_client.get(reverse("fact_forget", args=[fid])))
    assert "cannot be undone" in confirm.select_one("#cannot-undo").text
    form = confirm.select_one(f'form[action="{reverse("fact_forget", args=[fid])}"]')
    assert form["method"] == "post" and form.select_one("button.danger").text == f"Forget fact #{fid} for good"
    with live_memory.client() as api:
        assert api.get(f"/facts/{fid}").status_code == 200  # asking changed nothing

    done = owner_client.post(reverse("fact_forget", args=[fid]), follow=True)
    assert "gone for good" in page(done).select_one("#alerts").text
    with live_memory.client() as api:
        assert api.get(f"/facts/{fid}").status_code == 404
        assert api.get("/history", params={"fact_id": fid}).json()["entries"] == []
    assert text not in page(owner_client.get(reverse("trash"))).text
    assert text not in page(owner_client.get(reverse("audit"))).text
    assert owner_client.get(reverse("fact_detail", args=[fid])).status_code == 404


def test_forget_for_good_refuses_a_get_that_would_delete(owner_client, live_memory):
    with live_memory.client() as api:
        fid = api.post("/facts", json={"text": f"A fact to keep ({uuid.uuid4().hex[:6]})."}).json()["id"]
    owner_client.get(reverse("fact_forget", args=[fid]))
    with live_memory.client() as api:
        assert api.get(f"/facts/{fid}").status_code == 200
        assert len(api.get("/history", params={"fact_id": fid}).json()["entries"]) == 1


def test_forget_for_good_leaves_no_copy_in_the_dashboards_own_records(owner_client, live_memory):
    from dashboard.models import AuditEntry

    text = f"The safe's combination is 9-41-07 ({uuid.uuid4().hex[:6]})."
    with live_memory.client() as api:
        fact = api.post("/facts", json={"text": text}).json()["fact"]
        other = api.post("/facts", json={"text": f"The safe is in the attic ({uuid.uuid4().hex[:6]})."}).json()["fact"]
    # As an evaluation set's load records what it stored, and a note that quotes it on another fact.
    AuditEntry.objects.create(memory="default", user="owner", action="import", fact_id=fact["id"], after=fact)
    AuditEntry.objects.create(memory="default", user="owner", action="eval_case", fact_id=other["id"],
                              after={"expected": [fact["id"]], "was": text})
    kept = AuditEntry.objects.create(memory="default", user="owner", action="import", fact_id=other["id"], after=other)
    owner_client.post(reverse("fact_forget", args=[fact["id"]]))
    left = [str([e.before, e.after, e.note]) for e in AuditEntry.objects.all()]
    assert not any(text in e for e in left)
    assert AuditEntry.objects.filter(id=kept.id).exists()  # another fact's record stays
