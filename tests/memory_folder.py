"""`python -m memories serve --dir FOLDER` on a free loopback port: several memories, one process."""

from __future__ import annotations

from tests.memory_service import Service


class FolderService(Service):
    """`db` is the folder: FOLDER/NAME.db is the memory NAME, at url_of(NAME)."""

    def url_of(self, name: str) -> str:
        """The memory NAME's address, created first (PUT is idempotent), as WorkerHost.memory() does."""
        if self.process is not None:
            with self.client() as api:
                assert api.put(f"/memories/{name}").status_code in (200, 201)
        return self.url if name == "default" else f"{self.url}/memories/{name}"

    def serve_args(self) -> list[str]:
        return ["--dir", str(self.db)]

    def start(self, timeout: float = 60, memories: tuple[str, ...] = ("default", "work")) -> FolderService:
        """With `memories` created, as the owner creates them (PUT /memories/NAME): a name is a
        memory only once created."""
        self.db.mkdir(parents=True, exist_ok=True)
        super().start(timeout)
        with self.client() as api:
            for name in memories:
                assert api.put(f"/memories/{name}").status_code in (200, 201)
        return self
