"""`python -m memories serve --dir FOLDER` on a free loopback port: several memories, one process."""

from __future__ import annotations

from tests.memory_service import Service


class FolderService(Service):
    """`db` is the folder: FOLDER/NAME.db is the memory NAME, at url_of(NAME)."""

    def url_of(self, name: str) -> str:
        return self.url if name == "default" else f"{self.url}/memories/{name}"

    def serve_args(self) -> list[str]:
        return ["--dir", str(self.db)]

    def start(self, timeout: float = 60) -> FolderService:
        self.db.mkdir(parents=True, exist_ok=True)
        return super().start(timeout)
