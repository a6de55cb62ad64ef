"""A recall in flight while its fact is forgotten for good (issue 45 §9): the recall reads the
fact, the rerank's model call runs outside the lock, and a forget lands in between. The recall
still answers, but its log row keeps no text of the fact, and recall's kept text vectors keep
none of it. The model call is where the race opens, so the test forgets inside it."""

from memories.store import Memory
from memories.recall.text_vectors import TextVectors
from tests.fakes import HashEmbedder


class ForgettingDuringTheRerank(HashEmbedder):
    """Embeds as HashEmbedder; the first call that holds `secret` forgets its fact first."""

    def __init__(self, secret: str):
        super().__init__()
        self.secret, self.memory, self.fact_id = secret, None, None

    def embed(self, texts):
        if self.memory is not None and any(self.secret in t for t in texts):
            memory, self.memory = self.memory, None
            memory.delete(self.fact_id)
            memory.forget(self.fact_id)
        return super().embed(texts)


def test_a_recall_answered_while_its_fact_was_forgotten_logs_and_keeps_no_text_of_it(tmp_path):
    secret = "quokka7731"
    embedder = ForgettingDuringTheRerank(secret)
    memory = Memory(tmp_path / "m.db", embedder)
    try:
        fid = memory.add(f"The vault code is {secret}.").fact.id
        memory.add("The vault is in the cellar.")
        embedder.memory, embedder.fact_id = memory, fid
        answer = memory.recall("What is the vault code?", log=True, client="agent")
        assert embedder.memory is None, "the rerank's model call ran, and the forget with it"
        assert fid in [r["fact"]["id"] for r in answer["results"]]  # read before the forget: answered
        [logged] = memory.recall_log.entries()[0]
        row = next(r for r in logged.results if r["id"] == fid)
        assert row.get("forgotten") is True and "text" not in row
        assert not any(secret in t for t in memory.state.text_vectors._held)
    finally:
        memory.close()


def test_vectors_of_texts_read_before_a_clear_are_not_kept():
    kept, embedder = TextVectors(), HashEmbedder()
    read = kept.generation
    kept.clear()
    kept.embed(["The vault code is quokka7731."], embedder.embed, since=read)
    assert len(kept) == 0
    kept.embed(["The vault is in the cellar."], embedder.embed, since=kept.generation)
    assert len(kept) == 1
