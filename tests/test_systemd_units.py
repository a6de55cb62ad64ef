"""The systemd units in deploy/ (issue 48: installed as a service): `systemd-analyze verify` finds
nothing to say about them, with the paths of an install pointed at this checkout; each service
runs as its own user, restarts on failure and reads its secrets from the env file; the dashboard's
gunicorn is the one `make serve` starts (scripts/serve.py), so the two ways to serve do not drift."""

from __future__ import annotations

import configparser
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
SERVICES = ("memory-desk-memory.service", "memory-desk-dashboard.service", "memory-desk-backup.service")


def unit(name: str) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.optionxform = str
    parser.read_string((DEPLOY / name).read_text())
    return parser


def test_systemd_analyze_verify_finds_nothing(tmp_path):
    analyze = shutil.which("systemd-analyze")
    assert analyze, "systemd-analyze is missing: .ci/run installs Debian's systemd"
    env_file = tmp_path / "desk.env"
    env_file.write_text("SECRET_KEY=x\nMEMORY_SECRET=y\n")
    env_file.chmod(0o600)
    for path in DEPLOY.iterdir():  # an install's paths, here: the checkout, a temporary state and backups folder
        text = (path.read_text().replace("/opt/memory-desk", str(ROOT)).replace("/etc/memory-desk/desk.env", str(env_file))
                .replace("/var/lib/memory-desk", str(tmp_path / "state")).replace("/var/backups/memory-desk", str(tmp_path / "b")))
        (tmp_path / path.name).write_text(text)
    r = subprocess.run([analyze, "verify", "--man=no", *sorted(str(p) for p in tmp_path.glob("memory-desk-*"))],
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0 and r.stderr.strip() == "", r.stderr  # (a bad value is only a warning: none either)


def test_each_service_runs_as_its_user_restarts_and_reads_the_env_file():
    for name in SERVICES:
        service = unit(name)["Service"]
        assert service["User"] == "memory-desk" and service["EnvironmentFile"] == "/etc/memory-desk/desk.env", name
        assert service.get("NoNewPrivileges") == "true" and service.get("ProtectSystem") == "strict", name
        if service.get("Type") != "oneshot":
            assert service["Restart"] == "on-failure", name
    assert unit("memory-desk-backup.timer")["Timer"]["OnCalendar"] == "daily"


def test_the_dashboards_gunicorn_is_the_one_make_serve_starts():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import serve
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    env = {"DASHBOARD_HOST": "127.0.0.1", "DASHBOARD_PORT": "8000", "FORWARDED_ALLOW_IPS": "127.0.0.1,::1"}
    started = serve.dashboard(env).args
    unit_args = shlex.split(unit("memory-desk-dashboard.service")["Service"]["ExecStart"])
    assert Path(unit_args[0]).name == Path(started[0]).name == "gunicorn"
    assert unit_args[1:] == started[1:]
