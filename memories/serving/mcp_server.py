"""`python -m memories mcp`: the memory as Model Context Protocol tools, for an agent.

It talks to a memory only through memories/client/, so it serves the local service or a
Worker alike (MEMORY_URL, MEMORY_SECRET, and MEMORY_NAME or --memory for one of a Worker's
memories). It says at start which memory it serves, and will not start on one that is not
there. Errors come back as tool errors carrying the contract's message.

Over HTTP (`--http PORT`) every request needs `Authorization: Bearer MCP_TOKEN`: a loopback port
is open to every process and user on the machine, and the tools read and delete the owner's
memory with MEMORY_SECRET behind them. Stdio needs no token: only the host that started it talks
to it.
"""

from __future__ import annotations

import fcntl
import hmac
import os
import re
import secrets
import sys
from pathlib import Path
from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from ..client import Conflict, Fact, MemoryClient, MemoryServiceError, NotFound, Proposal, StatusError

INSTRUCTIONS = """A long-term memory of short facts about the owner and the work, each typed fact, skill
or log. Search it before answering anything the owner may have said before; save a fact when
the owner tells you something worth keeping (one short sentence, about "the owner" rather than
"I"). Saving a fact that is already there returns the existing one instead of a copy.
Facts change: when the owner tells you something that replaces what the memory holds (the standup
moved, a new address), save the new fact with supersedes=[the old fact's id]; search answers
from what is true now. A save lists the facts it may replace: decide, and if one is replaced,
call memory_supersede."""

Type = Literal["fact", "skill", "log"]
Mode = Literal["hybrid", "keyword", "vector"]


def fact_dict(f: Fact) -> dict:
    out = {"id": f.id, "text": f.text, "type": f.type, "source": f.source,
           "created_at": f.created_at.isoformat(), "updated_at": f.updated_at.isoformat()}
    if f.valid_until is not None:
        out["valid_until"] = f.valid_until.isoformat()
    if f.superseded_by is not None:
        out["superseded_by"] = f.superseded_by
    return out


def proposal_words(new_id: int, p: Proposal) -> str:
    """A proposal as an agent can act on it."""
    old, new = " ".join(p.differs.get("old", [])) or "-", " ".join(p.differs.get("new", [])) or "-"
    return (f"this may replace #{p.old.id} {p.old.text!r} (differs: {old} / {new}); if it does, call memory_supersede "
            f"with old={p.old.id} and new={new_id} (or save with supersedes=[{p.old.id}] next time)")


def memory_url(url: str, name: str | None) -> str:
    """A Worker serves many memories, one per name: /memories/NAME is the one meant."""
    return f"{url.rstrip('/')}/memories/{name}" if name else url


def which_memory(url: str) -> str:
    """The memory a URL names, in words: the agent and its owner see which one it writes into."""
    named = re.fullmatch(r".*/memories/([^/]+)/?", url)
    return f"the memory '{named[1]}' at {url}" if named else f"the root memory at {url}"


def client_name(ctx: Context | None) -> str:
    """The agent's MCP client, as the memory's history and recall log name it: "name version"
    from its `initialize`, in the header's 64 printable ASCII characters."""
    try:
        info = ctx.session.client_params.client_info
        name = f"{info.name} {info.version}".strip()
    except AttributeError:  # no session (a test calling the tool directly) or no client info
        return "mcp"
    name = "".join(c for c in name if " " <= c <= "~").strip()[:64]
    return name or "mcp"


