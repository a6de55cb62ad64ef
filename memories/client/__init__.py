"""The one way the dashboard reaches a memory: an httpx client of docs/memory-api.md.

Works against any implementation of the contract (the local service, a Durable Object). What it
answers is in answers.py, what goes wrong in errors.py (both importable from here, as before).
"""

from __future__ import annotations

import copy
import re
from typing import Any

import httpx

from .answers import (AddResult, Fact, Health, Hit, HistoryEntry, LoggedRecall, Page, Pair, Proposal,  # noqa: F401
                      Ranked, Recall, parse_time)
from .errors import (BadRequest, Conflict, ImportRunning, InvalidResponse, MemoryServiceError, NotFound,  # noqa: F401
                     ServiceUnavailable, StatusError, TimedOut, Unauthorized, Unreachable, error_for_status)

CONNECT_TIMEOUT = 2.0
READ_TIMEOUT = 10.0
SLOW_READ_TIMEOUT = 300.0  # /reindex re-embeds every fact
RETRIES = 2  # for requests that are safe to repeat (reads), and only when nothing was answered
SECRET_HEADER = "X-Memory-Secret"
CLIENT_HEADER = "X-Memory-Client"  # who asks, for the memory's history and recall log
MAX_FACT_ID = 2**53 - 1  # the contract's largest id (a JSON number exactly, and the Worker's JavaScript)
MAX_PAGE = 100  # the most a page (limit) or a batch of the contract holds


