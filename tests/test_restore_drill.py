"""Backups on a schedule and the restore drill (issue 48; docs/operations.md "Restore drill"): a
memory backed up by `python -m memories backup` while an agent keeps writing, the backup restored
into a new folder, and every fact, pair and setting of it compared; the oldest backups past
--keep removed; a backup that does not read back never replaces the last good one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from memories import scheduled_backup
from tests.memory_service import ROOT, Service
from tests.test_nothing_lost import kept_pairs

AGENT = {"X-Memory-Client": "claude-code"}


def cli(*args, secret: str = "", timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "MEMORY_SECRET": secret, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "memories", *args], cwd=ROOT, capture_output=True, text=True, env=env,
                          timeout=timeout)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_a_backup_taken_under_writes_restores_every_fact_pair_and_setting(tmp_path):
    source = Service(tmp_path / "source.db").start()
    try:
        with source.client() as api:
            for text in ("The owner's standup is at 9:30.", "Priya is the owner's sister.", "The owner prefers metric units."):
                api.post("/facts", json={"text": text})
            api.post("/facts", json={"text": "The owner's standup is at 10:00."})  # an open proposal
            assert api.put("/settings", json={"threshold": 0.99, "fusion": {"expand": 0.7}}).status_code == 200
        stop, written = threading.Event(), []

        def agent():  # writes all through the backup
            with source.client() as api:
                while not stop.is_set():
                    r = api.post("/facts", json={"text": f"Log entry {len(written)}: the agent checked the calendar."},
                                 headers=AGENT)
                    written.append(r.status_code)

        thread = threading.Thread(target=agent)
        thread.start()
        try:
            time.sleep(0.5)
            done = cli("backup", str(tmp_path / "backups"), "--url", source.url, secret=source.secret)
        finally:
            stop.set()
            thread.join()
        assert done.returncode == 0, done.stderr
        [path] = (tmp_path / "backups").glob("memory-default-*.jsonl")
        assert "read back and checked" in done.stderr and str(path) in done.stderr
        assert not list((tmp_path / "backups").glob(".*partial"))
        backed = lines(path)
        facts = [b for b in backed if "text" in b]
        pairs = [b["conflict"] for b in backed if "conflict" in b]
        assert written and set(written) == {201} and len(facts) > 4  # the agent wrote meanwhile
        with source.client() as api:  # each fact backed up is the source's, exactly
            now = {f["id"]: f for f in api.get("/facts", params={"ids": ",".join(str(f["id"]) for f in facts[:100]),
                                                               "limit": 100}).json()["facts"]}
            source_settings = api.get("/settings").json()
        assert all({k: now[f["id"]][k] for k in f} == f for f in facts[:100])
        assert backed[0] == {"settings": {"fusion": source_settings["fusion"], "threshold": 0.99}}

        restored_db = tmp_path / "restored" / "memory.db"
        restored_db.parent.mkdir()
        back = cli("import", str(path), "--db", str(restored_db), "--quiet")
        assert back.returncode == 0 and f"restored {len(facts)} facts" in back.stderr, back.stderr
    finally:
        source.stop()
    copy = Service(restored_db).start()
    try:
        with copy.client() as api:
            got = api.get("/facts", params={"limit": 100, "order": "id_asc"}).json()
            assert got["total"] == len(facts)
            assert [{k: f[k] for k in facts[0]} for f in got["facts"]] == facts[:100]
            assert kept_pairs(api) == pairs
            settings = api.get("/settings").json()
            assert settings["fusion"] == source_settings["fusion"] and settings["thresholds"]["duplicate"]["value"] == 0.99
    finally:
        copy.stop()


def test_the_oldest_past_keep_go_and_a_backup_that_does_not_read_back_keeps_the_last(tmp_path):
    from datetime import UTC, datetime, timedelta

    folder, start = tmp_path / "b", datetime(2026, 12, 1, tzinfo=UTC)
    good = lambda out: (out.write('{"id": 1, "text": "The owner likes figs.", "created_at": "2026-01-01T00:00:00Z"}\n'), (1, 0))[1]  # noqa: E731
    for day in range(4):
        scheduled_backup.backup_once(good, folder, "home", keep=2, now=start + timedelta(days=day))
    assert sorted(p.name for p in folder.glob("*.jsonl")) == ["memory-home-20261203T000000Z.jsonl",
                                                              "memory-home-20261204T000000Z.jsonl"]
    broken = lambda out: (out.write('{"id": 1, "text": ""}\n'), (1, 0))[1]  # noqa: E731
    with pytest.raises(OSError, match="does not read back whole"):
        scheduled_backup.backup_once(broken, folder, "home", keep=2, now=start + timedelta(days=5))
    assert sorted(p.name for p in folder.iterdir()) == ["memory-home-20261203T000000Z.jsonl",
                                                        "memory-home-20261204T000000Z.jsonl"]  # no partial, none dropped


def test_every_runs_again_until_stopped_and_bad_arguments_are_refused(tmp_path):
    db = tmp_path / "home.db"
    assert cli("import", "/dev/null", "--db", str(db), "--from", "list").returncode in (0, 1)  # (creates the file)
    assert scheduled_backup.every("1d") == 86400 and scheduled_backup.every("30m") == 1800
    for bad in ("1w", "0h", "soon"):
        r = cli("backup", str(tmp_path / "b"), "--db", str(db), "--every", bad)
        assert r.returncode == 2 and "--every is a number and a unit" in r.stderr
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    looping = subprocess.Popen([sys.executable, "-m", "memories", "backup", str(tmp_path / "b"), "--db", str(db),
                                "--every", "1s", "--keep", "5"], cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while len(list((tmp_path / "b").glob("memory-home-*.jsonl"))) < 2:
            assert looping.poll() is None and time.monotonic() < deadline, looping.stderr.read() if looping.stderr else ""
            time.sleep(0.2)
    finally:
        looping.terminate()
        looping.wait(10)
