"""docs/memory-api.md, docs/openapi.json and the served document cannot disagree."""

import json
import re
from pathlib import Path

import pytest

from memories.serving.openapi import openapi_document

DOCS = Path(__file__).resolve().parent.parent / "docs"
PAGE = (DOCS / "memory-api.md").read_text(encoding="utf-8")
METHODS = ("get", "post", "patch", "delete", "put")


def sections() -> dict[tuple[str, str], str]:
    parts = re.split(r"^### (GET|POST|PATCH|DELETE|PUT) (\S+)\n", PAGE, flags=re.M)
    return {(method, path): text for method, path, text in zip(parts[1::3], parts[2::3], parts[3::3])}


def operations():
    for path, item in openapi_document()["paths"].items():
        for method, op in item.items():
            if method in METHODS:
                yield method.upper(), path, op


def test_the_committed_openapi_json_is_what_the_service_serves():
    # The Worker serves docs/openapi.json; the service builds it from memories/serving/openapi.py.
    assert json.loads((DOCS / "openapi.json").read_text()) == openapi_document()


def test_the_page_documents_exactly_the_routes_of_the_document():
    assert set(sections()) == {(m, p) for m, p, _ in operations()}


@pytest.mark.parametrize("method,path,op", list(operations()), ids=lambda v: v if isinstance(v, str) else "")
def test_each_route_section_names_its_inputs_and_errors(method, path, op):
    text = sections()[(method, path)]
    names = [p["name"] for p in op.get("parameters", []) if p["in"] == "query"]
    schema = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema", {})
    names += list(schema.get("properties", {}))
    for name in names:
        assert f"`{name}`" in text, f"{method} {path}: the page does not mention {name}"
    statuses = sorted(s for s in op["responses"] if s >= "400")
    documented = sorted(set(re.findall(r"\b(4\d\d|503|507)\b", text.split("Errors:")[-1]))) if "Errors:" in text else []
    assert documented == statuses, f"{method} {path}: errors on the page {documented}, in the document {statuses}"
