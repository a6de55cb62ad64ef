"""memories.client at its edge: errors, retries, timeouts and parsing, on httpx.MockTransport."""

import json

import httpx
import pytest

from memories.client import (BadRequest, Conflict, InvalidResponse, MemoryClient, MemoryServiceError, NotFound,
                             ServiceUnavailable, StatusError, TimedOut, Unauthorized, Unreachable)

FACT = {"id": 7, "text": "Priya is the owner's sister.", "type": "fact", "source": "chat",
        "created_at": "2026-11-30T06:00:00.000000Z", "updated_at": "2026-11-30T06:00:00.000000Z"}


def client_for(handler, **kw):
    return MemoryClient("http://memory.test", "s3cret", transport=httpx.MockTransport(handler), **kw)


def test_it_sends_the_secret_header_and_parses_a_fact():
    seen = {}

    def handler(request):
        seen["secret"] = request.headers["X-Memory-Secret"]
        return httpx.Response(200, json=FACT)

    fact = client_for(handler).get(7)
    assert seen["secret"] == "s3cret"
    assert fact.id == 7 and fact.created_at.year == 2026 and fact.created_at.tzinfo is not None


@pytest.mark.parametrize("status,error", [(400, BadRequest), (413, BadRequest), (422, BadRequest), (401, Unauthorized),
                                          (404, NotFound), (409, Conflict), (503, ServiceUnavailable), (500, StatusError)])
def test_it_maps_statuses_to_errors(status, error):
    client = client_for(lambda r: httpx.Response(status, json={"error": {"code": "c", "message": "m"}}))
    with pytest.raises(error) as e:
        client.get(1)
    assert e.value.status == status and e.value.code == "c" and e.value.message == "m"


def test_a_conflict_names_the_existing_fact():
    body = {"error": {"code": "duplicate", "message": "dup", "existing": FACT}}
    with pytest.raises(Conflict) as e:
        client_for(lambda r: httpx.Response(409, json=body)).edit(8, text="x")
    assert e.value.existing.id == 7


def test_an_error_status_without_json_is_still_a_status_error():
    with pytest.raises(StatusError) as e:
        client_for(lambda r: httpx.Response(502, text="<html>bad gateway</html>")).get(1)
    assert e.value.status == 502


@pytest.mark.parametrize("response", [httpx.Response(200, text="not json"), httpx.Response(200, json=[1, 2]),
                                      httpx.Response(200, json={"unexpected": True})])
def test_garbage_is_an_invalid_response(response):
    with pytest.raises(InvalidResponse):
        client_for(lambda r: response).get(1)


def test_unreachable_is_not_a_status_error_and_reads_are_retried():
    calls = []

    def handler(request):
        calls.append(request.method)
        raise httpx.ConnectError("refused")

    with pytest.raises(Unreachable) as e:
        client_for(handler, retries=2).get(1)
    assert not isinstance(e.value, StatusError) and e.value.url == "http://memory.test"
    assert calls == ["GET"] * 3


def test_writes_are_not_retried():
    calls = []

    def handler(request):
        calls.append(request.method)
        raise httpx.ConnectError("refused")

    with pytest.raises(Unreachable):
        client_for(handler, retries=2).add("x")
    with pytest.raises(Unreachable):
        client_for(handler, retries=2).delete(1)
    assert calls == ["POST", "DELETE"]


def test_a_read_timeout_is_timed_out_and_not_repeated():
    calls = []

    def handler(request):
        calls.append(1)
        raise httpx.ReadTimeout("slow")

    with pytest.raises(TimedOut) as e:
        client_for(handler).get(1)
    assert isinstance(e.value, Unreachable) and isinstance(e.value, MemoryServiceError)
    assert len(calls) == 1


def test_the_secret_never_appears_in_an_error():
    def handler(request):
        raise httpx.ConnectError("refused")

    with pytest.raises(Unreachable) as e:
        client_for(handler, retries=0).get(1)
    assert "s3cret" not in str(e.value) and "s3cret" not in repr(e.value)


def test_recall_sends_options_and_parses_debug_lists():
    sent = {}

    def handler(request):
        sent.update(json.loads(request.content))
        return httpx.Response(200, json={
            "results": [{"fact": FACT, "score": 0.0328, "via": "both", "kw_rank": 1, "vec_rank": 1}],
            "mode": "hybrid", "kw": [{"fact": FACT, "rank": 1, "bm25": -2.5, "highlighted": "\x02Priya\x03 is"}],
            "vec": [{"fact": FACT, "rank": 1, "cosine": 0.8}], "match": '"priya"', "fusion": {"k": 60},
        })

    result = client_for(handler).recall("Who is Priya?", type="fact", limit=5, debug=True, fusion={"k": 10})
    assert sent == {"query": "Who is Priya?", "type": "fact", "limit": 5, "debug": True, "fusion": {"k": 10}}
    assert result.results[0].via == "both" and result.kw[0].score == -2.5 and result.vec[0].score == 0.8
    assert result.kw[0].highlighted.startswith("\x02Priya")
