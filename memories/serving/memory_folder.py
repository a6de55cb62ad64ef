"""`serve --dir FOLDER`: many memories from one process, one SQLite file a name, as the Worker
serves one Durable Object a name; which memory a request is for, and the 404 for a name that is
none (yet)."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path

from starlette.concurrency import run_in_threadpool
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..model.embeddings import Embedder
from .openapi import openapi_document
from .service import PUBLIC_PATHS, create_app, error, has_secret
from ..store import Memory

MEMORY_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # the Worker's (worker/src/index.ts); never a "/"
NAMED_PATH = re.compile(r"/memories/([^/]*)(/.*)")
ONE_MEMORY = re.compile(r"/memories/([^/]+)")  # PUT: create the memory


def no_memory(name: str, names: list[str]) -> JSONResponse:
    """The 404 for a name that is no memory (yet), worded as the Worker's (worker/src/serving/directory.ts)."""
    which = f"the memories here are {', '.join(names)}" if names else "there is none here yet"
    return error(404, "no_memory", f"no memory named {name!r}: {which}; create one with PUT /memories/{name} "
                                   "(the dashboard's New memory)", memories=names)


class MemoryFolder:
    """`serve --dir FOLDER`: the memory NAME is FOLDER/NAME.db at /memories/NAME/..., and a path
    without the prefix is FOLDER/default.db, as the Worker names its Durable Objects.

    A memory exists once its file does: `PUT /memories/NAME` (with the secret) creates it, and any
    other request for a name without a file is a 404 naming those there are, so a misspelt name
    never becomes a memory nobody looks at. `GET /memories` lists the files. A memory opens on its
    first request; every memory shares the one embedder the process loaded.
    """

    def __init__(self, folder: Path, secret: str, embedder: Embedder | None, open_memory: Callable[[Path], Memory]):
        if not secret:
            raise ValueError("the memory service needs a shared secret (MEMORY_SECRET)")
        self.folder, self.secret, self.embedder, self.open_memory = Path(folder), secret, embedder, open_memory
        self.folder.mkdir(parents=True, exist_ok=True)
        self.apps: dict[str, tuple[Memory, ASGIApp]] = {}
        self.lock = threading.Lock()  # two first requests for one name open one Memory

    def names(self) -> list[str]:
        return sorted(p.stem for p in self.folder.glob("*.db") if MEMORY_NAME.fullmatch(p.stem))

    def exists(self, name: str) -> bool:
        return name in self.apps or (self.folder / f"{name}.db").exists()

    def app(self, name: str) -> ASGIApp:
        with self.lock:
            return self._open(name)

    def create(self, name: str) -> bool:
        """PUT /memories/NAME: the memory's file, made now (True) or there already (False)."""
        with self.lock:
            if self.exists(name):
                return False
            self._open(name)
            return True

    def _open(self, name: str) -> ASGIApp:
        if name not in self.apps:
            memory = self.open_memory(self.folder / f"{name}.db")
            self.apps[name] = (memory, create_app(memory, self.secret))
        return self.apps[name][1]

    def close(self) -> None:
        with self.lock:
            for memory, _ in self.apps.values():
                memory.close()
            self.apps.clear()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await run_in_threadpool(self.close)
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        path = scope["path"]
        named, one = NAMED_PATH.fullmatch(path), ONE_MEMORY.fullmatch(path)
        name, route = named.groups() if named else (one[1], "") if one else ("default", path)
        public = route in PUBLIC_PATHS
        if not public and not has_secret(scope, self.secret.encode()):
            return await error(401, "unauthorized", "missing or wrong X-Memory-Secret header")(scope, receive, send)
        if path.rstrip("/") == "/memories":
            return await (await self.memories(scope, None))(scope, receive, send)
        if not MEMORY_NAME.fullmatch(name):
            shown = name.encode("utf-8", "backslashreplace").decode()[:80]
            return await error(404, "not_found", f"no memory named {shown!r}: a name is 1 to 64 letters, digits, "
                                                 "'_', '.' or '-', starting with a letter or digit")(scope, receive, send)
        if one:
            return await (await self.memories(scope, name))(scope, receive, send)
        if public and not has_secret(scope, self.secret.encode()):
            # Without the secret no memory is opened (as on the Worker, where opening one wakes its
            # Durable Object): the service is up, and that is all it says.
            if route == "/openapi.json":
                return await JSONResponse(openapi_document())(scope, receive, send)
            return await JSONResponse({"ok": True})(scope, receive, send)
        if name not in self.apps and not self.exists(name):
            if route == "/openapi.json":  # the contract, not the memory
                return await JSONResponse(openapi_document())(scope, receive, send)
            return await no_memory(name, await run_in_threadpool(self.names))(scope, receive, send)
        app = self.apps[name][1] if name in self.apps else await run_in_threadpool(self.app, name)
        await app({**scope, "path": route, "raw_path": route.encode()}, receive, send)

    async def memories(self, scope: Scope, name: str | None) -> Response:
        """GET /memories: the names; PUT /memories/NAME: 201 created, 200 there already."""
        allow = "GET" if name is None else "PUT"
        if scope["method"] not in ({"GET", "HEAD"} if name is None else {"PUT"}):
            response = error(405, "method_not_allowed", f"{scope['method']} is not allowed on {scope['path']}")
            response.headers["Allow"] = allow
            return response
        if name is None:
            return JSONResponse({"memories": await run_in_threadpool(self.names)})
        created = await run_in_threadpool(self.create, name)
        return JSONResponse({"name": name, "created": created}, status_code=201 if created else 200)
