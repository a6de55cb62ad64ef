"""Each memory service keeps its own dashboard records, the strip says which service a page is
about and how it is (its health, not the owner's last typo), an adopt never lands in an
evaluation set's memory, and a write that timed out says it may still land."""

import json
import threading
import time

import httpx
import pytest
from bs4 import BeautifulSoup
from django.urls import reverse

from dashboard import memory as dashboard_memory
from dashboard.models import AuditEntry, CreatedMemory, DismissedPair, EvalCase, EvalRun
from memories.client import BadRequest
from memories.model.embeddings import Watched
from tests.fake_memory import FakeMemory, fact
from tests.fakes import HashEmbedder

pytestmark = pytest.mark.django_db

def soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "html.parser")


LOCAL, WORKER = "http://127.0.0.1:8787", "http://127.0.0.1:8789/memories/demo"


def test_each_service_sees_only_its_own_sets_runs_pairs_memories_and_audit_entries(settings):
    settings.MEMORY_URL = LOCAL
    EvalCase.objects.create(memory="eval-personal", suite="personal", question="Who is Priya?", expected_ids=[1])
    EvalRun.objects.create(memory="eval-personal", suite="personal", cases=1, metrics={})
    DismissedPair.dismiss("default", 1, 2)
    CreatedMemory.objects.create(name="work")
    AuditEntry.objects.create(memory="default", user="owner", action="not_duplicate", fact_id=1)

    settings.MEMORY_URL = WORKER
    for model in (EvalCase, EvalRun, DismissedPair, CreatedMemory, AuditEntry):
        assert not model.objects.exists(), model
    # The same set and memory name again, on the other service: no clash with the first's.
    EvalCase.objects.create(memory="eval-personal", suite="personal", question="Who is Priya?", expected_ids=[7])
    CreatedMemory.objects.create(name="work")

    settings.MEMORY_URL = LOCAL
    assert list(EvalCase.objects.values_list("expected_ids", flat=True)) == [[1]]
    assert EvalCase.objects.get().service == LOCAL and DismissedPair.all_keys("default") == {(1, 2)}
    settings.MEMORY_URL = WORKER
    assert EvalCase.objects.get().service == "http://127.0.0.1:8789"  # the service's base, whichever memory MEMORY_URL names


def test_an_evaluation_set_loaded_against_one_service_is_not_run_against_another(owner_client, mock_memory, settings):
    mock_memory(FakeMemory(fact(1, "Priya is the owner's sister.")))
    EvalCase.objects.create(memory="eval-personal", suite="personal", question="Who is Priya?", expected_ids=[1])
    assert "personal" in owner_client.get(reverse("evaluation")).content.decode()

    settings.MEMORY_URL = "http://another.test"
    dashboard_memory.forget_status()
    page = soup(owner_client.get(reverse("evaluation")).content.decode())
    assert not page.select('input[name="suite"][value="personal"]')


class Health(FakeMemory):
    """FakeMemory whose /health says which engine answers and what its model is doing."""

    def __init__(self, *facts, engine="worker", embedding=None):
        super().__init__(*facts)
        self.engine, self.embedding, self.down = engine, embedding or {"calls": 0, "waiting_ms": 0}, False

    def __call__(self, request):
        if self.down:
            raise httpx.ConnectError("refused")
        if request.url.path == "/settings" and request.method == "PUT":
            self.requests.append(request)
            return httpx.Response(200, json={"fusion": json.loads(request.content)["fusion"], "changed": []})
        if request.url.path == "/recall":
            hit = {"fact": self.facts[1], "score": 1.0, "via": "both", "kw_rank": 1, "vec_rank": 1}
            return httpx.Response(200, json={"results": [hit], "mode": "hybrid", "fusion": json.loads(request.content).get("fusion") or {}})
        if request.url.path == "/health":
            self.requests.append(request)
            return httpx.Response(200, json={"ok": True, "facts": len(self.facts), "model": "fake", "dims": 3, "mode": "hybrid",
                                             "engine": self.engine, "embedding": self.embedding})
        return super().__call__(request)


