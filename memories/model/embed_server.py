"""`python -m memories embed-server`: the local model over HTTP, for the Cloudflare Worker.

The Worker embeds with Workers AI in production; for local runs and tests it posts texts here
(`EMBEDDER=http`), so both memories compute the same vectors from the same model. Loopback
only, behind the same X-Memory-Secret as the memory service.
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from .embeddings import Embedder
from ..serving.requests import BadRequest, read_json
from ..serving.service import SecretMiddleware, error

MAX_TEXTS = 256
MAX_TEXT = 32_000


def create_embed_app(embedder: Embedder, secret: str) -> ASGIApp:
    if not secret:
        raise ValueError("the embed server needs a shared secret (MEMORY_SECRET)")

    async def health(request: Request) -> Response:
        return JSONResponse({"ok": True, "model": embedder.model_id, "dims": embedder.dims})

    async def embed(request: Request) -> Response:
        try:
            data = await read_json(request)
            texts = data.get("texts")
            if not isinstance(texts, list) or not all(isinstance(t, str) and len(t) <= MAX_TEXT for t in texts):
                raise BadRequest(f"texts must be a list of strings of at most {MAX_TEXT} characters")
            if len(texts) > MAX_TEXTS:
                raise BadRequest(f"at most {MAX_TEXTS} texts a request")
        except BadRequest as e:
            return error(e.status, e.code, str(e))
        except Exception as e:  # TooLarge and the like: the message is the client's to read
            return error(getattr(e, "status", 400), getattr(e, "code", "bad_request"), str(e))
        vectors = await run_in_threadpool(embedder.embed, texts) if texts else []
        # float32 values as JSON numbers: each one reads back as the same float32 bits.
        return JSONResponse({"model": embedder.model_id, "dims": embedder.dims, "vectors": [v.tolist() for v in vectors]})

    app = Starlette(routes=[Route("/health", health, methods=["GET"]), Route("/embed", embed, methods=["POST"])])
    return SecretMiddleware(app, secret)
