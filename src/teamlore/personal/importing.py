"""Markdown import: file checks, structural chunking and the `document_import` envelopes.

Only reading, checking, splitting and wrapping happen here; judging what is worth remembering is
the Writer's job. Rules (docs/personal.md; glossary: provenance class `document_import`):
- a regular `.md`/`.markdown` file (no symlink), at most 256 KiB, strict UTF-8 without NUL; a BOM
  is dropped and CRLF becomes LF; blank content is refused;
- a YAML front matter block the file opens with (closed, as a personal file's, holding `key:`
  lines and nothing but YAML: `_metadata`) is the file's own metadata, not notes: it is left out
  of everything imported (parts, digest, secret preflight) and only said (`frontMatter`); a file
  that is blank but for it is refused as empty;
- a file within 32 KiB is one part; otherwise it is split at headings and blank lines into parts
  of at most 32 KiB. A fenced block is never split; a paragraph or fence above the budget refuses
  the whole import (`IMPORT_CHUNK_TOO_LARGE`) — nothing is truncated. Every part keeps its
  ancestor heading path, and the parts concatenate to what is imported byte for byte;
- `importId = md-<sha256(normalized text after the front matter)>`: the same notes under any
  name, label, author or front matter are a duplicate; `declaredAuthor` is a recorded label that
  grants nothing (`--author user` is still a document import);
- every part passes the secret preflight before anything is queued, and all parts are queued in
  one transaction.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import unicodedata
from pathlib import Path
from typing import Any

from teamlore.core import errors
from teamlore.core.shapes.records import Record
from teamlore.personal.documents import document_text, front_matter_of

MAX_DOCUMENT_BYTES = 262_144
MAX_PART_BYTES = 32_768
ENVELOPE_VERSION = "v1"
AUTHORS = ("user", "agent", "third_party", "mixed", "unknown")
_SUFFIXES = (".md", ".markdown")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


class MarkdownFile(Record, frozen=True):
    """A Markdown file checked for import."""

    file_name: str
    text: str  # what is imported, normalized (no BOM, LF line ends): the file after front matter
    front_matter: str = ""  # the YAML block the file opens with (and the blank lines after it)

    @property
    def content_digest(self) -> str:
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()

    @property
    def import_id(self) -> str:
        return "md-" + self.content_digest

    @property
    def size(self) -> int:
        """The whole file's bytes (as read: no BOM, LF line ends), front matter included."""
        return len((self.front_matter + self.text).encode("utf-8"))


def _unreadable(path: Path) -> errors.TeamloreError:
    """PERMISSION_DENIED for a file the person may not read (its mode or owner): the file's,
    not a folder's, to fix."""
    return errors.TeamloreError(
        errors.PERMISSION_DENIED, f"{path.name} cannot be read: permission denied"
    ).advising("Make the file readable to you (`ls -l` shows its owner and mode).")


