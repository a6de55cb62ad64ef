"""A tiny deterministic embedder for unit tests. The real model is tested too: see test_embeddings."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from memories.model.embeddings import normalise


class HashEmbedder:
    """Bag of words hashed into `dims` buckets: texts sharing words are close, others far."""

    model_id = "test-hash-64"

    def __init__(self, dims: int = 64):
        self.dims = dims
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                bucket = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "little")
                out[row, bucket % self.dims] += 1.0
            out[row, 0] += 1e-3  # never an all-zero vector
        return normalise(out)


class BrokenEmbedder(HashEmbedder):
    """Loads, then fails on every call: a model that breaks while the service runs."""

    def embed(self, texts: list[str]) -> np.ndarray:
        raise RuntimeError("model exploded")


def hash_embedder() -> HashEmbedder:
    """Factory for MEMORY_EMBEDDER=tests.fakes:hash_embedder in subprocess tests."""
    return HashEmbedder()
