"""`make run`: the memory service and the dashboard on this machine, on a demo memory the first time.

Secrets are generated once into local.env (git-ignored). Ctrl-C stops both processes.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
VAR = ROOT / "var"
LOCAL_ENV = ROOT / "local.env"
DEMO = ROOT / "memories" / "data" / "demo.jsonl"


def read_env(path: Path) -> dict[str, str]:
    if not path.exists():
        return {}
    pairs = (line.split("=", 1) for line in path.read_text().splitlines() if "=" in line and not line.startswith("#"))
    return {k.strip(): v.strip() for k, v in pairs}


def local_settings() -> dict[str, str]:
    """local.env, created with fresh secrets the first time."""
    values = read_env(LOCAL_ENV)
    defaults = {
        "MEMORY_SECRET": secrets.token_urlsafe(32),
        "SECRET_KEY": secrets.token_urlsafe(50),
        "MEMORY_URL": "http://127.0.0.1:8787",
        "MEMORY_DB": str(VAR / "memory.db"),
        "DASHBOARD_DB": str(VAR / "dashboard.db"),
    }
    missing = {k: v for k, v in defaults.items() if k not in values and k not in os.environ}
    if missing:
        with LOCAL_ENV.open("a") as f:
            if not values:
                f.write("# Written by `make run`; keep it out of git (it is ignored).\n")
            f.writelines(f"{k}={v}\n" for k, v in missing.items())
        LOCAL_ENV.chmod(0o600)
    return {**defaults, **values, **{k: os.environ[k] for k in defaults if k in os.environ}}


def wait_for(url: str, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"{proc.args[2] if len(proc.args) > 2 else proc.args} exited with {proc.returncode}")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    sys.exit(f"{url} did not answer within {seconds:.0f}s")


def stop_on_sigterm(signum, frame):
    raise KeyboardInterrupt  # the same clean stop as Ctrl-C


def main() -> None:
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    VAR.mkdir(exist_ok=True)
    env = {**os.environ, **local_settings()}
    python = sys.executable
    db = Path(env["MEMORY_DB"])
    if not db.exists():
        print(f"First run: loading the demo memory ({DEMO.name}) into {db}")
        subprocess.run([python, "-m", "memories", "import", str(DEMO), "--db", str(db)], cwd=ROOT, env=env, check=True)

    port = env["MEMORY_URL"].rsplit(":", 1)[-1].strip("/")
    procs = [subprocess.Popen([python, "-m", "memories", "serve", "--db", str(db), "--port", port,
                               "--log-level", "warning"], cwd=ROOT, env=env)]
    wait_for(env["MEMORY_URL"] + "/health", procs[0])

    manage = ROOT / "manage.py"
    if manage.exists():
        subprocess.run([python, str(manage), "migrate", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
        subprocess.run([python, str(manage), "ensure_owner"], cwd=ROOT, env=env, check=True)
        procs.append(subprocess.Popen([python, str(manage), "runserver", "127.0.0.1:8000", "--noreload"], cwd=ROOT, env=env))
        wait_for("http://127.0.0.1:8000/login/", procs[1])
        print("\nDashboard: http://127.0.0.1:8000  (Ctrl-C stops the dashboard and the memory service)\n")
    else:
        print(f"\nMemory service: {env['MEMORY_URL']}  (secret in local.env; Ctrl-C stops it)\n")

    try:
        while all(p.poll() is None for p in procs):
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


if __name__ == "__main__":
    main()
