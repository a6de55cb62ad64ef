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
    assert entries[0]["after"]["text"] == "Leo's bedtime is 8 pm." and entries[0]["client"] == "dashboard owner"
    assert (entries[1]["before"]["text"], entries[1]["after"]["text"]) == ("Leo's bedtime is 8 pm.", "Leo's bedtime is 8.30 pm.")
    assert entries[2]["before"]["source"] == "x"
    page = owner_client.get(reverse("audit"), {"fact": fid}).content.decode()
    assert page.count('class="action-') == 3


def test_a_backup_restores_into_an_empty_memory_with_identical_facts_recall_and_pairs(owner_client, live_memory, tmp_path):
    for text in ("The owner's passport expires in 2028.", "Owner passport expiry: 2028.", "The owner's passport now expires in 2030.",
                 "Priya is the owner's sister.",
                 "Use the train to Amsterdam.", "2026-11-24: paid the water bill."):
        add(owner_client, text)
    response = owner_client.get(reverse("export"))
    assert response["Content-Disposition"].startswith('attachment; filename="memory-')
    backup = tmp_path / "backup.jsonl"
    backup.write_bytes(b"".join(response.streaming_content))
    lines = [json.loads(line) for line in backup.read_text().splitlines()]
    with live_memory.client() as api:
        assert len([line for line in lines if "text" in line]) == api.get("/stats").json()["facts"]
        assert [line["conflict"] for line in lines if "conflict" in line] == kept_pairs(api) and kept_pairs(api)

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
                assert kept_pairs(copy) == kept_pairs(api)
                for q in ("passport", "Who is my sister?", "train", "water bill", "When does it expire?"):
                    assert recall(copy, q) == recall(api, q)
                assert copy.get("/stats").json()["consistent"]
        finally:
            restored.stop()


def kept_pairs(api) -> list[dict]:
    """Every pair the memory keeps (its contradictions, open or not), oldest first, as a backup holds them."""
    out, params = [], {"limit": 100, "all": "true"}
    while True:
        body = api.get("/conflicts", params=params).json()
        out += [{"id": c["id"], "old": c["old"]["id"], "new": c["new"]["id"], "score": c["score"], "differs": c["differs"],
                 "resolution": c["resolution"]} for c in body["conflicts"]]
        if not body["next_cursor"]:
            return sorted(out, key=lambda c: c["id"])
        params["cursor"] = body["next_cursor"]


def proposed_and_kept(api) -> None:
    """Two proposals, one of them marked both true: the owner's queue and decision, for a backup."""
    for text in ("The standup is at 9:30.", "The standup is at 9:00.", "Priya lives in Lisbon.", "Priya lives in Porto."):
        assert api.post("/facts", json={"text": text}).status_code == 201
    [lisbon] = [c for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"]
                if (c["old"]["text"], c["new"]["text"]) == ("Priya lives in Lisbon.", "Priya lives in Porto.")]
    done = api.post("/conflicts/resolve", json={"old": lisbon["old"]["id"], "new": lisbon["new"]["id"], "resolution": "keep_both"})
    assert done.status_code == 200, done.text


def cli(*args, memory) -> subprocess.CompletedProcess:
    env = {**__import__("os").environ, "MEMORY_SECRET": memory.secret}
    return subprocess.run([sys.executable, "-m", "memories", *args], cwd=ROOT, capture_output=True, text=True, env=env)


def new_memory(kind: str, request, tmp_path):
    if kind == "worker":
        return request.getfixturevalue("worker_host").memory()
    service = Service(tmp_path / f"{kind}-{len(list(tmp_path.iterdir()))}.db").start()
    request.addfinalizer(service.stop)
    return service


@pytest.mark.parametrize("source_kind,target_kind", [("python", "worker"), ("worker", "python"), ("python", "python")])
def test_a_backup_into_an_empty_memory_gives_back_every_fact_and_the_settings_exactly(source_kind, target_kind, request, tmp_path):
    # What dedup on import would merge away: a near duplicate stored with force, and facts that
    # coexist only under the memory's own stricter threshold (each reworded at 0.98-0.99 with MiniLM).
    source = new_memory(source_kind, request, tmp_path)
    with source.client() as api:
        api.post("/facts", json={"text": "Priya is the owner's sister.", "source": "chat"})
        forced = api.post("/facts", json={"text": "Priya is the sister of the owner.", "force": True})
        assert forced.status_code == 201
        api.put("/settings", json={"threshold": 0.999, "fusion": {"expand": 0.7}})
        for text, type in (("The owner prefers metric units.", "fact"), ("The owner prefers the metric units.", "fact"),
                           ("Water the plants every Sunday morning.", "skill"), ("Water the plants each Sunday morning.", "skill"),
                           ("2026-11-24: paid the water bill.", "log")):
            assert api.post("/facts", json={"text": text, "type": type}).status_code == 201
        proposed_and_kept(api)
        facts = api.get("/facts", params={"limit": 100}).json()["facts"]
        settings = api.get("/settings").json()
        pairs = kept_pairs(api)
        assert {c["resolution"] for c in pairs} == {None, "keep_both"}
    backup = tmp_path / "backup.jsonl"
    assert cli("export", "--url", source.url, "-o", str(backup), memory=source).returncode == 0
    assert json.loads(backup.read_text().splitlines()[0]) == {"settings": {"fusion": settings["fusion"], "threshold": 0.999}}

    target = new_memory(target_kind, request, tmp_path)
    result = cli("import", str(backup), "--url", target.url, "--quiet", memory=target)
    assert result.returncode == 0 and "restored 11 facts" in result.stderr, result.stderr
    assert f"restored {len(pairs)} of the backup's {len(pairs)} pairs" in result.stderr, result.stderr
    with target.client() as copy:
        assert copy.get("/facts", params={"limit": 100}).json()["facts"] == facts  # ids, text, type, source, times
        assert kept_pairs(copy) == pairs  # the open contradictions and the owner's "both true", as they were
        assert copy.get("/conflicts").json()["total"] == len([c for c in pairs if c["resolution"] is None])
        back = copy.get("/settings").json()
        assert back["fusion"] == settings["fusion"] and back["thresholds"]["duplicate"] == {**settings["thresholds"]["duplicate"]}
        assert copy.get("/stats").json()["consistent"]

    # Into a memory that holds facts an import deduplicates, and says what it merged.
    again = cli("import", str(backup), "--url", target.url, "--quiet", memory=target)
    assert "imported 0 facts" in again.stderr and "11 were already there" in again.stderr, again.stderr
    assert f"the backup's {len(pairs)} pairs (open contradictions, facts marked both true) were not put back" in again.stderr
    assert """"Priya is the owner's sister." is #1 (exact 1.000)""" in again.stderr
    assert "settings were not applied" in again.stderr


