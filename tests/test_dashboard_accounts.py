"""More than one person at the desk: the owner adds accounts as owners or viewers, changes a role,
gives a new password, removes an account; the desk always keeps an owner. Runs on SQLite and, in
tests/test_postgres.py, on PostgreSQL."""

from __future__ import annotations

import io
import os

import pytest
from bs4 import BeautifulSoup
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from django.urls import reverse

from dashboard.models import Account
from dashboard.roles import may_change, role_of
from tests.conftest import OWNER_PASSWORD

pytestmark = pytest.mark.django_db


def page(response) -> BeautifulSoup:
    return BeautifulSoup(response.content, "html.parser")


def add(client, username: str, role: str):
    return client.post(reverse("accounts"), {"username": username, "role": role})


def role(user) -> str:
    """The role as the next request reads it (not the one cached on this object)."""
    return role_of(type(user).objects.get(pk=user.pk))


def sign_in(username: str, password: str) -> Client:
    client = Client()
    response = client.post(reverse("login"), {"username": username, "password": password})
    assert response.status_code == 302, response.content.decode()[:500]
    return client


def test_the_owner_adds_a_viewer_who_signs_in_with_the_password_shown_once(owner_client, django_user_model):
    response = add(owner_client, "vera", "viewer")
    made = page(response).select_one("#made")
    assert response.status_code == 200 and "vera can sign in, as a viewer" in made.text
    password = made.select_one("#made-password").text
    vera = django_user_model.objects.get(username="vera")
    assert role_of(vera) == "viewer" and not may_change(vera) and not vera.is_superuser
    sign_in("vera", password)
    listed = page(owner_client.get(reverse("accounts")))
    assert listed.select_one("#made") is None  # shown once: not on the next visit
    assert listed.select_one(f"#account-{vera.pk} select option[selected]")["value"] == "viewer"


@pytest.mark.parametrize("name,says", [
    ("Owner", "There is an account of that name"),
    ("josé", "Enter a valid username"),
    ("a" * 48, "at most 47 characters"),
    ("two words", "Enter a valid username"),
])
def test_a_name_taken_or_that_the_history_cannot_carry_is_refused(owner_client, name, says, django_user_model):
    response = add(owner_client, name, "owner")
    assert response.status_code == 400 and says in page(response).select_one("#username-errors").text
    assert django_user_model.objects.count() == 1


def test_an_owner_made_here_may_change_and_a_role_changes_from_the_next_request(owner_client, django_user_model):
    password = page(add(owner_client, "olga", "owner")).select_one("#made-password").text
    olga_client = sign_in("olga", password)
    olga = django_user_model.objects.get(username="olga")
    assert olga_client.get(reverse("accounts")).status_code == 200
    owner_client.post(reverse("account_role", args=[olga.pk]), {"role": "viewer"})
    assert role(olga) == "viewer"
    refused = olga_client.get(reverse("accounts"))
    assert refused.status_code == 403 and "This page is for an owner" in refused.content.decode()


def test_the_last_owner_stays_an_owner(owner_client, owner):
    demoted = owner_client.post(reverse("account_role", args=[owner.pk]), {"role": "viewer"})
    assert demoted.status_code == 400 and "its only owner" in demoted.content.decode()
    assert role(owner) == "owner"
    add(owner_client, "olga", "owner")
    assert owner_client.post(reverse("account_role", args=[owner.pk]), {"role": "viewer"}).status_code == 302
    assert role(owner) == "viewer"  # another owner is there: allowed, and the page is closed to them now
    assert owner_client.get(reverse("accounts")).status_code == 403


def test_no_one_removes_themselves(owner_client, owner, django_user_model):
    refused = owner_client.post(reverse("account_remove", args=[owner.pk]))
    assert refused.status_code == 400 and "Another owner can remove your account" in refused.content.decode()
    owner.refresh_from_db()
    assert owner.is_active
    add(owner_client, "vera", "viewer")
    vera = django_user_model.objects.get(username="vera")
    assert owner_client.post(reverse("account_remove", args=[vera.pk])).status_code == 302


def test_a_removed_account_is_signed_out_cannot_sign_in_and_its_name_stays_taken(owner_client, django_user_model):
    password = page(add(owner_client, "vera", "viewer")).select_one("#made-password").text
    vera_client = sign_in("vera", password)
    vera = django_user_model.objects.get(username="vera")
    owner_client.post(reverse("account_remove", args=[vera.pk]))
    assert vera_client.get(reverse("facts")).status_code == 302  # to the sign-in page
    again = Client().post(reverse("login"), {"username": "vera", "password": password})
    assert again.status_code == 200  # refused
    row = page(owner_client.get(reverse("accounts"))).select_one(f"#account-{vera.pk}")
    assert "removed" in row["class"] and "cannot sign in" in row.text and row.select("form") == []
    assert add(owner_client, "vera", "viewer").status_code == 400


def test_a_new_password_replaces_the_old_and_ends_its_sessions(owner_client, owner, django_user_model):
    old = page(add(owner_client, "vera", "viewer")).select_one("#made-password").text
    vera_client = sign_in("vera", old)
    vera = django_user_model.objects.get(username="vera")
    response = owner_client.post(reverse("account_password", args=[vera.pk]))
    new = page(response).select_one("#made-password").text
    assert response.status_code == 200 and new != old and "A new password for vera" in response.content.decode()
    assert vera_client.get(reverse("facts")).status_code == 302
    assert Client().post(reverse("login"), {"username": "vera", "password": old}).status_code == 200
    sign_in("vera", new)
    mine = owner_client.post(reverse("account_password", args=[owner.pk]))  # the owner's own: they stay signed in
    assert mine.status_code == 200 and owner_client.get(reverse("accounts")).status_code == 200
    sign_in("owner", page(mine).select_one("#made-password").text)
    assert Client().post(reverse("login"), {"username": "owner", "password": OWNER_PASSWORD}).status_code == 200


def test_accounts_from_django_commands_are_owners_when_superusers_else_viewers(django_user_model):
    call_command("ensure_owner", stdout=io.StringIO())
    first = django_user_model.objects.get()
    assert role_of(first) == "owner" and may_change(first)  # the first run's account
    plain = django_user_model.objects.create_user("shell-made", password="x" * 12)
    assert role_of(plain) == "viewer"  # made some other way: reads until an owner says otherwise
    Account.objects.create(user=first, role=Account.VIEWER)
    first = django_user_model.objects.get(pk=first.pk)
    assert role_of(first) == "viewer"  # a role given wins over being a superuser


@pytest.mark.django_db(transaction=True)
def test_the_migration_makes_every_account_there_before_it_an_owner(django_user_model):
    executor = MigrationExecutor(connection)
    before, after = [("dashboard", "0010_service")], [("dashboard", "0011_account")]
    executor.migrate(before)
    try:
        django_user_model.objects.create_user("first")  # (auth's tables are as they are: only the desk's went back)
        django_user_model.objects.create_user("second")
        MigrationExecutor(connection).migrate(after)
    finally:
        MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    for name in ("first", "second"):
        assert role_of(django_user_model.objects.get(username=name)) == "owner"


def test_the_tests_run_on_the_database_they_were_given():
    """SQLite in memory, or the database DESK_TEST_DATABASE_URL names (tests/test_postgres.py)."""
    url = os.environ.get("DESK_TEST_DATABASE_URL", "")
    assert connection.vendor == ("postgresql" if url.startswith("postgres") else "sqlite")
    if url:
        assert connection.settings_dict["NAME"] == "test_" + url.rsplit("/", 1)[-1]  # pytest-django's own, beside it
