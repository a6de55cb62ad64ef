"""The memory's `proposals` setting (issue 46 §2), on both memories over HTTP with the real model:
`propose` (the default) keeps every proposal for a decision; `replace` lets a trusted client's
fact, written alone, replace the one fact it proposes in the same write, recorded with the add,
undone with it, and listed as done (GET /conflicts?done=true). Anyone else's write, a batch's,
or a write that proposes more than one fact, proposes as before."""

from __future__ import annotations

import uuid

import pytest

DASHBOARD = {"X-Memory-Client": "dashboard 0.1"}
AGENT = {"X-Memory-Client": "claude-code 2.1.0"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


@pytest.fixture
def replacing(api):
    r = api.put("/settings", json={"proposals": "replace"})
    assert r.status_code == 200, r.text
    assert r.json()["proposals"] == "replace"
    yield
    assert api.put("/settings", json={"proposals": "propose", "review": {"trusted": []}}).status_code == 200


def add(api, text: str, headers: dict) -> dict:
    r = api.post("/facts", json={"text": text}, headers=headers)
    assert r.status_code == 201, r.text
    return r.json()


def pairs(api, **params) -> dict[tuple[int, int], dict]:
    body = api.get("/conflicts", params={"limit": 100, **params}).json()
    return {(c["old"]["id"], c["new"]["id"]): c for c in body["conflicts"]}


def test_by_default_every_proposal_waits(api):
    assert api.get("/settings").json()["proposals"] == "propose"
    t = uuid.uuid4().hex[:6]
    old = add(api, f"The {t} standup is at 9:30 every morning.", DASHBOARD)
    new = add(api, f"The {t} standup is at 10:00 every morning now.", DASHBOARD)
    [c] = [c for c in new["conflicts"] if c["id"] == old["id"]]
    assert c["replaced"] is False and c["fact"]["superseded_by"] is None
    assert (old["id"], new["id"]) in pairs(api)


def test_a_trusted_write_replaces_its_one_proposal_at_once_and_its_undo_gives_it_back(api, replacing):
    t = uuid.uuid4().hex[:6]
    old = add(api, f"The {t} gym opens at 6:00 on weekdays.", AGENT)
    new = add(api, f"The {t} gym opens at 7:00 on weekdays.", DASHBOARD)
    [c] = new["conflicts"]
    assert c["id"] == old["id"] and c["replaced"] is True
    assert c["fact"]["superseded_by"] == new["id"]  # the old fact as it is after the write
    assert api.get(f"/facts/{old['id']}").json()["superseded_by"] == new["id"]
    assert (old["id"], new["id"]) not in pairs(api)  # nothing left to decide
    done = pairs(api, done="true")
    assert done[(old["id"], new["id"])]["resolution"] == "replace"
    assert pairs(api, all="true")[(old["id"], new["id"])]["resolution"] == "replace"
    hits = api.post("/recall", json={"query": f"When does the {t} gym open?", "log": False}).json()["results"]
    assert old["id"] not in [h["fact"]["id"] for h in hits]
    [entry] = api.get("/history", params={"fact_id": new["id"], "op": "add"}).json()["entries"]
    assert [f["id"] for f in entry["before"]["replaced"]] == [old["id"]]
    assert entry["before"]["replaced"][0]["superseded_by"] is None  # as it was before the write
    assert "at once" in entry["note"]
    undo = api.post(f"/history/{entry['id']}/undo")
    assert undo.status_code == 200, undo.text
    back = api.get(f"/facts/{old['id']}").json()
    assert back["superseded_by"] is None and back["valid_until"] is None
    assert (old["id"], new["id"]) not in pairs(api, done="true")


def test_an_untrusted_client_a_batch_and_two_proposals_still_wait(api, replacing):
    t = uuid.uuid4().hex[:6]
    old = add(api, f"The {t} pool opens at 6:00 on weekdays.", DASHBOARD)
    agent = add(api, f"The {t} pool opens at 7:00 on weekdays.", AGENT)  # not trusted
    assert [(c["id"], c["replaced"]) for c in agent["conflicts"]] == [(old["id"], False)]
    # Two current answers to one question: a third answer proposes both, and both wait.
    third = add(api, f"The {t} pool opens at 8:00 on weekdays.", DASHBOARD)
    assert {c["id"] for c in third["conflicts"]} == {old["id"], agent["id"]}
    assert not any(c["replaced"] for c in third["conflicts"])
    assert api.get(f"/facts/{old['id']}").json()["superseded_by"] is None
    # A batch (an import) proposes, even from the dashboard.
    base = add(api, f"The {t} library opens at 9:00 on Saturdays.", AGENT)
    r = api.post("/facts/batch", json={"facts": [{"text": f"The {t} library opens at 10:00 on Saturdays."}]},
                 headers=DASHBOARD)
    assert r.status_code == 200, r.text
    [result] = r.json()["results"]
    assert [(c["id"], c["replaced"]) for c in result["conflicts"]] == [(base["id"], False)]


def test_a_client_the_review_setting_trusts_replaces_at_once(api, replacing):
    assert api.put("/settings", json={"review": {"trusted": ["claude-code"]}}).status_code == 200
    t = uuid.uuid4().hex[:6]
    old = add(api, f"The {t} dentist appointment is on 3 March.", DASHBOARD)
    new = add(api, f"The {t} dentist appointment is on 5 March.", AGENT)
    assert [(c["id"], c["replaced"]) for c in new["conflicts"]] == [(old["id"], True)]


def test_the_setting_is_recorded_undoable_and_checked(api):
    r = api.put("/settings", json={"proposals": "replace"})
    assert r.status_code == 200 and r.json()["proposals"] == "replace"
    [entry] = api.get("/history", params={"op": "settings", "limit": 1}).json()["entries"]
    assert entry["after"]["proposals"] == "replace" and "proposals" not in (entry["before"] or {})
    assert api.post(f"/history/{entry['id']}/undo").status_code == 200
    assert api.get("/settings").json()["proposals"] == "propose"
    for bad in ("yes", None, 1, ["replace"]):
        r = api.put("/settings", json={"proposals": bad})
        assert r.status_code == 422 and "proposals" in r.json()["error"]["message"], (bad, r.text)
    r = api.get("/conflicts", params={"all": "true", "done": "true"})
    assert r.status_code == 422


def test_a_backup_keeps_a_pair_replaced_at_once(api):
    t = uuid.uuid4().hex[:6]
    a = add(api, f"The {t} bins go out on Tuesdays.", DASHBOARD)["id"]
    b = add(api, f"The {t} recycling goes out on Fridays.", DASHBOARD)["id"]
    pair = {"old": a, "new": b, "score": 0.5, "differs": {"kinds": ["date"], "old": ["Tuesdays"], "new": ["Fridays"]},
            "resolution": "replace"}
    r = api.post("/conflicts/restore", json={"conflicts": [pair]})
    assert r.status_code == 200 and r.json() == {"restored": 1, "skipped": 0}, r.text
    assert pairs(api, all="true")[(a, b)]["resolution"] == "replace"
    r = api.post("/conflicts/restore", json={"conflicts": [pair | {"resolution": "keep_old"}]})
    assert r.status_code == 422
