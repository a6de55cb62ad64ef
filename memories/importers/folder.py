"""The Markdown files of a folder, or of a zip of one (claude_code.py reads Claude Code's memory
folder either way; the Import page uploads one file, so there it is a zip): each file's path in
the folder and its text, read within the readers' limits.

A zip is read in memory, never unpacked to disk. One holding a path that would leave the folder
(absolute, a drive, or `..`) is refused whole: no owner's folder holds one. So is one whose
Markdown files unpack to more than MAX_BYTES, from the sizes its directory declares and again
while they are read (a zip may declare less than it holds). Other files (images, `.DS_Store`,
macOS's `__MACOSX/._*` copies) are passed over."""

from __future__ import annotations

import re
import zipfile
import zlib
from pathlib import Path, PurePosixPath

from . import MAX_BYTES, Malformed, read_text

DRIVE = re.compile(r"[A-Za-z]:")


def is_markdown(name: str) -> bool:
    parts = PurePosixPath(name).parts
    return name.lower().endswith(".md") and "__MACOSX" not in parts and not parts[-1].startswith("._")


def markdown_names(path: Path) -> list[str]:
    """The Markdown files' paths, sorted, without reading them; Malformed when there are none, or
    when a zip is hostile (its reason said)."""
    if path.is_dir():
        names = sorted(n for n in (p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()) if is_markdown(n))
    elif zipfile.is_zipfile(path):
        names = sorted(posix(i) for i in _markdown_entries(path, _entries(path)))
    elif is_markdown(path.name):
        return [path.name]
    else:
        raise Malformed(f"{path} is neither a folder, a zip nor a Markdown file (.md)")
    if not names:
        raise Malformed(f"{path} holds no Markdown files (.md): Claude Code's memory folder holds MEMORY.md "
                        "and a file a topic")
    return names


def markdown_files(path: Path) -> dict[str, str]:
    """{path in the folder: text} of every Markdown file, at most MAX_BYTES in all."""
    if path.is_dir():
        return _folder(path, markdown_names(path))
    if zipfile.is_zipfile(path):
        return _zipped(path)
    return {name: read_text(path) for name in markdown_names(path)}


def _folder(path: Path, names: list[str]) -> dict[str, str]:
    total = sum((path / n).stat().st_size for n in names)
    if total > MAX_BYTES:
        raise Malformed(f"its Markdown files are {total:,} bytes; the limit is {MAX_BYTES:,}")
    return {n: _text((path / n).read_bytes(), n) for n in names}


def _entries(path: Path) -> list[zipfile.ZipInfo]:
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise Malformed(f"{path} is {size:,} bytes; the limit is {MAX_BYTES:,}")
    try:
        with zipfile.ZipFile(path) as z:
            infos = z.infolist()
    except (zipfile.BadZipFile, OSError, EOFError) as e:
        raise Malformed(f"{path} is not a zip that can be read ({e})") from None
    for info in infos:
        name = posix(info)
        if name.startswith("/") or DRIVE.match(name) or ".." in PurePosixPath(name).parts:
            raise Malformed(f"{info.filename!r} in the zip is a path outside its folder (absolute, or with ..): "
                            "a zip holding one is refused whole")
    return infos


def posix(info: zipfile.ZipInfo) -> str:
    """The entry's path with "/" between its folders, as the zip format asks (some Windows tools wrote "\\")."""
    return info.filename.replace("\\", "/")


def _markdown_entries(path: Path, infos: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
    found = [i for i in infos if not i.is_dir() and is_markdown(posix(i))]
    unpacked = sum(i.file_size for i in found)
    if unpacked > MAX_BYTES:
        raise Malformed(f"its Markdown files unpack to {unpacked:,} bytes; the limit is {MAX_BYTES:,}")
    if not found:
        held = ", ".join(i.filename for i in infos[:5]) + (", ..." if len(infos) > 5 else "")
        raise Malformed(f"{path} is a zip holding no Markdown files (.md) ({held or 'it is empty'}): Claude Code's "
                        "memory folder holds MEMORY.md and a file a topic")
    return found


def _zipped(path: Path) -> dict[str, str]:
    files, left = {}, MAX_BYTES
    try:
        with zipfile.ZipFile(path) as z:
            for info in _markdown_entries(path, _entries(path)):
                with z.open(info) as f:
                    data = f.read(left + 1)  # never more than the limit, whatever the entry declares
                if len(data) > left:
                    raise Malformed(f"its Markdown files unpack to more than {MAX_BYTES:,} bytes (the limit), more "
                                    "than the zip declares")
                left -= len(data)
                files[posix(info)] = _text(data, info.filename)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError) as e:
        raise Malformed(f"{path}: a file in the zip cannot be read ({e})") from None
    return files


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise Malformed(f"{name}:{line}: not UTF-8 text") from None
