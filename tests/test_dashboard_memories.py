"""Several memories in one dashboard: /m/NAME/... is the memory NAME, the root the first one.
Every row the dashboard keeps belongs to one memory, and a fact id never crosses to another."""

import json
import re

import httpx
import pytest
from django.test import override_settings
from django.urls import reverse

from dashboard.models import DismissedPair, EvalCase
from tests.fake_memory import FakeMemory, fact

pytestmark = pytest.mark.django_db

PRIYA = "Priya is the owner's sister."


class Restoring(FakeMemory):
    """FakeMemory that also takes POST /facts (undo puts a fact back under its id)."""

    def __call__(self, request):
        if request.url.path == "/facts" and request.method == "POST":
            self.requests.append(request)
            body = json.loads(request.content)
            f = fact(body.get("id") or max(self.facts, default=0) + 1, body["text"], body.get("type", "fact"), body.get("source", ""))
            self.facts[f["id"]] = f
            return httpx.Response(201, json={"id": f["id"], "created": True, "fact": f})
        return super().__call__(request)


@pytest.fixture
def two(mock_memories):
    """The memory "default" holds #1; "work" holds #2 only."""
    memories = {"default": Restoring(fact(1, PRIYA)), "work": Restoring(fact(2, "Standup is at nine."))}
    mock_memories(memories)
    return memories


def switcher(html: str) -> dict[str, str]:
    nav = re.search(r'<nav class="memories".*?</nav>', html, re.S).group(0)
    return {name: href for href, name in re.findall(r'<a href="([^"]*)"[^>]*>([^<]*)</a>', nav)}


def rows(html: str) -> list[str]:
    return re.findall(r"<tr[ >].*?</tr>", re.search(r"<tbody>.*?</tbody>", html, re.S).group(0), re.S)


def test_a_fact_id_of_one_memory_is_a_404_in_the_others_pages(owner_client, two):
    assert owner_client.get("/facts/1/").status_code == 200
    for path in ("/m/work/facts/1/", "/m/work/facts/1/edit", "/m/work/facts/1/delete", "/m/work/facts/1/row"):
        assert owner_client.get(path).status_code == 404, path
    assert owner_client.post("/m/work/facts/1/delete").status_code == 404
    assert 1 in two["default"].facts  # untouched
    assert owner_client.get("/m/work/facts/2/").status_code == 200 and owner_client.get("/facts/2/").status_code == 404


def test_links_and_redirects_stay_in_the_memory_of_the_page(owner_client, two):
    html = owner_client.get("/m/work/").content.decode()
    links = set(re.findall(r'<a href="([^"]*)"', re.search(r"<table.*?</table>", html, re.S).group(0)))
    assert "/m/work/facts/2/" in links and not any(h.startswith("/facts/") for h in links)
    response = owner_client.post("/m/work/facts/2/delete")
    assert response.status_code == 302 and response["Location"] == "/m/work/"
    assert reverse("facts") == "/"  # the prefix was this request's only


def test_delete_and_undo_stay_in_their_memory(owner_client, two):
    owner_client.post("/facts/1/delete")
    [entry] = two["default"].history  # the memory's own history keeps the delete, not the dashboard
    assert entry["op"] == "delete" and entry["client"] == "dashboard owner" and 1 not in two["default"].facts
    assert two["work"].history == []
    owner_client.get("/")  # shows the flash message
    assert "The trash is empty" in rows(owner_client.get("/m/work/trash/").content.decode())[0]  # not in work's trash
    assert f"/trash/{entry['id']}/undo" in owner_client.get("/trash/").content.decode()
    assert "in the trash" not in owner_client.get("/m/work/facts/1/").content.decode()  # work never had a #1

    owner_client.post(f"/m/work/trash/{entry['id']}/undo")  # work's history has no such entry: nothing happens
    assert 1 not in two["work"].facts and two["work"].history == []
    assert owner_client.post(f"/trash/{entry['id']}/undo").status_code == 302
    assert two["default"].facts[1]["text"] == PRIYA and 1 not in two["work"].facts
    assert two["default"].history[-1]["op"] == "restore"


def test_the_audit_log_shows_only_this_memorys_entries(owner_client, two):
    owner_client.post("/facts/1/delete")
    owner_client.post("/m/work/facts/2/delete")
    default = rows(owner_client.get("/audit/").content.decode())
    work = rows(owner_client.get("/m/work/audit/").content.decode())
    assert len(default) == len(work) == 1
    assert 'href="/m/work/facts/2/"' in work[0] and 'href="/facts/1/"' in default[0]
    assert [(e["op"], e["fact_id"]) for e in two["default"].history] == [("delete", 1)]
    assert [(e["op"], e["fact_id"]) for e in two["work"].history] == [("delete", 2)]


