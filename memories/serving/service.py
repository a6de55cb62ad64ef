"""The memory service: the HTTP contract of docs/memory-api.md over a `Memory`.

A small Starlette app; the engine does the work in a thread so the event loop stays free.
"""

from __future__ import annotations

import hmac
import logging
import time
from contextvars import ContextVar
from collections.abc import Awaitable, Callable

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .one_import import ImportRunning, OneImport, idle_seconds, import_fields
from .openapi import openapi_document
from ..facts import MAX_FACT_ID, MODES, ChangedSince, Conflict, InvalidInput, StoreError, TooLarge, valid_unicode
from .requests import (MAX_LIMIT, added, bool_param, choice_param, client_of, entry_id, fact_id,
                       float_param, fusion_param, id_list, int_param, note_of, optional_str, query_bool, read_json)
from ..review.history import MAX_NOTE
from .metrics import CONTENT_TYPE as METRICS_TYPE
from .metrics import Metrics, held
from ..writes.replace_at_once import clean_mode
from ..review.reviewing import clean_review
from ..store import Memory

log = logging.getLogger(__name__)

MAX_BATCH = 100  # facts a POST /facts/batch takes: what a Durable Object binds in one statement
PUBLIC_PATHS = {"/health", "/openapi.json"}  # neither carries fact text


def error(status: int, code: str, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message, **extra}}, status_code=status)


def has_secret(scope: Scope, secret: bytes) -> bool:
    return hmac.compare_digest(dict(scope["headers"]).get(b"x-memory-secret", b""), secret)


# The engine's time within the request being served: Server-Timing's "engine".
_engine_time: ContextVar[list[float] | None] = ContextVar("engine_time", default=None)


async def run(fn: Callable, *args):
    """`fn(*args)` on a worker thread, so the event loop stays free, its time counted in the
    request's Server-Timing."""
    spent = _engine_time.get()

    def timed():
        started = time.perf_counter()
        try:
            return fn(*args)
        finally:
            if spent is not None:
                spent.append(time.perf_counter() - started)

    return await run_in_threadpool(timed)


