"""The dashboard's handle on the memory service: one client per memory, built from settings.

MEMORY_URL is the service's base; the memory NAME is at MEMORY_URL/memories/NAME, and the memory
"default" at MEMORY_URL itself (so a `serve --db` service, which has only that one, needs nothing
more). Which memory a request is about is request.memory (middleware.MemoryNameMiddleware); the
functions here take that name as an argument.

Every call names the dashboard and, after a space, the person signed in (`dashboard alice`): the
memory's history says who did what, and counts it as the owner's review as it counts `dashboard`
(a name and what follows a space are one client to it: memories/review/reviewing.py `named`).

A page gets one deadline (MEMORY_TIMEOUT) for all its calls to the memory, set by the
middleware: httpx's timeouts apply to each read, so a service that trickles a byte every
couple of seconds would otherwise hold a page for minutes.
"""

from __future__ import annotations

import re
import threading
import time
from urllib.parse import urlsplit

import httpcore
import httpx
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from memories.client import MemoryClient, MemoryServiceError, NotFound, StatusError, TimedOut, Unauthorized, Unreachable

_lock = threading.Lock()
_clients: dict[tuple, MemoryClient] = {}
STATUS_TTL = 5.0  # seconds a status banner may be stale; keeps every page to one /health call at most
_status: dict = {}
_local = threading.local()  # this request's deadline (time.monotonic()) and person, or None outside a request
CLIENT = "dashboard"  # X-Memory-Client: what it writes is the owner's review
MAX_CLIENT = 64  # characters of an X-Memory-Client (docs/memory-api.md, "Who asks")


NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")  # the Worker's and the service's memory names
_NAMED_URL = re.compile(r"(.*)/memories/([A-Za-z0-9][A-Za-z0-9_.-]{0,63})/?")
_listed: dict = {}  # base URL -> (time, names GET /memories gave)
_engines: dict = {}  # base URL -> "python" or "worker", as its /health last said


def _base() -> tuple[str, str | None]:
    """(the service's base, the memory MEMORY_URL names if it ends in /memories/NAME, as older
    settings did)."""
    named = _NAMED_URL.fullmatch(settings.MEMORY_URL)
    return (named[1], named[2]) if named else (settings.MEMORY_URL.rstrip("/"), None)


def service() -> str:
    """The service's base URL: what the dashboard's own records are kept under (models.py)."""
    return _base()[0]


def service_kind() -> str:
    """What the strip calls the service: as its /health last said (`engine`), else by its address."""
    engine = _engines.get(service())
    if engine == "worker" or (engine is None and (urlsplit(service()).hostname or "").endswith(".workers.dev")):
        return "Cloudflare Worker"
    return "local service" if engine == "python" else "memory service"


def configured() -> list[str]:
    """The owner's memories, the first the one at the dashboard's own root: the one MEMORY_URL
    names, then MEMORY_NAMES; "default" when neither names any."""
    _, named = _base()
    names = [n for n in [named, *settings.MEMORY_NAMES] if n]
    if bad := [n for n in names if not NAME.fullmatch(n)]:
        raise ImproperlyConfigured(f"MEMORY_NAMES: {', '.join(map(repr, bad))} cannot name a memory: a name is 1 to 64 "
                                   "letters, digits, '_', '.' or '-', starting with a letter or digit")
    return list(dict.fromkeys(names)) or ["default"]


def first() -> str:
    return configured()[0]


def known() -> list[str]:
    """The configured memories, those the owner created here, and any the service lists (GET
    /memories: a Worker or a `serve --dir` service; a `serve --db` one holds only its own)."""
    base, _ = _base()
    now = time.monotonic()
    cached = _listed.get(base)
    if not cached or now - cached[0] >= STATUS_TTL:
        try:
            names = memory("default").memories()
        except MemoryServiceError:
            names = []  # a `serve --db` service (or a Worker from before GET /memories): 404; one that is down: the strip says so
        cached = _listed[base] = (now, [n for n in names if isinstance(n, str) and NAME.fullmatch(n)])
    # An evaluation set's own memory ("eval-...") is not one of the owner's: the switcher leaves it out.
    listed = [n for n in sorted(cached[1]) if not n.startswith("eval-")]
    return list(dict.fromkeys([*configured(), *created(), *listed]))


def owner_memories() -> list[str]:
    """The memories a setting found in an evaluation may be adopted into: the owner's, never an
    evaluation set's own ("eval-..."), which only the evaluation uses."""
    return [n for n in known() if not n.startswith("eval-")]


