"""Recall's kept text vectors (memories/recall/text_vectors.py): bounded in bytes, least recently used
out first, one model call for what is not held, the same ranking, and emptied by forget for good."""

import numpy as np

from memories.store import Memory
from memories.recall.text_vectors import TextVectors
from tests.fakes import HashEmbedder


def test_it_embeds_only_what_it_does_not_hold_in_one_call_and_keeps_the_order():
    embedder = HashEmbedder()
    kept = TextVectors()
    first = kept.embed(["alpha", "beta", "alpha"], embedder.embed)
    assert embedder.calls == 1 and len(kept) == 2
    assert np.array_equal(first[0], first[2]) and np.array_equal(first[1], embedder.embed(["beta"])[0])
    again = kept.embed(["beta", "gamma", "alpha"], embedder.embed)
    assert embedder.calls == 3  # (one of them the check above) one call for "gamma" alone
    assert [np.array_equal(a, b) for a, b in zip(again, embedder.embed(["beta", "gamma", "alpha"]))] == [True] * 3
    assert (kept.hits, kept.misses) == (3, 3)  # "alpha" twice in the first call is embedded once


def test_it_holds_no_more_than_its_limit_and_lets_the_least_recently_used_go():
    embedder = HashEmbedder()
    one = TextVectors.size_of("text 0", embedder.embed(["text 0"])[0])
    kept = TextVectors(limit=3 * one)
    kept.embed(["text 0", "text 1", "text 2"], embedder.embed)
    kept.embed(["text 0"], embedder.embed)  # used again: "text 1" is now the oldest
    kept.embed(["text 3"], embedder.embed)
    assert len(kept) == 3 and kept.nbytes() <= 3 * one
    calls = embedder.calls
    kept.embed(["text 0", "text 2", "text 3"], embedder.embed)
    assert embedder.calls == calls
    kept.embed(["text 1"], embedder.embed)
    assert embedder.calls == calls + 1


def test_a_vector_never_aliases_the_batch_it_came_from():
    batch = np.ones((2, 4), dtype=np.float32)
    kept = TextVectors()
    kept.embed(["a", "b"], lambda texts: batch)
    batch[:] = 0
    assert kept.embed(["a"], lambda texts: 1 / 0)[0].tolist() == [1.0] * 4


class Counting(HashEmbedder):
    def __init__(self):
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts += texts
        return super().embed(texts)


def test_a_recall_asked_again_calls_no_model_and_ranks_the_same(tmp_path):
    embedder = Counting()
    memory = Memory(tmp_path / "m.db", embedder)
    try:
        memory.add_many([{"text": t} for t in ["The owner's son is eight years old.", "The owner's son plays football.",
                                                "The owner's daughter is twelve.", "The owner's sister is Priya."]])
        first = memory.recall("how old is the owner's son", debug=True)
        assert first["rerank"], "the rerank ran: the question shares words with the top facts"
        embedded = len(embedder.texts)
        again = memory.recall("how old is the owner's son", debug=True)
        assert len(embedder.texts) == embedded  # the query, its terms and the rerank's texts all held
        assert [(r["fact"]["id"], r["score"]) for r in again["results"]] == [(r["fact"]["id"], r["score"]) for r in first["results"]]
        assert memory.stats()["memory_parts"]["text_vectors"] == memory.state.text_vectors.nbytes() > 0
    finally:
        memory.close()


def test_forget_for_good_empties_it(tmp_path):
    memory = Memory(tmp_path / "m.db", HashEmbedder())
    try:
        secret = memory.add("The vault code is quokka-7731.").fact.id
        memory.add("The vault is in the cellar.")
        memory.recall("vault code")
        assert len(memory.state.text_vectors) > 0
        memory.delete(secret)
        memory.forget(secret)
        assert len(memory.state.text_vectors) == 0
    finally:
        memory.close()
