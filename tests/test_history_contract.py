"""Contract v3 on both memories: the history of writes with undo, the recall log, the memory's
own settings and X-Memory-Client."""

import concurrent.futures
import uuid

import pytest


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def as_client(api, name):
    """The same connection, naming itself `name`."""
    return lambda method, path, **kw: api.request(method, path, headers={"X-Memory-Client": name}, **kw)


def unique(text: str) -> str:
    return f"{text} ({uuid.uuid4().hex[:8]})"


def history_of(api, fact_id: int) -> list[dict]:
    r = api.get("/history", params={"fact_id": fact_id})
    assert r.status_code == 200, r.text
    return r.json()["entries"]


def test_every_write_is_in_the_history_with_its_client(api):
    agent, owner = as_client(api, "claude-code 1.2"), as_client(api, "dashboard")
    fact = agent("POST", "/facts", json={"text": unique("Priya is the owner's sister."), "source": "chat"}).json()["fact"]
    edited = owner("PATCH", f"/facts/{fact['id']}", json={"text": unique("Priya is the owner's older sister.")}).json()
    assert agent("DELETE", f"/facts/{fact['id']}").status_code == 200
    entries = history_of(api, fact["id"])
    assert [(e["op"], e["client"]) for e in entries] == [("delete", "claude-code 1.2"), ("edit", "dashboard"),
                                                         ("add", "claude-code 1.2")]
    delete, edit, add = entries
    assert add["before"] is None and add["after"] == fact
    assert edit["before"]["text"] == fact["text"] and edit["after"] == edited
    assert delete["before"] == edited and delete["after"] is None
    assert all(e["undone_by"] is None for e in entries)
    assert api.get(f"/history/{add['id']}").json() == add


def test_a_batch_records_one_add_a_stored_fact_and_none_for_a_duplicate(api):
    text = unique("Batch fact about tea.")
    results = api.post("/facts/batch", json={"facts": [{"text": text}, {"text": text}]}).json()["results"]
    assert [r["created"] for r in results] == [True, False]
    assert [e["op"] for e in history_of(api, results[0]["id"])] == ["add"]


def test_undo_of_a_delete_brings_the_fact_back_whole_and_only_once(api):
    text = unique("The owner's dentist is Dr Okafor in Porto.")
    fact = api.post("/facts", json={"text": text, "source": "mcp"}).json()["fact"]
    api.delete(f"/facts/{fact['id']}")
    delete = history_of(api, fact["id"])[0]
    undo = as_client(api, "dashboard")("POST", f"/history/{delete['id']}/undo")
    assert undo.status_code == 200, undo.text
    body = undo.json()
    assert body["restored"] is True and body["fact"] == fact  # same id, text and times
    assert body["entry"]["op"] == "restore" and body["entry"]["client"] == "dashboard"
    assert api.get(f"/history/{delete['id']}").json()["undone_by"] == body["entry"]["id"]
    assert api.get(f"/facts/{fact['id']}").json() == fact
    for mode in ("keyword", "vector"):  # its FTS entry and its vector came back with it
        hits = api.post("/recall", json={"query": "dentist Okafor Porto", "mode": mode, "log": False}).json()["results"]
        assert fact["id"] in [h["fact"]["id"] for h in hits], mode
    again = api.post(f"/history/{delete['id']}/undo")
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_undone"


def test_undo_of_an_edit_puts_the_text_back(api):
    fact = api.post("/facts", json={"text": unique("Leo swims on Wednesdays.")}).json()["fact"]
    api.patch(f"/facts/{fact['id']}", json={"text": unique("Leo plays chess on Fridays.")})
    edit = history_of(api, fact["id"])[0]
    body = api.post(f"/history/{edit['id']}/undo").json()
    assert body["fact"]["text"] == fact["text"] and body["entry"]["op"] == "edit"
    assert api.get(f"/facts/{fact['id']}").json()["text"] == fact["text"]