def test_a_backup_into_a_file_restores_the_same(request, tmp_path):
    source = new_memory("python", request, tmp_path)
    with source.client() as api:
        api.post("/facts", json={"text": "Priya is the owner's sister."})
        api.post("/facts", json={"text": "Priya is the sister of the owner.", "force": True})
        api.put("/settings", json={"threshold": 0.999})
        proposed_and_kept(api)
        facts = api.get("/facts", params={"limit": 100}).json()["facts"]
        pairs = kept_pairs(api)
    backup = tmp_path / "backup.jsonl"
    assert cli("export", "--url", source.url, "-o", str(backup), memory=source).returncode == 0
    db = tmp_path / "restored.db"
    assert "restored 6 facts" in cli("import", str(backup), "--db", str(db), "--quiet", memory=source).stderr
    copy = Service(db).start()
    try:
        with copy.client() as c:
            assert c.get("/facts", params={"limit": 100}).json()["facts"] == facts
            assert kept_pairs(c) == pairs and pairs
            [entry] = c.get("/history", params={"op": "resolve"}).json()["entries"]  # the owner's "both true", undoable
            assert entry["after"]["resolution"] == "keep_both" and entry["client"] == "cli"
            assert c.get("/settings").json()["thresholds"]["duplicate"]["value"] == 0.999
    finally:
        copy.stop()
    exported = tmp_path / "again.jsonl"
    assert cli("export", "--db", str(db), "-o", str(exported), memory=source).returncode == 0
    assert exported.read_text() == backup.read_text()  # --db and --url write the same backup


def test_an_undo_over_a_later_edit_says_what_it_would_overwrite_and_asks(owner_client, live_memory):
    fid = add(owner_client, "The owner's doctor is Dr. Alvarez.")
    with live_memory.client() as api:
        api.patch(f"/facts/{fid}", json={"text": "The owner's doctor is Dr. Alvarez, at the clinic."})
        api.patch(f"/facts/{fid}", json={"text": "The owner's doctor is Dr. Chen, since March."}, headers={"X-Memory-Client": "agent"})
        older, newest = history(api, fid, "edit")[1], history(api, fid, "edit")[0]
    asked = owner_client.post(reverse("undo_delete", args=[older["id"]]), {"next": "audit"})
    assert asked.status_code == 409
    page = asked.content.decode()
    assert f"history entry #{newest['id']}" in page and "Dr. Chen, since March." in page and "at the clinic" not in page.split("now-holds")[1][:200]
    assert 'name="force" value="yes"' in page and "Undo #%d anyway" % older["id"] in page
    with live_memory.client() as api:
        assert api.get(f"/facts/{fid}").json()["text"] == "The owner's doctor is Dr. Chen, since March."  # nothing changed yet
    done = owner_client.post(reverse("undo_delete", args=[older["id"]]), {"next": "audit", "force": "yes"})
    assert done.status_code == 302 and done["Location"] == reverse("audit")
    with live_memory.client() as api:
        assert api.get(f"/facts/{fid}").json()["text"] == "The owner's doctor is Dr. Alvarez."


def test_a_dashboard_backup_carries_the_memorys_own_settings(owner_client, live_memory):
    with live_memory.client() as api:
        api.put("/settings", json={"threshold": 0.99})
        try:
            first = b"".join(owner_client.get(reverse("export")).streaming_content).decode().splitlines()[0]
            assert json.loads(first)["settings"]["threshold"] == 0.99
        finally:
            api.put("/settings", json={"threshold": None})


def test_an_undo_says_what_it_did_not_which_entry_it_was(owner_client, live_memory):
    fid = add(owner_client, "The owner's gym is FitLab on Rua Nova.")
    with live_memory.client() as api:
        api.patch(f"/facts/{fid}", json={"text": "The owner's gym is FitLab on Rua Velha."})
        edit = history(api, fid, "edit")[0]
    page = owner_client.post(reverse("undo_delete", args=[edit["id"]]), {"next": "audit"}, follow=True).content.decode()
    assert f"Undid history entry #{edit['id']}: fact #{fid} holds its text, type and source as before." in page
