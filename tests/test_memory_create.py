"""The owner creates a memory from the dashboard, by a name the contract accepts (issue 20, item 2); a
name is a memory only once created, on both memories (issue 28, item 5)."""

from __future__ import annotations

import re
import uuid

import httpx
import pytest
from starlette.testclient import TestClient

from dashboard.models import CreatedMemory
from memories.client import MemoryClient
from memories.serving.memory_folder import MemoryFolder
from memories.store import Memory
from tests.fake_memory import FakeMemory, fact
from tests.memory_folder import FolderService

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


def creates(made: bool, asked: list[str]):
    """A service's PUT /memories/NAME: 201 when it makes the memory now, 200 when it was there."""
    def handle(request):
        asked.append(f"{request.method} {request.url}")
        name = request.url.path.split("/")[2]
        return httpx.Response(201 if made else 200, json={"name": name, "created": made})

    return handle


def test_the_owner_creates_a_memory_and_it_joins_the_switcher(owner_client, service):
    client_for, any_name, asked = service
    client_for("notes", creates(True, asked))
    form = re.search(r'<form method="post" action="(/memories/new)"', owner_client.get("/").content.decode())
    assert form, "the strip has a form to create a memory"
    response = owner_client.post(form.group(1), {"name": "notes"})
    assert response.status_code == 302 and response["Location"] == "/m/notes/"
    assert asked == ["PUT http://memory.test/memories/notes"]  # the service's create, at its root
    assert list(CreatedMemory.objects.values_list("name", flat=True)) == ["notes"]
    client_for("notes", any_name)
    page = owner_client.get("/m/notes/", follow=True).content.decode()
    assert switcher(page) == ["default", "notes"] and "Created the memory “notes”." in page


def test_new_memory_over_one_that_is_there_says_it_already_exists(owner_client, service):
    client_for, any_name, asked = service
    client_for("notes", creates(False, asked))  # the service had it: made before, or by another dashboard
    response = owner_client.post("/memories/new", {"name": "notes"})
    assert response.status_code == 302 and asked == ["PUT http://memory.test/memories/notes"]
    client_for("notes", any_name)
    page = owner_client.get("/m/notes/", follow=True).content.decode()
    assert "The memory “notes” already exists." in page and "Created the memory" not in page


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
    client_for("notes", lambda request: httpx.Response(404, json={"error": {"code": "not_found", "message": "no route"}}))  # serve --db
    response = owner_client.post("/memories/new", {"name": "notes"})
    assert response.status_code == 400 and "serves one memory (serve --db)" in response.content.decode()
    assert not CreatedMemory.objects.exists()


def test_on_a_folder_service_the_memory_is_a_file_once_created(owner_client, live_memories):
    assert not (live_memories.db / "garden.db").exists()
    with live_memories.client() as api:  # before: no memory, and a write does not make one
        assert api.post("/memories/garden/facts", json={"text": "Lost."}).json()["error"]["code"] == "no_memory"
    assert not (live_memories.db / "garden.db").exists()
    response = owner_client.post("/memories/new", {"name": "garden"})
    assert response.status_code == 302 and (live_memories.db / "garden.db").exists()
    assert "Created the memory “garden”." in owner_client.get(response["Location"]).content.decode()
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


def test_new_memory_over_one_holding_facts_says_it_already_exists_and_keeps_them(owner_client, live_memories):
    with live_memories.client() as api:
        api.post("/memories/work/facts", json={"text": "The standup moved to ten."})
        before = api.get("/memories/work/facts").json()["total"]
    response = owner_client.post("/memories/new", {"name": "work"})
    page = owner_client.get(response["Location"]).content.decode()
    assert "The memory “work” already exists." in page and "Created the memory" not in page
    with live_memories.client() as api:
        assert api.get("/memories/work/facts").json()["total"] == before >= 1


# -- the service: a memory is made only by PUT /memories/NAME, on both memories ------------------

@pytest.fixture(scope="module", params=["python", "worker"])
def several(request):
    """A service of several memories, at its root: `serve --dir` and the Worker."""
    return request.getfixturevalue("folder_service" if request.param == "python" else "worker_host")