def test_forgetting_a_fact_leaves_no_entry_of_it(api):
    fact = api.post("/facts", json={"text": unique("The wifi password is hunter2.")}).json()["fact"]
    api.delete(f"/facts/{fact['id']}")
    assert api.delete("/history", params={"fact_id": fact["id"]}).json() == {"deleted": 2}
    assert history_of(api, fact["id"]) == []
    assert api.delete("/history").status_code == 422  # which fact must be said


@pytest.mark.parametrize("name", ["x" * 65, "tab\there", "naïve"])
def test_a_bad_client_name_is_a_422_naming_the_header(api, name):
    r = api.post("/facts", json={"text": unique("Never stored.")}, headers={"X-Memory-Client": name.encode("utf-8")})
    assert r.status_code == 422 and "X-Memory-Client" in r.json()["error"]["message"]


def test_recalls_are_logged_with_what_the_client_got(api):
    query = unique("Who is Priya")
    fact = api.post("/facts", json={"text": unique("Priya is the owner's sister, a nurse.")}).json()["fact"]
    answer = as_client(api, "agent-x")("POST", "/recall", json={"query": query, "limit": 5}).json()
    as_client(api, "dashboard")("POST", "/recall", json={"query": query, "log": False})
    found = api.get("/recalls", params={"q": query[-20:]}).json()
    assert found["total"] == 1
    [logged] = found["recalls"]
    assert logged["client"] == "agent-x" and logged["query"] == query and logged["limit"] == 5
    assert logged["mode"] == answer["mode"] and logged["ms"] > 0 and logged["settings"]["rerank"] >= 0
    assert logged["results"] == [{"id": h["fact"]["id"], "via": h["via"], "score": h["score"], "text": h["fact"]["text"]}
                                 for h in answer["results"]]  # the text as the client was given it
    assert fact["id"] in [r["id"] for r in logged["results"]]
    assert api.get(f"/recalls/{logged['id']}").json() == logged
    assert api.get("/recalls", params={"fact_id": fact["id"]}).json()["total"] >= 1
    assert api.get("/recalls", params={"client": "agent-x", "q": query[-20:]}).json()["total"] == 1
    assert api.get("/recalls", params={"client": "nobody", "q": query[-20:]}).json()["total"] == 0


def test_a_recall_that_found_nothing_is_flagged_and_the_log_can_be_cleared(api):
    api.post("/recall", json={"query": "zzzqqq", "mode": "keyword"})
    empty = api.get("/recalls", params={"empty": "true"}).json()
    assert empty["recalls"] and all(r["results"] == [] for r in empty["recalls"])
    n = api.get("/recalls").json()["total"]
    assert api.delete("/recalls").json() == {"deleted": n}
    assert api.get("/recalls").json()["total"] == 0


def test_fifty_parallel_recalls_leave_fifty_rows(api, service):
    api.delete("/recalls")

    def one(i):
        with service.client() as c:
            return c.post("/recall", json={"query": f"parallel recall {i}", "mode": "keyword"}).status_code

    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        assert set(pool.map(one, range(50))) == {200}
    assert api.get("/recalls").json()["total"] == 50


def test_the_log_pages_newest_first(api):
    api.delete("/recalls")
    for i in range(5):
        api.post("/recall", json={"query": f"paging {i}", "mode": "keyword"})
    first = api.get("/recalls", params={"limit": 3}).json()
    second = api.get("/recalls", params={"limit": 3, "cursor": first["next_cursor"]}).json()
    assert [r["query"] for r in first["recalls"] + second["recalls"]] == [f"paging {i}" for i in range(4, -1, -1)]
    assert second["next_cursor"] is None
    assert api.get("/recalls", params={"cursor": "not-one"}).status_code == 422


@pytest.mark.parametrize("body", [{"query": "x", "log": "yes"}, {"query": "x", "log": 1}])
def test_log_must_be_a_boolean(api, body):
    r = api.post("/recall", json=body)
    assert r.status_code == 422 and "log" in r.json()["error"]["message"]


