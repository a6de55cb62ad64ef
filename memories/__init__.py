"""Memory Desk's memory: an agent's long-term facts with hybrid (keyword + vector) recall.

The engine (`store`, `recall`, `embeddings`) and the HTTP service (`service`) import no Django;
the dashboard reaches a memory only through `client`.
"""

import os

# OpenBLAS's idle threads otherwise spin for about 0.1 s after every matrix product, taking a
# core from the embedding model that runs next (an import's dedup scan, then the next batch):
# sleeping at once lifted import at 100k facts from about 210 to 250 facts/s and did not slow
# recall. It is read when numpy loads, so it is set here, before the engine imports numpy.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
