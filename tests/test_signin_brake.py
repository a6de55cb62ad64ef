"""The sign-in brake keeps a guessing address out without keeping the owner out, and
`manage.py unlock_signin` lets the owner back in at once."""

import io

import pytest
from django.core.management import call_command
from django.urls import reverse

from dashboard.models import SignInFailures
from dashboard.views import account
from tests.conftest import OWNER_PASSWORD

pytestmark = pytest.mark.django_db


def sign_in(client, password, address, username="owner"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def test_wrong_guesses_from_one_address_do_not_lock_the_owner_out_elsewhere(client, owner):
    for _ in range(5):
        assert sign_in(client, "wrong", "203.0.113.9").status_code == 200
    assert sign_in(client, OWNER_PASSWORD, "203.0.113.9").status_code == 429  # the guessing address waits
    assert sign_in(client, OWNER_PASSWORD, "198.51.100.7").status_code == 302  # the owner, elsewhere, gets in


def test_guesses_spread_over_many_addresses_stop_new_addresses_but_not_the_owners_own(client, owner):
    assert sign_in(client, OWNER_PASSWORD, "198.51.100.7").status_code == 302  # the owner's usual address
    client.logout()
    for i in range(account.ACCOUNT_MAX_FAILURES):
        assert sign_in(client, "wrong", f"203.0.113.{i // 4}").status_code == 200  # 4 each: no address is braked
    assert sign_in(client, OWNER_PASSWORD, "192.0.2.55").status_code == 429  # a new address waits the window out
    assert sign_in(client, OWNER_PASSWORD, "198.51.100.7").status_code == 302  # the known one does not


def test_unlock_signin_clears_the_brake(client, owner):
    for i in range(account.ACCOUNT_MAX_FAILURES):
        sign_in(client, "wrong", f"203.0.113.{i // 4}")
    assert sign_in(client, OWNER_PASSWORD, "192.0.2.55").status_code == 429
    out = io.StringIO()
    call_command("unlock_signin", stdout=out)
    assert "user:owner" in out.getvalue()
    assert sign_in(client, OWNER_PASSWORD, "192.0.2.55").status_code == 302


def test_unlock_signin_can_clear_one_address_and_keeps_known_addresses(client, owner):
    assert sign_in(client, OWNER_PASSWORD, "198.51.100.7").status_code == 302
    client.logout()
    for address in ("203.0.113.1", "203.0.113.2"):
        for _ in range(5):
            sign_in(client, "wrong", address, username="nobody")
    call_command("unlock_signin", address="203.0.113.1", stdout=io.StringIO())
    assert not SignInFailures.objects.filter(key="addr:203.0.113.1").exists()
    assert SignInFailures.objects.get(key="addr:203.0.113.2").failures == 5
    assert SignInFailures.objects.filter(key__startswith="good:owner|").exists()


def test_a_success_keeps_the_failures_from_elsewhere(client, owner):
    for _ in range(3):
        sign_in(client, "wrong", "203.0.113.9")
    assert sign_in(client, OWNER_PASSWORD, "192.0.2.55").status_code == 302
    assert SignInFailures.objects.get(key="user:owner").failures == 3
    assert SignInFailures.objects.get(key="addr:203.0.113.9").failures == 3


def test_the_security_doc_names_the_unlock_command():
    from pathlib import Path

    doc = (Path(__file__).resolve().parent.parent / "docs" / "security.md").read_text()
    assert "manage.py unlock_signin" in doc


def test_a_failed_sign_in_keeps_the_username_and_says_what_to_do(client, owner):
    html = sign_in(client, "wrong", "192.0.2.4", username="owner").content.decode()
    assert 'name="username" value="owner"' in html and "check the password" in html
    assert '<input id="id_password" type="password" name="password" autocomplete="current-password" required autofocus>' in html
    fresh = client.get(reverse("login")).content.decode()
    assert 'name="username" value=""' in fresh and 'required autofocus>' in fresh.split("id_password")[0]