def test_the_memory_keeps_its_own_settings_and_they_can_be_undone(api):
    start = api.get("/settings").json()
    assert start["fusion"] == start["shipped"] and start["changed"] == []
    put = as_client(api, "dashboard")("PUT", "/settings", json={"fusion": {"rerank": 0, "expand": 0.7}})
    assert put.status_code == 200, put.text
    assert sorted(put.json()["changed"]) == ["expand", "rerank"] and put.json()["fusion"]["rerank"] == 0
    used = api.post("/recall", json={"query": "who is my sister", "debug": True, "log": False}).json()["fusion"]
    assert used["rerank"] == 0 and used["expand"] == 0.7  # a recall that sends no fusion
    entry = api.get("/history", params={"op": "settings"}).json()["entries"][0]
    assert entry["client"] == "dashboard" and entry["before"] == start["fusion"] and entry["after"]["rerank"] == 0
    assert api.post(f"/history/{entry['id']}/undo").status_code == 200
    assert api.get("/settings").json() == start


def test_settings_say_which_thresholds_apply_and_where_each_comes_from(api):
    start = api.get("/settings").json()
    assert start["model"]["id"] == "all-MiniLM-L6-v2-onnx-int8" and "dedup_quality.py" in start["model"]["measured"]
    assert start["thresholds"] == {  # MiniLM's row of the model table, on either memory
        "duplicate": {"value": 0.97, "from": "model", "model": 0.97},
        "review_floor": {"value": 0.8, "from": "model", "model": 0.8},
        "expand": {"value": 0.65, "from": "model", "model": 0.65},
    }


def test_the_memory_can_have_its_own_duplicate_threshold_recorded_and_undone(api):
    start = api.get("/settings").json()
    put = as_client(api, "dashboard")("PUT", "/settings", json={"threshold": 0.9, "fusion": {"expand": 0.7}})
    assert put.status_code == 200, put.text
    assert put.json()["thresholds"]["duplicate"] == {"value": 0.9, "from": "memory", "model": 0.97}
    assert put.json()["thresholds"]["expand"] == {"value": 0.7, "from": "memory", "model": 0.65}
    # A body without fusion keeps the memory's recall settings; without threshold, its threshold.
    assert api.put("/settings", json={"threshold": 0.95}).json()["fusion"]["expand"] == 0.7
    assert api.put("/settings", json={"fusion": {"expand": 0.75}}).json()["thresholds"]["duplicate"]["value"] == 0.95
    entries = api.get("/history", params={"op": "settings", "limit": 3}).json()["entries"]
    assert entries[1]["after"]["threshold"] == 0.95 and entries[2]["before"] == start["fusion"]
    # Writes use it: a rewording just over the memory's threshold is merged, just under it stored.
    api.put("/settings", json={"threshold": 1.0})
    tag = uuid.uuid4().hex[:8]  # the same in both: texts that differ in it are distinct facts to the guard
    a, b = f"The owner likes green tea ({tag}).", f"The owner enjoys green tea ({tag})."
    first = api.post("/facts", json={"text": a}).json()["fact"]
    second = api.post("/facts", json={"text": b}).json()["fact"]
    [cosine] = [n["cosine"] for n in api.get(f"/facts/{first['id']}/neighbours").json()["neighbours"] if n["fact"]["id"] == second["id"]]
    api.delete(f"/facts/{second['id']}")
    api.put("/settings", json={"threshold": round(cosine + 0.002, 4)})
    again = api.post("/facts", json={"text": b}).json()
    assert again["created"], cosine
    api.delete(f"/facts/{again['fact']['id']}")
    api.put("/settings", json={"threshold": round(cosine - 0.002, 4)})
    merged = api.post("/facts", json={"text": b}).json()
    assert not merged["created"] and merged["fact"]["id"] == first["id"], cosine
    dropped = api.put("/settings", json={"threshold": None}).json()
    assert dropped["thresholds"]["duplicate"] == {"value": 0.97, "from": "model", "model": 0.97}
    api.put("/settings", json={"fusion": {}})
    assert api.get("/settings").json() == start