def adopt_choices(here: str) -> dict:
    """The select of an adopt form: the owner's memories, this page's one chosen when it is one of
    them (else the first)."""
    choices = owner_memories()
    return {"targets": choices, "target": here if here in choices else (choices or [first()])[0]}


def created() -> list[str]:
    """The memories the owner created from the dashboard (views/memories.py)."""
    from .models import CreatedMemory

    return [n for n in CreatedMemory.objects.values_list("name", flat=True) if NAME.fullmatch(n)]


def url_of(name: str) -> str:
    base, _ = _base()
    return base if name == "default" else f"{base}/memories/{name}"


def client_key(name: str | None = None) -> tuple:
    return (url_of(name or first()), settings.MEMORY_SECRET, settings.MEMORY_TIMEOUT)


def memory(name: str | None = None) -> MemoryClient:
    """The client of the memory called `name` (the first configured one if None): one per
    (URL, secret, name), a new one if MEMORY_URL or MEMORY_SECRET changed; named for the person
    this request is signed in as."""
    key = client_key(name)
    with _lock:
        if key not in _clients:
            _clients[key] = MemoryClient(key[0], settings.MEMORY_SECRET, timeout=_timeout(),
                                         transport=DeadlineTransport(), name=CLIENT)
        client = _clients[key]
    return client.named(client_name()) if getattr(_local, "person", None) else client


# -- who is asking --------------------------------------------------------------------------

def speak_for(username: str | None) -> None:
    """The person this thread's calls are made for, until speak_for(None)."""
    _local.person = username


def client_name(client: str = CLIENT) -> str:
    """`client` and the person signed in after a space. A name from before the desk's own accounts
    form (any Unicode letter) is written with backslash escapes: the header takes printable ASCII,
    and a space would end the client's name."""
    person = getattr(_local, "person", None)
    if not person:
        return client
    return f"{client} {person.encode('unicode_escape').decode().replace(' ', '_')}"[:MAX_CLIENT]


def _timeout() -> httpx.Timeout:
    return httpx.Timeout(settings.MEMORY_TIMEOUT, connect=min(2.0, settings.MEMORY_TIMEOUT))


# -- one deadline per request ---------------------------------------------------------------

def start_deadline(seconds: float) -> None:
    _local.deadline = time.monotonic() + seconds
    _local.request = object()  # this request, for the status a failure in it found (mark_down)


def clear_deadline() -> None:
    _local.deadline = None
    _local.request = None


def _remaining() -> float | None:
    deadline = getattr(_local, "deadline", None)
    return None if deadline is None else deadline - time.monotonic()


