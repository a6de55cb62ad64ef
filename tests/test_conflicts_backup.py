"""Every pair a memory keeps, as a backup needs them (GET /conflicts?all=true), a backup's pairs
put back (POST /conflicts/restore), and a deleted fact's pairs back with its undo: both memories,
the real model, real HTTP."""

import pytest


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def add(api, text, type="fact"):
    r = api.post("/facts", json={"text": text, "type": type})
    assert r.status_code == 201, r.text
    return r.json()


def pairs(api, every=False, limit=100):
    """{(old, new): the pair}, every page."""
    out, params = {}, {"limit": limit, **({"all": "true"} if every else {})}
    while True:
        body = api.get("/conflicts", params=params).json()
        out |= {(c["old"]["id"], c["new"]["id"]): c for c in body["conflicts"]}
        if not body["next_cursor"]:
            return out, body["total"]
        params["cursor"] = body["next_cursor"]


def restore(api, *items):
    return api.post("/conflicts/restore", json={"conflicts": list(items)})


DIFFERS = {"kinds": ["name"], "old": ["Lisbon"], "new": ["Porto"]}


def test_every_pair_is_listed_with_its_resolution_and_the_open_ones_alone_by_default(api):
    standup, later = add(api, "The standup is at 9:30."), add(api, "The standup is at 9:00.")
    assert [c["id"] for c in later["conflicts"]] == [standup["fact"]["id"]]
    lisbon, porto = add(api, "Priya lives in Lisbon."), add(api, "Priya lives in Porto.")
    gym, earlier = add(api, "The gym opens at 7 on Sundays."), add(api, "The gym opens at 6 on Sundays.")
    for old, new in ((lisbon, porto), (gym, earlier)):
        assert new["conflicts"] and new["conflicts"][0]["id"] == old["fact"]["id"]
    assert api.post("/conflicts/resolve", json={"old": lisbon["id"], "new": porto["id"], "resolution": "keep_both"}).status_code == 200
    assert api.post("/conflicts/resolve", json={"old": gym["id"], "new": earlier["id"], "resolution": "replace"}).status_code == 200

    open_now, total = pairs(api)
    assert (standup["id"], later["id"]) in open_now and total == len(open_now)
    assert open_now[(standup["id"], later["id"])]["resolution"] is None
    assert (lisbon["id"], porto["id"]) not in open_now and (gym["id"], earlier["id"]) not in open_now

    every, total = pairs(api, every=True)
    assert total == len(every) and set(open_now) < set(every)
    assert every[(lisbon["id"], porto["id"])]["resolution"] == "keep_both"
    kept = every[(gym["id"], earlier["id"])]  # its old fact replaced: no longer asked about, still kept
    assert kept["resolution"] is None and kept["old"]["superseded_by"] == earlier["id"]
    assert kept["differs"]["kinds"] == ["number"] and 0.5 <= kept["score"] <= 1
    assert pairs(api, every=True, limit=1) == (every, total)  # page by page, the same pairs
    r = api.get("/conflicts", params={"all": "maybe"})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid"


def test_a_backups_pairs_are_put_back_as_they_were_and_skipped_when_they_cannot_be(api):
    # Logs never propose each other: every pair here comes from the restore.
    x, y = add(api, "2026-11-02: Priya moved to Lisbon.", "log")["id"], add(api, "2026-11-03: Priya moved to Porto.", "log")["id"]
    kept = {"id": 900001, "old": x, "new": y, "score": 0.612345, "differs": DIFFERS, "resolution": "keep_both"}
    proposed = {"old": y, "new": x, "score": 0.5, "differs": {"kinds": ["word"], "old": [], "new": []}, "resolution": None}
    r = restore(api, kept, {**proposed, "new": 2**40},  # a fact that is not here
                {**kept, "old": y, "new": x},  # an id in use by the time it comes
                proposed)
    assert r.status_code == 200, r.text
    assert r.json() == {"restored": 2, "skipped": 2}

    every, _ = pairs(api, every=True)
    assert {k: every[(x, y)][k] for k in kept if k not in ("old", "new")} == {k: v for k, v in kept.items() if k not in ("old", "new")}
    assert every[(y, x)]["resolution"] is None and every[(y, x)]["differs"] == proposed["differs"]
    open_now, _ = pairs(api)
    assert (y, x) in open_now and (x, y) not in open_now

    # The owner's "both true" comes back as a resolve entry, and its undo opens the pair.
    [entry] = api.get("/history", params={"fact_id": y, "op": "resolve"}).json()["entries"]
    assert entry["before"] == {"old": x, "new": y, "resolution": None}
    assert entry["after"] == {"old": x, "new": y, "resolution": "keep_both"} and "backup" in entry["note"]
    assert api.post(f"/history/{entry['id']}/undo").status_code == 200
    assert (x, y) in pairs(api)[0]

    again = restore(api, kept, proposed)
    assert again.status_code == 200 and again.json() == {"restored": 0, "skipped": 2}


