"""Test settings: the dashboard's own, with throwaway secrets and no memory service by default.

The dashboard's database is SQLite in memory, unless DESK_TEST_DATABASE_URL names another: then it
is read as a deployment's DASHBOARD_DATABASE_URL is (tests/test_postgres.py runs the tests that
touch the database so, on a PostgreSQL it starts). A DASHBOARD_DATABASE_URL of the shell's or of
local.env is never the tests'."""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-use-anywhere-else")
os.environ.setdefault("MEMORY_SECRET", "test-memory-secret-f3a9c1")
os.environ.setdefault("MEMORY_URL", "http://127.0.0.1:9")  # discard port: nothing answers unless a test says so
TEST_DATABASE_URL = os.environ.get("DESK_TEST_DATABASE_URL", "")
if TEST_DATABASE_URL:
    os.environ["DASHBOARD_DATABASE_URL"] = TEST_DATABASE_URL

from dashboard.settings import *  # noqa: E402,F403

if not TEST_DATABASE_URL:
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast tests; real ones use the default
