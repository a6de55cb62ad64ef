"""Behind a reverse proxy: the sign-in brake counts the browser's address, not the proxy's; the
request log says each request in one line without its query; HTTPS as the proxy says it."""

from __future__ import annotations

import logging

import httpx
import pytest
from django.urls import reverse

from tests.conftest import OWNER_PASSWORD

pytestmark = pytest.mark.django_db

PROXY = "127.0.0.1"


def through_proxy(client, password, browser, username="owner"):
    """A sign-in as the proxy passes it on: from its address, the browser's appended to X-Forwarded-For."""
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=PROXY,
                       HTTP_X_FORWARDED_FOR=f"10.9.9.9, {browser}")  # the first one the browser wrote itself


def test_a_guesser_behind_the_proxy_does_not_lock_the_owner_out(client, owner, settings):
    settings.FORWARDED_ALLOW_IPS = [PROXY]
    for _ in range(5):
        assert through_proxy(client, "wrong", "203.0.113.9").status_code == 200
    assert through_proxy(client, OWNER_PASSWORD, "203.0.113.9").status_code == 429
    assert through_proxy(client, OWNER_PASSWORD, "198.51.100.7").status_code == 302


def test_forwarded_for_is_ignored_from_an_address_not_trusted(client, owner, settings):
    settings.FORWARDED_ALLOW_IPS = ["192.0.2.1"]  # some other proxy: this request's claim is anyone's
    for _ in range(5):
        through_proxy(client, "wrong", "203.0.113.9")
    assert through_proxy(client, OWNER_PASSWORD, "198.51.100.7").status_code == 429  # all one address, the sender's


def test_https_is_what_the_proxy_header_says(client, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.SECURE_SSL_REDIRECT = True
    plain = client.get(reverse("login"))
    assert plain.status_code == 301 and plain["Location"].startswith("https://")
    assert client.get(reverse("login"), HTTP_X_FORWARDED_PROTO="https").status_code == 200


@pytest.fixture
def request_lines(settings, caplog):
    settings.MIDDLEWARE = ["dashboard.request_log.RequestLogMiddleware", *settings.MIDDLEWARE]
    logger = logging.getLogger("dashboard.requests")  # its own handler to stdout; it does not propagate
    logger.addHandler(caplog.handler)
    caplog.set_level(logging.INFO, logger="dashboard.requests")
    yield lambda: [r.getMessage() for r in caplog.records if r.name == "dashboard.requests"]
    logger.removeHandler(caplog.handler)


def test_each_request_is_one_line_of_method_path_status_and_time(owner_client, mock_memory, request_lines):
    mock_memory(lambda request: httpx.Response(200, json={"query": "x", "results": [], "debug": {}}))
    owner_client.get(reverse("recall"), {"q": "where my passport is hidden"})
    owner_client.post(reverse("fact_add"), {"text": "My passport is in the blue box.", "type": "fact"})
    owner_client.get("/no/such%0Apage/")
    lines = request_lines()
    assert len(lines) == 3
    assert lines[0].startswith("GET /recall/ ") and lines[0].endswith("ms")
    assert lines[1].split()[:2] == ["POST", "/facts/new"]
    assert lines[2].startswith("GET /no/such%0Apage/ 404 ")  # no forged second line
    assert all("passport" not in line and "blue box" not in line for line in lines)


def test_a_login_redirect_is_logged_without_the_page_it_returns_to(client, request_lines):
    response = client.get(reverse("recall"), {"q": "my bank's name"})
    assert response.status_code == 302 and "bank" in response["Location"]  # `next` repeats the query
    assert request_lines() == [request_lines()[0]] and "bank" not in request_lines()[0]


@pytest.mark.parametrize("path", ["/desk/login/", "/login/", "/desk"])
def test_under_a_prefix_the_proxy_may_keep_it_in_the_path_or_take_it_off(settings, path):
    from django.test import RequestFactory
    from django.urls import set_script_prefix

    from dashboard.wsgi import application

    settings.URL_PREFIX = settings.FORCE_SCRIPT_NAME = "/desk"
    settings.STATIC_URL = "/desk/static/"
    status = []
    try:
        body = b"".join(application(RequestFactory().get(path).environ, lambda s, headers, *a: status.append((s, headers))))
    finally:
        set_script_prefix("/")  # the handler left /desk/ as this thread's prefix: the next test's reverse() would take it
    if path == "/desk":  # the desk's root: the facts, which send a visitor to sign in
        assert status[0][0].startswith("302") and ("Location", "/desk/login/?next=/desk/") in status[0][1]
        return
    assert status[0][0].startswith("200") and b'action="/desk/login/"' in body and b'href="/desk/static/desk.css"' in body
