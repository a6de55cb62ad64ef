"""What was done to the memory: GET /history, an undo, forget for good (DELETE /history)."""

from __future__ import annotations

from .answers import Fact, HistoryEntry


class HistoryCalls:
    """Mixed into MemoryClient, over Transport's _request and _parse."""

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
