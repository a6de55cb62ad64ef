"""What the agent did, in the dashboard, against both memories over real HTTP: its writes in the
audit log and the trash (undoable there), its recalls on the Recalls page, and "then vs now"."""

import uuid

import pytest
from django.urls import reverse

from dashboard.memory import first
from dashboard.models import EvalCase
from tests.html import page

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def agent(api):
    return lambda method, path, **kw: api.request(method, path, headers={"X-Memory-Client": "claude-code 2.1"}, **kw)


def test_an_agents_writes_are_in_the_audit_log_and_its_delete_in_the_trash_undoable(owner_client, live_memory):
    text = f"The owner's gate code is 4417 ({uuid.uuid4().hex[:6]})."
    with live_memory.client() as api:
        fid = agent(api)("POST", "/facts", json={"text": text, "source": "mcp"}).json()["id"]
        agent(api)("DELETE", f"/facts/{fid}")
    rows = page(owner_client.get(reverse("audit"), {"fact": fid})).select("table.history tbody tr")
    assert [(r.select("td")[1].text, r.select("td")[2].text.strip()) for r in rows] == [
        ("claude-code 2.1", "delete"), ("claude-code 2.1", "add")]
    trash = page(owner_client.get(reverse("trash")))
    [row] = [r for r in trash.select("table.history tbody tr") if text in r.text]
    assert "claude-code 2.1" in row.text
    undo = row.select_one("form")["action"]
    assert owner_client.post(undo).status_code == 302
    assert owner_client.get(reverse("fact_detail", args=[fid])).status_code == 200
    assert text not in page(owner_client.get(reverse("trash"))).text
    entries = page(owner_client.get(reverse("audit"), {"fact": fid})).select("table.history tbody tr")
    assert entries[0].select("td")[1].text == "dashboard owner" and entries[0].select("td")[2].text.strip() == "restore"


def test_a_dashboard_delete_is_in_the_memorys_history_with_its_note(owner_client, live_memory):
    with live_memory.client() as api:
        fid = api.post("/facts", json={"text": f"Bulk fact {uuid.uuid4().hex[:6]}."}).json()["id"]
    owner_client.post(reverse("fact_bulk_delete"), {"ids": [fid], "confirm": "yes"})
    with live_memory.client() as api:
        [entry] = api.get("/history", params={"fact_id": fid, "op": "delete"}).json()["entries"]
    assert entry["client"] == "dashboard owner" and entry["note"] == "bulk delete of 1"


