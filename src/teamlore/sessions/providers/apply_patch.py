"""Parser for the `apply_patch` envelope used by Codex (and any agent that borrows it).

Only the file operations are extracted, never the hunks' content:

    *** Begin Patch
    *** Add File: <path>          (body: lines starting with "+")
    *** Update File: <path>
    *** Move to: <new path>       (optional, right after an Update header)
    @@ <context>                  (hunks: lines starting with "+", "-" or " ")
    *** Delete File: <path>
    *** End Patch

The parser never raises: malformed envelopes yield whatever headers can be recognised plus a list
of `problems`. CRLF line ends are accepted. A patch can also be found inside a larger text: a shell
heredoc (`apply_patch <<'EOF' ...`), or a JavaScript/JSON string literal in which the newlines are
escaped (`const patch = "*** Begin Patch\\n*** Add File: a\\n..."`), see `find_patches`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Literal

OperationKind = Literal["add", "update", "delete"]

BEGIN_MARKER = "*** Begin Patch"
END_MARKER = "*** End Patch"
_HEADERS: tuple[tuple[str, OperationKind], ...] = (
    ("*** Add File: ", "add"),
    ("*** Update File: ", "update"),
    ("*** Delete File: ", "delete"),
)
_MOVE_PREFIX = "*** Move to: "
_END_OF_FILE = "*** End of File"
# a double-quoted string literal (JSON / JavaScript) that holds an escaped patch envelope
# One double-quoted literal (JSON/JS escapes), closed or cut by a newline. Possessive and with
# exclusive alternatives, so `finditer` tokenizes a line left to right in linear time; written
# as runs of plain characters between escapes, which the regex engine matches in a tight loop
# (an alternation per character was 4x slower).
_STRING_LITERAL = re.compile(r'"([^"\\\n]*+(?:\\.[^"\\\n]*+)*+)("?)')


@dataclass(frozen=True, slots=True)
class FileOperation:
    kind: OperationKind
    path: str
    move_to: str | None = None


@dataclass(frozen=True, slots=True)
class ParsedPatch:
    operations: tuple[FileOperation, ...] = ()
    # both markers were found
    complete: bool = False
    # short codes describing what was wrong ("missing-begin", "missing-end", "empty-path", ...)
    problems: tuple[str, ...] = ()

    @property
    def added(self) -> list[str]:
        return [op.path for op in self.operations if op.kind == "add"]

    @property
    def updated(self) -> list[str]:
        return [op.path for op in self.operations if op.kind == "update"]

    @property
    def deleted(self) -> list[str]:
        return [op.path for op in self.operations if op.kind == "delete"]

    @property
    def moved(self) -> list[tuple[str, str]]:
        return [(op.path, op.move_to) for op in self.operations if op.move_to is not None]

    def paths_written(self) -> list[str]:
        """Every path the patch changes (added, updated, deleted, both ends of a move), first
        occurrence order, without duplicates."""
        seen: dict[str, None] = {}
        for op in self.operations:
            seen.setdefault(op.path, None)
            if op.move_to is not None:
                seen.setdefault(op.move_to, None)
        return list(seen)


def parse_apply_patch(text: str) -> ParsedPatch:
    """Parse one patch envelope. Text before `*** Begin Patch` (a heredoc line, say) is skipped;
    without a Begin marker the whole text is scanned for headers and "missing-begin" is noted."""
    lines = text.split("\n")
    problems: list[str] = []
    start = _find_begin(lines)
    if start is None:
        problems.append("missing-begin")
        start = 0
    else:
        start += 1
    operations, ended = _read_operations(lines[start:], problems)
    if not ended:
        problems.append("missing-end")
    complete = "missing-begin" not in problems and ended
    return ParsedPatch(operations, complete, tuple(dict.fromkeys(problems)))


def _read_operations(
    lines: Iterable[str], problems: list[str]
) -> tuple[tuple[FileOperation, ...], bool]:
    """The file operations of an envelope's lines after its Begin line, and whether its End line
    was reached. Only the lines starting with `*` and the End line change the operations; the
    other (content) lines can only add a problem."""
    operations: list[FileOperation] = []
    current: FileOperation | None = None
    ended = False
    for raw in lines:
        stripped = raw.rstrip()  # also drops a CRLF's \r
        if END_MARKER in stripped and stripped.strip() == END_MARKER:
            ended = True
            break
        if not stripped.startswith("*"):  # a content line (most of a patch): not a header
            if current is None and stripped and not stripped.startswith("@@"):
                problems.append("content-outside-file")
            continue
        header = _header(stripped)
        if header is not None:
            kind, path = header
            if not path:
                problems.append("empty-path")
                current = None
                continue
            if current is not None:
                operations.append(current)
            current = FileOperation(kind, path)
            continue
        if stripped.startswith(_MOVE_PREFIX):
            target = stripped[len(_MOVE_PREFIX) :].strip()
            if current is None or current.kind != "update" or current.move_to is not None:
                problems.append("misplaced-move")
            elif not target:
                problems.append("empty-path")
            else:
                current = FileOperation("update", current.path, target)
            continue
        if stripped.startswith("***") and stripped != _END_OF_FILE and stripped != BEGIN_MARKER:
            problems.append("unknown-header")
            continue
        if current is None and stripped and not stripped.startswith("@@"):
            problems.append("content-outside-file")
    if current is not None:
        operations.append(current)
    return tuple(operations), ended


def find_patches(text: str) -> list[ParsedPatch]:
    """Every patch envelope inside `text`: raw ones (each `*** Begin Patch` line starts one) and
    ones held in double-quoted string literals with escaped newlines. Never raises."""
    return _find(text, parse_apply_patch)


def paths_written_in(text: str) -> list[str]:
    """Paths written by every patch found in `text` (see `find_patches`), without duplicates.
    Only each envelope's header lines are read (its content lines cannot change its
    operations): the paths `find_patches` gives, without a Python step per patch line."""
    seen: dict[str, None] = {}
    for patch in _find(text, _envelope_operations):
        for path in patch.paths_written():
            seen.setdefault(path, None)
    return list(seen)


def _find(text: str, parse: Callable[[str], ParsedPatch]) -> list[ParsedPatch]:
    """`find_patches` with the envelope parser `parse` (given text that starts with its Begin
    line). Linear: every search moves forward through `text`."""
    found: list[ParsedPatch] = []
    if BEGIN_MARKER not in text:
        return found
    begins: list[int] = []  # where each Begin line starts
    quoted: list[tuple[int, int]] = []  # (start, end) of the other lines holding the marker
    for start, end in _lines_holding(text, BEGIN_MARKER):
        if text[start:end].strip() == BEGIN_MARKER:
            begins.append(start)
        else:
            quoted.append((start, end))
    # an envelope ends at its End line or where the next one begins: every line is parsed once
    for number, start in enumerate(begins):
        stop = begins[number + 1] - 1 if number + 1 < len(begins) else len(text)
        found.append(parse(text[start:stop]))
    if "\\" not in text:
        return found  # a literal holds an envelope only with escaped newlines: none here
    # a literal never spans a newline, so each line's literals are found on their own: only
    # the lines holding the marker are tokenized
    for start, end in quoted:
        for match in _STRING_LITERAL.finditer(text, start, end):
            if not match.group(2) or BEGIN_MARKER not in match.group(1):
                continue
            decoded = _decode_literal(match.group(1))
            if decoded is not None and "\n" in decoded:
                found.extend(p for p in _find(decoded, parse) if p.operations)
    return found


def _lines_holding(text: str, needle: str) -> Iterator[tuple[int, int]]:
    """(start, end) of every line of `text` holding `needle`, in order, each once."""
    at = text.find(needle)
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at + len(needle))
        end = len(text) if end < 0 else end
        yield start, end
        at = text.find(needle, end)


def _envelope_operations(envelope: str) -> ParsedPatch:
    """The operations of one envelope (text starting with its Begin line), read from the lines
    that can change them (`_marked_lines`); `complete` and `problems` are not worked out."""
    operations, _ = _read_operations(_marked_lines(envelope), [])
    return ParsedPatch(operations)


def _marked_lines(text: str) -> Iterator[str]:
    """After the first line of `text`, in order: every line that starts with `*` or holds the
    End marker. Both searches only move forward, so this is linear however the lines fall."""
    pos = text.find("\n")
    star = end = -2  # -2: not searched yet, -1: none left
    while pos >= 0:
        if star != -1 and star < pos:
            star = text.find("\n*", pos)
        if end != -1 and end <= pos:
            end = text.find(END_MARKER, pos)
        if star < 0 and end < 0:
            return
        start = star + 1 if end < 0 or 0 <= star < end else text.rfind("\n", 0, end) + 1
        pos = text.find("\n", start)
        yield text[start:] if pos < 0 else text[start:pos]


def _find_begin(lines: list[str]) -> int | None:
    for index, line in enumerate(lines):
        if line.strip() == BEGIN_MARKER:
            return index
    return None


def _header(line: str) -> tuple[OperationKind, str] | None:
    for prefix, kind in _HEADERS:
        if line.startswith(prefix):
            return kind, line[len(prefix) :].strip()
        if line == prefix.rstrip():
            return kind, ""
    return None


def _decode_literal(body: str) -> str | None:
    try:
        value = json.loads('"' + body + '"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None
