"""How a request to a memory goes: the secret and the client's name in headers, retries of what
is safe to repeat, the contract's errors raised as exceptions; and what the service says of
itself (GET /health, /stats, /memories)."""

from __future__ import annotations

import copy
import re
from typing import Any, Self

import httpx

from .answers import Health
from .errors import InvalidResponse, TimedOut, Unreachable, error_for_status

CONNECT_TIMEOUT = 2.0
READ_TIMEOUT = 10.0
SLOW_READ_TIMEOUT = 300.0  # /reindex re-embeds every fact
RETRIES = 2  # for requests that are safe to repeat (reads), and only when nothing was answered
SECRET_HEADER = "X-Memory-Secret"
CLIENT_HEADER = "X-Memory-Client"  # who asks, for the memory's history and recall log
MAX_FACT_ID = 2**53 - 1  # the contract's largest id (a JSON number exactly, and the Worker's JavaScript)
MAX_PAGE = 100  # the most a page (limit) or a batch of the contract holds


class Transport:
    """The connection to one memory (or a service of many), and how each request is made."""

    def __init__(
        self,
        base_url: str,
        secret: str,
        *,
        timeout: httpx.Timeout | float | None = None,
        transport: httpx.BaseTransport | None = None,
        retries: int = RETRIES,
        name: str = "",
    ):
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.name = name  # X-Memory-Client: "dashboard", "cli", an MCP client's name
        self.http = httpx.Client(
            base_url=self.base_url,
            headers={SECRET_HEADER: secret, "Accept": "application/json"},
            timeout=timeout or httpx.Timeout(READ_TIMEOUT, connect=CONNECT_TIMEOUT),
            transport=transport,
        )

    def close(self) -> None:
        self.http.close()

    def named(self, name: str) -> Self:
        """This client (the same connections) under another X-Memory-Client name."""
        other = copy.copy(self)
        other.name = name
        return other

    def _request(self, method: str, path: str, *, safe: bool = False, **kwargs) -> Any:
        attempts = 1 + (self.retries if safe else 0)
        for attempt in range(attempts):
            try:
                if self.name:
                    kwargs["headers"] = {**kwargs.get("headers", {}), CLIENT_HEADER: self.name}
                response = self.http.request(method, path, **kwargs)
                break
            except httpx.TimeoutException as e:
                # A read timeout may mean the work is being done: repeat only connect timeouts.
                if isinstance(e, httpx.ConnectTimeout) and attempt + 1 < attempts:
                    continue
                raise TimedOut(f"the memory service at {self.base_url} did not answer in time", self.base_url) from None
            except httpx.TransportError as e:
                if attempt + 1 < attempts:
                    continue
                raise Unreachable(f"cannot reach the memory service at {self.base_url}: {type(e).__name__}", self.base_url) from None
        try:
            body = response.json()
        except ValueError:
            body = None
        if response.status_code >= 400:
            err = body.get("error") if isinstance(body, dict) else None
            if not isinstance(err, dict):
                err = {"code": "http_error", "message": f"the service answered {response.status_code} without a JSON error"}
            raise error_for_status(response.status_code, str(err.get("code", "")))(
                response.status_code, str(err.get("code", "error")), str(err.get("message", "")), body if isinstance(body, dict) else None
            )
        if not isinstance(body, dict):
            raise InvalidResponse(f"{method} {path} answered {response.status_code} with something that is not a JSON object")
        return body

    def _parse(self, fn, body):
        try:
            return fn(body)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise InvalidResponse(f"the memory service's answer is missing or mangles a field: {e!r}") from None

    def health(self) -> Health:
        body = self._request("GET", "/health", safe=True)
        return self._parse(lambda b: Health(bool(b["ok"]), int(b["facts"]), b.get("model"), int(b.get("dims", 0)),
                                            b.get("mode", "hybrid"), b.get("engine"),
                                            b["embedding"] if isinstance(b.get("embedding"), dict) else None), body)

    def stats(self) -> dict:
        return self._request("GET", "/stats", safe=True)

    def service_url(self) -> str:
        """The service's root: this client's base without the /memories/NAME of one memory."""
        named = re.fullmatch(r"(.*)/memories/[^/]+", self.base_url)
        return named[1] if named else self.base_url

    def memories(self) -> list[str]:
        """GET /memories at the service's root: the names of the memories it holds."""
        body = self._request("GET", self.service_url() + "/memories", safe=True)
        return self._parse(lambda b: [str(n) for n in b["memories"]], body)

    def create_memory(self, name: str) -> bool:
        """PUT /memories/NAME at the service's root: True when it was created (201), False when it
        was there already (200). A one-memory service (`serve --db`) answers NotFound."""
        body = self._request("PUT", f"{self.service_url()}/memories/{name}", safe=True)  # idempotent
        return self._parse(lambda b: bool(b["created"]), body)
