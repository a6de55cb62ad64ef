"""The golden recall cases both memories answer alike: this checks recall.py against the file;
worker/test/recall.test.ts checks the Worker's recall.ts against the same file."""

import json

from tests.golden.make_recall import PATH, build


def test_recall_py_still_gives_every_golden_answer():
    # JSON turns tuples into lists: compare through it.
    assert json.loads(json.dumps(build())) == json.loads(PATH.read_text(encoding="utf-8"))


def test_the_golden_file_covers_fts5_syntax_and_each_fusion_method():
    golden = json.loads(PATH.read_text(encoding="utf-8"))
    queries = {c["query"] for c in golden["match"]}
    assert {'"', "*", "NEAR", ":"} <= queries
    assert {c["fusion"]["method"] for c in golden["fuse"]} == {"rrf", "ratio", "relative", "info"}
    assert any(c["fusion"]["method"] == "info" and c["info"] for c in golden["fuse"])
    assert any(c["fusion"]["method"] == "info" and c["info"] is None for c in golden["fuse"])
