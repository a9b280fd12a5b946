"""Helpers shared by the Claude Code and Pi adapters: content-block text, image placeholders,
bounded parser state, defensive field access.

Raw image data never leaves this module as text: an image block becomes a short placeholder
such as ``[image: image/png, 91234 bytes]``.
"""

from __future__ import annotations

import bisect
import hashlib
import heapq
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from teamlore.sessions.model import Diagnostic, Event, SessionMeta, Unreadable

# Every transform of transcript text is linear (bench/README.md, "Hostile text"): tagged
# blocks are removed by one left-to-right scan with `str.find`, never by a lazy `.*?` regex,
# which rescans the rest of the text for every opener that has no closer.


def jsonl_files(
    root: Path, *, skip_names: tuple[str, ...] = (), newest_first: bool = False
) -> Iterator[str | Unreadable]:
    """Every `*.jsonl` file under the folder `root`, sorted, and every subfolder that could not
    be listed (pathlib's rglob skips those without a word). Symlinked folders are not entered.

    The folder listings' entry types decide what is a file: no `stat` per file (a no-op resync
    stats each file once, in the indexer); only a symlink is followed to see what it names.
    `newest_first`: the same files, the most recently modified first (`_newest_first`)."""
    if newest_first:
        yield from _newest_first(root, skip_names)
        return
    # each path with "/" as NUL (no path holds one): sorted as strings, that is the order of
    # `sorted(Path)`, component by component, without a list of components per file
    found: list[str] = []
    unreadable: list[Unreadable] = []
    folders = [str(root)]
    while folders:
        folder = folders.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if _wanted(entry, skip_names):
                        found.append(entry.path.replace("/", "\0"))
                    elif _is_folder(entry):
                        folders.append(entry.path)
        except OSError as error:
            unreadable.append(
                Unreadable(Path(error.filename or folder), error.strerror or str(error))
            )
    found.sort()
    yield from (key.replace("\0", "/") for key in found)
    yield from unreadable


def _newest_first(root: Path, skip_names: tuple[str, ...]) -> Iterator[str | Unreadable]:
    """`jsonl_files` walked best first: of the files and folders seen so far, the one modified
    last (a folder's time moves when a file is made or renamed in it), one `stat` per entry. A
    caller that takes only the first few (doctor, past its cap) lists only the folders those
    live in, and gets the ones a user most likely just wrote."""
    waiting: list[tuple[int, str, bool]] = [(0, str(root), True)]  # (-mtime, path, is a folder)
    while waiting:
        _, path, folder = heapq.heappop(waiting)
        if not folder:
            yield path
            continue
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    if _wanted(entry, skip_names):
                        heapq.heappush(waiting, (-_modified(entry, True), entry.path, False))
                    elif _is_folder(entry):
                        heapq.heappush(waiting, (-_modified(entry, False), entry.path, True))
        except OSError as error:
            yield Unreadable(Path(error.filename or path), error.strerror or str(error))


def _modified(entry: os.DirEntry[str], follow_symlinks: bool) -> int:
    """When `entry` was last modified, in ns; 0 (the oldest) when it cannot be asked."""
    try:
        return entry.stat(follow_symlinks=follow_symlinks).st_mtime_ns
    except OSError:
        return 0


def _is_folder(entry: os.DirEntry[str]) -> bool:
    """A folder to enter (not a symlink to one); an entry that cannot be asked is not (as in
    `os.walk`)."""
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _wanted(entry: os.DirEntry[str], skip_names: tuple[str, ...]) -> bool:
    """A `*.jsonl` file (or a symlink to one) not named in `skip_names`."""
    if not entry.name.endswith(".jsonl") or entry.name in skip_names:
        return False
    try:
        return entry.is_file()
    except OSError:
        return False