class MemoryClient:
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

    def named(self, name: str) -> MemoryClient:
        """This client (the same connections) under another X-Memory-Client name."""
        other = copy.copy(self)
        other.name = name
        return other

    # -- transport ---------------------------------------------------------------------

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

    # -- the contract ------------------------------------------------------------------

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

    def list_facts(self, *, type: str | None = None, source: str | None = None, q: str | None = None,
                   limit: int = 50, cursor: str | None = None, order: str | None = None, status: str | None = None,
                   as_of: str | None = None, reviewed: bool | None = None, client: str | None = None,
                   source_prefix: str | None = None) -> Page:
        """A page of facts in `order` (`created`, the memory's default, `updated`, `id`, each with
        `_asc`); a cursor pages only the order it came from. `status` (all, current, replaced,
        expired) and `as_of` (the memory as it was then)."""
        params = {k: v for k, v in {"type": type, "source": source, "q": q, "limit": limit, "cursor": cursor,
                                    "order": order, "status": status if status != "all" else None, "as_of": as_of,
                                    "client": client, "source_prefix": source_prefix}.items() if v}
        if reviewed is not None:
            params["reviewed"] = "true" if reviewed else "false"
        body = self._request("GET", "/facts", safe=True, params=params)
        return self._parse(lambda b: Page([Fact.from_json(f) for f in b["facts"]], b.get("next_cursor"), int(b["total"])), body)

    def facts(self, ids) -> dict[int, Fact]:
        """The facts of these ids that exist, by id (GET /facts?ids=, 100 at a time)."""
        ids = sorted({int(i) for i in ids})
        found: dict[int, Fact] = {}
        for i in range(0, len(ids), 100):
            part = ids[i : i + 100]
            body = self._request("GET", "/facts", safe=True, params={"ids": ",".join(map(str, part)), "limit": 100})
            found.update((f.id, f) for f in self._parse(lambda b: [Fact.from_json(f) for f in b["facts"]], body))
        return found

    def get(self, fact_id: int) -> Fact:
        return self._parse(Fact.from_json, self._request("GET", f"/facts/{int(fact_id)}", safe=True))

    def add(self, text: str, type: str = "fact", source: str = "", *, id: int | None = None,
            created_at: str | None = None, updated_at: str | None = None, force: bool = False,
            supersedes: list[int] | None = None, valid_until: str | None = None) -> AddResult:
        """Store a fact (or get the one it duplicates). id and the times restore a deleted fact;
        `force` stores it even over a near duplicate (the owner's "store anyway"); `supersedes`:
        the facts it replaces; `valid_until`: when it stops being current."""
        payload = {"text": text, "type": type, "source": source, **({"force": True} if force else {})}
        payload.update({k: v for k, v in {"id": id, "created_at": created_at, "updated_at": updated_at,
                                          "supersedes": supersedes or None, "valid_until": valid_until}.items() if v is not None})
        return self._parse(AddResult.from_json, self._request("POST", "/facts", json=payload))

    def add_many(self, facts: list[dict], restore: bool = False, *, dry_run: bool = False, note: str = "",
                 import_id: str | None = None, import_done: bool = False) -> list[AddResult]:
        """Store up to 100 facts in one transaction (`POST /facts/batch`): all of them or none.
        `restore`: each as given, with no duplicate check (a backup into an empty memory);
        `dry_run`: the answers as if stored, nothing kept; `note`: each history entry's;
        `import_id`: the import it belongs to (one import at a time: importing.py), and
        `import_done`: its last batch."""
        payload = {"facts": facts, **({"restore": True} if restore else {}), **({"dry_run": True} if dry_run else {}),
                   **({"note": note} if note else {}), **({"import_id": import_id} if import_id else {}),
                   **({"import_done": True} if import_done else {})}
        body = self._request("POST", "/facts/batch", json=payload, safe=dry_run,
                             timeout=httpx.Timeout(SLOW_READ_TIMEOUT, connect=CONNECT_TIMEOUT))

        return self._parse(lambda b: [AddResult.from_json(r) for r in b["results"]], body)

    def edit(self, fact_id: int, *, text: str | None = None, type: str | None = None, source: str | None = None,
             note: str = "", **validity) -> Fact:
        """`note`: why, as the memory's history keeps it. `validity`: valid_until (a time) and/or
        superseded_by (an id), None clearing either."""
        changes = {k: v for k, v in {"text": text, "type": type, "source": source}.items() if v is not None}
        changes.update({k: v for k, v in validity.items() if k in ("valid_until", "superseded_by")})
        return self._parse(Fact.from_json, self._request("PATCH", f"/facts/{int(fact_id)}", json=changes,
                                                         params={"note": note} if note else None))

    def delete(self, fact_id: int, note: str = "") -> Fact | None:
        body = self._request("DELETE", f"/facts/{int(fact_id)}", params={"note": note} if note else None)
        return self._parse(Fact.from_json, body["fact"]) if "fact" in body else None

    def recall(self, query: str, *, type: str | None = None, limit: int = 15, debug: bool = False,
               fusion: dict | None = None, mode: str = "hybrid", log: bool = True, as_of: str | None = None,
               include_stale: bool = False) -> Recall:
        """`log=False` keeps it out of the recall log (the owner's own look, not the agent's recall).
        From the facts current now, or `as_of` then; `include_stale`: from every fact."""
        payload: dict = {"query": query, "limit": limit, "debug": debug}
        if as_of:
            payload["as_of"] = as_of
        if include_stale:
            payload["include_stale"] = True
        if not log:
            payload["log"] = False
        if mode != "hybrid":  # hybrid is the default: a memory of the base contract takes this request too
            payload["mode"] = mode
        if type:
            payload["type"] = type
        if fusion:
            payload["fusion"] = fusion
        body = self._request("POST", "/recall", safe=True, json=payload)

        def parse(b):
            return Recall(
                results=[Hit(Fact.from_json(h["fact"]), float(h["score"]), h["via"], h.get("kw_rank"), h.get("vec_rank"),
                             h.get("bm25"), h.get("cosine"), h.get("parts"), h.get("current", True), h.get("reviewed", True),
                             h.get("edited_since", False), h.get("may_be_outdated", False))
                         for h in b["results"]],
                mode=b.get("mode", "hybrid"),
                warning=b.get("warning"),
                kw=[Ranked(Fact.from_json(h["fact"]), h["rank"], h["bm25"], h.get("highlighted")) for h in b.get("kw", [])],
                vec=[Ranked(Fact.from_json(h["fact"]), h["rank"], h["cosine"]) for h in b.get("vec", [])],
                match=b.get("match"),
                fusion=b.get("fusion") or {},
                information=b.get("information"),
                terms=b.get("terms") or [],
                expansions=b.get("expansions") or [],
                rerank=b.get("rerank"),
            )

        return self._parse(parse, body)

    def explain(self, query: str, fact_id: int, *, type: str | None = None, fusion: dict | None = None,
                as_of: str | None = None, include_stale: bool = False) -> dict:
        payload: dict = {"query": query, "id": int(fact_id)}
        if as_of:
            payload["as_of"] = as_of
        if include_stale:
            payload["include_stale"] = True
        if type:
            payload["type"] = type
        if fusion:
            payload["fusion"] = fusion
        return self._request("POST", "/explain", safe=True, json=payload)

    def review(self, ids) -> tuple[list[int], int | None]:
        """The owner reviewed these facts (up to 200): (the ids reviewed now, the history entry or None)."""
        body = self._request("POST", "/facts/review", json={"ids": [int(i) for i in ids]})
        return self._parse(lambda b: ([int(i) for i in b["reviewed"]], b.get("entry")), body)

    def conflicts(self, *, limit: int = 50, cursor: str | None = None, every: bool = False,
                  done: bool = False) -> tuple[list[Proposal], str | None, int]:
        """Open proposals, newest first: (pairs, next cursor, how many are open). `every`: every pair
        the memory keeps, resolved or no longer asked about too (what a backup holds); `done`: those
        the memory replaced at once (its proposals setting)."""
        params = {"limit": limit, **({"cursor": cursor} if cursor else {}), **({"all": "true"} if every else {}),
                  **({"done": "true"} if done else {})}
        body = self._request("GET", "/conflicts", safe=True, params=params)
        return self._parse(lambda b: ([Proposal.from_json(c) for c in b["conflicts"]], b.get("next_cursor"), int(b["total"])), body)

    def backup_conflicts(self) -> list[dict]:
        """Every pair the memory keeps, oldest first, as a backup's lines hold them (memories/backup.py:
        fact ids, not facts); [] from a memory of contract v3, which has no GET /conflicts."""
        out, cursor = [], None
        while True:
            try:
                pairs, cursor, _ = self.conflicts(limit=MAX_PAGE, cursor=cursor, every=True)
            except NotFound:
                return []
            out += [{"id": p.id, "old": p.old.id, "new": p.new.id, "score": p.score, "differs": p.differs,
                     "resolution": p.resolution} for p in pairs]
            if not cursor:
                return sorted(out, key=lambda p: p["id"])

    def restore_conflicts(self, pairs: list[dict]) -> tuple[int, int]:
        """A backup's pairs put back after its facts, MAX_PAGE a request: (restored, skipped)."""
        restored = skipped = 0
        for start in range(0, len(pairs), MAX_PAGE):
            body = self._request("POST", "/conflicts/restore", json={"conflicts": pairs[start : start + MAX_PAGE]})
            done = self._parse(lambda b: (int(b["restored"]), int(b["skipped"])), body)
            restored, skipped = restored + done[0], skipped + done[1]
        return restored, skipped

    def resolve(self, old: int, new: int, resolution: str) -> tuple[Fact, Fact, int]:
        """replace (new replaces old), keep_old (old replaces new) or keep_both: (old, new, the history entry)."""
        body = self._request("POST", "/conflicts/resolve", json={"old": int(old), "new": int(new), "resolution": resolution})
        return self._parse(lambda b: (Fact.from_json(b["old"]), Fact.from_json(b["new"]), int(b["entry"])), body)

    def duplicates(self, threshold: float = 0.97, *, type: str | None = None, limit: int = 1000) -> tuple[list[Pair], int]:
        params = {"threshold": threshold, "limit": limit, **({"type": type} if type else {})}
        body = self._request("GET", "/duplicates", safe=True, params=params)
        return self._parse(lambda b: ([Pair(Fact.from_json(p["a"]), Fact.from_json(p["b"]), float(p["score"]), p.get("distinct"))
                                       for p in b["pairs"]], int(b.get("total", len(b["pairs"])))), body)

    def nearest(self, type: str | None = None) -> tuple[list[float], float | None]:
        """Each listed fact's cosine with its nearest same-type fact, and the review floor below
        which facts are not listed (None from a memory that lists every fact)."""
        body = self._request("GET", "/duplicates/nearest", safe=True, params={"type": type} if type else None)
        return self._parse(lambda b: ([float(n["score"]) for n in b["nearest"]],
                                      float(b["floor"]) if b.get("floor") is not None else None), body)

    def neighbours(self, fact_id: int, limit: int = 10) -> list[tuple[Fact, float]]:
        body = self._request("GET", f"/facts/{int(fact_id)}/neighbours", safe=True, params={"limit": limit})
        return self._parse(lambda b: [(Fact.from_json(n["fact"]), float(n["cosine"])) for n in b["neighbours"]], body)

    def reindex(self) -> dict:
        return self._request("POST", "/reindex", timeout=httpx.Timeout(SLOW_READ_TIMEOUT, connect=CONNECT_TIMEOUT))

    # -- what was done (contract v3) ---------------------------------------------------

    def history(self, *, limit: int = 50, cursor: str | None = None, op: str | None = None, client: str | None = None,
                fact_id: int | None = None) -> tuple[list[HistoryEntry], str | None]:
        params = {k: v for k, v in {"limit": limit, "cursor": cursor, "op": op, "client": client,
                                    "fact_id": fact_id}.items() if v is not None}
        body = self._request("GET", "/history", safe=True, params=params)
        return self._parse(lambda b: ([HistoryEntry.from_json(e) for e in b["entries"]], b.get("next_cursor")), body)

    def history_entry(self, entry_id: int) -> HistoryEntry:
        return self._parse(HistoryEntry.from_json, self._request("GET", f"/history/{int(entry_id)}", safe=True))

    def undo(self, entry_id: int, force: bool = False) -> tuple[HistoryEntry, Fact | None, bool]:
        """Undo one history entry: (the entry recording the undo, the fact, whether anything changed).
        A Conflict with code `changed_since` when it would overwrite a later write (its body's
        `entry` and `current` say which and what); `force` undoes it anyway."""
        body = self._request("POST", f"/history/{int(entry_id)}/undo", **({"json": {"force": True}} if force else {}))
        return self._parse(lambda b: (HistoryEntry.from_json(b["entry"]), Fact.from_json(b["fact"]) if b.get("fact") else None,
                                      bool(b["restored"])), body)

    def forget(self, fact_id: int) -> int:
        """Every history entry of a fact, gone (after deleting it: a secret stored by mistake)."""
        return self._parse(lambda b: int(b["deleted"]), self._request("DELETE", "/history", params={"fact_id": int(fact_id)}))

    def recalls(self, *, limit: int = 50, cursor: str | None = None, client: str | None = None, q: str | None = None,
                empty: bool = False, fact_id: int | None = None) -> tuple[list[LoggedRecall], str | None, int]:
        params = {k: v for k, v in {"limit": limit, "cursor": cursor, "client": client, "q": q or None,
                                    "empty": "true" if empty else None, "fact_id": fact_id}.items() if v is not None}
        body = self._request("GET", "/recalls", safe=True, params=params)
        return self._parse(lambda b: ([LoggedRecall.from_json(r) for r in b["recalls"]], b.get("next_cursor"),
                                      int(b["total"])), body)

    def logged_recall(self, entry_id: int) -> LoggedRecall:
        return self._parse(LoggedRecall.from_json, self._request("GET", f"/recalls/{int(entry_id)}", safe=True))

    def clear_recalls(self) -> int:
        return self._parse(lambda b: int(b["deleted"]), self._request("DELETE", "/recalls"))

    def settings(self) -> dict:
        """The memory's own recall settings: {"fusion", "shipped", "changed"}."""
        return self._request("GET", "/settings", safe=True)

    def backup_settings(self) -> dict | None:
        """The memory's own settings as a backup keeps them (what PUT /settings takes), or None
        when it has none of its own: the first line of a backup (memories/backup.py)."""
        s = self.settings()
        own = s["thresholds"]["duplicate"]["from"] == "memory"
        review = s.get("review") if s.get("review") not in (None, {"mode": "after", "trusted": []}) else None
        replace = s.get("proposals") == "replace"
        if not s["changed"] and not own and not review and not replace:
            return None
        return ({"fusion": s["fusion"]} | ({"threshold": s["thresholds"]["duplicate"]["value"]} if own else {})
                | ({"review": review} if review else {}) | ({"proposals": "replace"} if replace else {}))

    def put_settings(self, fusion: dict | None = None, *, threshold: float | None = None, review: dict | None = None,
                     proposals: str | None = None) -> dict:
        """Keep recall settings (`fusion`), a duplicate threshold, the review setting (`{"mode",
        "trusted"}`) and/or the proposals setting ("propose", "replace") as the memory's own."""
        body = {**({"fusion": fusion} if fusion is not None else {}), **({"threshold": threshold} if threshold is not None else {}),
                **({"review": review} if review is not None else {}), **({"proposals": proposals} if proposals else {})}
        return self._request("PUT", "/settings", json=body)
