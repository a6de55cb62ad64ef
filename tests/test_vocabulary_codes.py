"""The vocabulary held as int8 codes (memories/storage/vocabulary.py): the closest words are exact
search's, read again from the table; its snapshot is taken only while it is the table's."""

import numpy as np

from memories.storage import snapshot
from memories.storage.codes import exact
from memories.store import Memory
from memories.storage.vocabulary import CANDIDATES, Vocabulary
from tests.fakes import HashEmbedder


def brute_force(memory: Memory, q: np.ndarray) -> list[tuple[str, float]]:
    rows = memory.db.execute("SELECT id, word, embedding FROM words ORDER BY id").fetchall()
    vectors = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), -1)
    cosines = exact(vectors, q)
    order = np.lexsort((np.array([r[0] for r in rows]), -cosines))[:CANDIDATES]
    return [(rows[i][1], float(cosines[i])) for i in order]


def test_the_closest_words_are_exact_searchs_even_in_a_crowd_of_near_copies(tmp_path):
    memory = Memory(tmp_path / "m.db", HashEmbedder(dims=16))  # 16 buckets: many words share a vector
    try:
        memory.add_many([{"text": f"Word{i} and thing{i % 37} meet creature{i % 101}."} for i in range(600)])
        assert len(memory.vocab) > 700 and memory.vocab.nbytes() < 700 * (16 + 12 + 8) * 2
        terms = HashEmbedder(dims=16).embed(["thing3", "creature7", "word42", "zebra", "meet"])
        for q, found in zip(terms, memory.vocab.closest(terms)):
            assert [w for w, _ in found] == [w for w, _ in brute_force(memory, q)]
            assert [c for _, c in found] == [c for _, c in brute_force(memory, q)]
    finally:
        memory.close()


def test_a_word_dropped_from_the_table_is_never_offered_even_before_the_codes_are_read_again(tmp_path):
    memory = Memory(tmp_path / "m.db", HashEmbedder())
    try:
        memory.add_many([{"text": "Ottoline keeps bees."}, {"text": "Ottoline keeps goats."}])
        memory.db.execute("DELETE FROM words WHERE word = 'bees'")  # as another process's forget
        q = HashEmbedder().embed(["bees"])
        assert "bees" not in [w for w, _ in memory.vocab.closest(q)[0]]
        assert memory.vocab.vectors(["bees", "goats"]).keys() == {"goats"}
    finally:
        memory.close()


def test_its_snapshot_opens_in_place_of_the_table_and_not_after_a_word_is_dropped(tmp_path):
    path = tmp_path / "m.db"
    memory = Memory(path, HashEmbedder())
    try:
        memory.add_many([{"text": f"Fact {i} about gizmo{i}."} for i in range(50)])
        origin = memory.state.meta("memory_id")
        vocab = memory.vocab
        assert vocab.save(str(path), origin, least=1) and not vocab.save(str(path), origin, least=1)  # unchanged: not again
        fresh = Vocabulary(memory.db, memory.state.model, memory.state.dims)
        fresh.open(str(path), origin)
        assert fresh.ids() == vocab.ids() and fresh.last == vocab.last  # from the file: nothing left to read
        assert all(np.array_equal(a, b) for a, b in zip(fresh.rows.take(np.arange(len(fresh))), vocab.rows.take(np.arange(len(vocab)))))
        other = Vocabulary(memory.db, memory.state.model, memory.state.dims)
        other.open(str(path), "another database")
        assert len(other) == 0
        gizmo = memory.add("Fact 1 about gizmo1 and a sprocket.").fact.id  # a new word after the snapshot
        fresh = Vocabulary(memory.db, memory.state.model, memory.state.dims)
        fresh.open(str(path), origin)
        fresh.load()
        assert fresh.ids() == vocab.ids()  # the snapshot, then the one word after it
        memory.delete(gizmo)  # nobody reviewed it: its own word "sprocket" goes, and the epoch moves on
        fresh = Vocabulary(memory.db, memory.state.model, memory.state.dims)
        fresh.open(str(path), origin)
        assert len(fresh) == 0  # from before a word was dropped: not taken
        assert snapshot.load_words(str(path), memory.state.model, memory.state.dims, memory.vocab.epoch(), origin) is None
    finally:
        memory.close()


def test_a_terms_closest_words_are_kept_until_a_word_comes_or_goes(tmp_path):
    memory = Memory(tmp_path / "m.db", HashEmbedder())
    try:
        memory.add_many([{"text": "Ottoline keeps bees."}, {"text": "Ottoline keeps goats."}])
        vocab, q = memory.vocab, HashEmbedder().embed(["bees", "goats"])
        first = vocab.closest(q)
        rescored = []
        exact_of = vocab._exact
        vocab._exact = lambda ids, v: rescored.append(len(ids)) or exact_of(ids, v)
        assert vocab.closest(q) == first and not rescored  # kept: nothing read again
        assert memory.add("Marguerite paints lighthouses.").created  # words come: asked anew
        assert "lighthouses" in [w for w, _ in vocab.closest(q)[0]] and rescored
        with memory.state.writing():
            vocab.drop(["bees"])  # as a forget drops a word no fact holds (its epoch moves on)
        vocab.reload()
        assert "bees" not in [w for w, _ in vocab.closest(q)[0]] + [w for w, _ in vocab.closest(q)[1]]
        assert vocab.nbytes() > vocab.rows.nbytes()  # what is kept is counted
    finally:
        memory.close()
