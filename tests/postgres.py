"""A throwaway PostgreSQL from Debian's `postgresql` package, for tests/test_postgres.py: initdb and
pg_ctl in a folder of its own, on a free loopback port, a password required; stopped and removed
afterwards. PostgreSQL refuses to run as root: under root (CI) it runs as the package's `postgres`
user, in a folder under /tmp that user can reach (pytest's own are root's only)."""

from __future__ import annotations

import os
import pwd
import re
import secrets
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.memory_service import free_port

MISSING = "PostgreSQL is missing: .ci/run installs Debian's (apt-get install postgresql)"
USER = "desk"  # the cluster's superuser, and the dashboard's: pytest-django creates its test database


def binaries() -> Path:
    """The newest of Debian's /usr/lib/postgresql/VERSION/bin (its initdb is not on PATH), else PATH's."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: [int(n) for n in re.findall(r"\d+", p.parts[-3])])
    if found:
        return found[-1].parent
    on_path = shutil.which("initdb")
    assert on_path, MISSING
    return Path(on_path).parent


def run_as() -> dict:
    """subprocess arguments that run PostgreSQL's tools as someone it accepts."""
    if os.geteuid() != 0:
        return {}
    try:
        account = pwd.getpwnam("postgres")
    except KeyError:
        raise AssertionError(f"{MISSING}; as root it runs as the user `postgres` the package creates") from None
    return {"user": account.pw_uid, "group": account.pw_gid, "extra_groups": []}


@dataclass
class Postgres:
    folder: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="desk-postgres-")))
    port: int = field(default_factory=free_port)
    password: str = field(default_factory=lambda: secrets.token_urlsafe(16))

    def url(self, name: str = "desk") -> str:
        """As DASHBOARD_DATABASE_URL takes it."""
        return f"postgres://{USER}:{self.password}@127.0.0.1:{self.port}/{name}"

    def _run(self, tool: str, *args: str) -> None:
        done = subprocess.run([str(binaries() / tool), *args], cwd=self.folder, capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "PGPASSWORD": self.password}, **run_as())
        assert done.returncode == 0, f"{tool} failed:\n{done.stdout}\n{done.stderr}\n{self._log()}"

    def _log(self) -> str:
        log = self.folder / "postgres.log"
        return log.read_text(errors="replace")[-3000:] if log.exists() else ""

    def start(self) -> Postgres:
        as_user = run_as()
        if as_user:
            os.chown(self.folder, as_user["user"], as_user["group"])
        secret = self.folder / "password"
        secret.write_text(self.password)
        if as_user:
            os.chown(secret, as_user["user"], as_user["group"])
        self._run("initdb", "-D", "data", "-U", USER, f"--pwfile={secret}", "--auth=scram-sha-256", "--encoding=UTF8",
                  "--no-sync")
        secret.unlink()
        # fsync off: a test's cluster is thrown away; the socket in the folder, not /var/run/postgresql.
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=off"
        self._run("pg_ctl", "-D", "data", "-l", "postgres.log", "-o", options, "-w", "-t", "60", "start")
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, "desk")
        return self

    def stop(self) -> None:
        try:
            if (self.folder / "data" / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", "data", "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
