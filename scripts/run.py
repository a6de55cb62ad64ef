"""`make run` (and `make run-worker`): the product on this machine, on a demo memory the first time.

make run          the local memory service on a folder of memories (`serve --dir var/memories`:
                  NAME.db is the memory NAME, default.db the demo at the root) + the dashboard
make run-worker   the memory on Cloudflare, offline: embed-server + `wrangler dev --local` (a
                  Durable Object per memory, "demo" the first) + the dashboard pointed at it

Secrets are generated once into local.env (git-ignored). While it runs, var/run.env says where
the memory of this run is (`make evalsets` loads into it). A memory process that dies is started
again (and the terminal says so); Ctrl-C stops everything.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
HOME = Path(os.environ.get("DESK_HOME") or ROOT)  # where var/ and local.env live (tests use a temp folder)
VAR = HOME / "var"
LOCAL_ENV = HOME / "local.env"
RUN_ENV = VAR / "run.env"  # where this run's memory is, while it runs
DASHBOARD_PORT = os.environ.get("DASHBOARD_PORT") or "8000"
EMBED_PORT = os.environ.get("EMBED_PORT") or "8788"
WORKER_PORT = os.environ.get("WORKER_PORT") or "8789"
DEMO = ROOT / "memories" / "data" / "demo.jsonl"
WORKER = ROOT / "worker"
RESTARTS = 5  # a process that dies more often than this in a minute is broken, not unlucky


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
        "MEMORY_DB": str(VAR / "memory.db"),  # the one memory of earlier runs: copied into MEMORY_DIR as its default
        "MEMORY_DIR": str(VAR / "memories"),
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


def answers(url: str) -> bool:
    try:
        httpx.get(url, timeout=1)
        return True
    except httpx.TransportError:
        return False


class Process:
    """A child process, its health URL, and how to start it again."""

    def __init__(self, name: str, args: list[str], health: str, env: dict, cwd: Path = ROOT):
        self.name, self.args, self.health, self.env, self.cwd = name, args, health, env, cwd
        self.deaths: list[float] = []
        self.proc: subprocess.Popen | None = None

    def start(self, seconds: float = 90) -> None:
        self.proc = subprocess.Popen(self.args, cwd=self.cwd, env=self.env, start_new_session=True)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                sys.exit(f"{self.name} exited with {self.proc.returncode} while starting; see its output above")
            if answers(self.health):
                return
            time.sleep(0.2)
        sys.exit(f"{self.name} did not answer {self.health} within {seconds:.0f}s")

    def check(self) -> None:
        """Start it again if it died; give up (and say why) if it keeps dying."""
        if self.proc is None or self.proc.poll() is None:
            return
        now = time.monotonic()
        self.deaths = [t for t in self.deaths if now - t < 60] + [now]
        if len(self.deaths) > RESTARTS:
            raise SystemExit(f"\n{self.name} died {len(self.deaths)} times in a minute (last exit code "
                             f"{self.proc.returncode}); stopping everything. Its output above says why.")
        print(f"\n{self.name} stopped (exit code {self.proc.returncode}); starting it again\n", file=sys.stderr)
        self.start()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)


def local_memory(env: dict, python: str) -> list[Process]:
    """`serve --dir`: a folder of memories, default.db (the demo the first time) at the root. A
    memory there is a file: the import below creates the one the dashboard opens."""
    folder = Path(env["MEMORY_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    default, earlier = folder / "default.db", Path(env["MEMORY_DB"])
    if not default.exists() and earlier.exists():
        print(f"Your memory {earlier} is now the default memory of the folder {folder} (copied; the file stays)")
        with sqlite3.connect(earlier) as source, sqlite3.connect(default) as copy:
            source.backup(copy)
    first = not default.exists()
    if first and not earlier.exists():
        print(f"First run: loading the demo memory ({DEMO.name}) into {default}")
        subprocess.run([python, "-m", "memories", "import", str(DEMO), "--db", str(default), "--quiet"], cwd=ROOT, env=env, check=True)
    port = env["MEMORY_URL"].rsplit(":", 1)[-1].strip("/")
    service = Process("the memory service", [python, "-m", "memories", "serve", "--dir", str(folder), "--port", port,
                                             "--log-level", "warning"], env["MEMORY_URL"] + "/health", env)
    service.start()
    if first and not earlier.exists():
        approve_demo(env["MEMORY_URL"], env["MEMORY_SECRET"])
    return [service]


def approve_demo(url: str, secret: str) -> None:
    """The demo's facts as the owner's own, reviewed: the Inbox starts empty, for the agent's writes."""
    headers = {"X-Memory-Secret": secret, "X-Memory-Client": "dashboard"}
    while ids := [f["id"] for f in httpx.get(f"{url}/facts", params={"reviewed": "false", "limit": 100}, headers=headers,
                                             timeout=10).json()["facts"]]:
        httpx.post(f"{url}/facts/review", json={"ids": ids}, headers=headers, timeout=30).raise_for_status()


def local_wrangler_config() -> Path:
    """worker/wrangler.jsonc without its Workers AI binding: a local run embeds with the embed
    server, and a bound AI makes wrangler warn that it "may incur usage charges"."""
    config = json.loads((WORKER / "wrangler.jsonc").read_text())
    config.pop("ai", None)
    config.pop("$schema", None)
    config["main"] = str(WORKER / config["main"])
    path = VAR / "wrangler.local.json"
    path.write_text(json.dumps(config, indent=2) + "\n")
    return path


