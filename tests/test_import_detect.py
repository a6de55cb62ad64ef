"""`--from auto` (issue 47), the Import page's default: the format found from a file's content,
and why, on the real and documented fixtures; a file in no known format refused saying what was
seen. The page and the CLI say which format they read."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from memories import importers
from memories.importers import Malformed
from memories.importers.detect import detect
from tests.html import page

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "imports"


@pytest.mark.parametrize("name,fmt,says", [
    ("chatgpt.txt", "list", "one a line"), ("claude.txt", "list", "one a line"),
    ("letta-evie.af", "letta", "agents and blocks"), ("letta-memgpt-agent-2025-03.af", "letta", "core_memory"),
    ("letta-memgpt-agent-2025-11.af", "letta", "agents and blocks"),  # (the JSON inside a JSON string)
    ("letta.json", "letta", "passages"), ("mcp-memory-editor.jsonl", "mcp-memory", "entities and relations"),
    ("mem0.json", "mem0", "memory"), ("memories.csv", "csv", "header"), ("memories.json", "json", "JSON list"),
    ("memories.jsonl", "jsonl", "JSON Lines"),
    ("claude-ai-memories.json", "claude-ai", "conversations_memory, project_memories, memory_files"),
    ("claude-code-chirpy", "claude-code", "memory folder: it holds MEMORY.md and 3 other"),  # (a folder)
    ("claude-code-memory", "claude-code", "memory folder: it holds MEMORY.md and 7 other"),
    ("chatgpt-conversations.json", "chatgpt-export", "conversations, each with a title and a mapping"),
    ("mem0-export.md", "mem0", "Markdown export"), ("chatgpt-answer.txt", "list", "one a line"),
    ("claude-answer.txt", "list", "one a line"),
])
def test_each_fixture_is_found_for_what_it_is(name, fmt, says):
    found, why = importers.detected(FIXTURES / name)
    assert found == fmt and says in why
    assert importers.read(found, FIXTURES / name).items  # and read as that, it gives facts


@pytest.mark.parametrize("text,message", [
    ("", "empty"), ("   \n\n", "empty"), ('{"a": 1', "no format known"),
    ('<?xml version="1.0"?>\n<memories><memory>The owner likes figs.</memory></memories>', "XML or HTML"),
    ("42", None),
])
def test_a_file_in_no_known_format_says_what_was_seen(text, message):
    if message is None:  # a bare number is a one-line list, which the list reader reads
        assert detect(text)[0] == "list"
        return
    with pytest.raises(Malformed, match=message):
        detect(text)


def test_the_cli_says_which_format_it_read(tmp_path):
    r = subprocess.run([sys.executable, "-m", "memories", "import", str(FIXTURES / "mem0.json"), "--from", "auto",
                        "--dry-run", "--db", str(tmp_path / "m.db"), "--quiet"], capture_output=True, text=True, cwd=ROOT,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert "mem0.json: read as mem0, mem0's memories" in r.stderr and "would be stored" in r.stderr


@pytest.mark.django_db
def test_the_import_page_reads_as_what_it_found_and_says_so(owner_client):
    r = owner_client.post(reverse("import"), {"format": "auto", "file": SimpleUploadedFile(
        "agent.af", (FIXTURES / "letta-memgpt-agent-2025-11.af").read_bytes())})
    assert r.status_code == 302, r.content[:300]
    html = page(owner_client.get(r["Location"]))
    assert "Read as letta: a Letta agent file" in " ".join(html.select_one("#read-as").text.split())
    bad = owner_client.post(reverse("import"), {"format": "auto", "file": SimpleUploadedFile("x.json", b'{"a": 1')})
    assert bad.status_code == 400 and "no format known" in bad.content.decode()


def test_a_backup_found_by_the_cli_is_restored_as_a_plain_import_restores_it(tmp_path):
    backup = tmp_path / "memory-default.jsonl"
    backup.write_text('{"id": 7, "text": "The owner likes figs.", "type": "fact", "source": "", '
                      '"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}\n')
    r = subprocess.run([sys.executable, "-m", "memories", "import", str(backup), "--from", "auto", "--db",
                        str(tmp_path / "m.db"), "--quiet"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "read as backup" in r.stderr and "restored 1 facts" in r.stderr


@pytest.mark.parametrize("text,fmt", [
    ("note,kind,when\nThe owner likes figs.,fact,2025-03-01\nHow to bleed a radiator.,skill,\n", "csv"),  # say which column
    ("- Likes tea, coffee and juice.\n- Has a sister, Priya.\n", "list"),
    ("Likes tea, coffee\nHas a dog, Rex\n", "list"),  # words are no header
])
def test_a_csv_header_without_a_text_column_is_still_a_table(text, fmt):
    assert detect(text)[0] == fmt
