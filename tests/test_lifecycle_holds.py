"""The lifecycle holds under undo, review and delete (issue 45), on both memories over real HTTP:
no undo makes a loop, a fact that is not current is never replaced (so never brought back), a
replaced fact gets its exact validity back, a pending fact's replacements wait for the owner,
and a delete or its redo leaves no fact replaced by a fact that is not there."""

import uuid

import pytest


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def unique(text):
    return f"{text} ({uuid.uuid4().hex[:6]})"


def add(api, text, status=(201,), client=None, **kw):
    headers = {"X-Memory-Client": client} if client else {}
    r = api.post("/facts", json={"text": text, **kw}, headers=headers)
    assert r.status_code in status, r.text
    return r.json()


def fact(api, fid):
    r = api.get(f"/facts/{fid}")
    assert r.status_code == 200, r.text
    return r.json()


def patch(api, fid, status=200, client=None, **body):
    headers = {"X-Memory-Client": client} if client else {}
    r = api.patch(f"/facts/{fid}", json=body, headers=headers)
    assert r.status_code == status, r.text
    return r.json()


def recalled(api, query, **kw):
    r = api.post("/recall", json={"query": query, "log": False, "limit": 30, **kw})
    assert r.status_code == 200, r.text
    return [h["fact"]["id"] for h in r.json()["results"]]


def latest_entry(api, fid):
    return api.get("/history", params={"fact_id": fid, "limit": 1}).json()["entries"][0]


def undo(api, entry_id, status=200, force=False):
    r = api.post(f"/history/{entry_id}/undo", json={"force": True} if force else None)
    assert r.status_code == status, r.text
    return r.json()


def chain_loops(api, fid):
    seen, at = [], fid
    while at is not None:
        if at in seen:
            return True
        seen.append(at)
        at = fact(api, at)["superseded_by"]
    return False


@pytest.fixture
def review_before(api):
    assert api.put("/settings", json={"review": {"mode": "before"}}).status_code == 200
    yield
    api.put("/settings", json={"review": {"mode": "after", "trusted": []}})


# -- 1. no undo makes a loop ----------------------------------------------------------------


@pytest.mark.parametrize("force", [False, True])
def test_an_undo_that_would_make_a_loop_is_refused_saying_why(api, force):
    a = add(api, unique("The owner's locker code is 3141."))["id"]
    b = add(api, unique("The owner's locker code is 2718."))["id"]
    patch(api, a, superseded_by=b)
    patch(api, a, superseded_by=None)
    unreplace = latest_entry(api, a)
    patch(api, b, superseded_by=a)  # allowed: a's chain is empty now
    error = undo(api, unreplace["id"], 409, force=force)["error"]
    assert error["code"] == "undo_refused"
    assert "loop" in error["message"] or "not current" in error["message"]
    assert not chain_loops(api, a) and not chain_loops(api, b)
    assert fact(api, a)["superseded_by"] is None and fact(api, a)["valid_until"] is None
    assert fact(api, b)["superseded_by"] == a
    assert api.get(f"/history/{unreplace['id']}").json()["undone_by"] is None


def test_an_undo_that_would_replace_a_fact_by_one_since_deleted_is_refused(api):
    a = add(api, unique("The owner's bike lock code is 5512."))["id"]
    b = add(api, unique("The owner's bike lock code is 9034."))["id"]
    patch(api, a, superseded_by=b)
    patch(api, a, superseded_by=None)
    unreplace = latest_entry(api, a)
    assert api.delete(f"/facts/{b}").status_code == 200
    error = undo(api, unreplace["id"], 409, force=True)["error"]
    assert error["code"] == "undo_refused" and str(b) in error["message"]
    assert fact(api, a)["superseded_by"] is None


# -- 2. a fact that is not current is never replaced ----------------------------------------


def test_replacing_an_expired_fact_is_a_422_naming_it_and_stores_nothing(api):
    text = unique("The owner's passport expires in 2020.")
    a = add(api, text, created_at="2019-03-01T00:00:00Z", valid_until="2020-03-01T00:00:00Z")["id"]
    total = api.get("/stats").json()["facts"]
    r = api.post("/facts", json={"text": unique("The owner's passport expires in 2031."), "supersedes": [a]})
    assert r.status_code == 422, r.text
    assert str(a) in r.json()["error"]["message"] and "not current" in r.json()["error"]["message"]
    assert api.get("/stats").json()["facts"] == total
    assert fact(api, a)["valid_until"] == "2020-03-01T00:00:00.000000Z" and fact(api, a)["superseded_by"] is None
    b = add(api, unique("The owner's passport number ends 77."))["id"]
    r = api.patch(f"/facts/{a}", json={"superseded_by": b})
    assert r.status_code == 422 and str(a) in r.json()["error"]["message"], r.text
    assert recalled(api, "When does the owner's passport expire?", as_of="2021-01-01T00:00:00Z").count(a) == 0


def test_unreplacing_gives_back_the_exact_validity_the_fact_had(api):
    until = "2031-06-30T12:00:00.000000Z"
    a = add(api, unique("The owner's lease on the flat runs to June 2031."), valid_until=until)["id"]
    b = add(api, unique("The owner's lease on the flat was ended early."), supersedes=[a])
    assert fact(api, a)["valid_until"] == b["fact"]["created_at"]
    patch(api, a, superseded_by=None)
    assert fact(api, a)["valid_until"] == until and fact(api, a)["superseded_by"] is None


