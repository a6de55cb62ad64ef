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

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        path, method = request.url.path, request.method
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
            return httpx.Response(200, json={"facts": facts, "next_cursor": None, "total": len(facts)})
        if path.startswith("/facts/"):
            fid = int(path.split("/")[2])
            if fid not in self.facts:
                return httpx.Response(404, json={"error": {"code": "not_found", "message": f"no fact with id {fid}"}})
            if path.endswith("/neighbours"):
                return httpx.Response(200, json={"neighbours": []})
            if method == "DELETE":
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
