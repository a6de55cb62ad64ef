"""The owner creates a memory from the dashboard, by a name the contract accepts (issue 20, item 2)."""

from __future__ import annotations

import re

import httpx
import pytest

from dashboard.models import CreatedMemory
from memories.client import MemoryClient
from tests.fake_memory import FakeMemory, fact

pytestmark = pytest.mark.django_db


def switcher(html: str) -> list[str]:
    nav = re.search(r'<nav class="memories".*?</nav>', html, re.S)
    return re.findall(r'<a href="[^"]*"[^>]*>([^<]*)</a>', nav.group(0)) if nav else []


@pytest.fixture
def service(mock_memories, monkeypatch):
    """One memory configured ("default"); any other name answers as a Durable Object does."""
    from dashboard import memory

    mock_memories({"default": FakeMemory(fact(1, "The owner prefers metric units."))})
    asked: list[str] = []

    def client_for(name: str, handler) -> None:
        monkeypatch.setitem(memory._clients, memory.client_key(name),
                            MemoryClient(memory.url_of(name), "mock-secret", transport=httpx.MockTransport(handler), retries=0))

    def any_name(request):
        asked.append(str(request.url))
        return FakeMemory()(request.__class__(request.method, request.url.copy_with(path="/" + request.url.path.split("/", 3)[-1])))

    return client_for, any_name, asked


def test_the_owner_creates_a_memory_and_it_joins_the_switcher(owner_client, service):
    client_for, any_name, asked = service
    client_for("notes", any_name)
    form = re.search(r'<form method="post" action="(/memories/new)"', owner_client.get("/").content.decode())
    assert form, "the strip has a form to create a memory"
    response = owner_client.post(form.group(1), {"name": "notes"})
    assert response.status_code == 302 and response["Location"] == "/m/notes/"
    assert asked == ["http://memory.test/memories/notes/stats"]  # a request with the secret: the memory exists
    assert list(CreatedMemory.objects.values_list("name", flat=True)) == ["notes"]
    page = owner_client.get("/m/notes/", follow=True).content.decode()
    assert switcher(page) == ["default", "notes"] and "Created the memory “notes”." in page


@pytest.mark.parametrize("name", ["", "-notes", "no/slash", "a" * 65, "spaced name", "ünï"])
def test_a_name_the_contract_refuses_is_the_owners_mistake(owner_client, service, name):
    _, _, asked = service
    response = owner_client.post("/memories/new", {"name": name})
    assert response.status_code == 400 and "That cannot be a memory&#x27;s name" in response.content.decode()
    assert not CreatedMemory.objects.exists() and asked == []


def test_eval_names_belong_to_evaluation_sets(owner_client, service):
    response = owner_client.post("/memories/new", {"name": "eval-mine"})
    assert response.status_code == 400 and "evaluation sets" in response.content.decode()


def test_a_one_memory_service_says_it_cannot_hold_another(owner_client, service):
    client_for, _, _ = service
    client_for("notes", lambda request: httpx.Response(404, json={"error": {"code": "not_found", "message": "no route"}}))
    response = owner_client.post("/memories/new", {"name": "notes"})
    assert response.status_code == 400 and "serves one memory (serve --db)" in response.content.decode()
    assert not CreatedMemory.objects.exists()


def test_on_a_folder_service_the_memory_is_a_file_once_created(owner_client, live_memories):
    assert not (live_memories.db / "garden.db").exists()
    response = owner_client.post("/memories/new", {"name": "garden"})
    assert response.status_code == 302 and (live_memories.db / "garden.db").exists()
    added = owner_client.post("/m/garden/facts/new", {"text": "The roses need water on Fridays.", "type": "fact"})
    assert added.status_code == 302
    with live_memories.client() as api:
        assert api.get("/memories/garden/facts").json()["total"] == 1
        assert api.get("/facts", params={"q": "roses"}).json()["total"] == 0  # not in the default memory


def test_a_service_that_is_down_says_so_plainly(owner_client, service):
    client_for, _, _ = service

    def down(request):
        raise httpx.ConnectError("refused")

    client_for("notes", down)
    response = owner_client.post("/memories/new", {"name": "notes"})
    assert response.status_code == 503 and "memory service" in response.content.decode()
    assert not CreatedMemory.objects.exists()
