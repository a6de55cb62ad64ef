"""Schemathesis against the service's own OpenAPI document, over real HTTP: no 5xx, and every
response matches the schema. Bounded for CI; FUZZ_EXAMPLES raises it (README)."""

import os

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from tests.memory_service import Service

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "150"))  # per operation
MIN_REQUESTS = 1000
sent = {"requests": 0}


@pytest.fixture(scope="module")
def fuzz_service(tmp_path_factory):
    service = Service(tmp_path_factory.mktemp("fuzz") / "memory.db").start()
    with service.client() as api:  # something to find, edit and pair up
        for text in ("Priya is the owner's sister.", "The owner prefers metric units.", "The owner likes metric units."):
            api.post("/facts", json={"text": text})
    yield service
    service.stop()


@pytest.fixture(scope="module")
def contract(fuzz_service):
    return schemathesis.openapi.from_url(fuzz_service.url + "/openapi.json")


schema = schemathesis.pytest.from_fixture("contract")


@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
def test_the_service_keeps_its_contract(case, fuzz_service):
    sent["requests"] += 1
    case.call_and_validate(headers={"X-Memory-Secret": fuzz_service.secret}, timeout=60)


def test_the_fuzzing_was_not_trivial(fuzz_service):
    """Runs after the parametrized tests above (file order): at least 1,000 requests, and the
    store is still whole."""
    assert sent["requests"] >= MIN_REQUESTS, sent
    with fuzz_service.client() as api:
        stats = api.get("/stats").json()
    assert not any(stats["orphans"].values()) and stats["facts"] == stats["fts"] == stats["vectors"]