@pytest.mark.parametrize("body", [{"threshold": 0.7}, {"threshold": 1.5}, {"threshold": "x"}, {"threshold": ""},
                                  {"threshold": True}])
def test_a_duplicate_threshold_below_the_floor_or_not_a_number_is_a_422(api, body):
    r = api.put("/settings", json=body)
    assert r.status_code == 422 and "threshold" in r.json()["error"]["message"], r.text


@pytest.mark.parametrize("body,field", [
    ({"fusion": {"rerank": 99}}, "fusion.rerank"), ({"fusion": {"nope": 1}}, "nope"), ({"fusion": {"expand": "x"}}, "fusion.expand"),
    ({"fusion": {}, "other": 1}, "other"), ({}, "fusion"),
])
def test_bad_settings_are_a_422_naming_the_field(api, body, field):
    r = api.put("/settings", json=body)
    assert r.status_code == 422 and field in r.json()["error"]["message"], r.text


def test_neither_log_holds_the_secret(api, service):
    api.post("/facts", json={"text": unique("Something to log.")})
    api.post("/recall", json={"query": "something"})
    everything = api.get("/history", params={"limit": 100}).text + api.get("/recalls", params={"limit": 100}).text
    assert service.secret not in everything


def test_a_note_says_why_in_the_history(api):
    fact = api.post("/facts", json={"text": unique("Anna moved to Lisbon.")}).json()["fact"]
    api.patch(f"/facts/{fact['id']}", params={"note": "typo"}, json={"source": "chat"})
    api.delete(f"/facts/{fact['id']}", params={"note": "merged into #7"})
    assert [e["note"] for e in history_of(api, fact["id"])] == ["merged into #7", "typo", ""]
    assert api.delete(f"/facts/{fact['id']}", params={"note": "x" * 201}).status_code == 422


def test_force_stores_over_a_near_duplicate_never_an_exact_one_and_says_so(api):
    tag = uuid.uuid4().hex[:6]
    first = api.post("/facts", json={"text": f"Marta Kowalski teaches the owner piano on Mondays {tag}."}).json()
    near = f"Marta Kowalski teaches the owner the piano on Mondays {tag}."
    refused = api.post("/facts", json={"text": near}).json()
    assert refused["created"] is False and refused["duplicate"]["match"] == "near"
    stored = api.post("/facts", json={"text": near, "force": True})
    assert stored.status_code == 201 and stored.json()["created"] is True
    [entry] = history_of(api, stored.json()["id"])
    assert f"near duplicate of #{first['id']}" in entry["note"] and "decision" in entry["note"]
    exact = api.post("/facts", json={"text": near.upper(), "force": True}).json()
    assert exact["created"] is False and exact["duplicate"]["match"] == "exact"
    assert api.post("/facts", json={"text": "x", "force": "yes"}).status_code == 422


def test_undo_of_a_delete_puts_back_a_force_stored_near_duplicate(api):
    tag = uuid.uuid4().hex[:6]
    api.post("/facts", json={"text": f"Marta Kowalski teaches the owner piano on Mondays {tag}."})
    forced = api.post("/facts", json={"text": f"Marta Kowalski teaches the owner the piano on Mondays {tag}.",
                                      "force": True}).json()["fact"]
    api.delete(f"/facts/{forced['id']}")
    delete = history_of(api, forced["id"])[0]
    undo = api.post(f"/history/{delete['id']}/undo")
    assert undo.status_code == 200 and undo.json()["restored"] is True and undo.json()["fact"] == forced, undo.text
    assert api.get(f"/facts/{forced['id']}").json() == forced


