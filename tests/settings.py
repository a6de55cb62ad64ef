"""Test settings: the dashboard's own, with throwaway secrets and no memory service by default."""

import os

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-use-anywhere-else")
os.environ.setdefault("MEMORY_SECRET", "test-memory-secret-f3a9c1")
os.environ.setdefault("MEMORY_URL", "http://127.0.0.1:9")  # discard port: nothing answers unless a test says so

from dashboard.settings import *  # noqa: E402,F403

DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast tests; real ones use the default
