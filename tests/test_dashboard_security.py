"""Every page needs the owner's login; CSRF, CSP and friends; the memory secret never leaks."""

import re
from pathlib import Path

import httpx
import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

PUBLIC = {"login", "healthz"}  # healthz: for a monitor, and says nothing private (test_healthz.py)
ROOT = Path(__file__).resolve().parent.parent


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
def test_login_attempts_are_rate_limited(client, owner, monkeypatch):
    from dashboard.views import account

    for _ in range(5):
        assert client.post(reverse("login"), {"username": "owner", "password": "wrong"}).status_code == 200
    locked = client.post(reverse("login"), {"username": "owner", "password": "correct horse battery staple"})
    assert locked.status_code == 429
    monkeypatch.setattr(account, "WINDOW", 0)  # the window has passed
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


def test_cookies_are_http_only_and_secure_behind_https():
    import subprocess
    import sys

    code = ("import dashboard.settings as s; print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, "
            "s.SESSION_COOKIE_HTTPONLY, s.SESSION_COOKIE_SAMESITE, s.DEBUG)")
    env = {"SECRET_KEY": "k", "MEMORY_SECRET": "m", "PATH": "/usr/bin:/bin", "DASHBOARD_ENV_FILE": "/nonexistent"}
    plain = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    secure = subprocess.run([sys.executable, "-c", code], env={**env, "SECURE_COOKIES": "true"}, capture_output=True, text=True, cwd=ROOT)
    assert plain.stdout.split() == ["False", "False", "True", "Lax", "False"], plain.stderr
    assert secure.stdout.split() == ["True", "True", "True", "Lax", "False"], secure.stderr


def test_settings_refuse_to_load_without_secrets():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", "import dashboard.settings"],
                            env={"PATH": "/usr/bin:/bin", "DASHBOARD_ENV_FILE": "/nonexistent"},
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode != 0 and "SECRET_KEY" in result.stderr


@pytest.mark.django_db
@pytest.mark.parametrize("failure", ["down", "slow", "garbage"])
def test_every_page_says_plainly_when_the_service_misbehaves(owner_client, mock_memory, failure):
    def handler(request):
        if failure == "down":
            raise httpx.ConnectError("refused")
        if failure == "slow":
            raise httpx.ReadTimeout("slow")
        return httpx.Response(200, text="<html>not a memory</html>")

    mock_memory(handler)
    expected = {"down": 503, "slow": 504, "garbage": 502}[failure]
    checked = 0
    for pattern, route in all_patterns():
        if pattern.name in PUBLIC | {"logout", "evaluation", "evaluation_compare", "trash", "audit", "undo_delete",
                                     "eval_cases", "eval_case_edit", "eval_import", "eval_shipped", "memory_create",
                                     "calibrate_step", "calibrate_adopt", "contradiction_resolve", "contradiction_undo",
                                     "contradiction_keep_all", "contradiction_undo_all", "contradiction_setting",
                                     "inbox_delete", "inbox_resolve", "inbox_undo", "inbox_settings", "import",
                                     "import_job", "import_mapping", "import_dry_run", "import_run", "import_restore", "import_progress",
                                     "accounts", "account_role", "account_password", "account_remove"}:
            continue  # these read the dashboard's own database (or check a name or a number, or write into a
            # set's own memory, or look up an upload kept by the dashboard) first; see below,
            # test_memory_create.py, test_calibration.py, test_dashboard_memories_live.py, test_dashboard_queue_groups.py,
            # test_dashboard_inbox.py and test_dashboard_imports.py; the accounts never ask the memory (test_dashboard_accounts.py)
        url = example_url(route)
        for method in ("get", "post"):
            response = getattr(owner_client, method)(url, {"q": "x", "ids": [1], "a": 1, "b": 2, "action": "keep_a",
                                                          "text": "x", "type": "fact", "question": "q", "expected": 1})
            if response.status_code in (405, 302):
                continue
            html = response.content.decode()
            assert response.status_code == expected, (method, url, response.status_code)
            assert "memory service" in html and "http://memory.test" in html and "Traceback" not in html
            checked += 1
    assert checked >= 10
    run = owner_client.post(reverse("evaluation"))  # no cases: no call, the page still works
    assert run.status_code == 200


@pytest.mark.django_db
def test_error_pages_never_show_the_secret(owner_client, settings):
    settings.MEMORY_URL = "http://127.0.0.1:9"
    for url in ("/no-such-page/", "/facts/999999999/", "/export.jsonl"):
        response = owner_client.get(url)
        assert response.status_code in (404, 503)
        assert settings.MEMORY_SECRET not in response.content.decode()


@pytest.mark.django_db
def test_a_404_is_our_page_and_a_500_shows_no_traceback(owner_client, mock_memory, monkeypatch):
    from tests.fake_memory import FakeMemory

    mock_memory(FakeMemory())
    missing = owner_client.get("/no-such-page/")
    assert missing.status_code == 404 and "Back to the facts" in missing.content.decode()

    def broken(*args, **kwargs):
        raise RuntimeError("a bug with the secret test-memory-secret-f3a9c1 in it")

    monkeypatch.setattr("dashboard.views.facts.FactFilter", broken)
    owner_client.raise_request_exception = False
    crashed = owner_client.get(reverse("facts"))
    html = crashed.content.decode()
    assert crashed.status_code == 500 and "Something went wrong" in html
    assert "Traceback" not in html and "RuntimeError" not in html and "test-memory-secret" not in html
