"""The Python service's Server-Timing header, which memory_bench.py reads to say what HTTP adds
to a recall: against a real service process."""

import re
import time

import httpx

TIMING = re.compile(r"^engine;dur=(\d+\.\d{3}), app;dur=(\d+\.\d{3})$")


def timing(response: httpx.Response) -> tuple[float, float]:
    found = TIMING.match(response.headers["server-timing"])
    assert found, response.headers["server-timing"]
    return float(found[1]), float(found[2])


def test_a_recall_says_how_long_the_engine_and_the_app_took_within_its_round_trip(api):
    api.post("/facts", json={"text": "Priya is the owner's sister."})
    started = time.perf_counter()
    r = api.post("/recall", json={"query": "who is priya", "log": False})
    round_trip = (time.perf_counter() - started) * 1000
    assert r.status_code == 200 and r.json()["results"]
    engine, app = timing(r)
    assert 0 < engine <= app <= round_trip


def test_a_refused_request_spends_no_engine_time_and_names_nothing_else(service):
    r = httpx.post(service.url + "/recall", json={"query": "x"}, headers={"X-Memory-Secret": "wrong"})
    assert r.status_code == 401
    engine, app = timing(r)
    assert engine == 0 and app >= 0
    assert service.secret not in r.headers["server-timing"]


def test_an_error_response_carries_it_too(api):
    r = api.post("/recall", json={"query": ""})
    assert r.status_code == 422 and r.json()["error"]["code"]
    timing(r)
    r = api.post("/recall", content=b"{not json")
    assert r.status_code == 400
    timing(r)

