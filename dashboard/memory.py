"""The dashboard's handle on the memory service: one client per process, built from settings."""

from __future__ import annotations

import threading
import time

from django.conf import settings

from memories.client import MemoryClient, MemoryServiceError

_lock = threading.Lock()
_clients: dict[tuple, MemoryClient] = {}
STATUS_TTL = 5.0  # seconds a status banner may be stale; keeps every page to one /health call at most
_status: dict = {}


def client_key() -> tuple:
    return (settings.MEMORY_URL, settings.MEMORY_SECRET, settings.MEMORY_TIMEOUT)


def memory() -> MemoryClient:
    """The client for the configured service (a new one if MEMORY_URL or MEMORY_SECRET changed)."""
    key = client_key()
    with _lock:
        if key not in _clients:
            _clients[key] = MemoryClient(settings.MEMORY_URL, settings.MEMORY_SECRET, timeout=_timeout())
        return _clients[key]


def _timeout():
    import httpx

    return httpx.Timeout(settings.MEMORY_TIMEOUT, connect=min(2.0, settings.MEMORY_TIMEOUT))


def status(fresh: bool = False) -> dict:
    """What the banner shows: URL, reachable, fact count, model, orphans. Never raises."""
    now = time.monotonic()
    key = settings.MEMORY_URL
    cached = _status.get(key)
    if cached and not fresh and now - cached["at"] < STATUS_TTL:
        return cached
    client = memory()
    result = {"url": client.base_url, "at": now, "reachable": False}
    try:
        health = client.health()
        stats = client.stats()
        orphans = stats.get("orphans") or {}
        result.update(
            reachable=True, facts=health.facts, model=health.model, mode=health.mode,
            orphans=sum(len(v) for v in orphans.values() if isinstance(v, list)),
        )
    except MemoryServiceError as e:
        result["error"] = str(e)
    _status[key] = result
    return result


def forget_status() -> None:
    _status.clear()
