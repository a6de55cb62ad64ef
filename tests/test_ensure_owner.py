"""The first run's owner account and how to sign in."""

import io

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.django_db


def test_the_first_run_says_where_to_sign_in_on_the_dashboards_own_port(monkeypatch):
    monkeypatch.setenv("DASHBOARD_PORT", "8123")
    out = io.StringIO()
    call_command("ensure_owner", stdout=out)
    assert "http://127.0.0.1:8123/login/" in out.getvalue() and "password:" in out.getvalue()
    again = io.StringIO()
    call_command("ensure_owner", stdout=again)  # an owner exists: nothing more is said
    assert again.getvalue() == ""
