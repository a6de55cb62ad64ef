"""mem0's memories as its users have them (issue 47): a CSV dump with Python-printed metadata,
the text in `metadata['data']` when `memory` is empty and cells over several lines; a page of
`get_all` with `expiration_date`, which becomes the fact's `valid_until`; its plugin's Markdown
export, a block of front matter then the text for each memory, on both memories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memories import importers
from memories.importers import Malformed, mem0
from tests.cli_import import imported_as_its_dry_run_said

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


MARKDOWN = FIXTURES / "mem0-export.md"


def test_its_markdown_export_gives_each_block_a_fact_with_its_time_and_its_type_in_the_source():
    assert importers.detected(MARKDOWN)[0] == "mem0"
    parsed = importers.read("mem0", MARKDOWN)
    assert parsed.refused == [] and parsed.not_memories == []
    assert [(i["line"], i["source"], i["created_at"]) for i in parsed.items] == [
        (1, "import:mem0#user_preference", "2026-05-14T09:12:44.118204-07:00"),
        (12, "import:mem0#decision", "2026-05-14T10:03:19.502733-07:00"),
        (23, "import:mem0#convention", "2026-05-20T16:41:07.660091-07:00"),
        (36, "import:mem0#anti_pattern", "2026-05-21T08:15:00.000000-07:00"),
        (47, "import:mem0", "2026-06-02T11:30:52.274810-07:00"),  # its fields all empty
        (58, "import:mem0#session_state", "2026-06-03T14:22:10.913377-07:00")]
    assert parsed.items[2]["text"] == ("Export functions in tide take a path and return the number of rows written:\n"
                                       "- never print from them\n- raise ExportError with the row number on bad data")
    assert not [i for i in parsed.items if "---" in i["text"] or "id:" in i["text"]]  # no front matter in a fact


def test_a_rule_inside_a_memory_stays_in_it_and_an_expiry_gives_valid_until():
    text = ("---\nid: a\ncreated_at: 2026-05-01T00:00:00Z\ntype: fact\nexpiration_date: 2026-06-01\n---\n"
            "Has a trial of the survey app\n---\nuntil June.\n\n"
            "---\nid: b\ncreated_at: 2026-05-01T00:00:00Z\nexpiration_date: 2026-04-01\n---\nIs in Oslo this week\n\n"
            "---\nid: c\ntype: user_preference\n---\n\n")
    parsed = mem0.read(text, {})
    assert [(i["line"], i["text"], i["type"], i["source"], i["valid_until"]) for i in parsed.items] == [
        (1, "Has a trial of the survey app\n---\nuntil June.", "fact", "import:mem0", "2026-06-01T00:00:00Z")]
    assert parsed.refused == [(11, "it expires before it was made"), (18, "text is empty")]


def test_markdown_that_does_not_open_with_a_memorys_front_matter_is_refused_saying_so():
    with pytest.raises(Malformed, match="line 1: not mem0's Markdown export"):
        mem0.read("---\ntitle: notes\nthis is no field\n---\nLikes tea\n", {})


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_the_cli_stores_exactly_what_its_dry_run_said_on_both_memories(service, api):
    (store, merged, _, refused), _ = imported_as_its_dry_run_said(service, api, MARKDOWN, "mem0", "import:mem0")
    assert store + merged == 6 and refused == 0
