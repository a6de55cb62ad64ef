from __future__ import annotations

import pytest

from memories.model.embeddings import MiniLM
from memories.store import Memory
from tests.fakes import HashEmbedder
from tests.memory_service import Service
from tests.worker_service import WorkerHost


@pytest.fixture(scope="session")
def minilm() -> MiniLM:
    """The real model, loaded once. A failure to load fails the tests that need it."""
    return MiniLM()


@pytest.fixture
def memory(tmp_path, minilm) -> Memory:
    m = Memory(tmp_path / "memory.db", minilm)
    yield m
    m.close()


@pytest.fixture
def fake_memory(tmp_path) -> Memory:
    m = Memory(tmp_path / "fake.db", HashEmbedder())
    yield m
    m.close()


@pytest.fixture(scope="module")
def service(tmp_path_factory) -> Service:
    """The real service, real model, a temp database, on loopback: one per test module."""
    s = Service(tmp_path_factory.mktemp("service") / "memory.db").start()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def worker_host(tmp_path_factory) -> WorkerHost:
    """The memory on Cloudflare, offline: wrangler dev + the embed server, once per run.
    A missing worker/node_modules fails the tests that need it (make install provides it)."""
    host = WorkerHost(tmp_path_factory.mktemp("worker")).start()
    yield host
    host.stop()


@pytest.fixture(scope="module", params=["python", "worker"])
def either_service(request, tmp_path_factory):
    """The contract's two implementations, one fresh memory each per test module: the local
    service (its own process and database) and a Durable Object behind the Worker (by name)."""
    if request.param == "worker":
        yield request.getfixturevalue("worker_host").memory()
        return
    s = Service(tmp_path_factory.mktemp("service") / "memory.db").start()
    yield s
    s.stop()


@pytest.fixture
def api(service):
    with service.client() as c:
        yield c


# -- the dashboard ----------------------------------------------------------------------

import httpx  # noqa: E402

from memories.client import MemoryClient  # noqa: E402

OWNER_PASSWORD = "correct horse battery staple"


@pytest.fixture(autouse=True)
def _fresh_status():
    from dashboard.memory import forget_status

    forget_status()
    yield
    forget_status()


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_superuser("owner", password=OWNER_PASSWORD, email="")


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def mock_memory(monkeypatch, settings):
    """Hand the dashboard a client on an httpx.MockTransport: `mock_memory(handler)`."""
    from dashboard import memory

    def install(handler):
        settings.MEMORY_URL, settings.MEMORY_SECRET = "http://memory.test", "mock-secret"
        client = MemoryClient("http://memory.test", "mock-secret", transport=httpx.MockTransport(handler), retries=0,
                              name="dashboard")  # as dashboard.memory names its clients
        monkeypatch.setitem(memory._clients, memory.client_key(), client)
        return client

    return install


@pytest.fixture
def mock_memories(monkeypatch, settings):
    """Several memories, each on its own httpx.MockTransport: `mock_memories({"default": handler,
    "work": handler})`. Each handler sees paths without the /memories/NAME prefix, as the memory does."""
    from dashboard import memory

    def unprefixed(handler, prefix):
        def handle(request):
            request.url = request.url.copy_with(path=request.url.path[len(prefix):] or "/")
            return handler(request)

        return handle

    def install(handlers: dict):
        settings.MEMORY_URL, settings.MEMORY_SECRET = "http://memory.test", "mock-secret"
        settings.MEMORY_NAMES = list(handlers)
        for name, handler in handlers.items():
            url = memory.url_of(name)
            transport = httpx.MockTransport(unprefixed(handler, url[len("http://memory.test"):]))
            monkeypatch.setitem(memory._clients, memory.client_key(name), MemoryClient(url, "mock-secret", transport=transport,
                                                                                           retries=0, name="dashboard"))

    return install


@pytest.fixture
def live_memory(service, settings):
    """Point the dashboard at the real memory service on loopback."""
    settings.MEMORY_URL = service.url
    settings.MEMORY_SECRET = service.secret
    return service


@pytest.fixture(scope="module")
def folder_service(tmp_path_factory):
    """`serve --dir`: the real service holding several memories (FOLDER/NAME.db), one per test module."""
    from tests.memory_folder import FolderService

    s = FolderService(tmp_path_factory.mktemp("memories") / "memories").start()
    yield s
    s.stop()


@pytest.fixture
def live_memories(folder_service, settings):
    """Point the dashboard at a `serve --dir` service whose memories are "default" and "work"."""
    settings.MEMORY_URL = folder_service.url
    settings.MEMORY_SECRET = folder_service.secret
    settings.MEMORY_NAMES = ["default", "work"]
    return folder_service