@pytest.fixture
def root(several):
    with httpx.Client(base_url=several.url, headers={"X-Memory-Secret": several.secret}, timeout=60) as c:
        yield c


def fresh(what: str) -> str:
    return f"{what}-{uuid.uuid4().hex[:10]}"


@pytest.mark.slow
def test_put_makes_a_memory_once_and_get_memories_lists_it(several, root):
    name = fresh("made")
    first, again = root.put(f"/memories/{name}"), root.put(f"/memories/{name}")
    assert (first.status_code, first.json()) == (201, {"name": name, "created": True})
    assert (again.status_code, again.json()) == (200, {"name": name, "created": False})
    assert root.post(f"/memories/{name}/facts", json={"text": "The owner waters the ferns."}).status_code == 201
    assert root.get(f"/memories/{name}/health").json()["facts"] == 1
    names = root.get("/memories").json()["memories"]
    assert name in names and names == sorted(names)


@pytest.mark.slow
def test_a_name_that_is_no_memory_is_a_404_naming_those_there_are(several, root):
    kept, typo = fresh("kept"), fresh("typo")
    root.put(f"/memories/{kept}")
    for method, path, body in [("GET", "/facts", None), ("POST", "/facts", {"text": "Lost fact."}), ("GET", "/health", None),
                               ("POST", "/recall", {"query": "x"}), ("GET", "/stats", None), ("DELETE", "/facts/1", None)]:
        r = root.request(method, f"/memories/{typo}{path}", json=body)
        assert r.status_code == 404, (method, path, r.text)
        error = r.json()["error"]
        assert error["code"] == "no_memory" and kept in error["memories"]
        assert f"no memory named '{typo}'" in error["message"] and kept in error["message"]
        assert f"PUT /memories/{typo}" in error["message"]
    assert typo not in root.get("/memories").json()["memories"]
    assert root.get(f"/memories/{typo}/openapi.json").status_code == 200  # the contract is no memory's
    assert httpx.get(f"{several.url}/memories/{typo}/health").json() == {"ok": True}  # public, as before
    if isinstance(several, FolderService):
        assert not (several.db / f"{typo}.db").exists()


@pytest.mark.slow
def test_listing_and_making_need_the_secret_and_other_methods_are_a_405(several, root):
    assert httpx.get(f"{several.url}/memories").status_code == 401
    assert httpx.put(f"{several.url}/memories/{fresh('nosecret')}").status_code == 401
    post = root.post("/memories")
    assert (post.status_code, post.headers["allow"]) == (405, "GET")
    get = root.get(f"/memories/{fresh('one')}")
    assert (get.status_code, get.headers["allow"]) == (405, "PUT")
    bad = root.put("/memories/bad%20name")
    assert bad.status_code == 404 and "a name is 1 to 64" in bad.json()["error"]["message"]


@pytest.mark.slow
def test_the_client_makes_and_lists_memories_from_any_memorys_url(several):
    name = fresh("client")
    client = MemoryClient(f"{several.url}/memories/{name}", several.secret)
    assert client.create_memory(name) is True and client.create_memory(name) is False
    assert name in client.memories() and client.stats()["facts"] == 0


def test_on_serve_dir_the_root_is_the_memory_default_and_a_file_from_before_is_a_memory(tmp_path):
    Memory(tmp_path / "older.db", None).close()  # a memory made before creates were: its file is all it takes
    folder = MemoryFolder(tmp_path, "s", None, lambda path: Memory(path, None))
    with TestClient(folder, headers={"X-Memory-Secret": "s"}) as c:
        r = c.get("/facts")
        assert r.status_code == 404 and r.json()["error"]["code"] == "no_memory"
        assert "no memory named 'default'" in r.json()["error"]["message"] and r.json()["error"]["memories"] == ["older"]
        assert c.get("/memories/older/facts").status_code == 200
        assert c.put("/memories/default").status_code == 201 and c.get("/facts").status_code == 200
        assert c.get("/memories").json() == {"memories": ["default", "older"]}
