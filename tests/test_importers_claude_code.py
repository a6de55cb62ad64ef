"""Claude Code's memory folder imported (issue 47): a real folder (MIT, tests/fixtures/imports/
README.md says whose) and a copy of real folders' structure with invented entries, as a folder and
as a zip of it. Topic files' body lines are facts with the file (and its type, where the name does
not say it) in the source; front matter and link markup out; index lines that summarise a file the
folder holds are not memories, counted with their line; an index line whose file is absent is its
summary. Zips that are not a memory folder, hostile or too big are refused whole, saying why, and
nothing is stored. Then the CLI's dry run and import of the zip on both memories, and the Import
page's upload of it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from memories import importers
from memories.importers import MAX_BYTES, Malformed, claude_code
from tests.cli_import import imported_as_its_dry_run_said
from tests.html import page, soup

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "imports"
CHIRPY, TIDEPOOL = FIXTURES / "claude-code-chirpy", FIXTURES / "claude-code-memory"


def zipped(folder_path: Path, to: Path, inside: str = "memory/") -> Path:
    """The folder as a user zips it: its files under one folder, and macOS's `__MACOSX` copies."""
    with zipfile.ZipFile(to, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder_path.iterdir()):
            z.write(f, inside + f.name)
        z.writestr(f"__MACOSX/{inside}._MEMORY.md", b"\x00\x05\x16\x07 not text")
    return to


def by_source(parsed) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for i in parsed.items:
        found.setdefault(i["source"], []).append(i["text"])
    return found


def test_a_real_folder_gives_its_topic_files_lines_and_not_its_index_summaries():
    parsed = importers.read("claude-code", CHIRPY)
    assert parsed.refused == [] and "created_at" not in str(parsed.items)
    # A rule with its "**Why:**" and "**How to apply:**" is one memory: its reason alone is no fact.
    assert by_source(parsed) == {
        "import:claude-code:feedback_gh_cli.md": [
            'Always invoke gh CLI with full path: `"/c/Program Files/GitHub CLI/gh.exe"`. It is not on the default bash '
            'PATH in this Windows environment. Why: The standard `gh` command fails with "not found" in bash sessions. '
            "How to apply: Any time a gh CLI command is needed (pr create, pr merge, issue list, etc.), use the full path. "
            "Also always pass `--repo mascari4615/mascari4615.github.io` explicitly to avoid ambiguity."],
        "import:claude-code:feedback_pr_merge.md": [
            "When merging PRs, use squash merge and delete the branch: `gh pr merge <number> --squash --delete-branch`. "
            "Why: User confirmed this approach when asked about the first PR merge in this project. How to apply: Default "
            "to `--squash --delete-branch` unless the user specifies otherwise."],
        "import:claude-code:user_profile.md": [
            "Korean developer maintaining a personal GitHub Pages site (mascari4615.github.io). Comfortable with TypeScript, "
            "CSS, and web development. Works on KarmoLab — a standalone TypeScript/esbuild app inside the monorepo at "
            "`apps/karmolab/`. Communicates in Korean; prefers concise, direct responses."]}
    assert [i["line"] for i in parsed.items] == [7, 7, 7]  # the file's own lines, after its front matter
    assert parsed.not_memories == [(3, "MEMORY.md: summarises user_profile.md, which is imported"),
                                   (4, "MEMORY.md: summarises feedback_gh_cli.md, which is imported"),
                                   (5, "MEMORY.md: summarises feedback_pr_merge.md, which is imported")]


