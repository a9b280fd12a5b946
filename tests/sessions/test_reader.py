"""The JSONL reader: read buffers are reused from one read to the next, never shared."""

from __future__ import annotations

import io
import re

import pytest

from teamlore.sessions import reader
from teamlore.sessions.reader import read_lines


def _jsonl(tag: str, count: int) -> bytes:
    return b"".join(b'{"tag": "%s", "n": %d}\n' % (tag.encode(), n) for n in range(count))


def test_reads_open_at_once_each_have_their_own_buffer() -> None:
    first = read_lines(io.BytesIO(_jsonl("a", 3)))
    second = read_lines(io.BytesIO(_jsonl("b", 3)))
    pairs = list(zip(first, second, strict=True))
    assert [(x.record["tag"], y.record["tag"]) for x, y in pairs] == [("a", "b")] * 3


def test_a_read_left_early_gives_its_buffer_back_clean_for_the_next() -> None:
    reader._SPARE_BUFFERS.clear()
    abandoned = read_lines(io.BytesIO(_jsonl("long", 50)))
    next(abandoned)
    abandoned.close()
    assert len(reader._SPARE_BUFFERS) == 1
    # a shorter file read into the reused buffer sees none of the longer file's bytes
    lines = list(read_lines(io.BytesIO(_jsonl("short", 2) + b'{"partial": ')))
    assert [line.record for line in lines] == [{"tag": "short", "n": 0}, {"tag": "short", "n": 1}]
    assert len(reader._SPARE_BUFFERS) == 1


def test_a_changed_read_size_is_honoured(monkeypatch: pytest.MonkeyPatch) -> None:
    reader._SPARE_BUFFERS.clear()
    list(read_lines(io.BytesIO(_jsonl("x", 2))))
    monkeypatch.setattr(reader, "READ_SIZE", 16)
    lines = list(read_lines(io.BytesIO(_jsonl("y", 4))))
    assert [line.record["n"] for line in lines] == [0, 1, 2, 3]
    assert all(len(spare) in (16, 1 << 20) for spare in reader._SPARE_BUFFERS)


def test_lines_the_unread_pattern_matches_are_counted_but_not_decoded() -> None:
    data = b'{"keep": 1}\n{"skip": [not json\n{"keep": 2}\n{"skip": 3}\n'
    done = reader.ReadResult(0, 0, 0, False)
    lines = list(read_lines(io.BytesIO(data), result=done, unread=re.compile(rb'\{"skip"')))
    assert [(line.number, line.record) for line in lines] == [(1, {"keep": 1}), (3, {"keep": 2})]
    assert lines[1].start == data.index(b'{"keep": 2}')
    assert (done.resume_offset, done.resume_line) == (len(data), 4)
