"""Every page needs the owner's login; CSRF, CSP and friends; the memory secret never leaks."""

import re

import httpx
import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

PUBLIC = {"login"}


def all_patterns(resolver=None, prefix=""):
    for p in (resolver or get_resolver()).url_patterns:
        if isinstance(p, URLResolver):
            yield from all_patterns(p, prefix + str(p.pattern))
        elif isinstance(p, URLPattern):
            yield p, prefix + str(p.pattern)


def example_url(route: str) -> str:
    return "/" + re.sub(r"<int:\w+>", "1", route)


def test_the_pattern_list_is_not_empty():
    names = {p.name for p, _ in all_patterns()}
    assert {"facts", "fact_detail", "duplicates", "recall", "fact_bulk_delete"} <= names


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["get", "post"])
def test_every_url_requires_login(client, method):
    checked = 0
    for pattern, route in all_patterns():
        if pattern.name in PUBLIC:
            continue
        url = example_url(route)
        response = getattr(client, method)(url)
        assert response.status_code in (302, 405), (url, response.status_code)
        if response.status_code == 302:
            assert response["Location"].startswith(reverse("login")), url
        checked += 1
    assert checked >= 10


@pytest.mark.django_db
def test_csrf_is_enforced_on_posts(owner, mock_memory):
    mock_memory(lambda r: httpx.Response(500))
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    response = client.post(reverse("fact_add"), {"text": "x", "type": "fact"})
    assert response.status_code == 403


@pytest.mark.django_db
def test_pages_carry_csp_with_a_nonce_and_anti_framing_headers(client):
    response = client.get(reverse("login"))
    csp = response["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    nonce = re.search(r"'nonce-([^']+)'", csp).group(1)
    html = response.content.decode()
    assert f'nonce="{nonce}"' in html  # htmx and our script carry it
    assert "<script>" not in html and "style=" not in html  # nothing inline that CSP would have to allow
    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"


def test_debug_is_off_by_default(settings):
    assert settings.DEBUG is False


@pytest.mark.django_db
def test_login_attempts_are_rate_limited(client, owner):
    from django.core.cache import cache

    cache.clear()
    for _ in range(5):
        assert client.post(reverse("login"), {"username": "owner", "password": "wrong"}).status_code == 200
    locked = client.post(reverse("login"), {"username": "owner", "password": "correct horse battery staple"})
    assert locked.status_code == 429
    cache.clear()
    ok = client.post(reverse("login"), {"username": "owner", "password": "correct horse battery staple"})
    assert ok.status_code == 302


@pytest.mark.django_db
def test_the_memory_secret_never_reaches_a_page_or_the_log(owner_client, settings, caplog):
    settings.MEMORY_URL = "http://127.0.0.1:9"
    secret = settings.MEMORY_SECRET
    for name in ("facts", "duplicates", "recall"):
        response = owner_client.get(reverse(name), {"q": "x"})
        assert response.status_code == 503
        assert secret not in response.content.decode()
    assert secret not in caplog.text
    assert "127.0.0.1:9" in caplog.text  # the log does say which service failed
