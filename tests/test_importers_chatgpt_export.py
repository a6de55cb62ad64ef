"""ChatGPT's data export imported (issue 47): it holds no memory file, so the memories are read out
of conversations.json, on a copy of real exports' structure (tests/fixtures/imports/README.md):
each memory ChatGPT saved (an assistant message to `bio`) a fact at its message's time, on every
branch; the custom instructions once, at the earliest conversation that has them; the newest
snapshot of the memory (`model_set_context`) with its entries' dates; the chat counted as not
memories a conversation at a time. Then the CLI's dry run and import on both memories."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memories import importers
from memories.importers import Malformed, chatgpt_export
from tests.cli_import import imported_as_its_dry_run_said

ROOT = Path(__file__).resolve().parent.parent
EXPORT = ROOT / "tests" / "fixtures" / "imports" / "chatgpt-conversations.json"
SOURCE = "import:chatgpt:conversations.json#"


def test_the_memories_saved_are_facts_at_their_messages_time_from_the_oldest_conversation_on():
    parsed = importers.read("chatgpt-export", EXPORT)
    assert parsed.refused == []
    assert [(i["line"], i["source"].removeprefix(SOURCE), i["text"], i["created_at"]) for i in parsed.items] == [
        (4, "Python packaging question", "User uses uv to manage Python projects.", "2024-10-21T05:12:15.107321+00:00"),
        (3, "Model Set Context", "User is a marine biologist who studies seagrass meadows.", "2024-09-02T00:00:00Z"),
        (3, "Model Set Context", "User uses uv to manage Python projects.", "2024-10-21T00:00:00Z"),
        (3, "Model Set Context", "User has a cat named Pixel.", "2024-10-30T00:00:00Z"),
        (3, "Sourdough hydration", "User bakes sourdough with bread flour at 75% hydration.", "2024-11-02T10:08:23.195743+00:00"),
        (2, "custom instructions: about you", "Preferred name: Ingrid", "2025-12-14T00:19:20.210442+00:00"),
        (2, "custom instructions: about you", "Role: marine biologist", "2025-12-14T00:19:20.210442+00:00"),
        (2, "custom instructions: about you", "Other Information: I live in Bergen and sail on weekends.",
         "2025-12-14T00:19:20.210442+00:00"),
        (2, "custom instructions: how to answer", "Answer briefly, in metric units. Skip the pleasantries.",
         "2025-12-14T00:19:20.210442+00:00"),
        (2, "Field season planning", "User moved to Bergen in November 2025 and works at the Institute of Marine Research.",
         "2025-12-14T00:19:34.142688+00:00"),
        # Saved in an answer the owner regenerated: not on current_node's branch, and saved all the same.
        (2, "Field season planning", "User's field season runs from April to September.", "2025-12-14T00:21:42.051377+00:00"),
    ]


def test_the_chat_is_counted_a_conversation_at_a_time_never_imported():
    parsed = importers.read("chatgpt-export", EXPORT)
    assert parsed.not_memories == [
        (1, "Grant report outline: 4 messages of the conversation, none a memory"),  # its custom instructions again
        (2, "Field season planning: 6 messages of the conversation, none a memory"),
        (3, "Sourdough hydration: 6 messages of the conversation, none a memory"),
        (4, "Python packaging question: 5 messages of the conversation, none a memory"),  # an older snapshot
        (5, "Translate a postcard: 3 messages of the conversation, none a memory")]
    texts = [i["text"] for i in parsed.items]
    assert "Model set context updated." not in texts and not [t for t in texts if "postcard" in t or "outline" in t]


def conversation(title: str, *messages: dict, created: object = 1730000000.0) -> dict:
    nodes = {"root": {"id": "root", "message": None, "parent": None, "children": ["m1"]}}
    for n, m in enumerate(messages, start=1):
        nodes[f"m{n}"] = {"id": f"m{n}", "message": m, "parent": "root" if n == 1 else f"m{n - 1}",
                          "children": [f"m{n + 1}"] if n < len(messages) else []}
    return {"title": title, "create_time": created, "mapping": nodes}


def bio(text: object, time: object = 1730000100.5) -> dict:
    return {"author": {"role": "assistant", "name": None}, "create_time": time, "recipient": "bio",
            "content": {"content_type": "text", "parts": [text]}}


def test_what_cannot_be_a_fact_is_refused_with_its_conversation_and_why():
    parsed = chatgpt_export.read(json.dumps([
        conversation("Tea", bio("User drinks green tea."), bio("   "), bio("User owns a kettle.", time="yesterday")),
        "a string", {"title": "No mapping"},
        conversation("Far future", bio("User plans ahead.", time=1e300))]), {})
    assert [i["text"] for i in parsed.items] == ["User drinks green tea."]
    # (a message whose time is no number sorts at its conversation's time, before the others)
    assert parsed.refused == [(1, "Tea: its time is not a time in Unix seconds"), (1, "Tea: text is empty"),
                              (2, "not a conversation: it has no mapping"), (3, "not a conversation: it has no mapping"),
                              (4, "Far future: its time is not a time in Unix seconds")]


def test_a_memory_without_a_time_of_its_own_takes_its_messages_else_its_conversations():
    snapshot = {"author": {"role": "assistant"}, "create_time": 1730000050.0,
                "content": {"content_type": "model_editable_context", "model_set_context": "1. User likes figs."}}
    parsed = chatgpt_export.read(json.dumps([conversation("Tea", snapshot, bio("User drinks green tea.", time=None))]), {})
    assert [(i["text"], i["created_at"]) for i in parsed.items] == [
        ("User drinks green tea.", "2024-10-27T03:33:20+00:00"), ("User likes figs.", "2024-10-27T03:34:10+00:00")]


@pytest.mark.parametrize("document", [{"conversations": []}, "text", 7])
def test_a_file_that_is_no_list_of_conversations_is_refused_saying_so(document):
    with pytest.raises(Malformed, match="not ChatGPT's conversations.json"):
        chatgpt_export.read(json.dumps(document), {})


def test_auto_finds_the_export_and_not_a_list_of_other_objects():
    assert importers.detected(EXPORT)[0] == "chatgpt-export"
    assert not chatgpt_export.is_export([{"title": "a note", "text": "no mapping"}])
    assert not chatgpt_export.is_export([])


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_the_cli_stores_exactly_what_its_dry_run_said_on_both_memories(service, api):
    (store, merged, proposed, _), said = imported_as_its_dry_run_said(service, api, EXPORT, "chatgpt-export",
                                                                      "import:chatgpt:conversations.json")
    assert ", 5 read as not memories" in said and "line 1: not a memory: Grant report outline: 4 messages" in said
    assert "'User uses uv to manage Python projects.' is an earlier line of the file" in said  # bio, then the snapshot
    assert store + merged == 11 and merged >= 1
    # The queue holds the pairs the dry run said it would (a fresh memory: this module's own).
    queued = int(re.search(r"\((\d+) proposals for the queue\)", said).group(1))
    assert proposed <= queued == api.get("/conflicts").json()["total"]
