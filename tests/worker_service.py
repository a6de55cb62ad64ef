"""Start the memory on Cloudflare offline: `wrangler dev --local` (workerd, real SQLite Durable
Objects) on a free loopback port, embedding through `python -m memories embed-server` with the
same model as the local service. Each `Memory` handed out is a fresh Durable Object, by name,
created before it is handed out."""

from __future__ import annotations

import atexit
import os
import secrets
import signal
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.memory_service import ROOT, free_port, wait_for

WORKER = ROOT / "worker"
BIN = WORKER / "node_modules" / ".bin"
# Node 22 where the machine's node is older, on Linux x64 only (the Makefile installs it there);
# elsewhere the directory is absent and the owner's own node runs wrangler.
NODE22 = WORKER / "node22" / "node_modules" / ".bin"
TOOL_PATH = f"{NODE22}:{BIN}"
# Without these wrangler reaches for the network (metrics, the cf object, its banner's update check).
OFFLINE = {"WRANGLER_SEND_METRICS": "false", "CLOUDFLARE_CF_FETCH_ENABLED": "false", "WRANGLER_HIDE_BANNER": "true",
           "WRANGLER_LOG": "warn", "NO_COLOR": "1", "CI": "true"}


def stop(process: subprocess.Popen | None) -> None:
    if process and process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)  # wrangler's workerd child goes with it
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@dataclass
class WorkerHost:
    """One embed server and one `wrangler dev`, serving any number of memories by name."""

    state: Path
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    port: int = field(default_factory=free_port)
    embed_port: int = field(default_factory=free_port)
    worker_secret: str | None = None  # what the Worker is given, when not `secret` ("" for none)
    variables: dict = field(default_factory=dict)  # more --var for the Worker (MEMORY_BUDGET_BYTES, say)
    embedder_spec: str | None = None  # MEMORY_EMBEDDER for the embed server (None: MiniLM); the Worker is told its model id
    embedder: subprocess.Popen | None = None
    wrangler: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> WorkerHost:
        if not (BIN / "wrangler").exists():
            raise RuntimeError("worker/node_modules is missing: run `npm ci` in worker/ (make install does)")
        atexit.register(self.stop)
        self.state.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "MEMORY_SECRET": self.secret, "PYTHONPATH": str(ROOT),
               **({"MEMORY_EMBEDDER": self.embedder_spec} if self.embedder_spec else {})}
        log = self.state / "embed.log"
        self.embedder = subprocess.Popen(
            [sys.executable, "-m", "memories", "embed-server", "--port", str(self.embed_port)],
            cwd=ROOT, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True,
        )
        wait_for(f"http://127.0.0.1:{self.embed_port}/health", self.embedder, log, 60)
        served = httpx.get(f"http://127.0.0.1:{self.embed_port}/health", timeout=5).json()
        self.variables = {"EMBED_MODEL": served["model"], "EMBED_DIMS": str(served["dims"]), **self.variables}
        self.start_wrangler()
        return self

    def start_wrangler(self) -> None:
        env = {**os.environ, **OFFLINE, "PATH": f"{TOOL_PATH}:{os.environ['PATH']}"}  # wrangler, and node 22 where needed
        # wrangler dev takes a required secret (wrangler.jsonc) from its environment: only --var gives it here.
        env.pop("MEMORY_SECRET", None)
        variables = {
            "MEMORY_SECRET": self.secret, "EMBEDDER": "http", "EMBEDDER_URL": f"http://127.0.0.1:{self.embed_port}/embed",
            "EMBED_MODEL": "all-MiniLM-L6-v2-onnx-int8", "EMBED_DIMS": "384",
        }
        if self.worker_secret is not None:
            variables["MEMORY_SECRET"] = self.worker_secret
        variables |= self.variables
        variables = {k: v for k, v in variables.items() if v}
        log = self.state / "wrangler.log"
        self.wrangler = subprocess.Popen(
            [str(BIN / "wrangler"), "dev", "--local", "--ip", "127.0.0.1", "--port", str(self.port),
             "--inspector-port", str(free_port()), "--persist-to", str(self.state / "do"),
             "--show-interactive-dev-session=false", *[a for k, v in variables.items() for a in ("--var", f"{k}:{v}")]],
            cwd=WORKER, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        wait_for(self.url + "/health", self.wrangler, log, 90)

    def restart(self) -> None:
        """Stop workerd (SIGKILL: no clean shutdown) and start it again on the same state."""
        if self.wrangler and self.wrangler.poll() is None:
            os.killpg(self.wrangler.pid, signal.SIGKILL)
            self.wrangler.wait()
        self.start_wrangler()

    def memory(self, name: str | None = None) -> WorkerMemory:
        """The memory `name` (a fresh one if None), created as the owner creates one: a name is a
        memory only once created (PUT /memories/NAME)."""
        memory = WorkerMemory(self, name or f"t-{uuid.uuid4().hex[:12]}")
        r = httpx.put(f"{self.url}/memories/{memory.name}", headers={"X-Memory-Secret": self.secret}, timeout=60)
        assert r.status_code in (200, 201), r.text
        return memory

    def stop(self) -> None:
        stop(self.wrangler)
        stop(self.embedder)


@dataclass
class WorkerMemory:
    """A Durable Object memory, shaped like tests.memory_service.Service for the shared tests."""

    host: WorkerHost
    name: str
    backend: str = "worker"

    @property
    def url(self) -> str:
        return f"{self.host.url}/memories/{self.name}"

    @property
    def secret(self) -> str:
        return self.host.secret

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"X-Memory-Secret": self.secret}, timeout=60, **kwargs)

    def start(self) -> WorkerMemory:
        return self

    def stop(self) -> None:
        pass


