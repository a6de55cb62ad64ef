"""What a memory holds in memory against its budget (MEMORY_BUDGET_BYTES), on both memories.

workerd does not enforce an isolate's 128 MB locally, so nothing here can see an object run out:
these check the accounting against the arrays' real sizes, and that a memory given a small
budget refuses the write that would pass it (507 `memory_full`), keeps what it stored, opens
again past its budget without its vectors (keyword recall, the facts, delete, export) and
comes back once deletes bring it under. The Worker's own unit tests (worker/test/) check its
accounting against its typed arrays."""

from __future__ import annotations

import sys

import httpx
import pytest

from benchmarks import synthetic
from memories.facts import MemoryFull
from memories.store import Memory
from memories.storage.codes import block_sizes
from memories.storage.vectors import INT_BYTES
from tests.fakes import HashEmbedder
from tests.memory_service import Service
from tests.worker_service import WorkerHost


# -- the engine's accounting ------------------------------------------------------------

def test_the_engine_counts_its_arrays_exactly_and_its_maps_as_a_bound(tmp_path):
    memory = Memory(tmp_path / "m.db", HashEmbedder())
    try:
        memory.add_many([{"text": f"Fact {i} about word{i} and thing{i % 7}."} for i in range(300)]
                        + [{"text": "A skill: brew tea.", "type": "skill"}])
        vectors, vocab = memory.vectors, memory.vocab
        parts = vectors.parts.values()
        arrays = sum(sum(c.nbytes for c in p.codes) + sum(q.nbytes for q in p.params) + p.ids.nbytes for p in parts)
        assert arrays == sum(len(p.ids) * (64 + 3 * 4 + 8) for p in parts)  # int8 codes, mid/step/err, int64 ids
        assert [len(p.ids) for p in parts] == [sum(block_sizes(p.n)) for p in parts] == [512, 64, 0]
        maps = sum(sys.getsizeof(p.row) + 2 * INT_BYTES * len(p.row) for p in parts)
        assert vectors.nbytes() == arrays + maps  # (a fact's type is the part that holds it: no map of its own)
        coded = vocab.rows  # the words' codes only: no string or map of them in memory
        assert vocab.nbytes() == sum(c.nbytes for c in coded.codes) + sum(q.nbytes for q in coded.params) + coded.ids.nbytes + sys.getsizeof({})
        stats = memory.stats()
        assert stats["memory_bytes"] == vectors.nbytes() + vocab.nbytes() + memory.state.text_vectors.nbytes() == sum(stats["memory_parts"].values())
        assert stats["memory_budget"] is None and stats["memory_full"] is False
        # What a write would hold bounds what it holds once stored.
        bound = vectors.nbytes_with({"fact": 1}) + vocab.nbytes_with(1)
        memory.add("Fact about zebra.")
        assert vectors.nbytes() + vocab.nbytes() <= bound
    finally:
        memory.close()


def test_the_engine_refuses_past_its_budget_and_opens_without_its_vectors(tmp_path):
    path = tmp_path / "m.db"
    memory = Memory(path, HashEmbedder())
    memory.add_many([{"text": f"Fact {i} about word{i}."} for i in range(50)])
    held = sum(memory.state.memory_bytes().values())
    memory.close()
    memory = Memory(path, HashEmbedder(), budget=2 * held)
    try:
        stored = 0
        with pytest.raises(MemoryFull, match=r"holds \d+ facts.*budget.*Delete facts, or move some to another memory"):
            for i in range(100, 5000):  # one new word a fact: the vocabulary grows too
                memory.add(f"Fact {i} about word{i}.")
                stored += 1
                assert sum(memory.state.memory_bytes().values()) <= 2 * held
        assert stored > 10 and memory.count() == 50 + stored  # each refused write stored nothing
        with pytest.raises(MemoryFull):
            memory.add_many([{"text": "Fact 1 about word1."}, {"text": "Something new entirely, qwerty."}])
        assert memory.count() == 50 + stored and not memory.add("Fact 1 about word1.").created  # a duplicate takes no room
    finally:
        memory.close()
    memory = Memory(path, HashEmbedder(), budget=1000)  # as an older memory, or wider vectors
    try:
        assert memory.state.full and len(memory.vectors) == 0 and len(memory.vocab) == 0
        stats = memory.stats()
        assert stats["memory_full"] and stats["consistent"] and stats["vectors"] == memory.count() > 50
        answer = memory.recall("word7")
        assert answer["mode"] == "keyword-only" and "memory_full" in answer["warning"]
        assert [h["fact"]["text"] for h in answer["results"]] == ["Fact 7 about word7."]
        with pytest.raises(MemoryFull):
            memory.add("A new fact.")
        with pytest.raises(MemoryFull):
            memory.neighbours(1)
        with pytest.raises(MemoryFull):
            memory.reindex()
        memory.edit(1, source="chat")  # no vector work
        with pytest.raises(MemoryFull):
            memory.edit(1, text="Fact one about something else.")
        memory.state.budget = 10 * held  # deletes bring it under: its vectors are read again
        memory.delete(50)
        assert memory.recall("word7")["mode"] == "hybrid"
        assert not memory.state.full and len(memory.vectors) == memory.count()
    finally:
        memory.close()


