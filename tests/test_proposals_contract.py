"""Proposals you can trust, on both memories over HTTP with the real model (issue 46): a write
proposes an older fact only when both answer one question, `differs` names the two answers, and
until the owner decides, recall answers the newer fact above the older one and marks the older
`may_be_outdated`."""

from __future__ import annotations

import uuid

import pytest


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def add(api, text, **kw):
    r = api.post("/facts", json={"text": text, **kw})
    assert r.status_code == 201, r.text
    return r.json()


def recall(api, query):
    r = api.post("/recall", json={"query": query, "log": False})
    assert r.status_code == 200, r.text
    return r.json()["results"]


def test_a_real_update_is_proposed_with_its_two_answers_and_a_look_alike_is_not(api):
    t = uuid.uuid4().hex[:6]
    sister = add(api, f"Umar{t}'s sister is Ingrid.")
    wife = add(api, f"Umar{t}'s wife is Elena.")  # the same subject's other attribute
    paul = add(api, f"Paul{t}'s sister is Nora.")  # another subject's same attribute
    assert wife["conflicts"] == [] and paul["conflicts"] == []
    old = add(api, f"The {t} standup is at 9:30 every morning.")
    new = add(api, f"The {t} standup is at 10:00 every morning now.")
    [c] = [c for c in new["conflicts"] if c["id"] == old["id"]]
    assert c["differs"]["old"] == ["9:30"] and c["differs"]["new"] == ["10:00"] and "number" in c["differs"]["kinds"]
    gone = add(api, f"The {t} standup was cancelled.")  # a retraction: it proposes what it takes back
    assert {c["id"] for c in gone["conflicts"]} >= {new["id"]}
    assert sister["id"] not in {c["id"] for c in wife["conflicts"]}


def test_until_the_owner_decides_the_newer_answer_comes_first_and_the_older_is_marked(api):
    t = uuid.uuid4().hex[:6]
    old = add(api, f"The owner {t} drinks two coffees every morning.")
    new = add(api, f"The owner {t} no longer drinks coffee.")
    assert old["id"] in {c["id"] for c in new["conflicts"]}
    hits = {h["fact"]["id"]: (i, h) for i, h in enumerate(recall(api, f"Does the owner {t} drink coffee?"))}
    assert hits[new["id"]][0] < hits[old["id"]][0]
    assert hits[old["id"]][1]["may_be_outdated"] is True and hits[new["id"]][1]["may_be_outdated"] is False

    r = api.post("/conflicts/resolve", json={"old": old["id"], "new": new["id"], "resolution": "keep_both"})
    assert r.status_code == 200, r.text
    hits = {h["fact"]["id"]: h for h in recall(api, f"Does the owner {t} drink coffee?")}
    assert hits[old["id"]]["may_be_outdated"] is False  # decided: both true
    undo = api.post(f"/history/{r.json()['entry']}/undo")
    assert undo.status_code == 200, undo.text
    hits = {h["fact"]["id"]: h for h in recall(api, f"Does the owner {t} drink coffee?")}
    assert hits[old["id"]]["may_be_outdated"] is True  # open again


def test_a_memory_of_distinct_true_facts_holds_no_proposal(api):
    t = uuid.uuid4().hex[:6]
    facts = [f"Ravi{t}'s sister is Meena.", f"Ravi{t}'s wife is Kavya.", f"Ravi{t} works as a pharmacist.",
             f"Ravi{t} lives in Pune.", f"Ravi{t} likes cricket.", f"Ravi{t} likes jazz.",
             f"Ravi{t}'s daughter is 7 years old.", f"Ravi{t}'s son is 4 years old.", f"Ravi{t} is allergic to peanuts.",
             f"Ravi{t} is allergic to cats.", f"Ravi{t}'s yoga class is on Mondays.", f"Ravi{t}'s piano lesson is on Tuesdays."]
    proposed = [(f, c["fact"]["text"]) for f in facts for c in add(api, f)["conflicts"]]
    assert proposed == []


def test_a_pair_goes_by_the_facts_times_so_an_import_never_replaces_a_newer_fact(api):
    """An imported row dated before what the memory holds is the pair's old fact: "standup at 9:15"
    (2026-11-03) against today's "10:00", "drinks black coffee" against today's "no longer"."""
    t = uuid.uuid4().hex[:6]
    standup = add(api, f"The {t} standup is at 10:00 now.")["id"]
    coffee = add(api, f"The {t} owner no longer drinks coffee.")["id"]
    r = api.post("/facts/batch", json={"facts": [{"text": f"The {t} standup is at 9:15.", "created_at": "2026-11-03T09:00:00Z"},
                                                 {"text": f"The {t} owner drinks black coffee.", "created_at": "2026-11-03T09:00:00Z"}]})
    old_standup, old_coffee = r.json()["results"]
    assert old_standup["created"] and old_coffee["created"], r.text
    assert old_standup["conflicts"] == [] and old_coffee["conflicts"] == []  # the import replaces nothing newer
    pairs = {(c["old"]["id"], c["new"]["id"]) for c in api.get("/conflicts", params={"limit": 100}).json()["conflicts"]}
    assert (old_standup["id"], standup) in pairs and (old_coffee["id"], coffee) in pairs
    assert (standup, old_standup["id"]) not in pairs and (coffee, old_coffee["id"]) not in pairs
    # Until the owner decides, the newer answer comes first and the imported one is marked.
    hits = api.post("/recall", json={"query": f"When is the {t} standup?", "log": False}).json()["results"]
    ids = [h["fact"]["id"] for h in hits]
    assert ids.index(standup) < ids.index(old_standup["id"])
    assert next(h for h in hits if h["fact"]["id"] == old_standup["id"]).get("may_be_outdated") is True
