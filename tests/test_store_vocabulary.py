"""The memory's vocabulary (the words its facts hold, embedded once): grown by each write,
rebuilt by reindex, built on open for a memory from before it, and the query expansion it serves."""

import threading
import time

import numpy as np

from memories.store import Memory
from tests.fakes import HashEmbedder


def vocabulary_rows(memory):
    return [r[0] for r in memory.db.execute("SELECT word FROM words ORDER BY id")]


def test_the_vocabulary_grows_with_each_write_and_is_rebuilt_by_reindex(fake_memory, tmp_path):
    fake_memory.add("Priya walks the dog at 7.")
    fake_memory.add_many([{"text": "The dog is called Rex."}, {"text": "Rex sleeps a lot."}])
    fid = fake_memory.add("Lena plays chess.").fact.id
    fake_memory.edit(fid, text="Lena plays tennis.")
    assert vocabulary_rows(fake_memory) == ["priya", "walks", "dog", "called", "rex", "sleeps", "lot", "lena", "plays", "chess", "tennis"]
    fake_memory.writer.review([fid])  # the owner's: a delete keeps its words (one nobody reviewed drops them)
    fake_memory.delete(fid)  # "tennis" stays a word; no fact holds it, so recall never adds it
    assert fake_memory.vocab.missing(["tennis"]) == []
    fake_memory.reindex()
    assert vocabulary_rows(fake_memory) == ["priya", "walks", "dog", "called", "rex", "sleeps", "lot"]
    other = Memory(fake_memory.path, HashEmbedder())  # another process sees the same words
    fake_memory.add("Zebras graze.")
    other.recall("zebras")
    table = [r[0] for r in fake_memory.db.execute("SELECT id FROM words ORDER BY id")]
    assert other.vocab.ids() == fake_memory.vocab.ids() == table
    other.close()


def test_query_terms_the_memory_already_holds_are_not_embedded_again(tmp_path):
    class Recording(HashEmbedder):
        def embed(self, texts):
            self.seen = [*getattr(self, "seen", []), *texts]
            return super().embed(texts)

    m = Memory(tmp_path / "m.db", Recording())
    m.add("Priya walks the dog.")
    m.embedder.seen = []
    m.recall("dog walks")
    assert m.embedder.seen == ["dog walks"]  # the query only: both its words are stored
    m.embedder.seen = []
    m.recall("dog parrot")
    assert m.embedder.seen == ["dog parrot", "parrot"]  # in the query's own call
    # What is reused is what embedding the word alone gives.
    assert np.array_equal(m.vocab.vectors(["dog"])["dog"], HashEmbedder().embed(["dog"])[0])
    m.close()


def from_before_the_vocabulary(path, texts):
    """A memory file as one written before the words table: facts, no words."""
    m = Memory(path, HashEmbedder())
    m.add_many([{"text": t} for t in texts])
    m.db.execute("DELETE FROM words")
    m.db.execute("DELETE FROM meta WHERE key = 'words_model'")
    m.close()


def test_a_memory_from_before_the_vocabulary_builds_it_on_open(tmp_path):
    path = tmp_path / "old.db"
    from_before_the_vocabulary(path, ["Priya walks the dog.", "Rex sleeps."])
    reopened = Memory(path, HashEmbedder())
    assert reopened.wait_for_vocabulary(10)
    assert vocabulary_rows(reopened) == ["priya", "walks", "dog", "rex", "sleeps"]
    vectors = np.frombuffer(reopened.db.execute("SELECT embedding FROM words WHERE word = 'dog'").fetchone()[0], "<f4")
    assert np.allclose(vectors, HashEmbedder().embed(["dog"])[0])  # each word embedded alone
    reopened.close()


def test_an_old_memory_serves_while_its_vocabulary_builds_and_recall_waits_for_it(tmp_path):
    path = tmp_path / "old.db"
    from_before_the_vocabulary(path, ["Cosima Hartwig is married to Tobias.", "Rex sleeps."])

    class Slow(HashEmbedder):
        """Holds the build's batch of words until released ("sleeps" is in no write's)."""
        release = threading.Event()

        def embed(self, texts):
            if "sleeps" in texts:
                assert self.release.wait(10)
            return super().embed(texts)

    reopened = Memory(path, Slow())  # opens though the build is held
    assert not reopened.wait_for_vocabulary(0.2)
    assert reopened.count() == 2 and reopened.recall("cosima", mode="keyword")["results"]
    reopened.add("Ilse Brandt is married to Oskar.")  # a write meanwhile: its words are kept
    answer = {}
    waiting = threading.Thread(target=lambda: answer.update(reopened.recall("who is cosima's spouse", debug=True)))
    waiting.start()
    waiting.join(0.3)
    assert waiting.is_alive()  # a recall that expands waits for the words
    Slow.release.set()
    waiting.join(10)
    assert reopened.wait_for_vocabulary(0)
    assert answer["results"][0]["fact"]["text"] == "Cosima Hartwig is married to Tobias."
    assert set(vocabulary_rows(reopened)) == {"cosima", "hartwig", "married", "tobias", "rex", "sleeps", "ilse", "brandt", "oskar"}
    reopened.close()


def test_closing_a_memory_stops_its_vocabulary_build(tmp_path, caplog):
    path = tmp_path / "old.db"
    from_before_the_vocabulary(path, [f"Word{i} sits alone." for i in range(3000)])
    embedding = threading.Event()

    class Slow(HashEmbedder):
        def embed(self, texts):
            if "alone" in texts:  # the build's first batch of words
                embedding.set()
                time.sleep(0.2)
            return super().embed(texts)

    reopened = Memory(path, Slow())
    assert embedding.wait(10)
    reopened.close()  # mid-build: it stops at its next batch and writes nothing to a closed connection
    assert not reopened.background.builder.is_alive()
    assert not [r for r in caplog.records if r.levelname == "ERROR"]
    again = Memory(path, HashEmbedder())  # and the next open builds it
    assert again.wait_for_vocabulary(30)
    assert len(vocabulary_rows(again)) == 3002
    again.close()


def test_an_expansion_word_too_many_facts_hold_is_left_out(memory, monkeypatch):
    memory.add("Cosima Hartwig is married to Tobias Varga.")
    memory.add("Ilse Brandt is married to Oskar Brandt.")
    words = lambda: [e["word"] for e in memory.recall("who is cosima's spouse", debug=True)["expansions"]]  # noqa: E731
    assert "married" in words()
    monkeypatch.setattr("memories.recall.ranking.EXPAND_MOST_FACTS", 1)  # as if "married" were in 50,001 facts
    body = memory.recall("who is cosima's spouse", debug=True)
    assert "married" not in [e["word"] for e in body["expansions"]] and '"married"' not in body["match"]


def test_an_expansion_word_no_fact_holds_is_left_out(memory):
    memory.add("Cosima Hartwig is married to Tobias Varga.")
    gone = memory.add("Cosima Hartwig has a husband called Tobias.").fact.id
    memory.delete(gone)
    body = memory.recall("who is cosima's spouse", debug=True)
    words = [e["word"] for e in body["expansions"]]
    assert "married" in words and "husband" not in words and '"husband"' not in body["match"]
