"""The dashboard's own database on PostgreSQL (DASHBOARD_DATABASE_URL), never a mock: a real
PostgreSQL from Debian's package, started for this module (tests/postgres.py), runs the migrations
as `manage.py migrate` does on a server, then the dashboard's tests that touch the database (the
accounts and roles, the evaluation records, the sign-in and its brake, ...) against it. Without the
package the test fails, saying how to install it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.postgres import Postgres

ROOT = Path(__file__).resolve().parent.parent
# The tests that read and write the dashboard's own tables: accounts and roles (a viewer's walk of
# every URL too), sign-in and its brake (the parallel one on a dashboard process of its own), the
# owner's first account, the records kept per service (evaluation cases and runs, pairs marked
# not duplicates, audit entries, memories created), evaluation sets and their runs from the pages.
DATABASE_TESTS = ["tests/test_dashboard_accounts.py", "tests/test_dashboard_viewer.py", "tests/test_signin_brake.py",
                  "tests/test_dashboard_sign_in_brake.py", "tests/test_ensure_owner.py", "tests/test_dashboard_services.py",
                  "tests/test_evaluation_memories.py", "tests/test_memory_create.py",
                  "tests/test_evaluation.py::test_the_pages_run_compare_and_import",  # runs kept, compared, a set imported
                  "tests/test_evaluation.py::test_load_and_evaluate_commands"]


@pytest.fixture(scope="module")
def postgres():
    server = Postgres().start()
    yield server
    server.stop()


def manage(postgres, *args: str) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SECRET_KEY": "postgres-test-key", "MEMORY_SECRET": "x",
           "DASHBOARD_ENV_FILE": "/nonexistent", "DJANGO_SETTINGS_MODULE": "dashboard.settings",
           "DASHBOARD_DATABASE_URL": postgres.url()}
    return subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


def test_the_migrations_run_on_postgresql_as_on_a_server(postgres):
    migrated = manage(postgres, "migrate", "--no-input")
    assert migrated.returncode == 0, migrated.stderr
    plan = manage(postgres, "showmigrations", "dashboard")
    assert "[ ]" not in plan.stdout and "[X] 0011_account" in plan.stdout, plan.stdout
    vendor = manage(postgres, "shell", "-v", "0", "-c", "from django.db import connection as c; print(c.vendor, c.settings_dict['NAME'])")
    assert vendor.stdout.split() == ["postgresql", "desk"], vendor.stderr
    assert manage(postgres, "migrate", "--no-input").returncode == 0  # again: nothing to do, nothing broken
    drift = manage(postgres, "makemigrations", "--check", "--dry-run")
    assert drift.returncode == 0, drift.stdout


def test_the_dashboards_database_tests_pass_on_postgresql(postgres):
    env = {**os.environ, "DESK_TEST_DATABASE_URL": postgres.url()}
    env.pop("DASHBOARD_DATABASE_URL", None)
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", *DATABASE_TESTS], env=env,
                         cwd=ROOT, capture_output=True, text=True, timeout=1500)
    tail = run.stdout[-6000:] + run.stderr[-2000:]
    assert run.returncode == 0, tail
    summary = run.stdout.strip().splitlines()[-1]
    assert "skipped" not in summary and "deselected" not in summary, summary
    assert int(re.search(r"(\d+) passed", summary)[1]) >= 60, summary
    # It was PostgreSQL they ran on, in pytest-django's test database beside `desk`:
    assert "PASSED tests/test_dashboard_accounts.py::test_the_tests_run_on_the_database_they_were_given" in run.stdout
