"""The sign-in brake holds under parallel guesses: twelve wrong passwords at once get five checks at
most, counted per account and per address (a rough edge of the owner's walk, once in
test_dashboard_rough_edges.py)."""

from __future__ import annotations

import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest
from django.urls import reverse

from tests.conftest import OWNER_PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def dashboard_process(tmp_path):
    """The dashboard in a process of its own (runserver is threaded) on a file database, as deployed;
    on PostgreSQL when the tests run there (tests/test_postgres.py: its `desk` database)."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "SECRET_KEY": "parallel-test-key", "MEMORY_SECRET": "x", "DASHBOARD_ENV_FILE": "/nonexistent",
           "DASHBOARD_DB": str(tmp_path / "dash.db"), "DJANGO_SETTINGS_MODULE": "dashboard.settings"}
    env.pop("DASHBOARD_DATABASE_URL", None)
    if os.environ.get("DESK_TEST_DATABASE_URL"):
        env["DASHBOARD_DATABASE_URL"] = os.environ["DESK_TEST_DATABASE_URL"]
    manage = [sys.executable, str(root / "manage.py")]
    subprocess.run([*manage, "migrate", "-v0"], env=env, cwd=root, check=True)
    subprocess.run([*manage, "shell", "-c", "from django.contrib.auth.models import User; "
                    f"User.objects.create_superuser('owner', password={OWNER_PASSWORD!r}, email='')"], env=env, cwd=root, check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([*manage, "runserver", "--noreload", f"127.0.0.1:{port}"], env=env, cwd=root,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            httpx.get(url + "/login/", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    yield url
    server.terminate()
    server.wait(10)


def test_twelve_parallel_wrong_passwords_get_five_checks_at_most(dashboard_process):
    def guess(i):
        with httpx.Client(base_url=dashboard_process, timeout=30) as c:
            token = c.get("/login/").cookies["csrftoken"]
            return c.post("/login/", data={"username": "owner", "password": f"wrong-{i}", "csrfmiddlewaretoken": token}).status_code

    with ThreadPoolExecutor(12) as pool:
        statuses = list(pool.map(guess, range(12)))
    assert statuses.count(200) <= 5 and statuses.count(429) >= 7, statuses  # 200: checked and refused
    assert statuses.count(200) + statuses.count(429) == 12, statuses
    with httpx.Client(base_url=dashboard_process, timeout=30) as c:
        token = c.get("/login/").cookies["csrftoken"]
        right = c.post("/login/", data={"username": "owner", "password": OWNER_PASSWORD, "csrfmiddlewaretoken": token})
    assert right.status_code == 429  # even the right password waits out the window


def test_the_brake_counts_per_account_and_per_address(client, owner, django_user_model):
    django_user_model.objects.create_user("guest", password="another long password")
    for _ in range(5):
        client.post(reverse("login"), {"username": "owner", "password": "wrong"}, REMOTE_ADDR="10.0.0.1")
    other_address = client.post(reverse("login"), {"username": "owner", "password": OWNER_PASSWORD}, REMOTE_ADDR="10.0.0.2")
    assert other_address.status_code == 302  # one guessing address does not keep the owner out (test_signin_brake.py)
    client.logout()
    same_address = client.post(reverse("login"), {"username": "guest", "password": "another long password"},
                               REMOTE_ADDR="10.0.0.1")
    assert same_address.status_code == 429  # and so is the address, whichever account it tries
