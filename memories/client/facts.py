"""The facts themselves: GET/POST/PATCH/DELETE /facts, a batch, a fact's neighbours."""

from __future__ import annotations

import httpx

from .answers import AddResult, Fact, Page
from .transport import CONNECT_TIMEOUT, SLOW_READ_TIMEOUT


class FactCalls:
    """Mixed into MemoryClient, over Transport's _request and _parse."""

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

    def neighbours(self, fact_id: int, limit: int = 10) -> list[tuple[Fact, float]]:
        body = self._request("GET", f"/facts/{int(fact_id)}/neighbours", safe=True, params={"limit": limit})
        return self._parse(lambda b: [(Fact.from_json(n["fact"]), float(n["cosine"])) for n in b["neighbours"]], body)