@pytest.mark.parametrize("engine,says", [("worker", "Cloudflare Worker"), ("python", "local service")])
def test_the_strip_says_which_service_the_page_is_about_and_never_the_secret(owner_client, mock_memory, engine, says):
    mock_memory(Health(fact(1, "Priya is the owner's sister."), engine=engine))
    html = owner_client.get(reverse("facts")).content.decode()
    strip = soup(html).select_one("#service-status")
    assert strip.select_one("#service-kind").get_text() == says
    assert "http://memory.test" in strip.get_text() and "mock-secret" not in html


def test_a_refusal_of_the_owners_input_leaves_the_strip_saying_the_memory_is_fine(owner_client, mock_memory):
    fake = Health(fact(1, "Priya is the owner's sister."))

    def refusing(request):
        if request.method == "DELETE":
            return httpx.Response(422, json={"error": {"code": "invalid", "message": "note: too long"}})
        return fake(request)

    mock_memory(refusing)
    refused = owner_client.post(reverse("fact_delete", args=[1]))
    html = refused.content.decode()
    assert refused.status_code == 422 and "The memory refused what was sent" in html and "Go back" in html
    assert "reachable" in soup(html).select_one("#service-status").get_text()
    page = owner_client.get(reverse("facts")).content.decode()
    strip = soup(page).select_one("#service-status")
    assert "answering with errors" not in strip.get_text() and "ok" in strip["class"]


def test_mark_down_ignores_a_4xx():
    dashboard_memory.mark_down(BadRequest(422, "invalid", "bad"))
    assert dashboard_memory._status == {}


def test_the_first_page_after_the_memory_is_back_says_it_is_reachable(owner_client, mock_memory):
    fake = Health(fact(1, "Priya is the owner's sister."))
    mock_memory(fake)
    fake.down = True
    down = owner_client.get(reverse("facts"))
    assert down.status_code == 503 and "not reachable" in soup(down.content.decode()).select_one("#service-status").get_text()
    fake.down = False  # back, well within STATUS_TTL
    page = owner_client.get(reverse("facts"))
    strip = soup(page.content.decode()).select_one("#service-status").get_text()
    assert page.status_code == 200 and "not reachable" not in strip and "reachable" in strip


class SlowAdd(Health):
    """A Worker whose model stalls: POST /facts times out, and the fact is stored meanwhile."""

    def __call__(self, request):
        if request.url.path == "/facts" and request.method == "POST":
            body = json.loads(request.content)
            self.facts[9] = fact(9, body["text"], body.get("type", "fact"), body.get("source", ""))
            raise httpx.ReadTimeout("the model is stopped")
        return super().__call__(request)


@pytest.mark.parametrize("htmx", [True, False])
def test_an_add_that_times_out_says_it_may_land_names_the_model_and_the_next_page_shows_it(owner_client, mock_memory, htmx):
    mock_memory(SlowAdd(fact(1, "Priya is the owner's sister."), embedding={"calls": 1, "waiting_ms": 12_400}))
    headers = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "add-panel"} if htmx else {}
    added = owner_client.post(reverse("fact_add"), {"text": "The boiler is serviced in May.", "type": "fact", "source": ""},
                              follow=not htmx, **headers)
    html = added.content.decode()
    assert "may still be stored" in html and "embedding model has been working on one call for 12 s" in html
    assert "Reload the facts list" in html
    if htmx:
        assert added.status_code == 202 and "The boiler is serviced in May." in html  # the form keeps the text
    page = owner_client.get(reverse("facts")).content.decode() if htmx else html  # (without htmx: the facts page it led to)
    assert "landed after all: it is stored as fact #9" in page
    assert "landed after all" not in owner_client.get(reverse("facts")).content.decode()  # said once


def test_a_write_that_times_out_without_a_busy_model_still_says_it_may_land(owner_client, mock_memory):
    fake = Health(fact(1, "Priya is the owner's sister."))

    def slow_delete(request):
        if request.method == "DELETE":
            raise httpx.ReadTimeout("slow")
        return fake(request)

    mock_memory(slow_delete)
    html = owner_client.post(reverse("fact_delete", args=[1])).content.decode()
    assert "too slow to answer" in html and "may still be stored" in html and 'id="embedder-slow"' not in html


