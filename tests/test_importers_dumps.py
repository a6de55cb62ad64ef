"""Memory lists as the assistants dump them when asked (issue 47): ChatGPT's "Model Set Context"
(numbered, dated entries with nested bullets, inside a code block after a line of prose) and the
answer to Claude's export prompt (`[date] - memory` lines in a code block). The date is the
fact's time, not part of its text; a nested bullet stays in its entry; fences and the lead-in
are not memories, and the assistant's words around a list are counted as not memories (a plain
list with no bullets, numbers or fence has no outside). The fixtures follow the real structure
(tests/fixtures/imports/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memories import importers
from tests.cli_import import imported_as_its_dry_run_said

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


PROSE = "the assistant's words around the list"


def test_the_assistants_words_around_a_list_are_counted_not_imported():
    chatgpt = importers.read("chatgpt-list", FIXTURES / "chatgpt-answer.txt")
    assert [(i["line"], i["text"]) for i in chatgpt.items] == [
        (4, "Works night shifts as an ICU nurse in Leeds."),
        (5, "Is learning Spanish for a trip to Seville in May 2026. practises with Duolingo every morning"),
        (7, "Prefers recipes without coriander."), (8, "Has two cats, Miso and Tofu.")]
    assert chatgpt.not_memories == [(1, PROSE), (10, PROSE), (11, PROSE)] and chatgpt.refused == []
    claude = importers.read("claude-list", FIXTURES / "claude-answer.txt")  # the list in a code block, unnumbered
    assert [(i["line"], i.get("created_at")) for i in claude.items] == [(4, "2025-11-02T00:00:00Z"),
                                                                         (5, "2025-11-20T00:00:00Z"), (6, None)]
    assert claude.not_memories == [(1, PROSE), (9, PROSE)]


@pytest.mark.parametrize("name,fmt,memories,prose", [
    ("chatgpt-model-set-context.txt", "chatgpt-list", 5, [1]),  # its lead-in, said before as a heading and skipped
    ("claude-export.txt", "claude-list", 4, []), ("chatgpt.txt", "chatgpt-list", 8, []),
    ("claude.txt", "claude-list", 4, []),  # unnumbered lines before the numbered ones, in the third person
])
def test_lists_as_the_tools_give_them_keep_every_memory(name, fmt, memories, prose):
    parsed = importers.read(fmt, FIXTURES / name)
    assert len(parsed.items) == memories and [line for line, _ in parsed.not_memories] == prose


def test_a_list_without_bullets_numbers_or_a_fence_has_no_outside(tmp_path):
    def written(text: str) -> Path:
        (tmp_path / "list.txt").write_text(text, encoding="utf-8")
        return tmp_path / "list.txt"

    # One memory a line and nothing else: a line that talks like the assistant is still the owner's.
    text = "I told you I'm vegetarian\nLikes tea\nLet me know if you need a lift to the airport?\n"
    parsed = importers.read("list", written(text))
    assert len(parsed.items) == 3 and parsed.not_memories == []
    # The same lines beside a bulleted list are outside it, and read as the assistant talking.
    parsed = importers.read("list", written("Here's what I have:\n- Likes tea\n- Cycles to work\nLet me know if you need more!\n"))
    assert [i["text"] for i in parsed.items] == ["Likes tea", "Cycles to work"]
    assert parsed.not_memories == [(1, PROSE), (4, PROSE)]
    # Inside the list's run an unmarked line stays an entry, however it reads.
    parsed = importers.read("list", written("- Likes tea\nI think you know this one: cycles to work\n- Reads sci-fi\n"))
    assert len(parsed.items) == 3 and parsed.not_memories == []


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_the_cli_stores_exactly_what_its_dry_run_said_and_counts_the_prose_on_both_memories(service, api):
    (store, merged, _, _), said = imported_as_its_dry_run_said(service, api, FIXTURES / "chatgpt-answer.txt",
                                                               "chatgpt-list", "import:chatgpt")
    assert store + merged == 4 and ", 3 read as not memories" in said
    assert f"line 10: not a memory: {PROSE}" in said
