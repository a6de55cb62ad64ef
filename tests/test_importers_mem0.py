"""mem0's memories as its users have them (issue 47): a CSV dump with Python-printed metadata,
the text in `metadata['data']` when `memory` is empty and cells over several lines; a page of
`get_all` with `expiration_date`, which becomes the fact's `valid_until`."""

from __future__ import annotations

import json
from pathlib import Path

from memories import importers
from memories.importers import mem0

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"
DUMP = FIXTURES / "mem0-dump.csv"


def test_a_csv_dump_loses_no_row_that_holds_a_memory():
    assert importers.detected(DUMP)[0] == "mem0"
    parsed = importers.read("mem0", DUMP)
    texts = [i["text"] for i in parsed.items]
    assert texts == ["Prefers window seats on long flights", "Is allergic to shellfish",
                     "Has two kids:\nMila (8) and Jonas (5)", "Works at a climbing gym on weekends"]
    assert parsed.items[1]["created_at"] == "2025-04-03T09:00:00+00:00"  # from the printed metadata
    assert [line for line, _ in parsed.refused] == [6]  # the row with no text anywhere
    # Read as a plain CSV, the row whose text is in the metadata would be lost.
    assert "Is allergic to shellfish" not in [i["text"] for i in importers.read("csv", DUMP).items]


def test_printed_metadata_is_read_as_a_literal_never_run():
    assert mem0.printed_dict("{'data': 'x', 'n': None}") == {"data": "x", "n": None}
    assert mem0.printed_dict('{"data": "x"}') == {"data": "x"}
    assert mem0.printed_dict("{'a': __import__('os').system('true')}") == {}
    assert mem0.printed_dict("not a dict") == {} and mem0.printed_dict(None) == {}


def test_a_page_with_an_expiry_gives_valid_until_and_refuses_one_that_expires_first():
    page = {"count": 3, "next": None, "previous": None, "results": [
        {"memory": "Has a free trial of Duolingo Max", "created_at": "2025-05-01T00:00:00Z", "expiration_date": "2025-06-01"},
        {"memory": "Is in Lisbon this week", "created_at": "2025-05-01T00:00:00Z", "expiration_date": "2025-04-01"},
        {"memory": "Prefers tea", "created_at": "2025-05-01T00:00:00Z", "expiration_date": None}]}
    parsed = mem0.read(json.dumps(page), {})
    assert [(i["text"], i.get("valid_until")) for i in parsed.items] == [
        ("Has a free trial of Duolingo Max", "2025-06-01T00:00:00Z"), ("Prefers tea", None)]
    assert parsed.refused == [(2, "it expires before it was made")]
