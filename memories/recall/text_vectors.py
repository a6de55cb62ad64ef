"""The vectors of the texts recall embeds, kept between recalls, least recently used out first.

A text's vector depends on the text and the model only, and recall's texts repeat: an agent asks
its questions again, and the rerank embeds the same top facts without the same shared words for
different questions. Measured on the shipped evaluation sets (benchmarks/memory_bench.py, "text
vectors"), the rerank's texts repeat across questions before any question is asked twice.

Bounded in bytes (MEMORY_TEXT_VECTORS_BYTES, LIMIT unless set; 0 keeps none), counted in /stats'
`memory_parts`. A forget for good empties it: a
forgotten fact's text must not outlive it here.
"""

from __future__ import annotations

import os
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable

import numpy as np

LIMIT = 4 * 1024 * 1024  # about 2,500 MiniLM vectors with their texts
# Per entry beside the text and the floats: the map's links and slot (a bound) and an array's header.
ENTRY = 100 + sys.getsizeof(np.empty(0, dtype=np.float32))


def configured(name: str = "MEMORY_TEXT_VECTORS_BYTES", default: int = LIMIT) -> int:
    """A bound in bytes the environment sets (term_lists.py's too), else `default`."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit():
        raise SystemExit(f"error: {name} must be a whole number of bytes, not {raw!r}")
    return int(raw)


class TextVectors:
    def __init__(self, limit: int | None = None):
        self.limit = configured() if limit is None else limit
        self._held: OrderedDict[str, np.ndarray] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.generation = 0  # one more at each clear: a recall that read its texts before one keeps none
        self.hits = 0
        self.misses = 0

    def embed(self, texts: list[str], embed: Callable[[list[str]], np.ndarray], since: int | None = None) -> list[np.ndarray]:
        """The vectors of `texts`, in order: those held, and one call of `embed` for the rest
        (none when every one is held). `since`: the generation when the texts were read; after a
        clear since (a forget), the fresh vectors are not kept."""
        with self._lock:
            found = {}
            for t in texts:
                if t in self._held:
                    self._held.move_to_end(t)
                    found[t] = self._held[t]
        lacking = list(dict.fromkeys(t for t in texts if t not in found))
        if lacking:
            fresh = embed(lacking)
            with self._lock:
                for t, v in zip(lacking, fresh):
                    found[t] = v
                    if since is None or since == self.generation:
                        self._put(t, v)
        with self._lock:
            self.hits += len(texts) - len(lacking)
            self.misses += len(lacking)
        return [found[t] for t in texts]

    def _put(self, text: str, vector: np.ndarray) -> None:
        if text in self._held:
            return
        vector = np.array(vector, dtype=np.float32)  # its own copy: not a view keeping the batch alive
        size = self.size_of(text, vector)
        if size > self.limit:
            return
        self._held[text] = vector
        self._bytes += size
        while self._bytes > self.limit:
            old, v = self._held.popitem(last=False)
            self._bytes -= self.size_of(old, v)

    @staticmethod
    def size_of(text: str, vector: np.ndarray) -> int:
        return sys.getsizeof(text) + vector.nbytes + ENTRY

    def nbytes(self) -> int:
        with self._lock:
            return self._bytes

    def clear(self) -> None:
        with self._lock:
            self._held.clear()
            self._bytes = 0
            self.generation += 1

    def __len__(self) -> int:
        return len(self._held)
