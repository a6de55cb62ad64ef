"""Random sequences of writes, replacements, PATCHes, deletes, undos (forced or not), reviews,
review settings and forgets, on both memories over real HTTP (issue 45). After each step: no
chain of replacements loops, every fact a `superseded_by` names exists, a replaced fact is not
current unless what replaces it waits in the inbox, `as_of` answers no fact created after the
date or no longer current then, and a forgotten fact's word is in no entry and no byte of the
memory's files (test_forget_holds.holding). Seeded, so a failure is the same sequence again."""

import random
import time
import uuid
from datetime import UTC, datetime

import pytest

from tests.test_forget_holds import every_entry, holding

SEEDS = (1, 2, 3)
STEPS = 60
SUBJECTS = ("door code", "standup time", "gym", "dentist", "car", "barber")


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


class Walk:
    def __init__(self, api, seed: int):
        self.api, self.rng = api, random.Random(seed)
        self.ids: list[int] = []  # every fact id this walk made (some deleted since)
        self.live: list[int] = []  # those there at the last check
        self.words: dict[int, str] = {}  # each fact's own word, for forget
        self.forgotten: list[str] = []
        self.times: list[str] = []  # times between steps, for as_of
        self.log: list[str] = []

    def call(self, method: str, url: str, **kw):
        r = self.api.request(method, url, **kw)
        self.log.append(f"{method} {url} {kw.get('json') or kw.get('params') or ''} -> {r.status_code}")
        assert r.status_code < 500, "\n".join(self.log[-15:]) + "\n" + r.text
        return r

    def pick(self):
        """Mostly a fact that is there; now and then one deleted since."""
        pool = self.live if self.live and self.rng.random() < 0.85 else self.ids
        return self.rng.choice(pool) if pool else None

    def add(self):
        word = f"w{uuid.uuid4().hex[:10]}"
        body = {"text": f"The owner's {self.rng.choice(SUBJECTS)} is {word}."}
        if self.ids and self.rng.random() < 0.4:
            body["supersedes"] = [self.pick()]
        client = self.rng.choice(["dashboard", "agent"])
        r = self.call("POST", "/facts", json=body, headers={"X-Memory-Client": client})
        if r.status_code == 201:
            fid = r.json()["id"]
            self.ids.append(fid)
            self.words[fid] = word

    def patch(self):
        by = self.rng.choice([None, self.pick()])
        self.call("PATCH", f"/facts/{self.pick()}", json={"superseded_by": by},
                  headers={"X-Memory-Client": self.rng.choice(["dashboard", "agent"])})

    def delete(self):
        self.call("DELETE", f"/facts/{self.pick()}")

    def undo(self):
        entries = self.call("GET", "/history", params={"limit": 20}).json()["entries"]
        undoable = [e for e in entries if e["undone_by"] is None]
        if undoable:
            entry = self.rng.choice(undoable)
            self.call("POST", f"/history/{entry['id']}/undo", json={"force": self.rng.random() < 0.5})

    def review(self):
        self.call("POST", "/facts/review", json={"ids": [self.pick()]}, headers={"X-Memory-Client": "dashboard"})

    def settings(self):
        self.call("PUT", "/settings", json={"review": {"mode": self.rng.choice(["before", "after"])}})

    def forget(self):
        gone = [fid for fid in self.ids if fid in self.words and self.call("GET", f"/facts/{fid}").status_code == 404]
        if gone:
            fid = self.rng.choice(gone)
            self.call("DELETE", "/history", params={"fact_id": fid})
            self.forgotten.append(self.words.pop(fid))

    def step(self):
        op = self.rng.choices([self.add, self.patch, self.delete, self.undo, self.review, self.settings, self.forget],
                              weights=[5, 3, 2, 3, 2, 1, 1])[0]
        if op is not self.add and not self.ids:
            op = self.add
        op()
        self.times.append(now())
        return op

    def check(self):
        facts, cursor = {}, None
        while True:
            page = self.call("GET", "/facts", params={"limit": 100, **({"cursor": cursor} if cursor else {})}).json()
            facts |= {f["id"]: f for f in page["facts"]}
            if not (cursor := page["next_cursor"]):
                break
        self.live = [fid for fid in self.ids if fid in facts]
        review = self.call("GET", "/settings").json().get("review", {}).get("mode", "after")
        for f in facts.values():
            by = f["superseded_by"]
            if by is None:
                continue
            assert by in facts, f"fact {f['id']} is replaced by {by}, which is not there\n" + "\n".join(self.log[-15:])
            seen, at = [], f["id"]
            while at is not None:
                assert at not in seen, f"a loop: {seen + [at]}\n" + "\n".join(self.log[-15:])
                seen.append(at)
                at = facts[at]["superseded_by"]
            waiting = review == "before" and facts[by]["reviewed_at"] is None
            if not waiting:
                assert f["valid_until"] is not None and f["valid_until"] <= max(f["created_at"], facts[by]["created_at"]), (
                    f"fact {f['id']} replaced by {by} is still current\n" + "\n".join(self.log[-15:]))
        if self.times:
            as_of = self.rng.choice(self.times)
            hits = self.call("POST", "/recall", json={"query": "What is the owner's door code?", "as_of": as_of,
                                                      "limit": 30, "log": False}).json()["results"]
            for h in hits:
                f = h["fact"]
                assert f["created_at"] <= as_of, f"as_of {as_of} answered fact {f['id']} created {f['created_at']}"
                assert f["valid_until"] is None or f["valid_until"] > as_of, (
                    f"as_of {as_of} answered fact {f['id']}, no longer current from {f['valid_until']}")

    def check_forgotten(self, service):
        if not self.forgotten:
            return
        entries = every_entry(self.api)
        for word in self.forgotten:
            assert word not in entries, f"{word} is still in the history"
            assert holding(service, word) == [], f"{word} is still in the memory's files"


def now() -> str:
    time.sleep(0.002)  # two steps never share a time
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


@pytest.mark.parametrize("seed", SEEDS)
def test_no_sequence_of_writes_breaks_the_lifecycle(api, service, seed):
    walk = Walk(api, seed)
    try:
        for _ in range(STEPS):
            if walk.step() == walk.forget:
                walk.check_forgotten(service)
            walk.check()
        walk.check_forgotten(service)
    finally:
        api.put("/settings", json={"review": {"mode": "after"}})