def read_markdown_file(path: Path) -> MarkdownFile:
    try:
        info = os.lstat(path)
    except FileNotFoundError as exc:
        raise errors.TeamloreError(errors.FILE_NOT_FOUND, f"{path.name} does not exist") from exc
    except NotADirectoryError as exc:  # `notes.md/x.md`: missing as any other file is
        raise errors.TeamloreError(
            errors.FILE_NOT_FOUND,
            f"{path.name} does not exist: a folder on its path is a file",
        ) from exc
    # a folder on its path that may not be entered: PERMISSION_DENIED naming it (core/refusals)
    if stat.S_ISDIR(info.st_mode):
        raise errors.TeamloreError(errors.UNSUPPORTED_FILE_TYPE, f"{path.name} is a folder")
    if path.suffix.lower() not in _SUFFIXES:
        raise errors.TeamloreError(errors.UNSUPPORTED_FILE_TYPE, f"{path.name} is not .md")
    if not stat.S_ISREG(info.st_mode):
        raise errors.TeamloreError(
            errors.UNSUPPORTED_FILE_TYPE, f"{path.name} is a symlink or not a regular file"
        )
    if info.st_size > MAX_DOCUMENT_BYTES:
        raise errors.TeamloreError(
            errors.DOCUMENT_TOO_LARGE,
            f"{path.name} has {info.st_size:,} bytes; the limit is {MAX_DOCUMENT_BYTES:,}",
        )
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except PermissionError as exc:  # its mode or owner (chmod 000)
        raise _unreadable(path) from exc
    except (FileNotFoundError, NotADirectoryError) as exc:  # gone since `lstat`
        raise errors.TeamloreError(errors.FILE_NOT_FOUND, f"{path.name} does not exist") from exc
    except OSError as exc:  # replaced by a symlink since `lstat` (ELOOP), or not a file to read
        raise errors.TeamloreError(
            errors.UNSUPPORTED_FILE_TYPE, f"{path.name} is a symlink or not a regular file"
        ) from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise errors.TeamloreError(errors.UNSUPPORTED_FILE_TYPE, f"{path.name}")
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(fd, 65_536):
            chunks.append(chunk)
            total += len(chunk)
            if total > MAX_DOCUMENT_BYTES:
                raise errors.TeamloreError(errors.DOCUMENT_TOO_LARGE, f"{path.name} grew too large")
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if b"\x00" in data:
        raise errors.TeamloreError(errors.INVALID_ENCODING, f"{path.name} contains NUL bytes")
    try:
        text = document_text(data)  # as a personal document is read: no BOM, CRLF as LF
    except UnicodeDecodeError as exc:
        raise errors.TeamloreError(
            errors.INVALID_ENCODING, f"{path.name} is not valid UTF-8 (byte {exc.start})"
        ) from exc
    if not text.strip():
        raise errors.TeamloreError(errors.EMPTY_DOCUMENT, f"{path.name} is empty")
    front_matter = _metadata(text)  # the file's metadata: never sent to the Writer
    body = text[len(front_matter) :]
    if not body.strip():
        raise errors.TeamloreError(
            errors.EMPTY_DOCUMENT, f"{path.name} is empty but for its front matter"
        )
    return MarkdownFile(printable_name(path.name), body, front_matter)


# a `key:` line of YAML metadata, and a line of a block of it (such a line, an indented or `-`
# one under it, a comment)
_YAML_KEY = re.compile(r"(?:\"[^\"]*\"|'[^']*'|[\w.-](?:[\w .-]*[\w.-])?)[ \t]*:(?:[ \t].*)?")
_YAML_LINE = re.compile(rf"[ \t].*|-(?:[ \t].*)?|#.*|{_YAML_KEY.pattern}|")


def _metadata(text: str) -> str:
    """The front matter block `text` opens with when it holds YAML metadata (a `key:` line, and
    no line that is not YAML), "" otherwise: notes that open with a `---` rule and have another
    one below are notes, imported whole, not left out as metadata."""
    block = front_matter_of(text)
    lines = block.rstrip().split("\n")[1:-1]  # between the `---` line and the closing one
    if not any(_YAML_KEY.fullmatch(line) for line in lines):
        return ""
    return block if all(_YAML_LINE.fullmatch(line) for line in lines) else ""


class Part(Record, frozen=True):
    """One queued part of an imported file, with its headings."""

    text: str
    heading_path: tuple[str, ...]


class _Unit(Record, frozen=True):
    """One paragraph, heading or fence of an imported file."""

    text: str
    heading_path: tuple[str, ...]  # headings in effect at this unit (its own included)
    is_heading: bool
    is_fence: bool
    line: int


def _heading(line: str) -> tuple[int, str] | None:
    match = _ATX.match(line.rstrip("\n"))
    if match is None:
        return None
    title = match.group(2) or ""
    # a closing #-sequence counts only after whitespace, so "# C#" keeps "C#"
    title = re.sub(r"[ \t]+#+$", "", title)
    if re.fullmatch(r"#+", title):
        title = ""
    return len(match.group(1)), title.strip()