def create_server(client: MemoryClient) -> MCPServer:
    server = MCPServer("memory-desk", instructions=INSTRUCTIONS)
    memory = which_memory(client.base_url)

    def call(fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except StatusError as e:
            raise ToolError(f"{e.code}: {e.message}") from None
        except MemoryServiceError as e:
            raise ToolError(str(e)) from None

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True))
    def memory_save(
        text: Annotated[str, Field(description="One short fact, e.g. 'The owner prefers metric units.'", min_length=1, max_length=8000)],
        type: Annotated[Type, Field(description="fact (about the world or the owner), skill (how to do something) or log (an event)")] = "fact",
        source: Annotated[str, Field(description="Where it came from, e.g. 'chat' or a file name", max_length=200)] = "agent",
        supersedes: Annotated[list[int] | None, Field(description="Ids of facts this one replaces (they stop being current), "
                                                      "e.g. [12] when 'The standup is at 9:00' replaces #12 'The standup is at 9:30'",
                                                      max_length=20)] = None,
        valid_until: Annotated[str | None, Field(description="When this fact stops being true, an ISO-8601 time with a zone, "
                                                  "e.g. '2026-12-04T18:00:00Z' for 'in Lisbon until Friday'")] = None,
        ctx: Context | None = None,
    ) -> dict:
        """Store a fact in long-term memory. If the memory already holds it (the same text, or a near
        rewording of the same type), nothing new is stored: the answer has created=false and the
        existing fact, with how it matched (exact, near, or replaced: an older fact said this and was
        replaced since) and the cosine score. When the fact replaces one the memory holds, pass
        its id in supersedes. A new fact's answer lists under `may_replace` the facts it may
        replace: if one of them is no longer true, call memory_supersede. Under `replaced`, those
        it replaced at once (when the owner trusts this client to)."""
        result = call(client.named(client_name(ctx)).add, text, type, source, supersedes=supersedes, valid_until=valid_until)
        out = {"id": result.fact.id, "created": result.created, "fact": fact_dict(result.fact)}
        if not result.created:
            why = f"fact {result.fact.id} already says this ({result.match} match)"
            if result.match == "replaced":
                why = (f"fact {result.fact.id} said this and was replaced by fact {result.fact.superseded_by}; "
                       "if it is true again, save it with supersedes=[" f"{result.fact.superseded_by}]")
            out["duplicate"] = {"match": result.match, "score": result.score, "why": why}
        if result.pending:
            out["pending"] = "stored, pending the owner's review: it is recalled once the owner approves it"
        waiting = [p for p in result.conflicts if not p.replaced]
        if waiting:
            out["may_replace"] = [{"id": p.old.id, "text": p.old.text, "score": round(p.score, 3), "differs": p.differs,
                                   "what_to_do": proposal_words(result.fact.id, p)} for p in waiting]
        done = [p for p in result.conflicts if p.replaced]
        if done:  # the owner's setting: a trusted client's one proposal replaces at once
            out["replaced"] = [{"id": p.old.id, "text": p.old.text, "differs": p.differs,
                                "why": f"it replaces #{p.old.id} at once (the owner's setting); the owner can undo it"}
                               for p in done]
        return out

    @server.tool(annotations=ToolAnnotations(idempotent_hint=False))
    def memory_supersede(
        old: Annotated[int, Field(description="The fact that is no longer true", ge=1)],
        new: Annotated[int, Field(description="The fact that replaces it", ge=1)],
        ctx: Context | None = None,
    ) -> dict:
        """Mark fact `old` as replaced by fact `new` (both already stored): search stops returning
        the old one, which stays in the memory's history. The owner can undo it."""
        fact = call(client.named(client_name(ctx)).edit, old, superseded_by=new, note=f"replaced by #{new}")
        return {"replaced": fact_dict(fact), "by": new}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def memory_search(
        query: Annotated[str, Field(description="What to recall, in plain words or a question", min_length=1, max_length=32000)],
        mode: Annotated[Mode, Field(description="hybrid (default: words and meaning), keyword (exact words) or vector (meaning only)")] = "hybrid",
        type: Annotated[Type | None, Field(description="Only facts of this type")] = None,
        limit: Annotated[int, Field(description="How many hits", ge=1, le=100)] = 10,
        as_of: Annotated[str | None, Field(description="Recall what was true then instead of now: an ISO-8601 time "
                                            "with a zone, e.g. '2026-06-01T00:00:00Z'")] = None,
        ctx: Context | None = None,
    ) -> dict:
        """Recall the facts that best answer a query, best first, from what is true now (facts that
        were replaced or expired are left out; as_of asks about the past). Each hit has its score,
        `via` (kw: matched words, vec: similar meaning, or both) and `stored`: when it was saved;
        `unreviewed` marks a fact the owner has not looked at yet; `may_be_outdated` one that a newer
        fact may replace (the owner has not decided yet: the newer one is ranked above it)."""
        result = call(client.named(client_name(ctx)).recall, query, type=type, limit=limit, mode=mode, as_of=as_of)
        out = {"mode": result.mode, "hits": [{"fact": fact_dict(h.fact), "stored": h.fact.created_at.date().isoformat(),
                                              "score": h.score, "via": h.via, **({} if h.reviewed else {"unreviewed": True}),
                                              **({"may_be_outdated": True} if h.may_be_outdated else {})}
                                             for h in result.results]}
        if result.warning:
            out["warning"] = result.warning
        return out

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def memory_get(id: Annotated[int, Field(description="The fact's id", ge=1)]) -> dict:
        """One fact by its id: its text, type, source and when it was stored and last changed."""
        return fact_dict(call(client.get, id))

    @server.tool(annotations=ToolAnnotations(idempotent_hint=True))
    def memory_update(
        id: Annotated[int, Field(description="The fact's id", ge=1)],
        text: Annotated[str | None, Field(description="The new text", min_length=1, max_length=8000)] = None,
        type: Annotated[Type | None, Field(description="The new type")] = None,
        source: Annotated[str | None, Field(description="The new source", max_length=200)] = None,
        ctx: Context | None = None,
    ) -> dict:
        """Change a fact's text, type or source; what is not given stays. Refused (naming the other
        fact) if the change would make it a duplicate of another fact."""
        if text is None and type is None and source is None:
            raise ToolError("nothing to change: give text, type or source")
        try:
            return fact_dict(client.named(client_name(ctx)).edit(id, text=text, type=type, source=source))
        except Conflict as e:
            other = e.existing
            raise ToolError(f"duplicate: {e.message}" + (f" (fact {other.id}: {other.text!r})" if other else "")) from None
        except StatusError as e:
            raise ToolError(f"{e.code}: {e.message}") from None
        except MemoryServiceError as e:
            raise ToolError(str(e)) from None

    @server.tool(annotations=ToolAnnotations(destructive_hint=True, idempotent_hint=True))
    def memory_delete(id: Annotated[int, Field(description="The fact's id", ge=1)], ctx: Context | None = None) -> dict:
        """Delete a fact. The memory's history keeps it, so the owner can undo the delete."""
        fact = call(client.named(client_name(ctx)).delete, id)
        return {"deleted": id, "fact": fact_dict(fact) if fact else None}

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def memory_stats() -> dict:
        """Which memory this is (its name and URL), how many facts it holds, by type, and whether its
        index and vectors agree."""
        stats = call(client.stats)
        health = call(client.health)
        return {"memory": memory, "facts": stats["facts"], "by_type": stats["by_type"], "consistent": stats["consistent"],
                "model": health.model, "mode": health.mode}

    return server


