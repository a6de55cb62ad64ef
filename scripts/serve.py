"""`make serve`: the desk for real, on a server (docs/server.md).

The memory service (`serve --dir`, a folder of memories) and the dashboard under gunicorn (one
process of threads: an import lives in the process that took its upload, dashboard/import_jobs.py),
its static files collected into STATIC_ROOT with hashed, compressed names that WhiteNoise serves,
one line a request on stdout (dashboard/request_log.py). A process that dies is started again, as
`make run` does; Ctrl-C or SIGTERM stops both.

Where each listens comes from the environment (or the env file: DASHBOARD_ENV_FILE, else
local.env, which is written with fresh secrets the first time, as `make run` writes it):
MEMORY_URL is where the memory service listens (its host and port), DASHBOARD_HOST and
DASHBOARD_PORT the dashboard's; DASHBOARD_URL_PREFIX puts the whole desk under a path.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from run import ROOT, VAR, Process, create_named, local_settings, read_env, stop_on_sigterm, watch

THREADS = 8  # requests at once in the dashboard's one process (benchmarks/serving.py)


def settings() -> dict[str, str]:
    """The environment over the env file, with what serving for real adds to it."""
    named = os.environ.get("DASHBOARD_ENV_FILE")
    values = {**(read_env(Path(named)) if named else local_settings()), **os.environ}
    missing = [k for k in ("SECRET_KEY", "MEMORY_SECRET") if not values.get(k)]
    if missing:
        sys.exit(f"{' and '.join(missing)} missing from the environment and from {named}: docs/server.md says what to set")
    defaults = {"MEMORY_URL": "http://127.0.0.1:8787", "MEMORY_DIR": str(VAR / "memories"), "DASHBOARD_HOST": "127.0.0.1",
                "DASHBOARD_PORT": "8000", "STATIC_ROOT": str(VAR / "static"), "DASHBOARD_DB": str(VAR / "dashboard.db"),
                "FORWARDED_ALLOW_IPS": "127.0.0.1,::1"}  # a proxy on this machine: gunicorn's own default
    return {**defaults, **values, "REQUEST_LOG": "true", "DJANGO_SETTINGS_MODULE": "dashboard.settings"}


def address(host: str, port: int | str) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def reachable(host: str, port: int | str) -> str:
    """Where to check a server bound to host:port: a wildcard bind answers on loopback."""
    return address({"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host), port)


def memory_service(env: dict, python: str) -> Process:
    url = urlsplit(env["MEMORY_URL"])
    if url.scheme != "http" or not url.port or url.path.strip("/"):
        sys.exit(f"MEMORY_URL={env['MEMORY_URL']}: `make serve` starts the memory service there, so it is http://HOST:PORT")
    folder = Path(env["MEMORY_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    service = Process("the memory service", [python, "-m", "memories", "serve", "--dir", str(folder), "--host", url.hostname,
                                             "--port", str(url.port), "--log-level", "warning"],
                      f"http://{reachable(url.hostname, url.port)}/health", env)
    service.start()
    root = env["MEMORY_URL"].rstrip("/")
    if not env.get("MEMORY_NAMES", "").strip(","):  # the dashboard's root is "default": an empty one, no demo on a server
        httpx.put(f"{root}/memories/default", headers={"X-Memory-Secret": env["MEMORY_SECRET"]}, timeout=10).raise_for_status()
    create_named(root, env)
    return service


def dashboard(env: dict) -> Process:
    host, port = env["DASHBOARD_HOST"], env["DASHBOARD_PORT"]
    prefix = env.get("DASHBOARD_URL_PREFIX", "").strip("/")
    # gunicorn's own access line would carry the query string: dashboard/request_log.py writes one without.
    args = [str(Path(sys.executable).parent / "gunicorn"), "dashboard.wsgi:application", "--bind", address(host, port),
            "--workers", "1", "--worker-class", "gthread", "--threads", str(THREADS), "--access-logfile", "/dev/null",
            "--error-logfile", "-", "--no-control-socket", "--forwarded-allow-ips", env["FORWARDED_ALLOW_IPS"]]
    return Process("the dashboard", args, f"http://{reachable(host, port)}/{prefix + '/' if prefix else ''}healthz", env)


def main() -> None:
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    VAR.mkdir(exist_ok=True)
    env = settings()
    python = sys.executable
    procs: list[Process] = []
    try:
        procs.append(memory_service(env, python))
        manage = [python, "manage.py"]
        subprocess.run([*manage, "migrate", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
        subprocess.run([*manage, "collectstatic", "--noinput", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
        desk = dashboard(env)
        subprocess.run([*manage, "ensure_owner", "--at", desk.health.removesuffix("healthz")], cwd=ROOT, env=env, check=True)
        desk.start()
        procs.append(desk)
        print(f"\nDashboard: {desk.health.removesuffix('healthz')} on the memory service at {env['MEMORY_URL']}. "
              "Ctrl-C stops both.\n", flush=True)
        watch(procs)
    except KeyboardInterrupt:
        pass
    finally:
        for p in reversed(procs):
            p.stop()


if __name__ == "__main__":
    main()
