"""`/healthz`: no login, whether the dashboard reaches its memory (and its database), never a secret,
an address or anything the memory holds; 503 when the memory is down."""

from __future__ import annotations

import json

import httpx
import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def assert_tells_nothing_private(response, settings) -> None:
    text = response.content.decode()
    for private in (settings.MEMORY_SECRET, settings.MEMORY_URL, "memory.test", "127.0.0.1", "facts"):
        assert private not in text, private


def test_it_says_ok_with_the_memorys_latency_when_the_real_memory_answers(client, live_memory, settings):
    response = client.get(reverse("healthz"))  # no one signed in
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    body = json.loads(response.content)
    assert body["ok"] is True and body["database"] is True
    assert body["memory"]["reachable"] is True and 0 < body["memory"]["latency_ms"] < 3000
    assert "no-store" in response["Cache-Control"]
    assert_tells_nothing_private(response, settings)


def test_it_answers_503_when_nothing_listens_where_the_memory_should_be(client, settings):
    settings.MEMORY_URL = "http://127.0.0.1:9"  # the discard port: nothing answers
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    body = json.loads(response.content)
    assert body["ok"] is False and body["memory"]["reachable"] is False
    assert body["memory"]["problem"] == "not reachable" and body["database"] is True
    assert_tells_nothing_private(response, settings)


@pytest.mark.parametrize("failure, problem", [("slow", "too slow to answer"), ("wrong secret", "answering with errors"),
                                              ("error", "answering with errors")])
def test_a_memory_that_answers_wrongly_is_down_too(client, mock_memory, settings, failure, problem):
    def handler(request):
        if failure == "slow":
            raise httpx.ReadTimeout("slow")
        if failure == "wrong secret":
            return httpx.Response(200, json={"ok": True})  # what /health tells a caller without the secret
        return httpx.Response(500, json={"error": {"code": "internal", "message": "the secret mock-secret"}})

    mock_memory(handler)
    response = client.get(reverse("healthz"))
    assert response.status_code == 503
    reach = json.loads(response.content)["memory"]
    assert reach["reachable"] is False and reach["problem"] == problem
    assert_tells_nothing_private(response, settings)


def test_a_monitor_may_ask_with_head_but_not_post(client, mock_memory):
    mock_memory(lambda request: httpx.Response(200, json={"ok": True, "facts": 3, "model": "m", "dims": 8}))
    assert client.head(reverse("healthz")).status_code == 200
    assert client.post(reverse("healthz")).status_code == 405


def test_a_monitor_on_plain_http_is_not_redirected_to_https(client, mock_memory, settings):
    settings.SECURE_SSL_REDIRECT = True
    mock_memory(lambda request: httpx.Response(200, json={"ok": True, "facts": 3, "model": "m", "dims": 8}))
    assert client.get(reverse("healthz")).status_code == 200
    assert client.get(reverse("login")).status_code == 301  # every page is