def _units(text: str) -> list[_Unit]:
    lines = text.splitlines(keepends=True)
    units: list[_Unit] = []
    stack: list[tuple[int, str]] = []
    current: list[str] = []
    start = 1

    def path() -> tuple[str, ...]:
        return tuple(title for _, title in stack)

    def close() -> None:
        nonlocal current
        if current:
            units.append(_Unit("".join(current), path(), False, False, start))
            current = []

    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE_OPEN.match(line.rstrip("\n"))
        if fence and not (fence.group(1)[0] == "`" and "`" in fence.group(2)):
            close()
            marker = fence.group(1)
            block = [line]
            end = index + 1
            while end < len(lines):
                block.append(lines[end])
                closing = lines[end].rstrip("\n").lstrip(" ")
                indent = len(lines[end]) - len(lines[end].lstrip(" "))
                end += 1
                if (
                    indent <= 3
                    and closing.startswith(marker[0] * len(marker))
                    and not closing.rstrip(" \t").strip(marker[0])
                ):
                    break
            while end < len(lines) and not lines[end].strip():
                block.append(lines[end])  # blank lines after a fence stay with it
                end += 1
            units.append(_Unit("".join(block), path(), False, True, index + 1))
            index = end
            continue
        heading = _heading(line)
        if heading is not None:
            close()
            level, title = heading
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            block = [line]
            line_number = index + 1
            index += 1
            while index < len(lines) and not lines[index].strip():
                block.append(lines[index])
                index += 1
            units.append(_Unit("".join(block), path(), True, False, line_number))
            continue
        if not current:
            start = index + 1
        current.append(line)
        index += 1
        if not line.strip() and (index >= len(lines) or lines[index].strip()):
            close()  # a paragraph ends after its blank lines
    close()
    return units


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def chunk_markdown(text: str, budget: int = MAX_PART_BYTES, *, above: int = 0) -> list[Part]:
    """Split into parts of at most `budget` bytes; the parts concatenate to `text` exactly.
    `above`: the file's lines above `text` (its front matter), for the line a refusal names."""
    if _size(text) <= budget:
        return [Part(text, ())]
    units = _units(text)
    for unit in units:
        if _size(unit.text) > budget:
            what = "fenced block" if unit.is_fence else "paragraph"
            raise errors.TeamloreError(
                errors.IMPORT_CHUNK_TOO_LARGE,
                f"a {what} of {_size(unit.text)} bytes at line {above + unit.line} exceeds the"
                f" {budget}-byte part budget; split it by hand (nothing was truncated)",
            )
    sections: list[list[_Unit]] = []
    for unit in units:
        if unit.is_heading or not sections:
            sections.append([unit])
        else:
            sections[-1].append(unit)
    parts: list[Part] = []
    open_units: list[_Unit] = []

    def flush() -> None:
        nonlocal open_units
        if open_units:
            parts.append(Part("".join(u.text for u in open_units), open_units[0].heading_path))
            open_units = []

    def open_size() -> int:
        return sum(_size(u.text) for u in open_units)

    for section in sections:
        section_size = sum(_size(u.text) for u in section)
        if section_size <= budget:
            if open_size() + section_size > budget:
                flush()
            open_units.extend(section)
            continue
        flush()
        for unit in section:
            if open_size() + _size(unit.text) > budget:
                flush()
            open_units.append(unit)
        flush()
    flush()
    return parts


def printable_name(name: str) -> str:
    """`name` without the characters a terminal obeys or that show as nothing (Unicode's `C*`
    categories: ESC, a newline, a zero-width space, an undecodable byte): the file name the
    import's label, its result and the model's request all carry, so none differs."""
    return "".join(ch for ch in name if not unicodedata.category(ch).startswith("C"))


def default_label(file_name: str) -> str:
    return printable_name(file_name)[:64] or "markdown"


def check_label(label: str) -> str:
    if (
        not 1 <= len(label) <= 64
        or not label.strip()
        or any(unicodedata.category(ch).startswith("C") for ch in label)
    ):
        raise errors.TeamloreError(
            errors.INVALID_IMPORT_LABEL,
            "the label must be 1-64 printable characters, not blank, without control characters",
        )
    return label


def check_author(author: str) -> str:
    if author not in AUTHORS:
        raise errors.TeamloreError(
            errors.INVALID_IMPORT_AUTHOR, f"--author must be one of {', '.join(AUTHORS)}"
        )
    return author


def markdown_namespace(import_id: str, context_id: str) -> str:
    return "import:" + json.dumps(
        ["markdown", ENVELOPE_VERSION, import_id, context_id], separators=(",", ":")
    )


def part_key(index: int) -> str:
    return f"part-{index}"


def part_envelope(
    file: MarkdownFile, part: Part, index: int, count: int, *, label: str, author: str
) -> str:
    data: dict[str, Any] = {
        "kind": "document_import",
        "importId": file.import_id,
        "sourceLabel": label,
        "declaredAuthor": author,
        "fileName": file.file_name,
        "contentDigest": file.content_digest,
        "part": {"index": index, "count": count},
        "headingPath": list(part.heading_path),
        "text": part.text,
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))
