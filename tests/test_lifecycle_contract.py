"""The fact lifecycle of contract v4 (docs/memory-api.md, "Lifecycle") against both memories, with
the real model over real HTTP: facts that replace facts, expiry, recall as of a time, the
proposals a write makes and the contradictions queue, and undo of each."""

import time
from datetime import UTC, datetime, timedelta

import pytest

from memories.facts import stamp


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def add(api, text, status=(201,), **kw):
    r = api.post("/facts", json={"text": text, **kw})
    assert r.status_code in status, r.text
    return r.json()


def recall(api, query, **kw):
    r = api.post("/recall", json={"query": query, "log": False, **kw})
    assert r.status_code == 200, r.text
    return r.json()["results"]


def texts(results):
    return [r["fact"]["text"] for r in results]


def error_of(r, status):
    assert r.status_code == status, r.text
    return r.json()["error"]


def latest_entry(api, fact_id):
    return api.get("/history", params={"fact_id": fact_id, "limit": 1}).json()["entries"][0]


def test_every_fact_carries_its_validity(api):
    fact = add(api, "The owner's library card number ends in 4471.")["fact"]
    assert fact["valid_until"] is None and fact["superseded_by"] is None
    assert api.get(f"/facts/{fact['id']}").json()["valid_until"] is None


def test_a_replacement_hides_the_old_fact_as_of_now_and_keeps_it_as_of_then(api):
    old = add(api, "The weekly standup is at 9:30 on Mondays.")
    time.sleep(0.01)
    between = stamp(datetime.now(UTC))
    time.sleep(0.01)
    new = add(api, "The weekly standup is at 9:00 on Mondays.", supersedes=[old["id"]])
    assert new["created"] is True
    replaced = api.get(f"/facts/{old['id']}").json()
    assert replaced["superseded_by"] == new["id"] and replaced["valid_until"] == new["fact"]["created_at"]

    now = recall(api, "When is the weekly standup?")
    assert "The weekly standup is at 9:00 on Mondays." in texts(now)
    assert "The weekly standup is at 9:30 on Mondays." not in texts(now)
    assert all(r["current"] for r in now)

    then = recall(api, "When is the weekly standup?", as_of=between)
    assert "The weekly standup is at 9:30 on Mondays." in texts(then)
    assert "The weekly standup is at 9:00 on Mondays." not in texts(then)

    everything = recall(api, "When is the weekly standup?", include_stale=True)
    current = {r["fact"]["text"]: r["current"] for r in everything}
    assert current["The weekly standup is at 9:30 on Mondays."] is False
    assert current["The weekly standup is at 9:00 on Mondays."] is True

    # One history entry, and its undo puts both sides back as they were.
    entry = latest_entry(api, new["id"])
    assert entry["op"] == "add" and [f["id"] for f in entry["before"]["replaced"]] == [old["id"]]
    assert entry["before"]["replaced"][0]["superseded_by"] is None
    r = api.post(f"/history/{entry['id']}/undo")
    assert r.status_code == 200, r.text
    back = api.get(f"/facts/{old['id']}").json()
    assert back["superseded_by"] is None and back["valid_until"] is None
    assert api.get(f"/facts/{new['id']}").status_code == 404
    assert "The weekly standup is at 9:30 on Mondays." in texts(recall(api, "When is the weekly standup?"))


def test_ranks_are_among_the_facts_answered_from(api):
    old = add(api, "The owner's dentist is Dr Kowalski in Leeds.")
    new = add(api, "The owner's dentist is Dr Abara in Leeds.", supersedes=[old["id"]])
    hits = recall(api, "Who is the owner's dentist?")
    assert hits[0]["fact"]["id"] == new["id"]
    assert all(h["fact"]["id"] != old["id"] for h in hits)
    ranks = [h["vec_rank"] for h in hits if h["vec_rank"]]
    assert sorted(ranks) == list(range(1, len(ranks) + 1))
    why = api.post("/explain", json={"query": "Who is the owner's dentist?", "id": old["id"]}).json()
    assert why["current"] is False and why["kw_rank"] is None and why["vec_rank"] is None and why["fused_rank"] is None
    why = api.post("/explain", json={"query": "Who is the owner's dentist?", "id": old["id"], "include_stale": True}).json()
    assert why["vec_rank"] is not None and why["fused_rank"] is not None