def test_undo_of_a_delete_puts_back_a_fact_stored_again_meanwhile_under_its_own_id(api):
    text = unique("The spare key is with Mrs Alves at number 12.")
    fact = api.post("/facts", json={"text": text}).json()["fact"]
    api.delete(f"/facts/{fact['id']}")
    again = api.post("/facts", json={"text": text}).json()["fact"]  # the agent wrote it again
    delete = history_of(api, fact["id"])[0]
    body = api.post(f"/history/{delete['id']}/undo").json()
    assert body["restored"] is True and body["fact"] == fact
    assert api.get(f"/facts/{fact['id']}").json() == fact and api.get(f"/facts/{again['id']}").status_code == 200


def test_undo_of_an_older_edit_over_a_newer_one_is_a_409_naming_it_unless_forced(api):
    fact = api.post("/facts", json={"text": unique("The owner's doctor is Dr. Alvarez.")}).json()["fact"]
    first = api.patch(f"/facts/{fact['id']}", json={"text": unique("The owner's doctor is Dr. Alvarez, on Rua Augusta.")}).json()
    newer = as_client(api, "agent")("PATCH", f"/facts/{fact['id']}", json={"text": unique("Dr. Chen, since March.")}).json()
    edit, latest = history_of(api, fact["id"])[1], history_of(api, fact["id"])[0]
    assert edit["after"]["text"] == first["text"]
    refused = api.post(f"/history/{edit['id']}/undo")
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "changed_since" and error["entry"] == latest["id"] and str(latest["id"]) in error["message"]
    assert error["current"] == {"text": newer["text"], "type": "fact", "source": "", "valid_until": None, "superseded_by": None}
    assert api.get(f"/facts/{fact['id']}").json()["text"] == newer["text"]  # nothing changed
    assert api.get(f"/history/{edit['id']}").json()["undone_by"] is None
    assert api.post(f"/history/{edit['id']}/undo", json={"force": "yes"}).status_code == 422
    forced = api.post(f"/history/{edit['id']}/undo", json={"force": True})
    assert forced.status_code == 200 and forced.json()["fact"]["text"] == fact["text"]


def test_undo_of_an_add_after_an_edit_and_of_settings_after_newer_ones_are_409s(api):
    fact = api.post("/facts", json={"text": unique("Rosa's birthday is on the 3rd of June.")}).json()["fact"]
    api.patch(f"/facts/{fact['id']}", json={"source": "owner"})
    add = history_of(api, fact["id"])[-1]
    assert api.post(f"/history/{add['id']}/undo").json()["error"]["code"] == "changed_since"
    assert api.get(f"/facts/{fact['id']}").status_code == 200
    start = api.get("/settings").json()["fusion"]
    api.put("/settings", json={"fusion": {"expand": 0.7}})
    api.put("/settings", json={"fusion": {"expand": 0.8}})
    older = api.get("/history", params={"op": "settings"}).json()["entries"][1]
    refused = api.post(f"/history/{older['id']}/undo").json()["error"]
    assert refused["code"] == "changed_since" and refused["current"]["expand"] == 0.8
    newest = api.get("/history", params={"op": "settings"}).json()["entries"][0]
    assert api.post(f"/history/{newest['id']}/undo").status_code == 200  # the newest undoes as before
    assert api.post(f"/history/{older['id']}/undo").status_code == 200
    assert api.get("/settings").json()["fusion"] == start


def test_a_batch_with_restore_stores_each_fact_as_given_without_dedup(api):
    text = unique("The owner's bike is a blue Gazelle.")
    first = api.post("/facts", json={"text": text}).json()["fact"]
    batch = api.post("/facts/batch", json={"restore": True, "facts": [
        {"text": text.upper(), "created_at": "2024-01-02T03:04:05.000006Z"}, {"text": text, "type": "skill"}]})
    assert batch.status_code == 200, batch.text
    results = batch.json()["results"]
    assert all(r["created"] for r in results) and results[0]["fact"]["created_at"] == "2024-01-02T03:04:05.000006Z"
    assert "from a backup" in history_of(api, results[0]["id"])[0]["note"]
    taken = api.post("/facts/batch", json={"restore": True, "facts": [{"text": "x", "id": first["id"]}]})
    assert taken.status_code == 409 and taken.json()["error"]["code"] == "id_taken"
    assert api.post("/facts/batch", json={"restore": "yes", "facts": []}).status_code == 422


