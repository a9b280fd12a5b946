"""What started a promptless turn (`startedBy`, ops/sessions/lineage.py) on one `sessions show`
page: one query for all of its promptless turns, one read of the transcript for all of them
that holds no line before their windows and no line longer than `STARTER_LINE_BYTES`, and
reads the same lines from either end of the file."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from support import Cli, shared_fixtures
from teamlore.ops.sessions import lineage
from teamlore.repo import tables
from teamlore.sessions.index_db import open_index
from teamlore.sessions.queries import show_session

MOREDIP = "0ccf1a04-1b4c-43b6-8aa5-79e41db43a68"  # claude/moredip-0ccf1a04.jsonl
BIG = 20 << 20  # a line longer than the cap, well under the index's reader's own


def _big_line(size: int) -> str:
    return '{"type":"progress","data":"' + "x" * size + '"}\n'


def _moredip_with(tmp_path: Path, lines_at: dict[int, str]) -> Cli:
    """The moredip session with lines put in before the given (0-based) lines, synced."""
    source = shared_fixtures("sessions", "claude", "moredip-0ccf1a04.jsonl")
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    for at in sorted(lines_at, reverse=True):
        lines.insert(at, lines_at[at])
    folder = tmp_path / "claude"
    folder.mkdir()
    (folder / "moredip.jsonl").write_text("".join(lines), encoding="utf-8")
    cli = Cli(tmp_path / "state")
    cli.json("sync", "--source", f"claude={folder}")
    return cli


def _show(tmp_path: Path, statements: list[str] | None = None) -> dict[str, Any]:
    conn = open_index(tmp_path / "state")
    try:
        shown = show_session(conn, MOREDIP, repositories=tables.session_facts(conn))
        if statements is not None:
            conn.set_trace_callback(statements.append)
        lineage.annotate_show(conn, shown)
        conn.set_trace_callback(None)
    finally:
        conn.close()
    return shown


def test_one_query_reads_where_every_promptless_turn_of_the_page_starts(tmp_path: Path) -> None:
    _moredip_with(tmp_path, {})
    statements: list[str] = []
    shown = _show(tmp_path, statements)
    promptless = [t for t in shown["turns"] if not t["user"]]
    assert len(promptless) >= 3
    assert all(t["startedBy"] for t in promptless)
    assert len([s for s in statements if "first_line" in s]) == 1, statements


def test_no_long_line_is_held_before_or_inside_a_promptless_turns_window(tmp_path: Path) -> None:
    """A 20 MiB line at the file's start and another among the records before the `/plugin`
    turn: neither is held (the page read them whole, and decoded the one in the window)."""
    source = shared_fixtures("sessions", "claude", "moredip-0ccf1a04.jsonl")
    lines = source.read_text(encoding="utf-8").splitlines()
    plugin = next(n for n, line in enumerate(lines) if "<command-name>/plugin<" in line)
    _moredip_with(tmp_path, {1: _big_line(BIG), plugin: _big_line(BIG)})
    expected = {t["ordinal"]: t.get("startedBy") for t in _show(tmp_path)["turns"]}
    tracemalloc.start()
    try:
        shown = _show(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert {t["ordinal"]: t.get("startedBy") for t in shown["turns"]} == expected
    assert expected[2] == ["/plugin", "/publish-session"]
    assert peak < 8 << 20, peak


def test_the_lines_read_are_the_same_from_either_end_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Small reads and a small cap, for lines across reads' ends and over the cap."""
    monkeypatch.setattr(lineage, "_READ_BYTES", 257)
    monkeypatch.setattr(lineage, "STARTER_LINE_BYTES", 1000)
    rng = random.Random(7)
    texts = [
        b"x" * rng.choice((0, 1, 5, 250, 256, 257, 990, 1100, 5000)) + str(n).encode()
        for n in range(400)
    ]
    path = tmp_path / "t.jsonl"
    for ending in (b"\n", b""):  # the last line with its newline, and without (being written)
        data = b"\n".join(texts) + ending
        path.write_bytes(data)
        truth = dict(enumerate(data.split(b"\n"), start=1))
        ends = [i for i, b in enumerate(data) if b == 10]  # the newline of line n: ends[n - 1]
        for _ in range(60):
            a = rng.randint(1, len(texts))
            spans = [(a, min(len(texts), a + rng.randint(0, 30)))]
            if rng.random() < 0.5:
                b = rng.randint(1, len(texts))
                spans.append((b, min(len(texts), b + rng.randint(0, 5))))
            expected = {
                n: truth[n]
                for s, e in spans
                for n in range(s, e + 1)
                if len(truth[n]) <= lineage.STARTER_LINE_BYTES
            }
            last = rng.randint(min(max(e for _, e in spans), len(ends)), len(ends))
            for known in ((0, 0), (ends[last - 1] + 1, last), (ends[last - 1], last)):
                assert lineage._lines(path, spans, known) == expected, (spans, known)