def test_a_write_proposes_what_it_may_replace_and_the_queue_lists_it(api):
    old = add(api, "The owner's accountant is Maria Lopez.")
    new = add(api, "The owner's accountant is Tom Berg.")
    proposed = {c["id"]: c for c in new["conflicts"]}
    assert old["id"] in proposed
    p = proposed[old["id"]]
    assert p["fact"]["text"] == "The owner's accountant is Maria Lopez." and 0.5 <= p["score"] <= 1
    assert p["differs"] == {"kinds": ["name"], "old": ["Maria", "Lopez"], "new": ["Tom", "Berg"]}
    queue = api.get("/conflicts").json()
    mine = [c for c in queue["conflicts"] if c["old"]["id"] == old["id"] and c["new"]["id"] == new["id"]]
    assert len(mine) == 1 and queue["total"] >= 1 and mine[0]["differs"] == p["differs"]
    # Nothing was replaced: both are current until someone decides.
    assert api.get(f"/facts/{old['id']}").json()["superseded_by"] is None
    unrelated = add(api, "The owner's bicycle is a green Brompton.")
    assert all(c["id"] != old["id"] for c in unrelated["conflicts"])


def test_resolving_replace_keep_old_and_keep_both_each_undoable(api):
    def pair(a, b):
        old = add(api, a)
        new = add(api, b)
        assert any(c["id"] == old["id"] for c in new["conflicts"]), new
        return old["id"], new["id"]

    def open_pairs():
        return {(c["old"]["id"], c["new"]["id"]) for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"]}

    o, n = pair("The owner's gym is PureGym on King Street.", "The owner's gym is Nuffield on King Street.")
    r = api.post("/conflicts/resolve", json={"old": o, "new": n, "resolution": "replace"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["old"]["superseded_by"] == n and body["new"]["superseded_by"] is None and body["resolution"] == "replace"
    assert (o, n) not in open_pairs()
    entry = api.get(f"/history/{body['entry']}").json()
    assert entry["op"] == "edit" and entry["fact_id"] == o
    assert api.post(f"/history/{body['entry']}/undo").status_code == 200
    assert api.get(f"/facts/{o}").json()["superseded_by"] is None and (o, n) in open_pairs()

    o2, n2 = pair("The owner's car is a blue Skoda Octavia.", "The owner's car is a red Skoda Octavia.")
    body = api.post("/conflicts/resolve", json={"old": o2, "new": n2, "resolution": "keep_old"}).json()
    assert body["new"]["superseded_by"] == o2 and body["old"]["superseded_by"] is None
    assert "The owner's car is a red Skoda Octavia." not in texts(recall(api, "What car does the owner drive?"))

    o3, n3 = pair("The owner's brother lives in Glasgow.", "The owner's brother lives in Dundee.")
    body = api.post("/conflicts/resolve", json={"old": o3, "new": n3, "resolution": "keep_both"}).json()
    assert body["resolution"] == "keep_both" and (o3, n3) not in open_pairs()
    entry = api.get(f"/history/{body['entry']}").json()
    assert entry["op"] == "resolve" and entry["after"] == {"old": o3, "new": n3, "resolution": "keep_both"}
    assert api.post(f"/history/{body['entry']}/undo").status_code == 200
    assert (o3, n3) in open_pairs()


def test_patch_replaces_expires_and_refuses_loops_and_itself(api):
    a = add(api, "The owner's landlord is Mr Okafor.")["id"]
    b = add(api, "The owner's landlord is Ms Lindqvist.")["id"]
    assert error_of(api.patch(f"/facts/{a}", json={"superseded_by": a}), 422)["message"]
    r = api.patch(f"/facts/{a}", json={"superseded_by": b})
    assert r.status_code == 200 and r.json()["superseded_by"] == b and r.json()["valid_until"]
    # b cannot now be replaced by a: a is not current, and the chain would loop.
    assert str(a) in error_of(api.patch(f"/facts/{b}", json={"superseded_by": a}), 422)["message"]
    # Not replaced any more: current again.
    r = api.patch(f"/facts/{a}", json={"superseded_by": None})
    assert r.json()["superseded_by"] is None and r.json()["valid_until"] is None
    soon = stamp(datetime.now(UTC) + timedelta(days=3))
    r = api.patch(f"/facts/{a}", json={"valid_until": soon})
    assert r.status_code == 200 and r.json()["valid_until"] == soon
    assert a in [h["fact"]["id"] for h in recall(api, "Who is the owner's landlord?")]
    unknown = error_of(api.patch(f"/facts/{a}", json={"superseded_by": 9_000_000}), 422)
    assert "9000000" in unknown["message"]


def test_an_expired_fact_is_hidden_from_recall_not_deleted(api):
    past = stamp(datetime.now(UTC) - timedelta(days=2))
    fact = add(api, "The owner is in Lisbon for a conference.", created_at=stamp(datetime.now(UTC) - timedelta(days=5)),
               valid_until=past)["fact"]
    assert fact["valid_until"] == past
    assert fact["id"] not in [h["fact"]["id"] for h in recall(api, "Where is the owner this week?")]
    assert api.get(f"/facts/{fact['id']}").status_code == 200
    expired = api.get("/facts", params={"status": "expired"}).json()["facts"]
    assert fact["id"] in [f["id"] for f in expired]
    assert fact["id"] not in [f["id"] for f in api.get("/facts", params={"status": "current", "limit": 100}).json()["facts"]]
    three_days_ago = stamp(datetime.now(UTC) - timedelta(days=3))
    assert fact["id"] in [h["fact"]["id"] for h in recall(api, "Where is the owner this week?", as_of=three_days_ago)]
    then = api.get("/facts", params={"as_of": three_days_ago, "status": "current", "limit": 100}).json()["facts"]
    assert fact["id"] in [f["id"] for f in then]


def test_dedup_compares_with_current_facts_and_answers_a_replaced_text(api):
    old = add(api, "The owner's office is on the third floor.")
    new = add(api, "The owner's office is on the fifth floor.", supersedes=[old["id"]])
    again = add(api, "The owner's office is on the third floor.", status=(200,))
    assert again["created"] is False and again["duplicate"]["match"] == "replaced"
    assert again["id"] == old["id"] and again["fact"]["superseded_by"] == new["id"]
    # The owner moved back: with supersedes it is stored as a new current fact.
    back = add(api, "The owner's office is on the third floor.", supersedes=[new["id"]])
    assert back["created"] is True and back["id"] != old["id"]
    assert api.get(f"/facts/{new['id']}").json()["superseded_by"] == back["id"]


@pytest.mark.parametrize("payload,field", [
    ({"text": "x fact", "supersedes": "3"}, "supersedes"),
    ({"text": "x fact", "supersedes": [0]}, "supersedes"),
    ({"text": "x fact", "supersedes": list(range(1, 23))}, "supersedes"),
    ({"text": "x fact", "valid_until": "next friday"}, "valid_until"),
    ({"text": "x fact", "valid_until": "2024-02-30T10:00:00Z"}, "valid_until"),
])
def test_bad_lifecycle_input_is_a_422_naming_the_field(api, payload, field):
    before = api.get("/facts", params={"limit": 1}).json()["total"]
    assert field in error_of(api.post("/facts", json=payload), 422)["message"]
    assert api.get("/facts", params={"limit": 1}).json()["total"] == before


def test_supersedes_naming_an_unknown_or_replaced_fact_stores_nothing(api):
    before = api.get("/facts", params={"limit": 1}).json()["total"]
    assert "8999999" in error_of(api.post("/facts", json={"text": "The owner's plumber is Ade.", "supersedes": [8999999]}), 422)["message"]
    a = add(api, "The owner's plumber is Bex.")["id"]
    add(api, "The owner's plumber is Cal.", supersedes=[a])
    assert str(a) in error_of(api.post("/facts", json={"text": "The owner's plumber is Dee.", "supersedes": [a]}), 422)["message"]
    assert api.get("/facts", params={"limit": 1}).json()["total"] == before + 2


@pytest.mark.parametrize("as_of", ["2999-01-01T00:00:00Z", "yesterday", "0000-01-01T00:00:00Z"])
def test_as_of_in_the_future_or_unparseable_is_a_422(api, as_of):
    assert "as_of" in error_of(api.post("/recall", json={"query": "anything", "as_of": as_of}), 422)["message"]
    assert "as_of" in error_of(api.get("/facts", params={"as_of": as_of}), 422)["message"]


def test_resolve_refuses_bad_requests(api):
    a = add(api, "The owner's piano teacher is Ilse.")["id"]
    b = add(api, "The owner's piano teacher is Jonas.")["id"]
    assert error_of(api.post("/conflicts/resolve", json={"old": a, "new": b, "resolution": "merge"}), 422)
    assert error_of(api.post("/conflicts/resolve", json={"old": a, "new": a, "resolution": "replace"}), 422)
    assert error_of(api.post("/conflicts/resolve", json={"old": a, "new": 8_999_998, "resolution": "replace"}), 404)
    api.post("/conflicts/resolve", json={"old": a, "new": b, "resolution": "replace"})
    assert error_of(api.post("/conflicts/resolve", json={"old": a, "new": b, "resolution": "keep_both"}), 422)


def test_deleting_a_fact_drops_its_proposals(api):
    old = add(api, "The owner's yoga class is on Tuesdays.")
    new = add(api, "The owner's yoga class is on Wednesdays.")
    assert any(c["id"] == old["id"] for c in new["conflicts"])
    api.delete(f"/facts/{new['id']}")
    assert all(c["new"]["id"] != new["id"] for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"])


def test_a_restore_keeps_validity_and_what_replaced_what(api):
    old = add(api, "The owner's bank is Monzo.")
    new = add(api, "The owner's bank is Starling.", supersedes=[old["id"]])
    facts = [api.get(f"/facts/{i}").json() for i in (old["id"], new["id"])]
    for f in facts:
        assert api.delete(f"/facts/{f['id']}").status_code == 200
    r = api.post("/facts/batch", json={"facts": facts, "restore": True})
    assert r.status_code == 200, r.text
    assert [api.get(f"/facts/{f['id']}").json() for f in facts] == facts
    assert "The owner's bank is Monzo." not in texts(recall(api, "Which bank does the owner use?"))


def test_forgetting_a_replaced_fact_leaves_its_text_in_no_entry(api):
    secret = "The owner's old door code is 8841-SECRET."
    old = add(api, secret)
    new = add(api, "The owner's door code changed.", supersedes=[old["id"]])
    api.delete(f"/facts/{old['id']}")
    assert api.delete("/history", params={"fact_id": old["id"]}).status_code == 200
    entries = api.get("/history", params={"limit": 100}).json()["entries"]
    assert "8841-SECRET" not in str(entries)
    add_entry = latest_entry(api, new["id"])
    assert add_entry["op"] == "add" and add_entry["before"] is None


def test_a_log_neither_proposes_nor_is_proposed(api):
    add(api, "Ran 10 km along the canal on Sunday.", type="log")
    later = add(api, "Ran 12 km along the canal on Monday.", type="log")
    assert later["conflicts"] == []
