"""The real model: loads from the installed package, pools correctly, ranks sensibly."""

import numpy as np
import pytest

from memories.model.embeddings import MiniLM, ModelUnavailable, load_embedder


def test_vectors_are_unit_length_float32(minilm):
    v = minilm.embed(["The owner prefers metric units.", "x"])
    assert v.shape == (2, 384) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


def test_padding_to_the_longest_text_does_not_change_a_vector(minilm):
    short = "Priya is the owner's sister."
    alone = minilm.embed([short])[0]
    batched = minilm.embed([short, "A much longer sentence about the owner's many preferences " * 5])[0]
    assert np.allclose(alone, batched, atol=1e-4)


def test_order_of_a_batch_is_kept(minilm):
    texts = [f"Fact {i} " + "word " * (i * 7 % 13) for i in range(40)]
    batch = minilm.embed(texts)
    assert np.allclose(batch[17], minilm.embed([texts[17]])[0], atol=1e-4)


def test_meaning_beats_shared_words(minilm):
    q, wife, units = minilm.embed(["What is my spouse called?", "The owner's wife is called Mara.",
                                   "The owner prefers metric units."])
    assert q @ wife > q @ units + 0.1


def test_long_text_is_truncated_not_refused(minilm):
    assert minilm.embed(["word " * 5000]).shape == (1, 384)


def test_a_long_fact_is_embedded_by_its_beginning(minilm):
    """An 8,000-character fact (the longest a memory takes): its vector is its first 256 tokens'."""
    text = ("The owner keeps bees on the roof of the old mill. " * 40 + "Coffee beans come from Kenya. " * 300)[:8000]
    assert len(text) == 8000 and len(minilm.tokenizer.encode(text[:1500]).ids) == 256  # the beginning fills the window
    long, start, tail = minilm.embed([text, text[:1500], text[2000:]])
    assert np.allclose(long, start, atol=1e-6)
    assert long @ tail < 0.5  # nothing of the tail (coffee) is in it


def test_a_model_file_that_is_not_the_pinned_one_is_refused(tmp_path):
    bogus = tmp_path / "model.onnx"
    bogus.write_bytes(b"not a model")
    with pytest.raises(ModelUnavailable):
        MiniLM(bogus)


def test_load_embedder_returns_none_when_the_model_cannot_load():
    assert load_embedder("no.such.module:Model") is None
    assert load_embedder("memories.model.embeddings:MiniLM").model_id == "all-MiniLM-L6-v2-onnx-int8"


def test_batches_sorted_by_tokens_give_each_text_its_own_vector_in_its_place(minilm):
    """embed() runs its texts through the model by their length in tokens, BATCH_SIZE at a time: a
    text's vector is still the one it gets alone (the int8 model gave them bit for bit in
    benchmarks/embed_bench.py; 1e-6 allows for a runtime that does not), in the order given."""
    words = ["tea", "Zyxwvutsrqponm", "owner", "pneumonoultramicroscopic", "Lisbon", "9f3a-77c2-b01e", "jazz"]
    texts = [" ".join(words[(i * 3 + k) % len(words)] for k in range(1 + i * 5 % 23)) for i in range(70)]
    rows = [len(minilm.tokenizer.encode(t).ids) for t in texts]
    by_chars, by_tokens = sorted(range(70), key=lambda i: len(texts[i])), sorted(range(70), key=lambda i: rows[i])
    assert by_chars != by_tokens  # the two orders differ on these texts: the batches are not the old ones
    batch = minilm.embed(texts)
    alone = np.vstack([minilm.embed([t]) for t in texts])
    assert np.allclose(batch, alone, atol=1e-6, rtol=0)
