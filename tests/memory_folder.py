"""`python -m memories serve --dir FOLDER` on a free loopback port: several memories, one process."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx

from tests.memory_service import ROOT, Service


class FolderService(Service):
    """`db` is the folder: FOLDER/NAME.db is the memory NAME, at url_of(NAME)."""

    def url_of(self, name: str) -> str:
        return self.url if name == "default" else f"{self.url}/memories/{name}"

    def start(self, timeout: float = 60) -> FolderService:
        import atexit

        atexit.register(self.stop)
        self.db.mkdir(parents=True, exist_ok=True)
        self.log = self.db.with_suffix(".log")
        env = {**os.environ, "MEMORY_SECRET": self.secret, "PYTHONPATH": str(ROOT), **self.env}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memories", "serve", "--dir", str(self.db), "--port", str(self.port), "--log-level", "warning"],
            cwd=ROOT, env=env, stdout=self.log.open("ab"), stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"memory service exited with {self.process.returncode}:\n{self.log.read_text()}")
            try:
                if httpx.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"memory service did not answer /health within {timeout}s:\n{self.log.read_text()}")
