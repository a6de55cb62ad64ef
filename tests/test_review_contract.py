"""The owner's review (docs/memory-api.md, "Review") against both memories, real model, real HTTP:
which writes land reviewed, the inbox's list, marking reviewed with undo, the `review` setting,
and pending facts kept out of recall until reviewed."""

import uuid

import pytest


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def as_client(api, name):
    return lambda method, path, **kw: api.request(method, path, headers={"X-Memory-Client": name}, **kw)


def unique(text):
    return f"{text} ({uuid.uuid4().hex[:6]})"


def error_of(r, status):
    assert r.status_code == status, r.text
    return r.json()["error"]


def unreviewed_ids(api):
    return {f["id"] for f in api.get("/facts", params={"reviewed": "false", "limit": 100}).json()["facts"]}


@pytest.fixture
def review_after(api):
    yield
    api.put("/settings", json={"review": {"mode": "after", "trusted": []}})


def test_the_dashboards_writes_are_reviewed_and_an_agents_are_not(api, review_after):
    agent = as_client(api, "claude-code 1.2")("POST", "/facts", json={"text": unique("The owner's gym is on Bath Road.")}).json()
    owner = as_client(api, "dashboard")("POST", "/facts", json={"text": unique("The owner's dentist is on Mill Lane.")}).json()
    assert agent["fact"]["reviewed_at"] is None
    assert owner["fact"]["reviewed_at"] == owner["fact"]["created_at"]
    inbox = unreviewed_ids(api)
    assert agent["id"] in inbox and owner["id"] not in inbox
    # An agent's edit of the owner's fact puts it back in the inbox; the owner's edit reviews it.
    as_client(api, "claude-code 1.2")("PATCH", f"/facts/{owner['id']}", json={"text": unique("The owner's dentist is on Kiln Lane.")})
    assert owner["id"] in unreviewed_ids(api)
    as_client(api, "dashboard")("PATCH", f"/facts/{owner['id']}", json={"source": "checked"})
    assert owner["id"] not in unreviewed_ids(api)


def test_marking_reviewed_is_one_entry_and_its_undo_puts_them_back(api, review_after):
    ids = [as_client(api, "agent")("POST", "/facts", json={"text": unique(f"The owner's locker {n} is blue.")}).json()["id"]
           for n in range(3)]
    r = as_client(api, "dashboard")("POST", "/facts/review", json={"ids": ids})
    assert r.status_code == 200, r.text
    body = r.json()
    assert sorted(body["reviewed"]) == sorted(ids) and body["entry"]
    assert not set(ids) & unreviewed_ids(api)
    entry = api.get(f"/history/{body['entry']}").json()
    assert entry["op"] == "review" and sorted(entry["before"]["ids"]) == sorted(ids) and entry["client"] == "dashboard"
    again = api.post("/facts/review", json={"ids": ids}).json()
    assert again == {"reviewed": [], "entry": None}
    assert api.post(f"/history/{body['entry']}/undo").status_code == 200
    assert set(ids) <= unreviewed_ids(api)


@pytest.mark.parametrize("body", [{"ids": []}, {"ids": list(range(1, 202))}, {"ids": "1,2"}, {"ids": [0]}, {"ids": [None]}, {}])
def test_bad_review_requests_are_a_422_naming_ids(api, body):
    assert "ids" in error_of(api.post("/facts/review", json=body), 422)["message"]


def test_reviewing_an_unknown_id_changes_nothing(api, review_after):
    fid = as_client(api, "agent")("POST", "/facts", json={"text": unique("The owner's kettle is steel.")}).json()["id"]
    assert "8999997" in error_of(api.post("/facts/review", json={"ids": [fid, 8999997]}), 422)["message"]
    assert fid in unreviewed_ids(api)


def test_review_before_keeps_pending_facts_out_of_recall_until_reviewed(api, review_after):
    r = api.put("/settings", json={"review": {"mode": "before"}})
    assert r.status_code == 200 and r.json()["review"] == {"mode": "before", "trusted": []}
    text = unique("The owner's passport number ends in 5521.")
    added = as_client(api, "agent")("POST", "/facts", json={"text": text}).json()
    assert added["created"] is True and added["pending"] is True
    asked = api.post("/recall", json={"query": "passport number", "log": False}).json()["results"]
    assert added["id"] not in [h["fact"]["id"] for h in asked]
    stale = api.post("/recall", json={"query": "passport number", "log": False, "include_stale": True}).json()["results"]
    hit = next(h for h in stale if h["fact"]["id"] == added["id"])
    assert hit["reviewed"] is False
    # Still deduplicated against: the agent saving it again gets the pending fact back.
    again = as_client(api, "agent")("POST", "/facts", json={"text": text}).json()
    assert again["created"] is False and again["id"] == added["id"]
    api.post("/facts/review", json={"ids": [added["id"]]})
    asked = api.post("/recall", json={"query": "passport number", "log": False}).json()["results"]
    assert asked[0]["fact"]["id"] == added["id"] and asked[0]["reviewed"] is True