def test_an_add_that_never_lands_is_said_to_be_lost_after_a_while(owner_client, mock_memory, monkeypatch):
    fake = SlowAdd(fact(1, "Priya is the owner's sister."))
    mock_memory(fake)
    owner_client.post(reverse("fact_add"), {"text": "The boiler is serviced in May.", "type": "fact", "source": ""})
    del fake.facts[9]  # it never landed
    assert "is not stored yet" in owner_client.get(reverse("facts")).content.decode()
    later = time.time() + 301
    monkeypatch.setattr(time, "time", lambda: later)
    assert "was not stored. Add it again." in owner_client.get(reverse("facts")).content.decode()


# -- adopting a setting found in an evaluation ----------------------------------------------

@pytest.fixture
def owner_and_eval(mock_memories):
    memories = {"default": Health(fact(1, "Priya is the owner's sister.")), "eval-personal": Health(fact(1, "Priya is a sister."))}
    mock_memories(memories)
    return memories


def test_adopting_b_asks_which_of_the_owners_memories_and_never_picks_an_evaluation_one(owner_client, owner_and_eval, settings):
    settings.MEMORY_NAMES = ["default"]  # the owner's one memory; eval-personal is the set's
    EvalCase.objects.create(memory="eval-personal", suite="personal", question="Who is Priya?", expected_ids=[1])
    html = owner_client.get(reverse("evaluation_compare"), {"run": "1", "suite": "personal"}).content.decode()
    select = soup(html).select_one('form.adopt select[name="memory"]')
    assert [o["value"] for o in select.select("option")] == ["default"]
    assert select.select_one("option[selected]")["value"] == "default"

    refused = owner_client.post(reverse("settings_adopt"), {"memory": "eval-personal", "fusion": '{"rerank": 0}'})
    assert refused.status_code == 400 and "choose one of them" in refused.content.decode()

    done = owner_client.post(reverse("settings_adopt"), {"memory": "default", "fusion": '{"rerank": 0}'})
    assert done.status_code == 302 and "/m/eval-" not in done["Location"]
    puts = [r for r in owner_and_eval["default"].requests if r.method == "PUT" and r.url.path == "/settings"]
    assert len(puts) == 1 and not [r for r in owner_and_eval["eval-personal"].requests if r.method == "PUT"]


def test_in_an_evaluation_memory_the_logo_and_the_strip_lead_back_to_the_owners(owner_client, owner_and_eval, settings):
    settings.MEMORY_NAMES = ["default"]
    EvalCase.objects.create(memory="eval-personal", suite="personal", question="Who is Priya?", expected_ids=[1])
    page = soup(owner_client.get("/m/eval-personal/").content.decode())
    assert page.select_one("a.brand")["href"] == "/"
    assert page.select_one("#leave-eval")["href"] == "/"


# -- the model's calls in flight, as /health says them ---------------------------------------

def test_the_watched_embedder_counts_the_calls_in_flight():
    release = threading.Event()

    class Stalled(HashEmbedder):
        def embed(self, texts):
            release.wait(5)
            return super().embed(texts)

    watched = Watched(Stalled())
    assert watched.waiting() == {"calls": 0, "waiting_ms": 0} and watched.model_id == "test-hash-64"
    call = threading.Thread(target=watched.embed, args=(["tea"],))
    call.start()
    time.sleep(0.2)
    waiting = watched.waiting()
    release.set()
    call.join()
    assert waiting["calls"] == 1 and waiting["waiting_ms"] >= 150
    assert watched.waiting() == {"calls": 0, "waiting_ms": 0}


def test_health_says_which_engine_answers_and_what_its_model_is_doing(either_service):
    with either_service.client() as api:
        health = api.get("/health").json()
    assert health["engine"] in ("python", "worker") and health["embedding"] == {"calls": 0, "waiting_ms": 0}
