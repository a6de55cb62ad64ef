"""`make run` and `make run-worker` as an owner starts them: real processes, real ports."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.memory_service import ROOT, free_port

pytestmark = pytest.mark.slow


def start(tmp_path: Path, *args: str, **more: str) -> tuple[subprocess.Popen, dict, Path]:
    ports = {name: str(free_port()) for name in ("DASHBOARD_PORT", "EMBED_PORT", "WORKER_PORT")}
    memory_port = free_port()
    env = {**os.environ, "DESK_HOME": str(tmp_path), "MEMORY_SECRET": "run-test-secret", "MEMORY_URL": f"http://127.0.0.1:{memory_port}", **ports,
           "WRANGLER_SEND_METRICS": "false", "CLOUDFLARE_CF_FETCH_ENABLED": "false", **more}
    log = tmp_path / "run.log"
    proc = subprocess.Popen([sys.executable, "scripts/run.py", *args], cwd=ROOT, env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 180
    while "Dashboard:" not in log.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.3)
    return proc, env, log


def stop(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)


def test_make_run_starts_the_memory_service_again_when_it_dies(tmp_path):
    proc, env, log = start(tmp_path, MEMORY_NAMES="default,work")
    try:
        health = env["MEMORY_URL"] + "/health"
        secret = {"X-Memory-Secret": env["MEMORY_SECRET"]}
        assert httpx.get(health, headers=secret).json()["facts"] == 50  # the demo memory, the folder's default
        # The demo's facts are the owner's, reviewed: the Inbox starts empty, for the agent's writes.
        assert httpx.get(env["MEMORY_URL"] + "/facts", params={"reviewed": "false"}, headers=secret).json()["total"] == 0
        # Each memory MEMORY_NAMES lists is created, empty: the switcher's "work" opens a memory.
        assert httpx.get(env["MEMORY_URL"] + "/memories/work/health", headers=secret).json()["facts"] == 0
        # A folder of memories: another name is a memory only once created (PUT), never by a request.
        assert httpx.get(env["MEMORY_URL"] + "/memories/notes/stats", headers=secret).status_code == 404
        assert not (tmp_path / "var" / "memories" / "notes.db").exists()
        assert httpx.put(env["MEMORY_URL"] + "/memories/notes", headers=secret).status_code == 201
        assert httpx.get(env["MEMORY_URL"] + "/memories/notes/health", headers=secret).json()["facts"] == 0
        assert f"MEMORY_URL={env['MEMORY_URL']}" in (tmp_path / "var" / "run.env").read_text()  # for make evalsets
        pid = subprocess.run(["pgrep", "-f", f"memories serve --dir {tmp_path}"], capture_output=True, text=True).stdout.split()
        assert len(pid) == 1
        os.kill(int(pid[0]), signal.SIGKILL)
        deadline = time.monotonic() + 60
        while "starting it again" not in log.read_text():
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.3)
        while True:
            try:
                assert httpx.get(health, headers=secret, timeout=2).json()["facts"] == 50
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, log.read_text()
                time.sleep(0.3)
        assert httpx.get(f"http://127.0.0.1:{env['DASHBOARD_PORT']}/login/").status_code == 200
    finally:
        stop(proc)
    assert proc.returncode is not None
    assert not (tmp_path / "var" / "run.env").exists()  # no memory runs any more


def test_make_run_worker_serves_the_dashboard_on_a_durable_object_with_the_demo(tmp_path):
    proc, env, log = start(tmp_path, "--worker")
    try:
        memory = f"http://127.0.0.1:{env['WORKER_PORT']}/memories/demo"
        assert httpx.get(memory + "/health", headers={"X-Memory-Secret": env["MEMORY_SECRET"]}).json()["facts"] == 50
        assert f"on the Worker's Durable Object 'demo' ({memory})" in log.read_text()
        assert "may incur usage charges" not in log.read_text() and "env.AI" not in log.read_text()  # a local run binds no AI
        assert httpx.get(f"http://127.0.0.1:{env['DASHBOARD_PORT']}/login/").status_code == 200
        hits = httpx.post(memory + "/recall", json={"query": "metric units"},
                          headers={"X-Memory-Secret": env["MEMORY_SECRET"]}).json()
        assert hits["mode"] == "hybrid" and hits["results"]
    finally:
        stop(proc)


def test_manage_py_by_hand_creates_the_dashboard_database_folder(tmp_path):
    db = tmp_path / "fresh" / "var" / "dashboard.db"  # a fresh clone has no var/
    env = {**os.environ, "SECRET_KEY": "x" * 50, "MEMORY_SECRET": "s", "DASHBOARD_DB": str(db),
           "DASHBOARD_ENV_FILE": str(tmp_path / "none.env"), "DJANGO_SETTINGS_MODULE": "dashboard.settings"}
    env.pop("DASHBOARD_DATABASE_URL", None)
    r = subprocess.run([sys.executable, "manage.py", "migrate", "--verbosity", "0"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert db.exists()