def free_port() -> str:
    """A port nothing listens on now: wrangler's inspector otherwise takes 9229, which a second
    wrangler (or a Node debugger) on the machine holds already."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def worker_memory(env: dict, python: str) -> list[Process]:
    """The Worker and its Durable Object on workerd, state in var/worker, embedding with the local model."""
    bin_ = WORKER / "node_modules" / ".bin"
    if not (bin_ / "wrangler").exists():
        sys.exit("worker/node_modules is missing: `make install` runs npm install in worker/")
    embed = Process("the embed server", [python, "-m", "memories", "embed-server", "--port", EMBED_PORT],
                    f"http://127.0.0.1:{EMBED_PORT}/health", env)
    variables = {"MEMORY_SECRET": env["MEMORY_SECRET"], "EMBEDDER": "http", "EMBEDDER_URL": f"http://127.0.0.1:{EMBED_PORT}/embed",
                 "EMBED_MODEL": "all-MiniLM-L6-v2-onnx-int8", "EMBED_DIMS": "384"}
    node22 = WORKER / "node22" / "node_modules" / ".bin"  # Node 22 where the machine lacks it (Makefile)
    wrangler_env = {**env, "PATH": f"{node22}:{bin_}:{env['PATH']}", "WRANGLER_SEND_METRICS": "false",
                    "CLOUDFLARE_CF_FETCH_ENABLED": "false", "WRANGLER_HIDE_BANNER": "true"}
    worker = Process("wrangler dev", [str(bin_ / "wrangler"), "dev", "--config", str(local_wrangler_config()),
                                      "--local", "--ip", "127.0.0.1", "--port", WORKER_PORT, "--inspector-port", free_port(),
                                      "--persist-to", str(VAR / "worker"), "--show-interactive-dev-session=false",
                                      *[a for k, v in variables.items() for a in ("--var", f"{k}:{v}")]],
                     f"http://127.0.0.1:{WORKER_PORT}/health", wrangler_env, WORKER)
    embed.start()
    worker.start()
    env["MEMORY_URL"] = f"http://127.0.0.1:{WORKER_PORT}/memories/demo"
    secret = {"X-Memory-Secret": env["MEMORY_SECRET"]}
    # A name is a memory only once created: the demo's is, the first time (later runs: 200, there already).
    httpx.put(f"http://127.0.0.1:{WORKER_PORT}/memories/demo", headers=secret, timeout=10).raise_for_status()
    facts = httpx.get(env["MEMORY_URL"] + "/health", headers=secret, timeout=10).json()["facts"]
    if facts == 0:
        print(f"First run: loading the demo memory ({DEMO.name}) into the Worker's memory 'demo'")
        subprocess.run([python, "-m", "memories", "import", str(DEMO), "--url", env["MEMORY_URL"], "--quiet"],
                       cwd=ROOT, env=env, check=True)
        approve_demo(env["MEMORY_URL"], env["MEMORY_SECRET"])
    return [embed, worker]


def create_named(root: str, env: dict) -> None:
    """Each memory MEMORY_NAMES lists (as the dashboard reads it: names split at commas), created
    if it is not there yet: the switcher's links open memories, never a "no memory" page."""
    names = [n.strip() for n in env.get("MEMORY_NAMES", "").split(",") if n.strip()]
    for name in names:
        r = httpx.put(f"{root}/memories/{name}", headers={"X-Memory-Secret": env["MEMORY_SECRET"]}, timeout=10)
        if r.status_code >= 400:
            sys.exit(f"MEMORY_NAMES names {name!r}, which the memory refused: {r.text}")


def watch(procs: list[Process]) -> None:
    """Until Ctrl-C or SIGTERM: each process that dies is started again (scripts/serve.py's too)."""
    while True:
        time.sleep(0.5)
        for p in procs:
            p.check()


def stop_on_sigterm(signum, frame):
    raise KeyboardInterrupt  # the same clean stop as Ctrl-C


def main() -> None:
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    # Ctrl-C stops everything, also when started as a background job, which starts with SIGINT
    # ignored: its children would inherit that and outlive it. A handler is reset on exec.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    VAR.mkdir(exist_ok=True)
    env = {**os.environ, **local_settings(), "DJANGO_SETTINGS_MODULE": "dashboard.settings"}
    python = sys.executable
    on_worker = "--worker" in sys.argv
    procs: list[Process] = []
    try:
        procs += worker_memory(env, python) if on_worker else local_memory(env, python)
        create_named(f"http://127.0.0.1:{WORKER_PORT}" if on_worker else env["MEMORY_URL"], env)
        subprocess.run([python, "manage.py", "migrate", "--verbosity", "0"], cwd=ROOT, env=env, check=True)
        subprocess.run([python, "manage.py", "ensure_owner"], cwd=ROOT, env=env, check=True)
        dashboard = Process("the dashboard", [python, "manage.py", "runserver", f"127.0.0.1:{DASHBOARD_PORT}", "--noreload"],
                            f"http://127.0.0.1:{DASHBOARD_PORT}/login/", env)
        dashboard.start()
        procs.append(dashboard)
        where = "the Worker's Durable Object 'demo'" if on_worker else "the local memory service"
        RUN_ENV.write_text(f"# Written by scripts/run.py while it runs: where its memory is.\nMEMORY_URL={env['MEMORY_URL']}\n")
        print(f"\nDashboard: http://127.0.0.1:{DASHBOARD_PORT} on {where} ({env['MEMORY_URL']}). Ctrl-C stops everything.\n")
        watch(procs)
    except KeyboardInterrupt:
        pass
    finally:
        RUN_ENV.unlink(missing_ok=True)
        for p in reversed(procs):
            p.stop()


if __name__ == "__main__":
    main()