def test_a_batch_counts_every_new_word_of_the_facts_it_stores(tmp_path, monkeypatch):
    memory = Memory(tmp_path / "m.db", HashEmbedder())
    try:
        memory.add("Alpha beta gamma.")
        asked = []
        monkeypatch.setattr(memory.state, "ensure_room", lambda more, words: asked.append((dict(more), list(words))))
        memory.add_many([{"text": "Alpha delta epsilon."}, {"text": "alpha beta gamma."}, {"text": "Zeta delta eta."}])
        # the duplicate brings nothing; each word once, those the vocabulary holds left out
        assert asked == [({"fact": 1}, ["delta", "epsilon"]), ({"fact": 2}, ["delta", "epsilon", "zeta", "eta"])]
    finally:
        memory.close()


# -- both memories, over HTTP -----------------------------------------------------------

# Bytes: room for a thousand facts or more of varied text at 384 dims (the Worker's 4-bit codes hold
# about 540 bytes a fact and its word, the engine's float32 rows about 3,000), then a budget less
# than those facts hold, so the memory opens past it.
BUDGETS = {"python": (3_500_000, 1_000_000), "worker": (1_200_000, 300_000)}


@pytest.fixture(scope="module", params=["python", "worker"])
def budgeted(request, tmp_path_factory):
    """Each memory with a small budget, in a process of its own: (memory, restart(budget)),
    restart being kill -9 and a start on the same data with that budget."""
    budget, small = BUDGETS[request.param]
    if request.param == "worker":
        host = WorkerHost(tmp_path_factory.mktemp("worker-budget"), variables={"MEMORY_BUDGET_BYTES": str(budget)}).start()

        def restart_worker(budget: int) -> None:
            host.variables["MEMORY_BUDGET_BYTES"] = str(budget)
            host.restart()

        yield host.memory(), restart_worker, budget, small
        host.stop()
        return
    service = Service(tmp_path_factory.mktemp("service-budget") / "memory.db", env={"MEMORY_BUDGET_BYTES": str(budget)}).start()

    def restart_service(budget: int) -> None:
        service.kill()
        service.env["MEMORY_BUDGET_BYTES"] = str(budget)
        service.start()

    yield service, restart_service, budget, small
    service.stop()


def texts(start: int, n: int) -> list[str]:
    """Varied facts, each with a word of its own (so the vocabulary grows as the facts do)."""
    return [f"{f['text']} Its tag is zq{start + i}x." for i, f in enumerate(synthetic.facts(n, seed=start))]


def everything(api: httpx.Client) -> list[dict]:
    """Every fact, page by page, as export reads them."""
    out, cursor = [], None
    while True:
        page = api.get("/facts", params={"limit": 100, **({"cursor": cursor} if cursor else {})}).json()
        out += page["facts"]
        cursor = page["next_cursor"]
        if not cursor:
            return out


def test_a_memory_refuses_past_its_budget_keeps_its_facts_and_opens_without_its_vectors(budgeted):
    memory, restart, budget, small = budgeted
    with memory.client() as api:
        stored = 0
        for start in range(0, 5000, 100):
            r = api.post("/facts/batch", json={"facts": [{"text": t} for t in texts(start, 100)]})
            if r.status_code == 507:
                break
            assert r.status_code == 200, r.text
            stored += sum(x["created"] for x in r.json()["results"])
        else:
            pytest.fail("the budget never filled")
        error = r.json()["error"]
        assert error["code"] == "memory_full"
        assert f"holds {stored} facts" in error["message"] and "another memory by name" in error["message"]
        stats = api.get("/stats").json()
        assert stats["facts"] == stored > 300  # the refused batch stored none of its facts
        assert stats["memory_budget"] == budget and stats["memory_bytes"] <= budget and not stats["memory_full"]
        before = everything(api)

    restart(small)  # as an older memory, or another model's wider vectors
    with memory.client() as api:
        health = api.get("/health").json()
        assert health["mode"] == "keyword-only" and health["memory_full"] is True and "budget" in health["warning"]
        stats = api.get("/stats").json()
        assert stats["memory_full"] and stats["facts"] == stats["vectors"] == stored and stats["vectors_in_memory"] == 0
        assert everything(api) == before  # export works without the vectors
        first = before[-1]
        r = api.post("/recall", json={"query": first["text"], "log": False})
        assert r.status_code == 200 and r.json()["mode"] == "keyword-only" and "memory_full" in r.json()["warning"]
        assert first["id"] in [h["fact"]["id"] for h in r.json()["results"]]
        r = api.post("/facts", json={"text": "Anything new at all, zz9."})
        assert r.status_code == 507 and r.json()["error"]["code"] == "memory_full"
        assert api.get(f"/facts/{first['id']}/neighbours").status_code == 507
        assert api.get("/duplicates", params={"threshold": 0.5}).status_code == 507
        assert api.delete(f"/facts/{first['id']}").status_code == 200
        assert api.get("/stats").json()["facts"] == stored - 1

    restart(budget)  # room again: everything as it was, less the one deleted
    with memory.client() as api:
        assert api.get("/health").json()["mode"] == "hybrid"
        stats = api.get("/stats").json()
        assert stats["vectors_in_memory"] == stored - 1 and stats["consistent"] and not stats["memory_full"]
        assert everything(api) == before[:-1]