def test_the_structure_real_folders_have_index_sections_nested_types_absent_files_and_no_front_matter():
    parsed = importers.read("claude-code", TIDEPOOL)
    sources = by_source(parsed)
    assert parsed.refused == [] and len(parsed.items) == 20 and len(parsed.not_memories) == 6
    assert sources["import:claude-code:MEMORY.md#Memory Index / Project"] == [
        "datum conversion from MLLW to LAT is the last item before 0.4"]  # its file is absent: its summary
    assert sources["import:claude-code:MEMORY.md#Memory Index / Reference"] == [
        "Issue tracker (https://codeberg.org/tidepool/tidepool/issues) — bugs and feature requests, labelled by area",
        "rustfmt defaults; clippy pedantic runs in CI"]  # a web page's address kept; a file outside the folder, absent
    assert len(sources["import:claude-code:MEMORY.md#Memory Index / Machine"]) == 2
    # `metadata:` holds the type: the name says it, or the type goes before the file.
    assert sources["import:claude-code:feedback_no_unwrap.md"][0].startswith("Do not call `unwrap()`")
    assert sources["import:claude-code:project/lunar-nodal-cycle.md"][0].startswith("Node factors (f) and equilibrium")
    assert sources["import:claude-code:feedback_constants_data.md"][-1] == (
        "Node factors in those tables depend on the year; see lunar-nodal-cycle for when to recompute them.")
    assert sources["import:claude-code:feedback_slow_tests.md"] == [
        "Run the ignored tests before tagging a release: `cargo test -- --ignored`. They take about four minutes. "
        "Why: the 0.3.1 tag shipped a sign error in the M2 phase that only the year-long comparison catches. "
        "How to apply: Before `git tag`, run the ignored tests on the release branch. If a station's error grows past "
        "3 cm, stop and say which station. Never mark a slow test `#[ignore]` to make a tag go through.\n"
        "cargo test --release -- --ignored 2>&1 | tail -n 20"]  # the steps and the block under "How to apply:" too
    assert sources["import:claude-code:project_station_cache.md#Invalidation"][1] == (
        "A station is fetched again when: its entry is older than 30 days; NOAA's station list shows a newer "
        "`datums_updated` date.")  # nested bullets stay in their entry
    assert sources["import:claude-code:release-notes-style.md#Release notes"][1].startswith("Keep one line a change")
    dated = [(i["text"][:24], i["created_at"]) for i in parsed.items if "created_at" in i]
    assert dated == [("the cache moved from `~/", "2026-02-14T00:00:00Z")]


def test_a_zip_of_the_folder_reads_as_the_folder_does(tmp_path):
    for real in (CHIRPY, TIDEPOOL):
        archive = zipped(real, tmp_path / f"{real.name}.zip")
        found, why = importers.detected(archive)
        assert found == "claude-code" and "zipped: it holds memory/MEMORY.md and" in why
        assert importers.read("claude-code", archive).items == importers.read("claude-code", real).items
        assert importers.read("claude-code", archive).not_memories == importers.read("claude-code", real).not_memories
    windows = hostile(tmp_path, "windows.zip", {f"memory\\{f.name}": f.read_bytes() for f in CHIRPY.iterdir()})
    assert importers.read("claude-code", windows).items == importers.read("claude-code", CHIRPY).items


def hostile(tmp_path: Path, name: str, entries: dict[str, bytes]) -> Path:
    path = tmp_path / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for entry, data in entries.items():
            z.writestr(entry, data)
    return path


@pytest.mark.parametrize("entries,why", [
    ({"notes.txt": b"hello", "memories/acct.json": b"{}"}, r"holding no Markdown files \(\.md\) \(notes.txt, memories/acct.json\)"),
    ({"memory/MEMORY.md": b"- x", "../../.bashrc.md": b"echo owned"}, "outside its folder"),
    ({"/etc/cron.d/evil.md": b"* * * * * root true"}, "outside its folder"),
    ({"C:/Users/x/evil.md": b"x"}, "outside its folder"),
    ({"memory/a/../../up.md": b"x"}, "outside its folder"),
    ({"..\\..\\evil.md": b"x"}, "outside its folder"),  # (as an old Windows tool writes it)
    ({"MEMORY.md": b"- \xff\xfe not utf-8"}, "MEMORY.md:1: not UTF-8 text"),
])
def test_a_zip_that_is_not_a_memory_folder_or_is_hostile_is_refused_whole_saying_why(tmp_path, entries, why):
    path = hostile(tmp_path, "x.zip", entries)
    with pytest.raises(Malformed, match=why):
        importers.read("claude-code", path)
    if "UTF-8" not in why:  # (detection lists the files; it reads none)
        with pytest.raises(Malformed, match=why):
            importers.detected(path)


