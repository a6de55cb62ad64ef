"""The memory's own settings (GET/PUT /settings) and a reindex."""

from __future__ import annotations

import httpx

from .transport import CONNECT_TIMEOUT, SLOW_READ_TIMEOUT


class SettingsCalls:
    """Mixed into MemoryClient, over Transport's _request and _parse."""

    def reindex(self) -> dict:
        return self._request("POST", "/reindex", timeout=httpx.Timeout(SLOW_READ_TIMEOUT, connect=CONNECT_TIMEOUT))

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
