"""Streaming JSONL reading with byte offsets.

Never loads a file whole: lines are assembled from fixed-size reads, and a line longer than
`MAX_LINE_BYTES` is skipped (streamed past, hashed) with a diagnostic instead of being held in
memory. A final line without a newline that does not decode is "incomplete, retry later": the
resume offset stays before it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from io import BufferedIOBase
from typing import Any

import orjson

READ_SIZE = 1 << 20
MAX_LINE_BYTES = 32 << 20
KNOWN_BYTES = 4096  # of a file's start, and of what the index read last


@dataclass(slots=True)
class Line:
    number: int  # 1-based physical line number
    start: int  # byte offset of the first byte
    end: int  # byte offset after the line and its newline
    record: Any  # decoded JSON, or None when `error` is set
    error: str | None = None  # "bad-json", "too-large", "not-utf8"
    size: int = 0


@dataclass(slots=True)
class ReadResult:
    resume_offset: int  # where the next read starts: after the last complete line
    resume_line: int  # number of the last complete line
    bytes_read: int
    pending_partial: bool  # a final line is still being written


# Read buffers of finished reads, reused by the next: a new one is zero-filled and faulted in
# page by page, 1 MiB for every file although most session files are far smaller.
_SPARE_BUFFERS: list[bytearray] = []
MAX_SPARE_BUFFERS = 4


def _take_buffer() -> bytearray:
    while _SPARE_BUFFERS:
        spare = _SPARE_BUFFERS.pop()
        if len(spare) == READ_SIZE:
            return spare
    return bytearray(READ_SIZE)


def read_lines(
    handle: BufferedIOBase,
    *,
    start_offset: int = 0,
    start_line: int = 0,
    result: ReadResult | None = None,
    unread: re.Pattern[bytes] | None = None,
) -> Iterator[Line]:
    """Yield every complete line from `start_offset`. Fills `result` when exhausted.

    A line whose start `unread` matches is passed over without being decoded (an adapter's
    `unread_lines`: records it would pass over without a trace); it is still counted."""
    handle.seek(start_offset)
    offset = start_offset
    number = start_line
    # one reused read buffer: lines held whole in it are decoded from a view of it, without
    # copying (a fresh 1 MiB `bytes` per read and a copy per line were a visible cost)
    chunk = _take_buffer()
    try:
        buffer = bytearray()
        line_start = offset
        skipping = False  # inside an oversized line
        skipped = 0
        bytes_read = 0
        view = memoryview(chunk)
        while True:
            size = handle.readinto(chunk)
            if not size:
                break
            bytes_read += size
            pos = 0
            while pos < size:
                nl = chunk.find(b"\n", pos, size)
                if nl < 0:
                    piece = view[pos:size]
                    if skipping:
                        skipped += len(piece)
                    else:
                        buffer += piece
                        if len(buffer) > MAX_LINE_BYTES:
                            skipping, skipped = True, len(buffer)
                            buffer = bytearray()
                    offset += len(piece)
                    break
                piece = view[pos:nl]
                offset += nl - pos + 1
                pos = nl + 1
                number += 1
                if not skipping and not buffer:
                    if unread is None or unread.match(piece) is None:
                        try:  # the usual line, decoded here; `_decode` handles the rest
                            record = orjson.loads(piece)
                        except orjson.JSONDecodeError:
                            yield _decode(number, line_start, offset, piece)
                        else:
                            yield Line(number, line_start, offset, record, None, len(piece))
                elif skipping:
                    size_skipped = skipped + len(piece)
                    skipping, skipped = False, 0
                    yield Line(number, line_start, offset, None, "too-large", size_skipped)
                elif buffer:
                    buffer += piece
                    if len(buffer) > MAX_LINE_BYTES:
                        yield Line(number, line_start, offset, None, "too-large", len(buffer))
                    else:
                        yield _decode(number, line_start, offset, buffer)
                    buffer = bytearray()
                line_start = offset
        resume_offset, resume_line, pending = offset, number, False
        if skipping or buffer:
            # a final line with no newline: complete only if it decodes
            if not skipping and buffer.strip():
                line = _decode(number + 1, line_start, offset, buffer)
                if line.error is None:
                    resume_line = number + 1
                    yield line
                else:
                    resume_offset, pending = line_start, True
            elif skipping:
                resume_offset, pending = line_start, True
        if result is not None:
            result.resume_offset = resume_offset
            result.resume_line = resume_line
            result.bytes_read = bytes_read
            result.pending_partial = pending
    finally:
        if len(_SPARE_BUFFERS) < MAX_SPARE_BUFFERS:
            _SPARE_BUFFERS.append(chunk)


UTF8_BOM = b"\xef\xbb\xbf"


def _decode(number: int, start: int, end: int, data: bytearray | memoryview) -> Line:
    try:  # the usual line: JSON as it stands (JSON allows the whitespace `strip` would drop)
        return Line(number, start, end, orjson.loads(data), None, len(data))
    except orjson.JSONDecodeError:
        pass
    stripped = bytes(data).strip()
    if start == 0 and stripped.startswith(UTF8_BOM):  # editors on Windows write one
        stripped = stripped[len(UTF8_BOM) :].strip()
    if not stripped:
        return Line(number, start, end, None, "blank", 0)
    try:
        return Line(number, start, end, orjson.loads(stripped), None, len(data))
    except orjson.JSONDecodeError as exc:
        kind = "not-utf8" if "utf-8" in str(exc).lower() else "bad-json"
        return Line(number, start, end, None, kind, len(data))


def iter_file_events(adapter: Any, path: Any) -> Iterator[Any]:
    """Every event of one whole file (tests and tools; the indexer reads incrementally)."""
    from teamlore.sessions.model import Diagnostic

    state = adapter.new_state(path)
    with open(path, "rb") as handle:
        for line in read_lines(handle, unread=adapter.unread_lines):
            if line.error == "blank":
                continue
            if line.error is not None:
                yield Diagnostic(line.error, f"line {line.number}: {line.error}", line.number)
                continue
            yield from adapter.parse(line.record, line.number, state)


def known_bytes(handle: Any, offset: int) -> str:
    """What the index knows a file by besides its device and inode, having read it to `offset`:
    the sha256 of its first `KNOWN_BYTES` and of the `KNOWN_BYTES` before `offset`. A file in an
    inode another file left, or one rewritten in place (a secret redacted), reads otherwise, so
    its bytes past `offset` are never taken for lines appended to what the index holds."""
    head = _digest(handle, 0, min(offset, KNOWN_BYTES))
    tail = max(offset - KNOWN_BYTES, 0)
    return f"{head} {_digest(handle, tail, offset - tail)}"


def reads_as_known(handle: Any, offset: int, known: str | None) -> bool:
    """Whether the file still holds the bytes `known_bytes` saw. An index made before it kept
    the digest of the first bytes alone: that one is compared until the file is read again."""
    if not known:
        return False
    head, _, tail_digest = known.partition(" ")
    if head != _digest(handle, 0, min(offset, KNOWN_BYTES)):
        return False
    tail = max(offset - KNOWN_BYTES, 0)
    return not tail_digest or tail_digest == _digest(handle, tail, offset - tail)


def starts_as_known(handle: Any, offset: int, known: str | None) -> bool | None:
    """Whether the file still starts with the bytes `known_bytes` saw first, whatever came of
    its end: the transcript it holds is still the one the index read there (appended to or
    rewritten past its start, not another session's moved to its path). None when it is
    shorter than those bytes now: which it starts with cannot be told (a file being rewritten,
    truncated then written again, reads short)."""
    if not known:
        return False
    length = min(offset, KNOWN_BYTES)
    handle.seek(0)
    first = handle.read(length)
    if len(first) < length:
        return None
    return known.partition(" ")[0] == hashlib.sha256(first).hexdigest()


def holds_all_known(handle: Any, offset: int, known: str | None) -> bool:
    """Whether the file holds all the bytes `known_bytes` saw, as far as both its digests tell
    (`reads_as_known`: a shorter file reads other bytes at its end); never for a file read to
    no byte or known by its first digest alone."""
    return offset > 0 and " " in (known or "") and reads_as_known(handle, offset, known)


def _digest(handle: Any, start: int, length: int) -> str:
    handle.seek(start)
    return hashlib.sha256(handle.read(length)).hexdigest()