def test_a_trusted_client_or_source_writes_reviewed(api, review_after):
    r = api.put("/settings", json={"review": {"trusted": ["walk-agent", "import:chatgpt"]}})
    assert r.json()["review"]["trusted"] == ["walk-agent", "import:chatgpt"]
    by_client = as_client(api, "walk-agent 0.3")("POST", "/facts", json={"text": unique("The owner walks at dawn.")}).json()
    by_source = as_client(api, "cli")("POST", "/facts", json={"text": unique("The owner likes figs."), "source": "import:chatgpt"}).json()
    other = as_client(api, "walk-agent-two")("POST", "/facts", json={"text": unique("The owner likes dates.")}).json()
    assert by_client["fact"]["reviewed_at"] and by_source["fact"]["reviewed_at"] and other["fact"]["reviewed_at"] is None
    entry = api.get("/history", params={"op": "settings", "limit": 1}).json()["entries"][0]
    assert entry["after"]["review"]["trusted"] == ["walk-agent", "import:chatgpt"]


@pytest.mark.parametrize("review,field", [
    ({"mode": "never"}, "review.mode"), ({"trusted": "all"}, "review.trusted"), ({"trusted": ["tab\there"]}, "review.trusted"),
    ({"other": 1}, "review"), ("before", "review"),
])
def test_a_bad_review_setting_is_a_422_naming_the_field(api, review, field):
    before = api.get("/settings").json()
    assert field in error_of(api.put("/settings", json={"review": review}), 422)["message"]
    assert api.get("/settings").json() == before


def test_a_restore_keeps_reviewed_at(api):
    fact = as_client(api, "agent")("POST", "/facts", json={"text": unique("The owner's umbrella is black.")}).json()["fact"]
    api.post("/facts/review", json={"ids": [fact["id"]]})
    kept = api.get(f"/facts/{fact['id']}").json()
    api.delete(f"/facts/{fact['id']}")
    assert api.post("/facts/batch", json={"facts": [kept], "restore": True}).status_code == 200
    assert api.get(f"/facts/{fact['id']}").json()["reviewed_at"] == kept["reviewed_at"]


def test_the_facts_list_filters_by_the_client_that_wrote_them_and_by_source_prefix(api):
    mine = as_client(api, "inbox-agent 2.0")("POST", "/facts", json={"text": unique("The owner's scarf is green."),
                                                                     "source": "import:mem0"}).json()["id"]
    as_client(api, "inbox-agent-other")("POST", "/facts", json={"text": unique("The owner's hat is red.")})
    by_client = api.get("/facts", params={"client": "inbox-agent", "limit": 100}).json()
    assert [f["id"] for f in by_client["facts"]] == [mine] and by_client["total"] == 1
    assert mine in [f["id"] for f in api.get("/facts", params={"source_prefix": "import:", "limit": 100}).json()["facts"]]
    assert api.get("/facts", params={"source_prefix": "import:zzz"}).json()["total"] == 0


def test_a_restore_of_a_fact_from_before_the_review_is_reviewed(api):
    fact = as_client(api, "agent")("POST", "/facts", json={"text": unique("The owner's gloves are grey.")}).json()["fact"]
    api.delete(f"/facts/{fact['id']}")
    old = {k: v for k, v in fact.items() if k not in ("reviewed_at", "valid_until", "superseded_by")}  # a v3 backup's line
    assert api.post("/facts/batch", json={"facts": [old], "restore": True}).status_code == 200
    assert api.get(f"/facts/{fact['id']}").json()["reviewed_at"] == fact["created_at"]


@pytest.mark.parametrize("params,field", [({"source_prefix": "x" * 201}, "source_prefix"), ({"reviewed": "maybe"}, "reviewed")])
def test_bad_list_filters_are_a_422_naming_them(api, params, field):
    assert field in error_of(api.get("/facts", params=params), 422)["message"]


def test_a_batch_note_that_is_not_valid_unicode_is_a_422(api):
    r = api.post("/facts/batch", content=b'{"facts": [{"text": "The owner likes kites."}], "note": "\\ud800"}',
                 headers={"Content-Type": "application/json"})
    assert "note" in error_of(r, 422)["message"]