def test_the_recalls_page_shows_what_the_agent_got_and_debug_shows_then_and_now(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        keep = api.post("/facts", json={"text": f"Priya is the owner's sister ({tag})."}).json()["id"]
        gone = api.post("/facts", json={"text": f"Priya works as a nurse in Leeds ({tag})."}).json()["id"]
        agent(api)("POST", "/recall", json={"query": f"who is priya {tag}", "limit": 5})
        api.delete(f"/facts/{gone}")
    listing = page(owner_client.get(reverse("recalls"), {"q": tag}))
    [row] = listing.select("table.recalls tbody tr")
    assert "claude-code 2.1" in row.text and f"who is priya {tag}" in row.text
    assert "deleted since" in row.text and f"({tag})" in row.text
    debug = row.select_one("td.actions a")["href"]
    band = page(owner_client.get(debug)).select_one("#then-now")
    statuses = {int(tr["data-fact-id"]): tr.select_one(".badge").text for tr in band.select("tbody tr")}
    assert statuses[gone] == "deleted since" and statuses[keep] in ("kept", "moved 2 → 1", "moved 1 → 2")
    # It should have been `keep`: a case in "from recalls", which the evaluation then runs.
    form = [f for f in band.select("form.should-have-been") if f.select_one("input[name=expected]")["value"] == str(keep)][0]
    data = {i["name"]: i.get("value", "") for i in form.select("input")}
    assert owner_client.post(form["action"], data).status_code == 302
    case = EvalCase.objects.get(suite="from recalls", question=f"who is priya {tag}")
    assert case.expected_ids == [keep]


def test_the_recalls_filters(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        agent(api)("POST", "/recall", json={"query": f"zzq nothing {tag}", "mode": "keyword"})
    empty = page(owner_client.get(reverse("recalls"), {"q": tag, "empty": "1"}))
    assert "returned nothing" in empty.select_one("table.recalls tbody").text
    none = page(owner_client.get(reverse("recalls"), {"q": tag, "client": "someone else"}))
    assert "No recall matches." in none.text
    partial = owner_client.get(reverse("recalls"), {"q": tag}, headers={"HX-Request": "true"})
    assert partial.content.decode().startswith('\n<div id="recall-rows">') or 'id="recall-rows"' in partial.content.decode()[:100]


def test_the_debugger_is_not_logged(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    owner_client.get(reverse("recall"), {"q": f"private look {tag}"})
    with live_memory.client() as api:
        assert api.get("/recalls", params={"q": tag}).json()["total"] == 0


def test_the_models_and_their_migrations_agree():
    from django.core.management import call_command

    call_command("makemigrations", "--check", "--dry-run", verbosity=0)  # exits non-zero on a missing migration


def test_a_facts_page_says_how_often_the_agent_got_it(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        fid = api.post("/facts", json={"text": f"Mara is the owner's wife ({tag})."}).json()["id"]
        never = api.post("/facts", json={"text": f"The boiler was serviced in May ({tag}x)."}).json()["id"]
        for q in (f"who is mara {tag}", f"owner's wife {tag}"):
            agent(api)("POST", "/recall", json={"query": q, "limit": 1})
    said = page(owner_client.get(reverse("fact_detail", args=[fid]))).select_one("#recalled").text
    assert "Returned by 2 logged recalls, best at rank 1" in said and "claude-code 2.1" in said
    assert "Not returned by any of the" in page(owner_client.get(reverse("fact_detail", args=[never]))).select_one("#recalled").text


def test_making_b_the_memorys_default_is_kept_shown_and_undoable(owner_client, live_memory):
    with live_memory.client() as api:
        start = api.get("/settings").json()
    done = owner_client.post(reverse("settings_adopt"), {"memory": first(), "fusion": '{"rerank": 0}'})
    assert done.status_code == 302 and "op=settings" in done["Location"]
    with live_memory.client() as api:
        assert api.get("/settings").json()["changed"] == ["rerank"]
        used = api.post("/recall", json={"query": "anything", "debug": True, "log": False}).json()["fusion"]
        assert used["rerank"] == 0  # the agent's recalls, which send no settings, use it too
    strip = page(owner_client.get(reverse("facts"))).select_one("#memory-settings")
    assert strip is not None and "rerank 0" in strip.text
    audit = page(owner_client.get(reverse("audit"), {"op": "settings"}))
    undo = audit.select_one("table.history tbody tr form")["action"]
    assert owner_client.post(undo, {"next": "audit"}).status_code == 302
    with live_memory.client() as api:
        assert api.get("/settings").json() == start
    assert page(owner_client.get(reverse("facts"))).select_one("#memory-settings") is None


def test_the_debugger_ranks_with_settings_from_its_url(owner_client, live_memory):
    shown = page(owner_client.get(reverse("recall"), {"q": "who is my sister", "f_method": "rrf", "f_rerank": "0"}))
    assert "method rrf" in shown.select_one("#url-settings").text
    assert shown.select_one("input[name=f_method]")["value"] == "rrf"


def test_the_facts_list_marks_the_facts_no_logged_recall_returned(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        got = api.post("/facts", json={"text": f"Zora walks the dog at seven ({tag})."}).json()["id"]
        never = api.post("/facts", json={"text": f"The attic holds the winter tyres ({tag})."}).json()["id"]
        agent(api)("POST", "/recall", json={"query": f"Zora dog walk {tag}", "limit": 1})
    plain = page(owner_client.get(reverse("facts"), {"q": tag}))
    assert plain.select(".flag-never") == [] and plain.select_one("#show-recall-marks") is not None
    marked = page(owner_client.get(reverse("facts"), {"q": tag, "recalls": "1"}))
    flagged = {int(tr["data-fact-id"]) for tr in marked.select("table.facts tbody tr") if tr.select_one(".flag-never")}
    assert never in flagged and got not in flagged
    assert "logged recall" in marked.select_one("#recall-marks").text


def test_the_recalls_page_shows_the_text_the_agent_was_given_after_an_edit_and_a_delete(owner_client, live_memory):
    tag = uuid.uuid4().hex[:6]
    with live_memory.client() as api:
        edited = api.post("/facts", json={"text": f"The owner's dentist is Dr. Alvarez ({tag})."}).json()["id"]
        gone = api.post("/facts", json={"text": f"The dentist's surgery is on Rua Augusta ({tag})."}).json()["id"]
        agent(api)("POST", "/recall", json={"query": f"who is the dentist {tag}", "limit": 5})
        api.patch(f"/facts/{edited}", json={"text": f"The owner's dentist is Dr. Chen ({tag})."})
        api.delete(f"/facts/{gone}")
        [logged] = api.get("/recalls", params={"q": tag}).json()["recalls"]
    assert {r["id"]: r["text"] for r in logged["results"]}[edited] == f"The owner's dentist is Dr. Alvarez ({tag})."
    [row] = page(owner_client.get(reverse("recalls"), {"q": tag})).select("table.recalls tbody tr")
    given = [g.text for g in row.select(".given")]
    assert f"The owner's dentist is Dr. Alvarez ({tag})." in given  # what it got, not today's text
    assert f"now: The owner's dentist is Dr. Chen ({tag})." in row.text
    assert f"The dentist's surgery is on Rua Augusta ({tag})." in given and row.select_one(f'a[href="{reverse("trash")}"]')
    band = page(owner_client.get(row.select_one("td.actions a")["href"])).select_one("#then-now")
    deleted = band.select_one(f'tr[data-fact-id="{gone}"]')
    assert "Rua Augusta" in deleted.text and deleted.select_one(f'a[href="{reverse("trash")}"]')
