"""An in-process stand-in for the memory service, for view tests on httpx.MockTransport.

It answers the contract's shapes from a dict of facts; integration tests use the real service.
"""

from __future__ import annotations

import json

import httpx

STAMP = "2026-11-30T06:00:00.000000Z"


def fact(fid: int, text: str, type: str = "fact", source: str = "chat") -> dict:
    return {"id": fid, "text": text, "type": type, "source": source, "created_at": STAMP, "updated_at": STAMP}


class FakeMemory:
    def __init__(self, *facts: dict):
        self.facts = {f["id"]: f for f in facts}
        self.requests: list[httpx.Request] = []
        self.history: list[dict] = []  # newest last, as the memory keeps it (contract v3)

    def record(self, request: httpx.Request, op: str, fid: int, before: dict | None, after: dict | None) -> dict:
        entry = {"id": len(self.history) + 1, "at": STAMP, "client": request.headers.get("x-memory-client", ""), "op": op,
                 "fact_id": fid, "before": before, "after": after, "note": request.url.params.get("note", ""),
                 "undone_by": None}
        self.history.append(entry)
        return entry

    def v3(self, request: httpx.Request) -> httpx.Response | None:
        """The history (deletes and their undo) and an empty recall log."""
        path, method, params = request.url.path, request.method, request.url.params
        if path == "/history" and method == "GET":
            found = [e for e in reversed(self.history)
                     if all(str(e[k]) == params[k] for k in ("fact_id", "op", "client") if k in params)]
            return httpx.Response(200, json={"entries": found[: int(params.get("limit", 50))], "next_cursor": None})
        if path.startswith("/history/") and path.endswith("/undo") and method == "POST":
            n = int(path.split("/")[2])
            if not 1 <= n <= len(self.history):
                return httpx.Response(404, json={"error": {"code": "not_found", "message": f"no history entry with id {n}"}})
            entry = self.history[n - 1]
            fact = entry["before"]
            self.facts[fact["id"]] = fact
            done = self.record(request, "restore", fact["id"], None, fact)
            entry["undone_by"] = done["id"]
            return httpx.Response(200, json={"entry": done, "fact": fact, "restored": True})
        if path == "/recalls" and method == "GET":
            return httpx.Response(200, json={"recalls": [], "next_cursor": None, "total": 0})
        if method == "PUT" and (path == "/" or path.startswith("/memories/")):  # create a memory: this one, there already
            return httpx.Response(200, json={"name": path.rsplit("/", 1)[-1] or "default", "created": False})
        return None

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path, method = request.url.path, request.method
        answer = self.v3(request)
        if answer is not None:
            return answer
        if path == "/health":
            return httpx.Response(200, json={"ok": True, "facts": len(self.facts), "model": "fake", "dims": 3, "mode": "hybrid"})
        if path == "/stats":
            n = len(self.facts)
            return httpx.Response(200, json={"facts": n, "fts": n, "vectors": n, "orphans": {}, "consistent": True})
        if path == "/facts" and method == "GET":
            facts = sorted(self.facts.values(), key=lambda f: -f["id"])
            q = request.url.params.get("q")
            if q:
                facts = [f for f in facts if q.lower() in f["text"].lower()]
            ids = request.url.params.get("ids")
            if ids:
                facts = [f for f in facts if str(f["id"]) in ids.split(",")]
            return httpx.Response(200, json={"facts": facts, "next_cursor": None, "total": len(facts)})
        if path.startswith("/facts/"):
            fid = int(path.split("/")[2])
            if fid not in self.facts:
                return httpx.Response(404, json={"error": {"code": "not_found", "message": f"no fact with id {fid}"}})
            if path.endswith("/neighbours"):
                return httpx.Response(200, json={"neighbours": []})
            if method == "DELETE":
                self.record(request, "delete", fid, self.facts[fid], None)
                return httpx.Response(200, json={"deleted": fid, "fact": self.facts.pop(fid)})
            if method == "PATCH":
                self.facts[fid].update(json.loads(request.content))
            return httpx.Response(200, json=self.facts[fid])
        if path == "/duplicates/nearest":
            return httpx.Response(200, json={"nearest": []})
        if path == "/duplicates":
            return httpx.Response(200, json={"pairs": [], "total": 0})
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "no route"}})


def edit_conflict(existing: dict, *others: dict):
    """A memory holding `existing` and `others` whose every PATCH is a 409 naming `existing`."""
    memory = FakeMemory(existing, *others)

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "PATCH":
            return httpx.Response(409, json={"error": {"code": "duplicate", "message": f"would duplicate fact {existing['id']}",
                                                       "existing": existing}})
        return memory(request)

    return handler
