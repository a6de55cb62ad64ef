"""Memory lists as the assistants dump them when asked (issue 47): ChatGPT's "Model Set Context"
(numbered, dated entries with nested bullets, inside a code block after a line of prose) and the
answer to Claude's export prompt (`[date] - memory` lines in a code block). The date is the
fact's time, not part of its text; a nested bullet stays in its entry; fences and the lead-in
are not memories. The fixtures follow the real structure (tests/fixtures/imports/README.md)."""

from __future__ import annotations

from pathlib import Path

from memories import importers

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "imports"


def test_chatgpts_model_set_context_gives_dated_entries_whole():
    parsed = importers.read("chatgpt-list", FIXTURES / "chatgpt-model-set-context.txt")
    assert parsed.refused == []
    assert [(i["text"], i.get("created_at")) for i in parsed.items] == [
        ("User's name is Tibor.", "2024-09-05T00:00:00Z"),
        ("Tibor is located in Vienna.", "2024-10-09T00:00:00Z"),
        ("Tibor's tech stack: Python and DuckDB for data work; Go for backend services", "2025-01-12T00:00:00Z"),
        ("Tibor is allergic to hazelnuts.", "2025-03-30T00:00:00Z"),
        ("Tibor's daughter Lili starts school in September 2025.", "2025-06-02T00:00:00Z"),
    ]


def test_claudes_export_answer_gives_each_line_dated_when_it_says_so():
    parsed = importers.read("claude-list", FIXTURES / "claude-export.txt")
    assert [(i["line"], i["text"], i.get("created_at")) for i in parsed.items] == [
        (2, "The owner works as a product designer at a fintech start-up.", "2025-08-14T00:00:00Z"),
        (3, "The owner prefers answers in British English.", "2025-09-03T00:00:00Z"),
        (4, "The owner's partner is called Sam.", "2025-10-05T00:00:00Z"),
        (5, "The owner is training for the Berlin half marathon.", None),
    ]
    assert importers.detected(FIXTURES / "claude-export.txt")[0] == "list"


def test_a_bullet_that_is_not_nested_is_an_entry_of_its_own():
    parsed = importers.read("list", FIXTURES / "chatgpt.txt")
    assert "Is allergic to penicillin." in [i["text"] for i in parsed.items]
    assert not [i for i in parsed.items if "; " in i["text"]]