class TimingMiddleware:
    """`Server-Timing: engine;dur=…, app;dur=…` on every response (ms): the memory's own work, and
    everything from the request's head to the response's (parsing, checks, JSON). What a client's
    round trip takes beyond `app` is the transport: benchmarks/memory_bench.py reads all three off
    the same requests."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started, spent = time.perf_counter(), []
        token = _engine_time.set(spent)

        async def timed_send(message: dict) -> None:
            if message["type"] == "http.response.start":
                app_ms = (time.perf_counter() - started) * 1000
                value = f"engine;dur={sum(spent) * 1000:.3f}, app;dur={app_ms:.3f}".encode()
                message = {**message, "headers": [*message.get("headers", []), (b"server-timing", value)]}
            await send(message)

        try:
            await self.app(scope, receive, timed_send)
        finally:
            _engine_time.reset(token)


class SecretMiddleware:
    """401 for any request without the shared secret, compared in constant time."""

    def __init__(self, app: ASGIApp, secret: str):
        self.app = app
        self.secret = secret.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] not in PUBLIC_PATHS:
            if not has_secret(scope, self.secret):
                await error(401, "unauthorized", "missing or wrong X-Memory-Secret header")(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(memory: Memory, secret: str) -> ASGIApp:
    if not secret:
        raise ValueError("the memory service needs a shared secret (MEMORY_SECRET)")

    # One Route per path, dispatching on the method, so a 405's Allow header lists them all.
    handlers: dict[str, dict[str, Callable[[Request], Awaitable[Response]]]] = {}

    def route(path: str, methods: list[str]):
        def register(handler: Callable[[Request], Awaitable[Response]]):
            for method in methods:
                handlers.setdefault(path, {})[method] = handler
            return handler

        return register

    def dispatch(path: str) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            handler = handlers[path][request.method if request.method != "HEAD" else "GET"]
            started, status = time.perf_counter(), 500  # (an exception not caught here is the 500 server_error answers)
            try:
                response = await answer(handler, request)
                status = response.status_code
                return response
            finally:
                if path not in PUBLIC_PATHS:  # (as the Worker, which answers them without the memory)
                    metrics.observe(path.replace(":int", ""), request.method, status, time.perf_counter() - started)

        return endpoint

    async def answer(handler, request: Request) -> Response:
        try:
            return await handler(request)
        except Conflict as e:
            return error(e.status, e.code, str(e), existing=e.existing.to_dict(), match=e.match, score=e.score)
        except ChangedSince as e:
            return error(e.status, e.code, str(e), entry=e.entry, current=e.current)
        except ImportRunning as e:
            return error(e.status, e.code, str(e), running=e.running)
        except StoreError as e:
            return error(e.status, e.code, str(e))

    metrics = Metrics()
    imports = OneImport(idle_seconds())  # the import running into this memory (one_import.py)

    @route("/metrics", ["GET"])
    async def metrics_text(request: Request) -> Response:
        return Response(metrics.text(await run(held, memory)), media_type=METRICS_TYPE)

    @route("/health", ["GET"])
    async def health(request: Request) -> Response:
        if not has_secret(request.scope, secret.encode()):
            return JSONResponse({"ok": True})  # up; what the memory holds is for those with the secret
        embedder = memory.embedder
        facts = await run(memory.count)
        full = memory.state.full  # past its budget: no vectors in memory (state.py)
        return JSONResponse({
            "ok": True,
            "facts": facts,
            "model": embedder.model_id if embedder else None,
            "dims": embedder.dims if embedder else 0,
            "mode": "hybrid" if embedder and not full else "keyword-only",
            "memory_full": full is not None,
            **({"warning": full} if full else {}),
            "engine": "python",
            # The model's calls in flight (embeddings.Watched): a write the client gave up on may be waiting there.
            "embedding": embedder.waiting() if hasattr(embedder, "waiting") else {"calls": 0, "waiting_ms": 0},
        })

    @route("/openapi.json", ["GET"])
    async def openapi(request: Request) -> Response:
        return JSONResponse(openapi_document())

    @route("/facts", ["GET"])
    async def list_facts(request: Request) -> Response:
        p = request.query_params
        facts, cursor, total = await run(
            memory.list,
            p.get("type") or None,
            p.get("source") or None,
            p.get("q") or None,
            int_param(p.get("limit"), "limit", 50, 1, MAX_LIMIT),
            p.get("cursor") or None,
            id_list(p.get("ids")),
            p.get("order") or None,
            p.get("status") or None,
            p.get("as_of") or None,
            query_bool(p["reviewed"], "reviewed") if p.get("reviewed") else None,
            p.get("client"),
            p.get("source_prefix") or None,
        )
        return JSONResponse({"facts": [f.to_dict() for f in facts], "next_cursor": cursor, "total": total})

    @route("/facts", ["POST"])
    async def add_fact(request: Request) -> Response:
        data = await read_json(request)
        restore = {k: data[k] for k in ("id", "created_at", "updated_at", "force", "valid_until", "supersedes")
                   if data.get(k) is not None}
        client = client_of(request)
        result = await run(lambda: memory.add(data.get("text"), data.get("type", "fact"), data.get("source", ""), client,
                                              **restore))
        return JSONResponse(added(result), status_code=201 if result.created else 200)

    @route("/facts/batch", ["POST"])
    async def add_facts(request: Request) -> Response:
        data = await read_json(request)
        import_id, import_done = import_fields(data)
        client = client_of(request)
        with imports.batch(import_id, import_done, client, data.get("dry_run") is True):
            return await store_batch(data, client)

    async def store_batch(data: dict, client: str) -> Response:
        items = data.get("facts")
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise InvalidInput("facts must be a list of objects")
        if len(items) > MAX_BATCH:
            raise TooLarge(f"a batch holds at most {MAX_BATCH} facts")
        restore = bool_param(data.get("restore"), "restore", False)
        dry_run = bool_param(data.get("dry_run"), "dry_run", False)
        note = data.get("note", "")
        if not isinstance(note, str) or len(note) > MAX_NOTE:
            raise InvalidInput(f"note must be text of at most {MAX_NOTE} characters")
        valid_unicode(note, "note")
        results = await run(memory.add_many, items, client, restore, dry_run, note) if items else []
        return JSONResponse({"results": [added(r) for r in results]})

    @route("/facts/review", ["POST"])
    async def review(request: Request) -> Response:
        data = await read_json(request)
        client = client_of(request)
        reviewed, entry = await run(memory.mark_reviewed, data.get("ids"), client)
        return JSONResponse({"reviewed": reviewed, "entry": entry})

    @route("/facts/{id:int}", ["GET"])
    async def get_fact(request: Request) -> Response:
        return JSONResponse((await run(memory.get, fact_id(request))).to_dict())

    @route("/facts/{id:int}", ["PATCH"])
    async def edit_fact(request: Request) -> Response:
        data = await read_json(request)
        changes = {k: data[k] for k in ("text", "type", "source", "valid_until", "superseded_by") if k in data}
        client, note = client_of(request), note_of(request)
        fact = await run(lambda: memory.edit(fact_id(request), **changes, client=client, note=note))
        return JSONResponse(fact.to_dict())

    @route("/facts/{id:int}", ["DELETE"])
    async def delete_fact(request: Request) -> Response:
        fact = await run(memory.delete, fact_id(request), client_of(request), note_of(request))
        return JSONResponse({"deleted": fact.id, "fact": fact.to_dict()})

    @route("/facts/{id:int}/neighbours", ["GET"])
    async def neighbours(request: Request) -> Response:
        limit = int_param(request.query_params.get("limit"), "limit", 10, 1, MAX_LIMIT)
        near = await run(memory.neighbours, fact_id(request), limit)
        return JSONResponse({"neighbours": [{"fact": f.to_dict(), "cosine": s} for f, s in near]})

    @route("/recall", ["POST"])
    async def recall(request: Request) -> Response:
        data = await read_json(request)
        debug = data.get("debug", False)
        if not isinstance(debug, bool):
            raise InvalidInput("debug must be true or false")
        result = await run(
            memory.recall,
            data.get("query"),
            optional_str(data, "type"),
            int_param(data.get("limit"), "limit", 15, 1, MAX_LIMIT),
            debug,
            fusion_param(data, memory.fusion),
            choice_param(data.get("mode"), "mode", "hybrid", MODES),
            bool_param(data.get("log"), "log", True),
            client_of(request),
            data.get("as_of"),
            bool_param(data.get("include_stale"), "include_stale", False),
        )
        return JSONResponse(result)

    @route("/explain", ["POST"])
    async def explain(request: Request) -> Response:
        data = await read_json(request)
        fid = int_param(data.get("id"), "id", 0, 1, MAX_FACT_ID)
        result = await run(memory.explain, data.get("query"), fid, optional_str(data, "type"), fusion_param(data, memory.fusion),
                           data.get("as_of"), bool_param(data.get("include_stale"), "include_stale", False))
        return JSONResponse(result)

    @route("/conflicts", ["GET"])
    async def conflicts(request: Request) -> Response:
        p = request.query_params
        every, done = query_bool(p.get("all"), "all"), query_bool(p.get("done"), "done")
        if every and done:
            raise InvalidInput("all and done are two lists: ask for one")
        found, cursor, total = await run(memory.conflicts, int_param(p.get("limit"), "limit", 50, 1, MAX_LIMIT),
                                         p.get("cursor") or None, every, done)
        return JSONResponse({"conflicts": found, "next_cursor": cursor, "total": total})

    @route("/conflicts/restore", ["POST"])
    async def restore_conflicts(request: Request) -> Response:
        data = await read_json(request)
        pairs = data.get("conflicts")
        if isinstance(pairs, list) and len(pairs) > MAX_BATCH:
            raise TooLarge(f"a restore holds at most {MAX_BATCH} pairs")
        restored, skipped = await run(memory.restore_conflicts, pairs, client_of(request))
        return JSONResponse({"restored": restored, "skipped": skipped})

    @route("/conflicts/resolve", ["POST"])
    async def resolve(request: Request) -> Response:
        data = await read_json(request)
        client = client_of(request)
        return JSONResponse(await run(memory.resolve, data.get("old"), data.get("new"), data.get("resolution"), client))

    @route("/duplicates", ["GET"])
    async def duplicates(request: Request) -> Response:
        p = request.query_params
        threshold = float_param(p.get("threshold"), "threshold", memory.threshold, 0.5, 1.0)
        limit = int_param(p.get("limit"), "limit", 1000, 1, 10_000)
        pairs, total = await run(memory.duplicates, threshold, p.get("type") or None, limit)
        return JSONResponse({"pairs": pairs, "total": total, "threshold": threshold})

    @route("/duplicates/nearest", ["GET"])
    async def nearest(request: Request) -> Response:
        found = await run(memory.nearest, request.query_params.get("type") or None)
        return JSONResponse({"nearest": [{"id": i, "score": s} for i, s in found], "floor": memory.floor})

    @route("/stats", ["GET"])
    async def stats(request: Request) -> Response:
        return JSONResponse(await run(memory.stats))

    @route("/reindex", ["POST"])
    async def reindex(request: Request) -> Response:
        return JSONResponse(await run(memory.reindex))

    @route("/history", ["GET"])
    async def history(request: Request) -> Response:
        p = request.query_params
        fid = p.get("fact_id")
        entries, cursor = await run(
            memory.history_entries, int_param(p.get("limit"), "limit", 50, 1, MAX_LIMIT), p.get("cursor") or None,
            p.get("op") or None, p.get("client"), int_param(fid, "fact_id", 0, 1, MAX_FACT_ID) if fid is not None else None)
        return JSONResponse({"entries": [e.to_dict() for e in entries], "next_cursor": cursor})

    @route("/history", ["DELETE"])
    async def forget(request: Request) -> Response:
        if request.query_params.get("fact_id") is None:
            raise InvalidInput("fact_id is required: the fact whose entries to forget")
        fid = int_param(request.query_params.get("fact_id"), "fact_id", 0, 1, MAX_FACT_ID)
        return JSONResponse({"deleted": await run(memory.forget, fid)})

    @route("/history/{id:int}", ["GET"])
    async def history_entry(request: Request) -> Response:
        return JSONResponse((await run(memory.history_entry, entry_id(request))).to_dict())

    @route("/history/{id:int}/undo", ["POST"])
    async def undo(request: Request) -> Response:
        client = client_of(request)
        data = await read_json(request) if await request.body() else {}
        force = data.get("force", False)
        if not isinstance(force, bool):
            raise InvalidInput("force must be true or false")
        entry, fact, restored = await run(memory.undo, entry_id(request), client, force)
        return JSONResponse({"entry": entry.to_dict(), "fact": fact.to_dict() if fact else None, "restored": restored})

    @route("/recalls", ["GET"])
    async def recalls(request: Request) -> Response:
        p = request.query_params
        fid = p.get("fact_id")
        found, cursor, total = await run(
            memory.recalls, int_param(p.get("limit"), "limit", 50, 1, MAX_LIMIT), p.get("cursor") or None,
            p.get("client"), p.get("q") or None, query_bool(p.get("empty"), "empty"),
            int_param(fid, "fact_id", 0, 1, MAX_FACT_ID) if fid is not None else None)
        return JSONResponse({"recalls": [r.to_dict() for r in found], "next_cursor": cursor, "total": total})

    @route("/recalls", ["DELETE"])
    async def clear_recalls(request: Request) -> Response:
        return JSONResponse({"deleted": await run(memory.clear_recalls)})

    @route("/recalls/{id:int}", ["GET"])
    async def recall_entry(request: Request) -> Response:
        return JSONResponse((await run(memory.recall_entry, entry_id(request))).to_dict())

    @route("/settings", ["GET"])
    async def settings(request: Request) -> Response:
        return JSONResponse(await run(memory.settings))

    @route("/settings", ["PUT"])
    async def put_settings(request: Request) -> Response:
        data = await read_json(request)
        client = client_of(request)
        if not {"fusion", "threshold", "review", "proposals"} & set(data):
            raise InvalidInput("fusion, threshold, review or proposals is required: the recall settings, as recall's fusion "
                               "takes them, the memory's own duplicate threshold, its review setting, and/or its proposals setting")
        unknown = set(data) - {"fusion", "threshold", "review", "proposals"}
        if unknown:
            raise InvalidInput(f"unknown settings: {', '.join(sorted(unknown)).encode('utf-8', 'backslashreplace').decode()}")
        # a preset, or single settings over the shipped; without fusion, the memory's as they are
        fusion = fusion_param(data, memory.state.shipped) if "fusion" in data else None
        threshold = False  # as it is
        if "threshold" in data:  # null: the process's again (the model's or the environment's)
            floor = memory.state.floor
            if data["threshold"] == "":
                raise InvalidInput("threshold must be a number")
            threshold = None if data["threshold"] is None else float_param(data["threshold"], "threshold", 0, floor, 1.0)
        review = clean_review(data["review"], memory.state.review) if "review" in data else None
        proposals = clean_mode(data["proposals"]) if "proposals" in data else None
        await run(memory.set_settings, fusion, client, threshold, review, proposals)
        return JSONResponse(await run(memory.settings))

    async def not_found(request: Request, exc: HTTPException) -> Response:
        if exc.status_code == 405:
            response = error(405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}")
            response.headers.update(exc.headers or {})  # Allow: the methods that are (RFC 9110)
            return response
        return error(exc.status_code, "not_found", f"no route {request.method} {request.url.path}")

    async def server_error(request: Request, exc: Exception) -> Response:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error(500, "internal", "the memory service failed unexpectedly; its log has the details")

    routes = [Route(path, dispatch(path), methods=list(methods)) for path, methods in handlers.items()]
    app = Starlette(routes=routes, exception_handlers={HTTPException: not_found, Exception: server_error})
    app.state.memory = memory
    return TimingMiddleware(SecretMiddleware(app, secret))