def test_evaluation_cases_and_dismissed_pairs_belong_to_their_memory(owner_client, two):
    case = EvalCase.objects.create(memory="work", suite="mine", question="When is standup?", expected_ids=[2])
    assert "When is standup?" in owner_client.get("/m/work/evaluate/cases/all").content.decode()
    assert "When is standup?" not in owner_client.get("/evaluate/cases/all").content.decode()
    assert owner_client.get(f"/evaluate/cases/{case.id}/edit").status_code == 404
    owner_client.post(f"/evaluate/cases/{case.id}/delete")
    assert EvalCase.objects.filter(id=case.id).exists()  # default's page cannot delete work's case

    # The same question in two memories is two cases, each answered by its own memory's fact.
    owner_client.post(reverse("eval_case_add"), {"question": "Who is Priya?", "expected": "1"})
    assert owner_client.post("/m/work/evaluate/cases", {"question": "Who is Priya?", "expected": "1"}).status_code == 404
    assert list(EvalCase.objects.filter(question="Who is Priya?").values_list("memory", flat=True)) == ["default"]

    owner_client.post("/m/work/duplicates/resolve", {"a": "2", "b": "3", "action": "not_duplicate"})
    assert DismissedPair.all_keys("work") == {(2, 3)} and DismissedPair.all_keys("default") == set()


def test_the_switcher_keeps_the_page_but_not_what_names_a_fact(owner_client, two):
    links = switcher(owner_client.get("/recall/", {"q": "Priya", "pin": "1"}).content.decode())  # FakeMemory has no
    # /recall: the page is the service-problem page, which has the switcher too
    assert links == {"default": "/recall/?q=Priya", "work": "/m/work/recall/?q=Priya"}
    links = switcher(owner_client.get("/m/work/trash/").content.decode())
    assert links == {"default": "/trash/", "work": "/m/work/trash/"}
    assert switcher(owner_client.get("/facts/1/").content.decode()) == {"default": "/", "work": "/m/work/"}
    assert switcher(owner_client.get("/", {"type": "skill", "cursor": "abc"}).content.decode())["work"] == "/m/work/?type=skill"
    assert re.search(r'<a href="/m/work/" aria-current="true">work</a>', owner_client.get("/m/work/").content.decode())


def test_the_strip_names_the_memory_of_the_page(owner_client, two):
    html = owner_client.get("/m/work/").content.decode()
    strip = re.search(r'id="service-status".*?</p>', html, re.S).group(0)
    assert "http://memory.test/memories/work" in strip and "1 fact" in strip


def test_a_memory_not_configured_is_a_404_and_is_never_asked_for(owner_client, two):
    response = owner_client.get("/m/typo/")
    assert response.status_code == 404 and "no memory called “typo”" in response.content.decode()


def test_signed_out_every_memory_leads_to_the_sign_in_and_says_nothing_of_its_names(client, two):
    for path in ("/m/work/", "/m/typo/facts/1/"):
        response = client.get(path)
        assert response.status_code == 302 and "/login/?next=" in response["Location"], path
    assert not [r for r in two["default"].requests if r.url.path == "/memories"]  # the service was not asked


def test_a_memory_without_a_trailing_slash_is_its_facts_page(owner_client, two):
    response = owner_client.get("/m/work")
    assert response.status_code == 200 and "Standup is at nine." in response.content.decode()


def test_a_name_no_memory_can_have_fails_loudly(settings):
    from django.core.exceptions import ImproperlyConfigured

    from dashboard.memory import configured

    settings.MEMORY_NAMES = ["default", "my memory"]
    with pytest.raises(ImproperlyConfigured, match="'my memory' cannot name a memory"):
        configured()


def test_one_client_per_url_secret_and_name(settings):
    from dashboard.memory import configured, memory

    settings.MEMORY_URL, settings.MEMORY_SECRET, settings.MEMORY_NAMES = "http://127.0.0.1:9", "s", ["default", "work"]
    assert memory("work") is memory("work") and memory("work") is not memory("default")
    assert memory("default").base_url == "http://127.0.0.1:9" and memory("work").base_url == "http://127.0.0.1:9/memories/work"
    assert configured() == ["default", "work"]


@override_settings(MEMORY_URL="http://127.0.0.1:9/memories/demo", MEMORY_NAMES=[])
def test_a_memory_url_that_names_one_memory_still_means_that_one():
    from dashboard.memory import configured, memory

    assert configured() == ["demo"] and memory().base_url == "http://127.0.0.1:9/memories/demo"
