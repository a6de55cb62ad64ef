"""`make serve` (scripts/serve.py) on free loopback ports, as a server runs it: the memory service and
the dashboard under gunicorn, with the settings a test gives in an env file of its own."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.memory_service import ROOT, free_port


@dataclass
class ServedDesk:
    home: Path
    settings: dict = field(default_factory=dict)  # more lines for the env file
    port: int = field(default_factory=free_port)
    memory_port: int = field(default_factory=free_port)
    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    process: subprocess.Popen | None = None
    password: str = ""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def memory_url(self) -> str:
        return f"http://127.0.0.1:{self.memory_port}"

    @property
    def log(self) -> Path:
        return self.home / "serve.log"

    def env_file(self) -> Path:
        var = self.home / "var"
        values = {"SECRET_KEY": secrets.token_urlsafe(50), "MEMORY_SECRET": self.secret, "MEMORY_URL": self.memory_url,
                  "MEMORY_DIR": var / "memories", "DASHBOARD_DB": var / "dashboard.db", "STATIC_ROOT": var / "static",
                  "DASHBOARD_PORT": self.port, **self.settings}
        path = self.home / "desk.env"
        path.write_text("".join(f"{k}={v}\n" for k, v in values.items()))
        path.chmod(0o600)
        return path

    def start(self, timeout: float = 180) -> ServedDesk:
        env = {**os.environ, "DESK_HOME": str(self.home), "DASHBOARD_ENV_FILE": str(self.env_file())}
        for name in ("SECRET_KEY", "MEMORY_SECRET", "MEMORY_URL", "DJANGO_SETTINGS_MODULE"):
            env.pop(name, None)  # the env file says them, as on a server
        self.process = subprocess.Popen([sys.executable, "scripts/serve.py"], cwd=ROOT, env=env, stdout=self.log.open("w"),
                                        stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while "Dashboard:" not in self.log.read_text():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"make serve did not start:\n{self.log.read_text()[-4000:]}")
            time.sleep(0.3)
        self.password = re.search(r"password: (\S+)", self.log.read_text())[1]
        return self

    def signed_in(self, base: str | None = None, **kwargs) -> httpx.Client:
        """A browser tab signed in as the owner, through `base` (a proxy) or straight to the dashboard."""
        prefix = self.settings.get("DASHBOARD_URL_PREFIX", "")
        tab = httpx.Client(base_url=base or self.url, timeout=30, **kwargs)
        page = tab.get(f"{prefix}/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
        r = tab.post(f"{prefix}/login/", data={"username": "owner", "password": self.password, "csrfmiddlewaretoken": token},
                     headers={"Referer": str(page.url)})
        assert r.status_code == 302, (r.status_code, r.text[:500])
        return tab

    def stop(self) -> None:
        """SIGTERM, as systemd stops it: serve.py stops the dashboard and the memory service, then itself."""
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(60)
