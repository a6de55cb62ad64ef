"""`manage.py check --deploy` is clean with the env file docs/server.md gives for a server behind
HTTPS, and the settings behind a proxy read as that page says."""

from __future__ import annotations

import re
import secrets
import subprocess
import sys

from tests.memory_service import ROOT

SERVER_MD = ROOT / "docs" / "server.md"


def server_env(tmp_path) -> dict[str, str]:
    """The env file of docs/server.md, its secrets made and its folders in tmp_path."""
    block = re.search(r"<!-- server-env -->\s*```sh\n(.*?)```", SERVER_MD.read_text(), re.S)[1]
    values = dict(line.split("=", 1) for line in block.splitlines() if line and not line.startswith("#"))
    assert values["SECRET_KEY"] == "..." and values["MEMORY_SECRET"] == "..."  # no secret is written down
    values.update(SECRET_KEY=secrets.token_urlsafe(50), MEMORY_SECRET=secrets.token_urlsafe(32))
    return {k: v.replace("/var/lib/memory-desk", str(tmp_path)) for k, v in values.items()}


def run_django(code: list[str], env: dict) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "DASHBOARD_ENV_FILE": "/nonexistent", "DJANGO_SETTINGS_MODULE": "dashboard.settings",
           **env}
    return subprocess.run([sys.executable, *code], env=env, capture_output=True, text=True, cwd=ROOT)


def test_check_deploy_is_clean_with_the_documented_env_file(tmp_path):
    result = run_django(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], server_env(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_check_deploy_warns_without_it(tmp_path):
    bare = {"SECRET_KEY": secrets.token_urlsafe(50), "MEMORY_SECRET": "m", "DASHBOARD_DB": str(tmp_path / "d.db")}
    result = run_django(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], bare)
    assert result.returncode != 0
    for warning in ("W004", "W008", "W012", "W016"):  # HSTS, SSL redirect, the two secure cookies
        assert f"security.{warning}" in result.stderr + result.stdout


def test_the_prefix_reaches_every_url_django_makes_and_the_cookies(tmp_path):
    code = ("import django; django.setup(); from django.conf import settings as s; from django.urls import reverse; "
            "print(s.FORCE_SCRIPT_NAME, s.STATIC_URL, s.SESSION_COOKIE_PATH, s.CSRF_COOKIE_PATH, reverse('login'), "
            "reverse('facts'), s.SECURE_PROXY_SSL_HEADER)")
    for written in ("/desk", "desk", "/desk/"):
        env = {**server_env(tmp_path), "DASHBOARD_URL_PREFIX": written}
        result = run_django(["-c", code], env)
        assert result.stdout.split(maxsplit=6) == ["/desk", "/desk/static/", "/desk/", "/desk/", "/desk/login/", "/desk/",
                                                    "('HTTP_X_FORWARDED_PROTO', 'https')\n"], result.stderr
    plain = run_django(["-c", code], {"SECRET_KEY": "k", "MEMORY_SECRET": "m", "DASHBOARD_DB": str(tmp_path / "d.db")})
    assert plain.stdout.split()[:6] == ["None", "/static/", "/", "/", "/login/", "/"], plain.stderr  # `make run`'s
