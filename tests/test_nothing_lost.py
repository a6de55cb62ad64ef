"""Trash and undo, the audit log, and a backup that restores into an empty memory unchanged."""

import json
import subprocess
import sys

import pytest
from django.urls import reverse

from tests.memory_service import ROOT, Service

pytestmark = pytest.mark.django_db


def add(client, text, type="fact", source="test"):
    r = client.post(reverse("fact_add"), {"text": text, "type": type, "source": source}, headers={"HX-Request": "true"})
    return int(r.content.decode().split("fact #")[1].split("<")[0])


def history(api, fact_id: int, op: str | None = None) -> list[dict]:
    """The memory's own history of one fact, newest first."""
    params = {"fact_id": fact_id, **({"op": op} if op else {})}
    return api.get("/history", params=params).json()["entries"]


def recalled_ids(api, query):
    body = api.post("/recall", json={"query": query, "debug": True, "limit": 100}).json()
    return {h["fact"]["id"] for h in body["kw"]}, {h["fact"]["id"] for h in body["vec"]}


def test_a_deleted_fact_comes_back_whole_from_the_trash(owner_client, live_memory):
    fid = add(owner_client, "The owner's bike is a blue Gazelle.")
    with live_memory.client() as api:
        original = api.get(f"/facts/{fid}").json()
        owner_client.post(reverse("fact_delete", args=[fid]))
        kw, vec = recalled_ids(api, "blue Gazelle bike")
        assert fid not in kw and fid not in vec

        trash = owner_client.get(reverse("trash")).content.decode()
        assert "The owner&#x27;s bike is a blue Gazelle." in trash
        [entry] = history(api, fid, "delete")
        response = owner_client.post(reverse("undo_delete", args=[entry["id"]]), follow=True)
        assert "Put fact #%d back" % fid in response.content.decode()

        assert api.get(f"/facts/{fid}").json() == original  # same id, text, type, source and times
        kw, vec = recalled_ids(api, "blue Gazelle bike")
        assert fid in kw and fid in vec
        stats = api.get("/stats").json()
        assert stats["consistent"]
    assert "blue Gazelle" not in owner_client.get(reverse("trash")).content.decode()
    again = owner_client.post(reverse("undo_delete", args=[entry["id"]]), follow=True).content.decode()
    assert "was undone already" in again


def test_an_inline_delete_offers_undo_in_place(owner_client, live_memory):
    fid = add(owner_client, "Water the plants every Sunday.", type="skill")
    row = owner_client.post(reverse("fact_delete", args=[fid]), headers={"HX-Request": "true"}).content.decode()
    with live_memory.client() as api:
        [entry] = history(api, fid, "delete")
    assert reverse("undo_delete", args=[entry["id"]]) in row
    back = owner_client.post(reverse("undo_delete", args=[entry["id"]]), headers={"HX-Request": "true"}).content.decode()
    assert f'id="fact-{fid}"' in back and "Water the plants every Sunday." in back


def test_a_bulk_delete_offers_a_backup_first_and_each_fact_can_be_undone(owner_client, live_memory):
    ids = [add(owner_client, t) for t in ("Bulk: the shed key is under the pot.", "Bulk: the wifi password is on the fridge.")]
    confirm = owner_client.post(reverse("fact_bulk_delete"), {"ids": ids}).content.decode()
    assert reverse("export") in confirm and "backup" in confirm
    owner_client.post(reverse("fact_bulk_delete"), {"ids": ids, "confirm": "yes"})
    with live_memory.client() as api:
        entries = [e for i in ids for e in history(api, i, "delete")]
    assert len(entries) == 2
    for entry in entries:
        owner_client.post(reverse("undo_delete", args=[entry["id"]]))
    for i in ids:
        assert owner_client.get(reverse("fact_detail", args=[i])).status_code == 200


def test_the_audit_log_keeps_before_and_after(owner_client, live_memory):
    fid = add(owner_client, "Leo's bedtime is 8 pm.")
    owner_client.post(reverse("fact_edit", args=[fid]), {"text": "Leo's bedtime is 8.30 pm.", "type": "fact", "source": "x"})
    owner_client.post(reverse("fact_delete", args=[fid]))
    with live_memory.client() as api:
        entries = history(api, fid)[::-1]  # oldest first
    assert [e["op"] for e in entries] == ["add", "edit", "delete"]
    assert entries[0]["after"]["text"] == "Leo's bedtime is 8 pm." and entries[0]["client"] == "dashboard"
    assert (entries[1]["before"]["text"], entries[1]["after"]["text"]) == ("Leo's bedtime is 8 pm.", "Leo's bedtime is 8.30 pm.")
    assert entries[2]["before"]["source"] == "x"
    page = owner_client.get(reverse("audit"), {"fact": fid}).content.decode()
    assert page.count('class="action-') == 3


def test_a_backup_restores_into_an_empty_memory_with_identical_facts_recall_and_pairs(owner_client, live_memory, tmp_path):
    for text in ("The owner's passport expires in 2028.", "Owner passport expiry: 2028.", "Priya is the owner's sister.",
                 "Use the train to Amsterdam.", "2026-11-24: paid the water bill."):
        add(owner_client, text)
    response = owner_client.get(reverse("export"))
    assert response["Content-Disposition"].startswith('attachment; filename="memory-')
    backup = tmp_path / "backup.jsonl"
    backup.write_bytes(b"".join(response.streaming_content))
    lines = [json.loads(line) for line in backup.read_text().splitlines()]
    with live_memory.client() as api:
        assert len(lines) == api.get("/stats").json()["facts"]

        restored_db = tmp_path / "restored.db"
        result = subprocess.run([sys.executable, "-m", "memories", "import", str(backup), "--db", str(restored_db), "--quiet"],
                                cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        restored = Service(restored_db).start()
        try:
            with restored.client() as copy:
                def facts(client):
                    return sorted(json.dumps(f, sort_keys=True) for f in client.get("/facts", params={"limit": 100}).json()["facts"])

                def pairs(client):
                    return [(p["a"]["id"], p["b"]["id"], round(p["score"], 5))
                            for p in client.get("/duplicates", params={"threshold": 0.85}).json()["pairs"]]

                def recall(client, q):
                    return [(h["fact"]["id"], round(h["score"], 6), h["via"]) for h in client.post("/recall", json={"query": q}).json()["results"]]

                assert facts(copy) == facts(api)
                assert pairs(copy) == pairs(api) and pairs(api)
                for q in ("passport", "Who is my sister?", "train", "water bill", "When does it expire?"):
                    assert recall(copy, q) == recall(api, q)
                assert copy.get("/stats").json()["consistent"]
        finally:
            restored.stop()