def as_dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def as_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def as_nonempty_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def base64_decoded_size(data: str) -> int:
    """Bytes a base64 string decodes to, computed without decoding it."""
    length = len(data.rstrip())
    padding = len(data.rstrip()) - len(data.rstrip().rstrip("="))
    return max(0, (length * 3) // 4 - padding)


def image_placeholder(media_type: str | None, data: Any) -> str:
    kind = media_type or "unknown"
    if isinstance(data, str):
        return f"[image: {kind}, {base64_decoded_size(data)} bytes]"
    return f"[image: {kind}]"


def strip_system_reminders(text: str) -> str:
    """Drop the client's `<system-reminder>…</system-reminder>` blocks."""
    if "<system-reminder>" not in text:
        return text
    return strip_tagged_blocks(text, "system-reminder").strip()


def strip_tagged_blocks(text: str, name: str) -> str:
    """`text` without its `<name>…</name>` blocks (each opener pairs with the first closer after
    it, blocks do not nest; an opener without a closer stays). Linear in `len(text)`."""
    opener, closer = f"<{name}>", f"</{name}>"
    kept: list[str] = []
    pos = 0
    while True:
        start = text.find(opener, pos)
        if start < 0:
            break
        end = text.find(closer, start + len(opener))
        if end < 0:
            break  # no closer after this opener, so none after any later opener either
        kept.append(text[pos:start])
        pos = end + len(closer)
    kept.append(text[pos:])
    return "".join(kept)


def strip_tagged_families(text: str, prefix: str) -> str:
    """`text` without its `<NAME>…</NAME>` blocks for every tag NAME starting with `prefix`
    (each opener pairs with the first closer of the same name after it). One pass collects the
    closers by name, so the scan stays linear however many openers lack a closer."""
    name_pattern = re.escape(prefix) + "[a-z_]+"
    closers: dict[str, list[int]] = {}
    for match in re.finditer(f"</({name_pattern})>", text):
        closers.setdefault(match.group(1), []).append(match.start())
    if not closers:
        return text
    kept: list[str] = []
    pos = 0
    for match in re.finditer(f"<({name_pattern})>", text):
        name = match.group(1)
        if match.start() < pos or name not in closers:
            continue
        positions = closers[name]
        index = bisect.bisect_left(positions, match.end())
        if index == len(positions):
            continue
        kept.append(text[pos : match.start()])
        pos = positions[index] + len(name) + 3
    kept.append(text[pos:])
    return "".join(kept)


def block_placeholder(block: dict[str, Any]) -> str | None:
    """Placeholder text for a binary content block (image, document), None for other blocks.

    Knows the Anthropic shape ``{type: image, source: {type: base64, media_type, data}}`` and the
    Pi shape ``{type: image, data, mimeType}``.
    """
    kind = block.get("type")
    if kind not in ("image", "document"):
        return None
    source = as_dict(block.get("source"))
    if source is not None:
        media_type = as_str(source.get("media_type"))
        data = source.get("data")
    else:
        media_type = as_str(block.get("mimeType")) or as_str(block.get("media_type"))
        data = block.get("data")
    if kind == "document":
        size = f", {base64_decoded_size(data)} bytes" if isinstance(data, str) else ""
        return f"[document: {media_type or 'unknown'}{size}]"
    return image_placeholder(media_type, data)


def content_pieces(content: Any) -> list[str]:
    """The visible pieces of a message `content` (a string or a list of blocks): text blocks
    (system reminders stripped), placeholders for images and documents, tool references by
    name. Thinking, tool calls and unknown blocks contribute nothing."""
    if isinstance(content, str):
        text = strip_system_reminders(content)
        return [text] if text else []
    pieces: list[str] = []
    if not isinstance(content, list):
        return pieces
    for raw in content:
        block = as_dict(raw)
        if block is None:
            if isinstance(raw, str) and raw:
                pieces.append(raw)
            continue
        kind = block.get("type")
        if kind == "text":
            raw_text = as_str(block.get("text"))
            text = strip_system_reminders(raw_text) if raw_text else ""
            if text:
                pieces.append(text)
        elif kind == "tool_reference":
            name = as_str(block.get("tool_name"))
            pieces.append(f"[tool: {name}]" if name else "[tool]")
        else:
            placeholder = block_placeholder(block)
            if placeholder is not None:
                pieces.append(placeholder)
    return pieces


def content_text(content: Any) -> str:
    return "\n".join(content_pieces(content))


def short_digest(text: str) -> str:
    """A short, stable fingerprint for de-duplication state (never the text itself)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def remember(items: list[Any], item: Any, limit: int) -> None:
    """Append `item` to a bounded most-recent list kept in parser state."""
    items.append(item)
    if len(items) > limit:
        del items[: len(items) - limit]


def remember_key(mapping: dict[str, Any], key: str, value: Any, limit: int) -> None:
    """Set `mapping[key]`, dropping the oldest keys beyond `limit` (dicts keep insertion order,
    also through a JSON round trip)."""
    mapping.pop(key, None)
    mapping[key] = value
    while len(mapping) > limit:
        del mapping[next(iter(mapping))]


def timestamp_of(record: dict[str, Any]) -> str | None:
    return as_nonempty_str(record.get("timestamp"))


class RecordParser:
    """Plumbing shared by the per-record parsers of the JSONL providers: one instance handles
    one record, appending events to `out` and keeping its memory in the JSON `state`."""

    __slots__ = ("line", "out", "st")  # one instance per record: no attribute dict to build

    def __init__(self, state: dict[str, Any], line: int, out: list[Event]) -> None:
        self.st = state
        self.line = line
        self.out = out

    def bad(self, message: str) -> None:
        self.out.append(Diagnostic("bad-record", f"line {self.line}: {message}", self.line))

    def meta(self, **fields: str | None) -> None:
        """Emit the session facts not sent before (state key "sent")."""
        sent: list[str] = self.st["sent"]
        fresh = {k: v for k, v in fields.items() if v is not None and k not in sent}
        if fresh:
            sent.extend(fresh)
            self.out.append(SessionMeta(**fresh))

    def handle(self, record: Any) -> None:
        raise NotImplementedError


def parse_guarded(
    parser: type[RecordParser], record: Any, line: int, state: dict[str, Any]
) -> list[Event]:
    """Run one record through `parser`; an unexpected exception becomes an `adapter-error`
    diagnostic, so a record never aborts a file."""
    out: list[Event] = []
    try:
        parser(state, line, out).handle(record)
    except Exception as exc:
        out.append(Diagnostic("adapter-error", f"line {line}: {type(exc).__name__}: {exc}", line))
    return out
