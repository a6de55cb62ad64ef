"""Start the real memory service (`python -m memories serve`) on a free loopback port."""

from __future__ import annotations

import atexit
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(url: str, process: subprocess.Popen, log: Path, timeout: float) -> None:
    """Until `url` answers 200; a process that exits first, or a timeout, raises with its log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}:\n{log.read_text()[-4000:]}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not answer within {timeout}s:\n{log.read_text()[-4000:]}")


@dataclass
class Service:
    db: Path
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    port: int = field(default_factory=free_port)
    env: dict = field(default_factory=dict)
    process: subprocess.Popen | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"X-Memory-Secret": self.secret}, timeout=30, **kwargs)

    def serve_args(self) -> list[str]:
        """What `python -m memories serve` is told to serve: here one database file."""
        return ["--db", str(self.db)]

    def start(self, timeout: float = 60) -> Service:
        atexit.register(self.stop)  # never outlive the test run, even when a test fails half-way
        self.log = self.db.with_suffix(".log")
        env = {**os.environ, "MEMORY_SECRET": self.secret, "PYTHONPATH": str(ROOT), **self.env}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memories", "serve", *self.serve_args(), "--port", str(self.port), "--log-level", "warning"],
            cwd=ROOT, env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
        )
        try:
            wait_for(self.url + "/health", self.process, self.log, timeout)
        except RuntimeError:
            self.stop()
            raise
        return self

    def kill(self) -> None:
        """kill -9: no clean-up, as in a crash."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def kill_mid_writes(self, write, after: float) -> None:
        """kill -9 `after` seconds into a stream of `write(api)` calls from another thread; the
        stream ends at the first call the kill cuts off."""
        stop = threading.Event()

        def writer():
            with self.client() as api:
                while not stop.is_set():
                    try:
                        if write(api) is False:
                            return
                    except httpx.TransportError:
                        return

        thread = threading.Thread(target=writer)
        thread.start()
        time.sleep(after)
        self.kill()
        stop.set()
        thread.join()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