def test_a_zip_bomb_is_refused_from_the_sizes_it_declares_and_one_that_lies_while_it_is_read(tmp_path):
    bomb = hostile(tmp_path, "bomb.zip", {"MEMORY.md": b"- a\n", "bomb.md": b"\n" * (MAX_BYTES + 1)})
    assert bomb.stat().st_size < 100_000
    with pytest.raises(Malformed, match=f"unpack to {MAX_BYTES + 5:,} bytes; the limit is {MAX_BYTES:,}"):
        importers.read("claude-code", bomb)
    # One that declares less than it holds: the central directory says 4 bytes, the data holds 5,000.
    liar = hostile(tmp_path, "liar.zip", {"MEMORY.md": b"- x\n" * 1250})
    data = liar.read_bytes()
    central = data.rindex(b"PK\x01\x02")
    data = data[: central + 24] + (4).to_bytes(4, "little") + data[central + 28:]  # its uncompressed size
    liar.write_bytes(data)
    with pytest.raises(Malformed, match="a file in the zip cannot be read"):
        importers.read("claude-code", liar)


def test_markup_built_to_stall_the_reader_reads_in_linear_time():
    n = 400_000
    lines = "\n".join(["[" * n, "[a](" + "b" * n, "[[" + "a|" * (n // 2), "# a" + " " * n + "b", "- [x](" + "y" * n,
                       "**" + "*" * n + "a"])
    start = time.perf_counter()
    parsed = claude_code.read_files({"MEMORY.md": lines, "topic.md": lines})
    assert time.perf_counter() - start < 3  # 0.2 s here; each line would take minutes if a pattern backtracked
    assert [line for line, _ in parsed.refused] == [2, 3, 5, 2, 3, 5]
    assert all("the limit is 8000" in why for _, why in parsed.refused)


def test_a_folder_is_read_only_as_claude_code_and_nothing_is_stored_from_a_refused_zip(tmp_path):
    with pytest.raises(Malformed, match="is a folder: claude-code read"):
        importers.read("csv", CHIRPY)
    path = hostile(tmp_path, "evil.zip", {"memory/MEMORY.md": b"- The owner likes tea", "../x.md": b"x"})
    db = tmp_path / "m.db"
    done = subprocess.run([sys.executable, "-m", "memories", "import", str(path), "--from", "auto", "--db", str(db), "--quiet"],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300, cwd=ROOT)
    assert done.returncode == 1 and "nothing imported: '../x.md' in the zip is a path outside its folder" in done.stderr
    assert not db.exists()


@pytest.fixture(scope="module")
def service(either_service):
    return either_service


def test_the_cli_stores_exactly_what_its_dry_run_said_on_both_memories(service, api, tmp_path):
    facts = proposals = 0
    for real, not_memories in ((CHIRPY, 3), (TIDEPOOL, 6)):
        archive = zipped(real, tmp_path / f"{real.name}.zip")
        (store, merged, proposed, _), said = imported_as_its_dry_run_said(service, api, archive, "claude-code",
                                                                          "import:claude-code")
        assert f", {not_memories} read as not memories" in said and "not a memory: MEMORY.md: summarises user_profile" in said
        facts, proposals = facts + store + merged, proposals + proposed
    # Real folders must not fill the queue: at most one pair per 20 facts.
    assert proposals <= api.get("/conflicts").json()["total"] <= facts / 20


@pytest.mark.django_db
def test_the_import_page_reads_an_uploaded_zip_and_says_which_lines_are_not_memories_or_why_it_cannot(owner_client, tmp_path):
    archive = zipped(CHIRPY, tmp_path / "memory.zip")
    r = owner_client.post(reverse("import"), {"format": "auto", "file": SimpleUploadedFile("memory.zip", archive.read_bytes())})
    assert r.status_code == 302, r.content[:300]
    html = page(owner_client.get(r["Location"]))
    assert "Read as claude-code: Claude Code's memory folder, zipped" in " ".join(html.select_one("#read-as").text.split())
    assert " ".join(html.select_one("#import-read").text.split()) == "3 facts read, 3 lines not memories."
    empty = hostile(tmp_path, "notes.zip", {"notes.txt": b"not a memory folder"})
    bad = owner_client.post(reverse("import"), {"format": "auto", "file": SimpleUploadedFile("notes.zip", empty.read_bytes())})
    problem = " ".join(soup(bad).select_one("#upload-problem").text.split())
    assert bad.status_code == 400 and problem.startswith("notes.zip is a zip holding no Markdown files (.md) (notes.txt)")
    assert "/tmp" not in problem and "upload" not in problem
