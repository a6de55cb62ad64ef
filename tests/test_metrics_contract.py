"""GET /metrics on both memories (issue 48: watched): Prometheus' text format behind the secret,
requests by route pattern (never an id or a text), a histogram whose buckets add up, and gauges
that say what the memory's own routes say it holds."""

from __future__ import annotations

import re
import uuid

import pytest

LINE = re.compile(r'^([a-z_]+)(\{.*\})? (-?[0-9.e+-]+|\+Inf)$')
AGENT = {"X-Memory-Client": "claude-code"}


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def scrape(api) -> tuple[str, dict[str, float]]:
    r = api.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain; version=0.0.4"), r.text[:300]
    samples = {}
    for line in r.text.splitlines():
        if line.startswith("#"):
            assert re.match(r"# (HELP|TYPE) memory_[a-z_]+ ", line), line
            continue
        m = LINE.match(line)
        assert m, f"not a sample line: {line!r}"
        samples[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return r.text, samples


def test_metrics_need_the_secret(service):
    import httpx

    assert httpx.get(service.url + "/metrics", timeout=30).status_code == 401


def test_requests_are_counted_by_route_pattern_and_the_gauges_agree_with_the_routes(api):
    t = uuid.uuid4().hex[:6]
    secret_text = f"The owner's locker code is {t}."
    fid = api.post("/facts", json={"text": secret_text}, headers=AGENT).json()["id"]
    assert api.get(f"/facts/{fid}").status_code == 200
    assert api.get("/facts/999999999").status_code == 404
    api.post("/recall", json={"query": "locker code", "log": False})
    api.post("/facts", json={"text": f"The team standup ({t}) is at 9:30."})
    api.post("/facts", json={"text": f"The team standup ({t}) is at 10:00."}, headers=AGENT)
    text, samples = scrape(api)
    assert secret_text not in text and t not in text  # no fact's text, nor a query's
    assert samples['memory_requests_total{route="/facts",method="POST",status="201"}'] >= 2
    assert samples['memory_requests_total{route="/facts/{id}",method="GET",status="200"}'] >= 1
    assert samples['memory_requests_total{route="/facts/{id}",method="GET",status="404"}'] >= 1
    assert samples['memory_requests_total{route="/recall",method="POST",status="200"}'] >= 1
    routes = set(re.findall(r'route="([^"]*)"', text))
    assert routes and all(not re.search(r"\d", r) for r in routes)  # a pattern, never an id
    for route in routes:  # each histogram's buckets grow to its count
        counts = [samples[k] for k in samples if k.startswith(f'memory_request_seconds_bucket{{route="{route}",')]
        assert counts == sorted(counts) and counts[-1] == samples[f'memory_request_seconds_count{{route="{route}"}}']
    for status in ("current", "replaced", "expired"):
        total = api.get("/facts", params={"status": status, "limit": 1}).json()["total"]
        assert samples[f'memory_facts{{status="{status}"}}'] == total
    assert samples["memory_unreviewed_facts"] == api.get("/facts", params={"reviewed": "false", "limit": 1}).json()["total"]
    assert samples["memory_open_contradictions"] == api.get("/conflicts", params={"limit": 1}).json()["total"] >= 1
    assert samples["memory_held_bytes"] == api.get("/stats").json()["memory_bytes"]