def test_stats_say_what_the_history_keeps(api):
    history = api.get("/stats").json()["history"]
    assert history["keep"] >= 1 and history["deletes_days"] == 30 and history["deletes_kept"] == 1000
    assert 0 <= history["deletes"] <= history["entries"]


def test_forgetting_a_fact_for_good_removes_its_words_and_its_text_in_the_recall_log(api, service):
    word, tag = f"quokkastaple{uuid.uuid4().hex[:6]}", uuid.uuid4().hex[:6]
    secret = api.post("/facts", json={"text": f"The bank PIN is {word} {tag}."}).json()["fact"]
    other = api.post("/facts", json={"text": f"The bank is on Rua Nova {tag}."}).json()["fact"]
    api.post("/recall", json={"query": f"bank PIN {tag}", "limit": 5})
    api.delete(f"/facts/{secret['id']}")
    assert api.delete("/history", params={"fact_id": secret["id"]}).json()["deleted"] == 2
    [logged] = api.get("/recalls", params={"q": f"bank PIN {tag}"}).json()["recalls"]
    row = next(r for r in logged["results"] if r["id"] == secret["id"])
    assert row.get("forgotten") is True and "text" not in row
    assert next(r for r in logged["results"] if r["id"] == other["id"])["text"] == other["text"]
    if getattr(service, "backend", "python") == "python":  # the file itself (the Worker's tables: worker/test/history.test.ts)
        import sqlite3

        with sqlite3.connect(service.db) as db:
            words = {w for (w,) in db.execute("SELECT word FROM words")}
            logged_rows = " ".join(r for (r,) in db.execute("SELECT results FROM recalls"))
        assert word not in words and "rua" in words  # another fact's words stay
        assert word not in logged_rows
    # The word matches nothing any more, and recall does not offer it.
    assert api.get("/facts", params={"q": word}).json()["total"] == 0


def test_a_client_filter_finds_the_name_with_or_without_its_version(api):
    fact = as_client(api, "walk-agent 0.1")("POST", "/facts", json={"text": unique("The owner's walking boots are size 43.")}).json()
    as_client(api, "walk-agent-two")("POST", "/facts", json={"text": unique("The owner's running shoes are size 44.")})
    as_client(api, "walk-agent 0.1")("POST", "/recall", json={"query": "walking boots"})
    for route, key in (("/history", "entries"), ("/recalls", "recalls")):
        found = api.get(route, params={"client": "walk-agent"}).json()[key]
        assert found and {e["client"] for e in found} == {"walk-agent 0.1"}, route
        assert api.get(route, params={"client": "walk-agent 0.1"}).json()[key] == found
        assert api.get(route, params={"client": "walk"}).json()[key] == []
    assert fact["created"] is True


def test_settings_already_in_use_change_nothing_and_record_nothing(api):
    api.put("/settings", json={"fusion": {"rerank": 3}})
    before = api.get("/history", params={"op": "settings"}).json()["entries"]
    assert api.put("/settings", json={"fusion": {"rerank": 3}}).status_code == 200
    assert api.get("/history", params={"op": "settings"}).json()["entries"] == before
    api.put("/settings", json={"fusion": {"preset": "default"}})


def test_a_forced_undo_of_settings_already_back_as_they_were_is_recorded(api):
    api.put("/settings", json={"fusion": {"rerank": 2}})
    entry = api.get("/history", params={"op": "settings", "limit": 1}).json()["entries"][0]
    api.put("/settings", json={"fusion": {"rerank": entry["before"]["rerank"]}})  # back by hand
    r = api.post(f"/history/{entry['id']}/undo", json={"force": True})
    assert r.status_code == 200, r.text
    assert r.json()["entry"]["op"] == "settings" and api.get(f"/history/{entry['id']}").json()["undone_by"]