@pytest.fixture(scope="module")
def two_logs(service):
    with service.client() as api:
        return add(api, "2026-10-01: renewed the car insurance.", "log")["id"], add(api, "2026-10-02: booked the dentist.", "log")["id"]


@pytest.mark.parametrize("bad,message", [
    ({"new": 2, "score": 0.7, "differs": DIFFERS}, "conflicts[1].old is required: a fact id"),
    ({"old": 1, "new": 1, "score": 0.7, "differs": DIFFERS}, "conflicts[1]: old and new are the same fact"),
    ({"old": "1", "new": 2, "score": 0.7, "differs": DIFFERS}, "conflicts[1].old must be a whole number from 1 to"),
    ({"id": 0, "old": 1, "new": 2, "score": 0.7, "differs": DIFFERS}, "conflicts[1].id must be a whole number from 1 to"),
    ({"old": 1, "new": 2, "score": 1.5, "differs": DIFFERS}, "conflicts[1].score must be a number from -1 to 1"),
    ({"old": 1, "new": 2, "score": True, "differs": DIFFERS}, "conflicts[1].score must be a number from -1 to 1"),
    ({"old": 1, "new": 2, "score": 0.7, "differs": {"kinds": ["mood"], "old": [], "new": []}}, "conflicts[1].differs must be"),
    ({"old": 1, "new": 2, "score": 0.7, "differs": {"kinds": [], "old": [3], "new": []}}, "conflicts[1].differs must be"),
    ({"old": 1, "new": 2, "score": 0.7, "differs": DIFFERS, "resolution": "keep_old"},
     "conflicts[1].resolution must be null (proposed), keep_both or replace (replaced at once)"),
    ("a pair", "conflicts[1] must be an object"),
])
def test_a_malformed_pair_is_refused_by_name_and_nothing_is_stored(api, two_logs, bad, message):
    a, b = two_logs
    good = {"old": a, "new": b, "score": 0.55, "differs": DIFFERS}
    r = restore(api, good, bad)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid" and error["message"].startswith(message), error
    assert (a, b) not in pairs(api, every=True)[0]


def test_a_restore_takes_a_list_of_at_most_100_pairs(api):
    r = api.post("/conflicts/restore", json={"conflicts": {"old": 1}})
    assert r.status_code == 422 and r.json()["error"]["message"] == "conflicts must be a list of pairs"
    r = restore(api, *[{"old": 1, "new": 2, "score": 0.5, "differs": DIFFERS}] * 101)
    assert r.status_code == 413 and r.json()["error"] == {"code": "too_large", "message": "a restore holds at most 100 pairs"}
    assert restore(api).json() == {"restored": 0, "skipped": 0}


def test_an_undone_delete_brings_back_the_pairs_its_fact_was_in(api):
    old, new = add(api, "The dentist is Dr. Okafor on Rua Nova."), add(api, "The dentist is Dr. Okafor on Rua Velha.")
    other = add(api, "The dentist is Dr. Okafor on Rua Augusta.")
    assert old["id"] in [c["id"] for c in new["conflicts"]] and old["id"] in [c["id"] for c in other["conflicts"]]
    assert api.post("/conflicts/resolve", json={"old": old["id"], "new": new["id"], "resolution": "keep_both"}).status_code == 200
    before = {k: c for k, c in pairs(api, every=True)[0].items() if old["id"] in k}
    assert len(before) >= 2 and before[(old["id"], new["id"])]["resolution"] == "keep_both"

    assert api.delete(f"/facts/{old['id']}").status_code == 200
    assert not [k for k in pairs(api, every=True)[0] if old["id"] in k]  # gone with it
    [entry] = api.get("/history", params={"fact_id": old["id"], "op": "delete"}).json()["entries"]
    assert api.post(f"/history/{entry['id']}/undo").status_code == 200
    assert {k: c for k, c in pairs(api, every=True)[0].items() if old["id"] in k} == before  # ids, scores, resolutions
    assert (old["id"], other["id"]) in pairs(api)[0]  # open again in the queue