TOKEN_SHAPE = re.compile(r"[!-~]{16,}")  # what a header carries unchanged, and too long to guess


def env_file() -> Path:
    """local.env, where `make run` keeps this machine's secrets (scripts/run.py); DESK_HOME moves it."""
    return Path(os.environ.get("DESK_HOME") or Path(__file__).resolve().parents[2]) / "local.env"


def saved_value(text: str, name: str) -> str | None:
    """NAME's value in an env file's text (the last line that sets it, as the dashboard reads it)."""
    values = [line.split("=", 1)[1].strip() for line in text.splitlines() if line.startswith(f"{name}=")]
    return values[-1] if values else None


def http_token(path: Path) -> str:
    """MCP_TOKEN from the environment; else the one saved in local.env; else a new one, saved
    there (mode 600) and printed once, so the owner can give it to the agent host."""
    token = os.environ.get("MCP_TOKEN") or None
    if token is None:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "r+", encoding="utf-8") as f:
            fcntl.flock(f, fcntl.LOCK_EX)  # two servers starting at once agree on one token
            text = f.read()
            token = saved_value(text, "MCP_TOKEN")
            if token is None:
                token = secrets.token_urlsafe(32)
                f.write(("\n" if text and not text.endswith("\n") else "")
                        + ("" if text else "# Written by `python -m memories mcp --http`; keep it out of git.\n")
                        + f"MCP_TOKEN={token}\n")
                os.chmod(path, 0o600)
                print(f"mcp: a new token for the HTTP server, saved as MCP_TOKEN in {path}; the agent host sends it as\n"
                      f"  Authorization: Bearer {token}", file=sys.stderr)
    if not TOKEN_SHAPE.fullmatch(token):
        raise SystemExit("error: MCP_TOKEN must be at least 16 printable ASCII characters without spaces "
                         f"(from the environment or {path}; remove it there and one is generated)")
    return token


class BearerToken:
    """401 for any request without `Authorization: Bearer <token>`, compared in constant time."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        scheme, _, given = dict(scope["headers"]).get(b"authorization", b"").partition(b" ")
        if scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self.token):
            await self.app(scope, receive, send)
        elif scope["type"] == "http":  # RFC 6750: error="invalid_token" only when a token was sent
            challenge = 'Bearer realm="memory-desk"' + (', error="invalid_token"' if given.strip() else "")
            await JSONResponse({"error": {"code": "unauthorized", "message": "missing or wrong Authorization: Bearer token (MCP_TOKEN)"}},
                               status_code=401, headers={"WWW-Authenticate": challenge})(scope, receive, send)
        # anything else (a websocket) is closed unanswered


def serve_http(server: MCPServer, port: int, token: str) -> None:
    import uvicorn

    from ..cli import HTTP

    app = BearerToken(server.streamable_http_app(host="127.0.0.1"), token)
    print(f"mcp: streamable HTTP on http://127.0.0.1:{port}/mcp (Authorization: Bearer MCP_TOKEN)", file=sys.stderr)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level=server.settings.log_level.lower(), http=HTTP)


def check_memory(client: MemoryClient) -> None:
    """Say on stderr which memory the tools serve; a memory that is not there (a misspelt --memory,
    a Worker's root that was never created) stops the start, rather than every tool failing later.
    A service that does not answer yet does not: each tool says so until it does."""
    where = which_memory(client.base_url)
    try:
        client.health()
    except NotFound as e:
        raise SystemExit(f"error: there is no {where.removeprefix('the ')}: {e.message}") from None
    except MemoryServiceError as e:
        print(f"mcp: serving {where}, which does not answer yet ({e})", file=sys.stderr)
        return
    print(f"mcp: serving {where}", file=sys.stderr)


def main(memory: str | None, http_port: int | None) -> int:
    url = os.environ.get("MEMORY_URL", "http://127.0.0.1:8787")
    secret = os.environ.get("MEMORY_SECRET", "")
    if not secret:
        raise SystemExit("error: set MEMORY_SECRET to the memory's shared secret")
    client = MemoryClient(memory_url(url, memory or os.environ.get("MEMORY_NAME") or None), secret)
    check_memory(client)
    server = create_server(client)
    if http_port is not None:
        serve_http(server, http_port, http_token(env_file()))
    else:
        server.run()
    return 0
