"""Recall and its log: POST /recall, POST /explain, GET/DELETE /recalls."""

from __future__ import annotations

from .answers import Fact, Hit, LoggedRecall, Ranked, Recall


class RecallCalls:
    """Mixed into MemoryClient, over Transport's _request and _parse."""

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