def test_a_fact_replaced_already_is_not_re_pointed(api):
    a = add(api, unique("The team's retro is on Thursdays."))["id"]
    b = add(api, unique("The team's retro is on Fridays."), supersedes=[a])["id"]
    c = add(api, unique("The team's retro is on Tuesdays."))["id"]
    r = api.patch(f"/facts/{a}", json={"superseded_by": c})
    assert r.status_code == 422, r.text
    assert str(b) in r.json()["error"]["message"]
    assert fact(api, a)["superseded_by"] == b
    patch(api, a, superseded_by=b)  # the same replacement again changes nothing and is no error


# -- 3. a pending fact's replacements wait for the owner ------------------------------------


def test_a_pending_fact_does_not_hide_the_owners_fact_until_it_is_approved(api, review_before):
    a = add(api, unique("The owner's dentist is Dr Okafor on Mill Lane."), client="dashboard")["id"]
    b = add(api, unique("The owner's dentist is Dr Lindqvist on Kiln Road."), client="agent", supersedes=[a])
    assert b["pending"] is True
    query = "Who is the owner's dentist?"
    assert a in recalled(api, query) and b["id"] not in recalled(api, query)
    assert fact(api, a)["valid_until"] is None
    r = api.post("/facts/review", json={"ids": [b["id"]]}, headers={"X-Memory-Client": "dashboard"})
    assert r.status_code == 200, r.text
    assert fact(api, a)["superseded_by"] == b["id"] and fact(api, a)["valid_until"] is not None
    assert b["id"] in recalled(api, query) and a not in recalled(api, query)
    undo(api, r.json()["entry"])  # back in the inbox: the owner's fact is recalled again
    assert fact(api, a)["valid_until"] is None and a in recalled(api, query)


def test_deleting_a_pending_fact_gives_back_what_it_would_replace(api, review_before):
    a = add(api, unique("The owner's gym is on Bath Road."), client="dashboard")["id"]
    b = add(api, unique("The owner's gym is on Station Road."), client="agent", supersedes=[a])["id"]
    assert api.delete(f"/facts/{b}").status_code == 200
    assert fact(api, a)["superseded_by"] is None and fact(api, a)["valid_until"] is None
    assert a in recalled(api, "Where is the owner's gym?")
    delete = latest_entry(api, b)
    undo(api, delete["id"])  # the pending fact back, and its replacement waiting again
    assert fact(api, a)["superseded_by"] == b and fact(api, a)["valid_until"] is None
    assert a in recalled(api, "Where is the owner's gym?")


def test_replacing_by_a_pending_fact_waits_for_its_approval(api, review_before):
    a = add(api, unique("The owner's barber is Sal on Market Street."), client="dashboard")["id"]
    b = add(api, unique("The owner's barber is Kemi on Dock Street."), client="agent")["id"]
    patch(api, a, client="agent", superseded_by=b)  # memory_supersede with a pending fact
    assert fact(api, a)["valid_until"] is None and a in recalled(api, "Who is the owner's barber?")
    api.post("/facts/review", json={"ids": [b]}, headers={"X-Memory-Client": "dashboard"})
    assert fact(api, a)["valid_until"] is not None and a not in recalled(api, "Who is the owner's barber?")


# -- a delete leaves nothing replaced by a fact that is gone; 6. its redo -------------------


def test_deleting_a_fact_that_replaced_another_makes_that_one_current_again(api):
    until = "2032-01-01T00:00:00.000000Z"
    a = add(api, unique("The owner's car is a blue Corsa."), valid_until=until)["id"]
    b = add(api, unique("The owner's car is a green Yaris."), supersedes=[a])["id"]
    assert api.delete(f"/facts/{b}").status_code == 200
    assert fact(api, a)["superseded_by"] is None and fact(api, a)["valid_until"] == until
    undo(api, latest_entry(api, b)["id"])
    assert fact(api, a)["superseded_by"] == b and fact(api, a)["valid_until"] != until


def test_the_redo_of_an_add_that_replaced_a_fact_replaces_it_again(api):
    a = add(api, unique("The owner's standup is at 9:30."))["id"]
    b = add(api, unique("The owner's standup is at 10:00."), supersedes=[a])["id"]
    added = latest_entry(api, b)
    undone = undo(api, added["id"])["entry"]
    assert fact(api, a)["superseded_by"] is None
    undo(api, undone["id"])  # the redo
    assert fact(api, a)["superseded_by"] == b and fact(api, a)["valid_until"] is not None
    current = recalled(api, "When is the owner's standup?")
    assert b in current and a not in current
    # and its undo again gives a back
    undo(api, latest_entry(api, b)["id"])
    assert fact(api, a)["superseded_by"] is None and a in recalled(api, "When is the owner's standup?")


# -- 10. as_of says which facts were edited since -------------------------------------------


def test_as_of_answers_say_which_facts_were_edited_since(api):
    edited = add(api, unique("The owner's bike is a red Brompton."))["fact"]
    kept = add(api, unique("The owner's bike lock is a blue Kryptonite."))["fact"]
    moved = add(api, unique("The owner's bike is kept in the hall."))["fact"]
    at = max(edited["created_at"], kept["created_at"], moved["created_at"])
    patch(api, edited["id"], text=unique("The owner's bike is a green Brompton."))
    patch(api, moved["id"], valid_until="2099-01-01T00:00:00Z")  # validity alone: not an edit of its text
    r = api.post("/recall", json={"query": "What bike does the owner have?", "as_of": at, "limit": 30, "log": False})
    hits = {h["fact"]["id"]: h for h in r.json()["results"]}
    assert hits[edited["id"]]["edited_since"] is True
    assert hits[kept["id"]]["edited_since"] is False and hits[moved["id"]]["edited_since"] is False
    now = api.post("/recall", json={"query": "What bike does the owner have?", "limit": 30, "log": False}).json()["results"]
    assert all("edited_since" not in h for h in now)
