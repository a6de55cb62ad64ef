"""The README and docs/ hold together: links land, pictures exist, settings and make targets are real."""

from __future__ import annotations

import re
import struct
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SCREENSHOTS = ROOT / "docs" / "screenshots"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
INLINE_CODE = re.compile(r"`[^`\n]*`")
MD_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HTML_SRC = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""")


def prose(text: str) -> str:
    """The text without code: a link written inside code is an example, not a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def targets(path: Path) -> list[str]:
    text = prose(path.read_text(encoding="utf-8"))
    return MD_LINK.findall(text) + HTML_SRC.findall(text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation but - and _ dropped,
    spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "").lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE.sub("", path.read_text(encoding="utf-8")).splitlines():
        if m := re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line):
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")  # GitHub numbers a repeated heading
    return found


def test_slugs_follow_githubs_rules():
    assert slug("The memory on Cloudflare") == "the-memory-on-cloudflare"
    assert slug("The agent's door: MCP") == "the-agents-door-mcp"
    assert slug("`GET /facts/{id}`") == "get-factsid"
    assert slug("Storage, dedup and the model") == "storage-dedup-and-the-model"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_local_link_and_anchor_resolves(page: Path):
    broken = []
    for target in targets(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: and the like: not ours to check
            continue
        file, _, anchor = target.partition("#")
        dest = (page.parent / file).resolve() if file else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert broken == [], f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def readme_section(title: str) -> str:
    text = README.read_text(encoding="utf-8")
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, f"the README has no section '## {title}'"
    return m.group(1)


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_every_picture_the_readme_names_is_a_screenshot_that_exists():
    named = [t for t in targets(README) if t.endswith(".png")]
    assert named
    for target in named:
        path = (ROOT / target).resolve()
        assert path.parent == SCREENSHOTS, f"{target}: pictures live in docs/screenshots/"
        assert path.exists(), f"{target} is missing: `make screenshots` takes it"


def test_every_page_in_the_tour_has_its_screenshot():
    rows = [line for line in readme_section("What you get").splitlines() if re.match(r"\|\s*<img", line)]
    assert len(rows) >= 6, "the tour lists the dashboard's pages, one row each"
    for row in rows:
        src = HTML_SRC.search(row).group(1)
        assert (ROOT / src).exists(), f"{src} is missing"
        assert re.search(r"\*\*[^*]+\*\*", row), f"a tour row names its page: {row[:80]}"
    shown = {HTML_SRC.search(row).group(1).removeprefix("docs/screenshots/") for row in rows}
    taken = {p.name for p in SCREENSHOTS.glob("*.png")}
    assert shown == taken, "the tour and docs/screenshots/ should hold the same pages"


@pytest.mark.parametrize("png", sorted(SCREENSHOTS.glob("*.png")), ids=lambda p: p.name)
def test_screenshots_are_small(png: Path):
    width, height = png_size(png)
    assert width <= 1200 and height <= 1200, f"{png.name} is {width}x{height}"
    assert png.stat().st_size < 150_000, f"{png.name} is {png.stat().st_size // 1024} KB"


def test_the_readme_is_a_front_door_that_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, "the README is a front door: move detail to docs/"
    first_block = re.search(r"^```sh\n(.*?)^```", text, re.S | re.M).group(1).splitlines()
    assert [line.split("#")[0].strip() for line in first_block] == ["make run", "make test"]


def test_the_agent_host_snippet_is_still_in_the_readme():
    # tests/test_mcp.py runs this snippet as an agent host would.
    assert re.search(r"<!-- mcp-config -->\s*```json\n.*?\"mcpServers\".*?```", README.read_text(encoding="utf-8"), re.S)


def test_every_make_target_the_docs_name_exists():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    defined = set(re.findall(r"^([a-z][a-z-]*):", makefile, re.M))
    # `make X` in prose, or a line of a code block that starts with it
    named = {t for page in PAGES for t in re.findall(r"(?:`|^)make ([a-z][a-z-]*)", page.read_text(encoding="utf-8"), re.M)}
    assert named - defined == set()


def settings_read() -> set[str]:
    """Every environment variable the code reads as a setting."""
    names = set(re.findall(r'env\.[a-z]+\("([A-Z_]+)"', (ROOT / "dashboard" / "settings.py").read_text()))
    for path in [*(ROOT / "memories").rglob("*.py"), ROOT / "scripts" / "run.py", ROOT / "scripts" / "serve.py"]:
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r'(?:environ\.get|env_float|env_number)\(\s*"([A-Z_]+)"', text))
        names |= set(re.findall(r'env\["([A-Z_]+)"\]', text))
    env_d = (ROOT / "worker" / "src" / "env.d.ts").read_text(encoding="utf-8")
    names |= set(re.findall(r"^\s+([A-Z_]+)\??:", env_d, re.M)) - {"MEMORY", "AI"}  # those two are bindings
    return names


def test_every_setting_is_documented():
    # operations.md, or server.md for those of serving for real (`make serve`, a proxy, HTTPS)
    documented = "".join((ROOT / "docs" / page).read_text(encoding="utf-8") for page in ("operations.md", "server.md"))
    names = settings_read()
    assert {"SECRET_KEY", "MEMORY_SECRET", "MEMORY_DUP_THRESHOLD", "EMBED_MODEL", "DASHBOARD_HOST"} <= names  # the scan finds them
    assert sorted(n for n in names if f"`{n}`" not in documented) == []