def _bounded(timeout: float | None, error: type[Exception]) -> float | None:
    """The per-operation timeout cut to what is left of the request's deadline."""
    left = _remaining()
    if left is None:
        return timeout
    if left <= 0:
        raise error("the page's deadline for the memory service has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream):
        self.stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.stream.read(max_bytes, _bounded(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.stream.write(buffer, _bounded(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.stream.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
        return _DeadlineStream(self.stream.start_tls(ssl_context, server_hostname, _bounded(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str):
        return self.stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """Every socket read, write and connect waits at most until the request's deadline."""

    def __init__(self):
        self.backend = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        timeout = _bounded(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.backend.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        timeout = _bounded(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self.backend.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self.backend.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport over a connection pool whose sockets honour the deadline.

    httpx takes no network backend, so the pool is swapped (`_pool` is what handle_request
    uses; tests/test_dashboard_rough_edges.py fails if that ever changes)."""

    def __init__(self):
        super().__init__()
        self._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), network_backend=_DeadlineBackend())


# -- the status strip -----------------------------------------------------------------------

def status(name: str | None = None, fresh: bool = False) -> dict:
    """What the banner shows of one memory: URL, reachable, fact count, model, orphans. Never raises.

    A good answer is kept for STATUS_TTL; a failure only for the request that met it, so the
    first page after the memory is back says so (its own calls just worked) rather than "not
    reachable" for a few seconds more."""
    now = time.monotonic()
    key = client_key(name)
    cached = _status.get(key)
    if cached and not fresh and now - cached["at"] < STATUS_TTL and (cached["reachable"] or cached.get("request") is _this_request()):
        return cached
    client = memory(name)
    result = {"url": client.base_url, "at": now, "reachable": False, "name": name or first()}
    try:
        health = client.health()
        if health.engine:
            _engines[service()] = health.engine
        stats = client.stats()
        orphans = stats.get("orphans") or {}
        result.update(
            reachable=True, facts=health.facts, model=health.model, mode=health.mode,
            orphans=sum(len(v) for v in orphans.values() if isinstance(v, list)),
            open_conflicts=open_conflicts(client), **settings_status(client),
        )
        result["unreviewed"] = unreviewed(client) if result["review_mode"] else None
    except MemoryServiceError as e:
        result.update(error=str(e), problem=problem_words(e), request=_this_request())
    result["kind"] = service_kind()
    _status[key] = result
    return result


def _this_request():
    return getattr(_local, "request", None)


SLOW_MODEL_MS = 1000  # a model call waiting longer than this is what a timed-out write waits for


def model_waiting(name: str | None = None) -> int | None:
    """Seconds the memory's model has been on its oldest call now, when over SLOW_MODEL_MS: then
    the model is the slow part of a write that timed out. Asked with a short deadline of its own
    (the page's has passed); None when nothing waits there or the memory cannot say."""
    deadline, request = getattr(_local, "deadline", None), _this_request()
    start_deadline(2.0)
    try:
        waiting = memory(name).health().embedding or {}
        ms = int(waiting["waiting_ms"]) if waiting.get("calls") else 0
    except (MemoryServiceError, KeyError, TypeError, ValueError):
        return None
    finally:
        _local.deadline, _local.request = deadline, request
    return max(1, round(ms / 1000)) if ms > SLOW_MODEL_MS else None


def settings_status(client: MemoryClient) -> dict:
    """For the strip: the memory's own recall settings that differ from the shipped default
    (`settings`), whether its model's numbers were never measured (`unmeasured`: the
    calibration page measures them), and its review mode (`review_mode`: after or before; None
    from a memory that keeps no review, an older contract)."""
    try:
        settings = client.settings()
        return {"settings": [(k, settings["fusion"][k]) for k in settings.get("changed", [])],
                "unmeasured": bool(settings.get("model")) and settings["model"].get("measured") is None,
                "review_mode": review_mode(settings)}
    except (NotFound, KeyError, TypeError, AttributeError):  # a memory of contract v2 keeps no settings
        return {"settings": [], "unmeasured": False, "review_mode": None}


def review_mode(settings: dict) -> str | None:
    """GET /settings's review mode, or None when the memory has no review (before it, the
    contract had no `review` there, and GET /facts ignored `reviewed`)."""
    review = settings.get("review")
    return review.get("mode") if isinstance(review, dict) and review.get("mode") in ("after", "before") else None


def unreviewed(client: MemoryClient) -> int | None:
    """How many facts wait for the owner's review (the navigation's Inbox count), or None when
    the memory fails to say."""
    try:
        return client.list_facts(reviewed=False, limit=1).total
    except MemoryServiceError:
        return None


def open_conflicts(client: MemoryClient) -> int | None:
    """How many contradictions wait for the owner (the navigation's count), or None from a memory
    that keeps no queue (contract v3) or fails to say: a count is no reason to turn the strip red."""
    try:
        return client.conflicts(limit=1)[2]
    except MemoryServiceError:
        return None


def counted_conflicts(total: int, name: str | None = None) -> None:
    """The Contradictions page just counted the open pairs: the navigation says the same number
    on that page, not one up to STATUS_TTL old."""
    cached = _status.get(client_key(name))
    if cached and cached.get("reachable"):
        cached["open_conflicts"] = total


def counted_unreviewed(total: int, name: str | None = None) -> None:
    """The Inbox just counted the unreviewed facts: the navigation says the same number."""
    cached = _status.get(client_key(name))
    if cached and cached.get("reachable"):
        cached["unreviewed"] = total


def says_down(error: MemoryServiceError) -> bool:
    """Whether a failure says something of the memory's health: no answer, a broken one, the
    wrong secret, a 5xx. A 4xx refuses what was sent (the owner's typo), not the memory."""
    return not isinstance(error, StatusError) or isinstance(error, Unauthorized) or error.status >= 500


def mark_down(error: MemoryServiceError, name: str | None = None) -> None:
    """A call just failed: the strip says so without asking /health again in the same request
    (and only in it: status() asks again on the next)."""
    if not says_down(error):
        return
    _status[client_key(name)] = {"url": memory(name).base_url, "at": time.monotonic(), "reachable": False,
                                 "error": str(error), "problem": problem_words(error), "name": name or first(),
                                 "request": _this_request(), "kind": service_kind()}


def problem_words(error: MemoryServiceError) -> str:
    """The strip's words for a failure."""
    if isinstance(error, TimedOut):
        return "too slow to answer"
    if isinstance(error, Unreachable):
        return "not reachable"
    return "answering with errors"


def forget_status() -> None:
    _status.clear()
    _listed.clear()
    _engines.clear()
