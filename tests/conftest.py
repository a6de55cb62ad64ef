from __future__ import annotations

import pytest

from memories.embeddings import MiniLM
from memories.store import Memory
from tests.fakes import HashEmbedder
from tests.memory_service import Service


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


@pytest.fixture
def api(service):
    with service.client() as c:
        yield c
