"""Incremental sync: what is read, what is kept, what survives bad input and crashes.

The mechanics are exercised through a deliberately tiny JSONL format ("mini") with its own
adapter, so these tests specify the indexer, not any provider's quirks; provider files are
covered by tests/sessions/test_sync_real_files.py.
"""

from __future__ import annotations

import itertools
import os
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest

from support import run_killed_at
from teamlore.sessions.index_db import open_index
from teamlore.sessions.indexer import Indexer, Source, SyncStats
from teamlore.sessions.model import (
    AssistantText,
    Diagnostic,
    Event,
    SessionMeta,
    ToolCall,
    ToolResult,
    TurnEnd,
    UserTurn,
)
from teamlore.sessions.queries import search_turns, show_session


class MiniAdapter:
    provider: ClassVar[str] = "mini"
    unread_lines = None

    def default_roots(self) -> list[Path]:
        return []

    def discover(self, root: Path, *, newest_first: bool = False) -> Iterator[str]:
        return iter(str(p) for p in (sorted(root.rglob("*.jsonl")) if root.is_dir() else [root]))

    def new_state(self, path: Path) -> dict[str, Any]:
        return {"records": 0}

    def parse(self, record: Any, line: int, state: dict[str, Any]) -> list[Event]:
        state["records"] += 1
        kind = record.get("t") if isinstance(record, dict) else None
        if kind == "meta":
            return [SessionMeta(provider_session_id=record["id"], cwd=record.get("cwd"))]
        if kind == "user":
            return [UserTurn(record["text"], record.get("at"))]
        if kind == "say":
            return [AssistantText(record["text"], record.get("at"))]
        if kind == "run":
            return [
                ToolCall(
                    record["id"],
                    "sh",
                    "shell",
                    {"cmd": record["cmd"]},
                    command=record["cmd"],
                    paths_written=record.get("writes", []),
                )
            ]
        if kind == "out":
            return [ToolResult(record["id"], record["out"], record.get("exit"))]
        if kind == "end":
            return [TurnEnd(record.get("at"))]
        return [Diagnostic("unknown-record", f"unknown record {kind!r}", line)]


def lines(*records: dict[str, Any]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


def session_file(path: Path, *records: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lines({"t": "meta", "id": path.stem, "cwd": "/w/proj"}, *records))
    return path


@pytest.fixture()
def src(tmp_path: Path) -> Path:
    root = tmp_path / "sessions"
    root.mkdir()
    return root


@pytest.fixture()
def indexer(home: Path) -> Indexer:
    home.mkdir(parents=True, exist_ok=True)
    return Indexer(open_index(home), {"mini": MiniAdapter()}, home=home)


def sync(indexer: Indexer, src: Path) -> SyncStats:
    return indexer.sync([Source("mini", src)])


def turns(indexer: Indexer) -> list[tuple[int, str, str, int]]:
    return [
        tuple(r)
        for r in indexer.conn.execute(
            "SELECT ordinal, user_text, assistant_text, sealed FROM turns"
            " ORDER BY session_id, ordinal"
        )
    ]


def test_a_turn_is_sealed_only_by_a_later_turn_or_an_end_record(
    indexer: Indexer, src: Path
) -> None:
    session_file(
        src / "a.jsonl",
        {"t": "user", "text": "first"},
        {"t": "say", "text": "one"},
        {"t": "user", "text": "second"},
        {"t": "say", "text": "two"},
    )
    session_file(src / "b.jsonl", {"t": "user", "text": "only"}, {"t": "end"})
    sync(indexer, src)
    assert turns(indexer) == [(1, "first", "one", 1), (2, "second", "two", 0), (1, "only", "", 1)]


def test_unchanged_files_are_not_read_again(indexer: Indexer, src: Path) -> None:
    session_file(src / "a.jsonl", {"t": "user", "text": "hello"})
    first = sync(indexer, src)
    second = sync(indexer, src)
    assert (first.files_changed, first.bytes_read > 0) == (1, True)
    assert (second.files_seen, second.files_changed, second.bytes_read) == (1, 0, 0)


def test_appended_lines_are_parsed_alone_and_continue_the_open_turn(
    indexer: Indexer, src: Path
) -> None:
    path = session_file(
        src / "a.jsonl",
        {"t": "user", "text": "fix the build"},
        {"t": "run", "id": "c1", "cmd": "make"},
    )
    size_before = path.stat().st_size
    sync(indexer, src)
    appended = lines(
        {"t": "out", "id": "c1", "out": "ok", "exit": 0},
        {"t": "say", "text": "built"},
        {"t": "user", "text": "now test"},
    )
    with path.open("ab") as handle:
        handle.write(appended)
    stats = sync(indexer, src)
    assert stats.bytes_read == len(appended)
    state = orjson.loads(
        indexer.conn.execute("SELECT parser_state FROM source_files").fetchone()[0]
    )
    assert state["adapter"]["records"] == 6  # the adapter state was resumed, not rebuilt
    assert path.stat().st_size > size_before
    assert turns(indexer) == [(1, "fix the build", "built", 1), (2, "now test", "", 0)]
    key = indexer.conn.execute("SELECT session_key FROM sessions").fetchone()[0]
    tool = show_session(indexer.conn, key, turn=1)["turns"][0]["tools"][0]
    assert (tool["command"], tool["exitCode"], tool["status"]) == ("make", 0, "ok")


def test_resumed_sync_equals_a_sync_from_scratch(home: Path, src: Path, tmp_path: Path) -> None:
    records = [
        {"t": "user", "text": f"turn {i}"} if i % 3 == 0 else {"t": "say", "text": f"answer {i}"}
        for i in range(30)
    ]
    path = session_file(src / "a.jsonl")
    incremental = Indexer(open_index(home), {"mini": MiniAdapter()}, home=home)
    for record in records:
        with path.open("ab") as handle:
            handle.write(lines(record))
        sync(incremental, src)
    other_home = tmp_path / "other"
    other_home.mkdir()
    (other_home / "secret").write_bytes((home / "secret").read_bytes())
    whole = Indexer(open_index(other_home), {"mini": MiniAdapter()}, home=other_home)
    sync(whole, src)
    query = (
        "SELECT ordinal, user_text, assistant_text, sealed, revision FROM turns ORDER BY ordinal"
    )
    assert incremental.conn.execute(query).fetchall() == whole.conn.execute(query).fetchall()


def test_a_partial_last_line_waits_for_its_end(indexer: Indexer, src: Path) -> None:
    path = session_file(src / "a.jsonl", {"t": "user", "text": "hello"})
    with path.open("ab") as handle:
        handle.write(b'{"t": "say", "text": "half')
    stats = sync(indexer, src)
    assert stats.diagnostic_count == 0
    assert turns(indexer) == [(1, "hello", "", 0)]
    with path.open("ab") as handle:
        handle.write(b' done"}\n')
    sync(indexer, src)
    assert turns(indexer) == [(1, "hello", "half done", 0)]


def test_a_rewritten_file_is_reparsed_and_replaces_its_turns(indexer: Indexer, src: Path) -> None:
    path = session_file(
        src / "a.jsonl", {"t": "user", "text": "old one"}, {"t": "user", "text": "old two"}
    )
    sync(indexer, src)
    session_file(path, {"t": "user", "text": "new"})  # rewritten in place, shorter
    sync(indexer, src)
    assert turns(indexer) == [(1, "new", "", 0)]
    assert search_turns(indexer.conn, "old").hits == []


def test_a_deleted_file_keeps_its_history_marked_unavailable(indexer: Indexer, src: Path) -> None:
    path = session_file(src / "a.jsonl", {"t": "user", "text": "remember the deploy key rotation"})
    sync(indexer, src)
    path.unlink()
    stats = sync(indexer, src)
    assert stats.files_unavailable == 1
    assert indexer.conn.execute("SELECT available FROM sessions").fetchone()[0] == 0
    assert [h["turn"] for h in search_turns(indexer.conn, "deploy rotation").hits] == [1]


def test_copies_of_one_session_file_are_each_indexed_as_a_session(
    indexer: Indexer, src: Path
) -> None:
    """Copies of one session file (one session id, one file name) in three project folders:
    every copy is its own session, none fails, none is read twice. (A copy whose original is
    deleted is the transcript moved: test_takeover.py.)"""
    first = session_file(src / "a" / "s.jsonl", {"t": "user", "text": "deploy the release"})
    session_file(src / "b" / "s.jsonl", {"t": "user", "text": "deploy the release"})
    assert sync(indexer, src).files_failed == 0
    (src / "c").mkdir()
    (src / "c" / "s.jsonl").write_bytes(first.read_bytes())  # a copy: another inode

    copied = sync(indexer, src)

    assert copied.files_failed == 0 and copied.files_changed == 1
    rows = indexer.conn.execute("SELECT available, turn_count FROM sessions ORDER BY id")
    assert [tuple(r) for r in rows] == [(1, 1), (1, 1), (1, 1)]
    assert sync(indexer, src).files_changed == 0


def test_a_moved_session_file_is_followed_to_its_new_path(indexer: Indexer, src: Path) -> None:
    """Codex's archive and a renamed project folder move a file: the index follows it (same
    inode, same bytes where it read), keeps one session and reads only what was appended."""
    path = session_file(src / "sessions" / "s.jsonl", {"t": "user", "text": "deploy the release"})
    sync(indexer, src)
    (src / "archived").mkdir()
    moved = path.rename(src / "archived" / "s.jsonl")

    assert sync(indexer, src).files_changed == 0
    with moved.open("ab") as handle:
        handle.write(lines({"t": "user", "text": "and tag it"}))
    grown = sync(indexer, src)

    assert grown.files_changed == 1 and grown.files_unavailable == 0
    sessions = indexer.conn.execute("SELECT available, turn_count FROM sessions").fetchall()
    assert [tuple(r) for r in sessions] == [(1, 2)]
    [row] = indexer.conn.execute("SELECT path, status FROM source_files").fetchall()
    assert tuple(row) == (str(moved), "ok")


def test_two_hard_links_to_a_moved_file_are_one_followed_file_and_one_new(
    indexer: Indexer, src: Path
) -> None:
    path = session_file(src / "a" / "s.jsonl", {"t": "user", "text": "deploy the release"})
    sync(indexer, src)
    for folder in ("b", "c"):
        (src / folder).mkdir()
        os.link(path, src / folder / "s.jsonl")
    path.unlink()

    stats = sync(indexer, src)

    assert (stats.files_failed, stats.files_changed, stats.files_unavailable) == (0, 1, 0)
    rows = indexer.conn.execute("SELECT available, turn_count FROM sessions ORDER BY id")
    assert [tuple(r) for r in rows] == [(1, 1), (1, 1)]


def test_a_file_that_took_a_gone_files_inode_is_a_new_file(indexer: Indexer, src: Path) -> None:
    """Same inode, other bytes (the old file deleted and its inode reused, or rewritten after
    the move): not the file the index read, whose history stays."""
    path = session_file(src / "a" / "s.jsonl", {"t": "user", "text": "remember the key rotation"})
    sync(indexer, src)
    (src / "b").mkdir()
    moved = path.rename(src / "b" / "t.jsonl")
    session_file(moved, {"t": "user", "text": "something else entirely"})  # same inode

    stats = sync(indexer, src)

    assert stats.files_unavailable == 1
    rows = indexer.conn.execute("SELECT available FROM sessions ORDER BY id").fetchall()
    assert [r[0] for r in rows] == [0, 1]
    assert [h["turn"] for h in search_turns(indexer.conn, "key rotation").hits] == [1]


def test_malformed_lines_are_counted_and_the_rest_is_indexed(indexer: Indexer, src: Path) -> None:
    path = src / "a.jsonl"
    path.write_bytes(
        lines({"t": "meta", "id": "a"}, {"t": "user", "text": "before"})
        + b"{not json\n"
        + b"\xff\xfe\x00garbage\x00\n"
        + lines({"t": "mystery"}, {"t": "say", "text": "after"})
    )
    stats = sync(indexer, src)
    codes = sorted(d.code for d in stats.diagnostics)
    assert codes == ["bad-json", "not-utf8", "unknown-record"]
    assert turns(indexer) == [(1, "before", "after", 0)]
    assert stats.files_failed == 0


def test_an_oversized_line_is_skipped_without_loading_it(
    indexer: Indexer, src: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from teamlore.sessions import reader

    monkeypatch.setattr(reader, "MAX_LINE_BYTES", 64 * 1024)
    monkeypatch.setattr(reader, "READ_SIZE", 4096)
    huge = {"t": "out", "id": "c1", "out": "x" * (1 << 20)}
    session_file(
        src / "a.jsonl", {"t": "user", "text": "dump"}, huge, {"t": "say", "text": "survived"}
    )
    stats = sync(indexer, src)
    assert [d.code for d in stats.diagnostics] == ["too-large"]
    assert turns(indexer) == [(1, "dump", "survived", 0)]


def test_huge_tool_output_is_stored_as_head_tail_and_digest(indexer: Indexer, src: Path) -> None:
    output = "BEGIN " + "y" * 300_000 + " END"
    session_file(
        src / "a.jsonl",
        {"t": "user", "text": "cat log"},
        {"t": "run", "id": "c1", "cmd": "cat big.log"},
        {"t": "out", "id": "c1", "out": output, "exit": 1},
    )
    sync(indexer, src)
    row = indexer.conn.execute(
        "SELECT result_head, result_tail, result_bytes, result_sha256, result_truncated, status"
        " FROM tool_uses"
    ).fetchone()
    import hashlib

    assert row["result_truncated"] == 1 and row["status"] == "error"
    assert row["result_bytes"] == len(output)
    assert row["result_sha256"] == hashlib.sha256(output.encode()).hexdigest()
    assert row["result_head"].startswith("BEGIN") and row["result_tail"].endswith("END")
    assert len(row["result_head"]) + len(row["result_tail"]) < 64 * 1024


def test_an_unreadable_file_is_counted_and_others_are_indexed(indexer: Indexer, src: Path) -> None:
    session_file(src / "good.jsonl", {"t": "user", "text": "fine"})
    broken = src / "broken.jsonl"
    broken.symlink_to(src / "missing-target.jsonl")
    stats = sync(indexer, src)
    assert stats.files_failed == 1
    assert stats.diagnostics[0].code == "file-unreadable"
    assert turns(indexer) == [(1, "fine", "", 0)]


def test_what_a_sync_could_not_read_is_kept_until_a_sync_reads_everything(
    indexer: Indexer, src: Path
) -> None:
    """No index row says a file could not be opened, so `status` reads the last sync's record:
    how many, and the first ones. A search's bounded refresh of a few known files leaves it."""
    from teamlore.sessions.index_db import LAST_SYNC_UNREADABLE

    def kept() -> Any:
        row = indexer.conn.execute(
            "SELECT value FROM meta WHERE key = ?", (LAST_SYNC_UNREADABLE,)
        ).fetchone()
        return orjson.loads(row[0]) if row else None

    good = session_file(src / "good.jsonl", {"t": "user", "text": "fine"})
    broken = src / "broken.jsonl"
    broken.symlink_to(src / "missing-target.jsonl")
    sync(indexer, src)
    assert kept() == {
        "count": 1,
        "recent": [
            {
                "code": "file-unreadable",
                "file": str(broken),
                "line": None,
                "message": "No such file or directory",
            }
        ],
    }
    good.write_bytes(good.read_bytes() + lines({"t": "user", "text": "more"}))
    indexer.sync([Source("mini", good)], refresh=True)
    assert kept()["count"] == 1
    broken.unlink()
    sync(indexer, src)
    assert kept() is None


def test_commits_are_observed_in_commit_command_results(indexer: Indexer, src: Path) -> None:
    full = "9f2c1e4b7a3d5c6e8f0a1b2c3d4e5f6a7b8c9d0e"
    session_file(
        src / "a.jsonl",
        {"t": "user", "text": "commit it"},
        {"t": "run", "id": "c1", "cmd": "git commit -am 'fix: retry'"},
        {"t": "out", "id": "c1", "out": "[main 9f2c1e4] fix: retry\n 2 files changed", "exit": 0},
        {"t": "run", "id": "c2", "cmd": "git rev-parse HEAD"},
        {"t": "out", "id": "c2", "out": full + "\n", "exit": 0},
        {"t": "run", "id": "c3", "cmd": "echo 9f2c1e4b7a3d5c6e8f0a1b2c3d4e5f6a7b8c9d0e"},
        {"t": "out", "id": "c3", "out": full, "exit": 0},
    )
    sync(indexer, src)
    rows = indexer.conn.execute(
        "SELECT hash, is_full, from_commit_command FROM observed_commits ORDER BY id"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("9f2c1e4", 0, 1), (full, 1, 0)]


def test_tool_uses_are_numbered_in_the_order_written_and_their_touches_point_at_them(
    indexer: Indexer, src: Path
) -> None:
    # a turn's tool uses are written together (one executemany per table) with the ids SQLite
    # gives rows inserted one by one (one more than the largest): a turn a later sync rewrites
    # drops its tool uses and gets the ids after those that remain, as it always did
    path = session_file(
        src / "a.jsonl",
        {"t": "user", "text": "first"},
        {"t": "run", "id": "r1", "cmd": "touch a", "writes": ["a"]},
        {"t": "run", "id": "r2", "cmd": "touch b c", "writes": ["b", "c"]},
        {"t": "end"},
        {"t": "user", "text": "second"},
        {"t": "run", "id": "r3", "cmd": "touch d", "writes": ["d"]},
    )
    sync(indexer, src)
    with path.open("ab") as handle:
        handle.write(lines({"t": "out", "id": "r3", "out": "done", "exit": 0}))
    sync(indexer, src)
    conn = indexer.conn
    tools = conn.execute("SELECT id, turn_id, seq, call_id FROM tool_uses ORDER BY id").fetchall()
    assert [(r["seq"], r["call_id"]) for r in tools] == [(0, "r1"), (1, "r2"), (0, "r3")]
    assert [r["id"] for r in tools] == [1, 2, 3]  # r3 rewritten with its result, id 3 again
    touches = conn.execute(
        "SELECT f.path, u.call_id FROM file_touches f JOIN tool_uses u ON u.id = f.tool_use_id"
        " AND u.turn_id = f.turn_id ORDER BY f.id"
    ).fetchall()
    assert [tuple(r) for r in touches] == [("a", "r1"), ("b", "r2"), ("c", "r2"), ("d", "r3")]


def test_chinese_and_identifier_search(indexer: Indexer, src: Path) -> None:
    session_file(
        src / "a.jsonl",
        {"t": "user", "text": "修复数据库连接池泄漏"},
        {"t": "user", "text": "rename parseLine to parse_record"},
    )
    sync(indexer, src)
    assert [h["turn"] for h in search_turns(indexer.conn, "库").hits] == [1]
    assert [h["turn"] for h in search_turns(indexer.conn, "连接池").hits] == [1]
    assert [h["turn"] for h in search_turns(indexer.conn, "parse_line").hits] == [2]
    hit = search_turns(indexer.conn, "数据库").hits[0]
    assert "数据库" in hit["snippet"] and hit["score"] > 0


def test_rebuild_reparses_every_available_file(indexer: Indexer, src: Path) -> None:
    session_file(src / "a.jsonl", {"t": "user", "text": "one"})
    gone = session_file(src / "b.jsonl", {"t": "user", "text": "vanished history"})
    sync(indexer, src)
    gone.unlink()
    sync(indexer, src)
    stats = indexer.sync([Source("mini", src)], rebuild=True)
    assert stats.files_changed == 1
    assert [h["turn"] for h in search_turns(indexer.conn, "vanished").hits] == [1]
    assert len(turns(indexer)) == 2


CRASH_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from sessions.test_indexer import MiniAdapter
    from teamlore.sessions.index_db import open_index
    from teamlore.sessions.indexer import Indexer, Source
    home = Path({home!r})
    indexer = Indexer(open_index(home), {{"mini": MiniAdapter()}}, home=home)
    indexer.batch_bytes = {batch_bytes}
    indexer.sync([Source("mini", Path({src!r}))])
""")


def crash_sync(home: Path, src: Path, point: str, *, batch_bytes: int = 64 << 20) -> None:
    """Run a sync in a child process that SIGKILLs itself at failpoint `point`."""
    home.mkdir(parents=True, exist_ok=True)
    script = CRASH_SCRIPT.format(
        tests=str(Path(__file__).parents[1]), home=str(home), src=str(src), batch_bytes=batch_bytes
    )
    run_killed_at(point, script)


POINTS = ["sync.mid-file", "sync.before-release", "sync.after-file", "sync.before-commit"]


@pytest.mark.parametrize("batch_bytes", [1, 64 << 20], ids=["commit-per-file", "one-batch"])
@pytest.mark.parametrize("point", [*POINTS, "sync.after-commit"])
def test_a_crash_mid_sync_leaves_a_consistent_index(
    home: Path, src: Path, point: str, batch_bytes: int
) -> None:
    for name in ("a", "b", "c"):
        session_file(
            src / f"{name}.jsonl",
            {"t": "user", "text": f"work {name}"},
            {"t": "say", "text": "done"},
        )
    crash_sync(home, src, point, batch_bytes=batch_bytes)
    recovered = Indexer(open_index(home), {"mini": MiniAdapter()}, home=home)
    assert recovered.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    sync(recovered, src)
    assert turns(recovered) == [
        (1, "work a", "done", 0),
        (1, "work b", "done", 0),
        (1, "work c", "done", 0),
    ]
    assert recovered.conn.execute("SELECT count(*) FROM turns_fts").fetchone()[0] == 3


def test_files_committed_before_a_crash_are_not_read_again(home: Path, src: Path) -> None:
    """Batched commits keep the per-file resume guarantee: a file is either wholly indexed at
    its new offset or not at all, and the next sync reads only what was not committed."""
    for name in ("a", "b", "c"):
        session_file(src / f"{name}.jsonl", {"t": "user", "text": f"work {name}"})
    crash_sync(home, src, "sync.after-commit", batch_bytes=1)  # commit after each file
    recovered = Indexer(open_index(home), {"mini": MiniAdapter()}, home=home)
    assert [r[0] for r in recovered.conn.execute("SELECT user_text FROM turns")] == ["work a"]
    stats = sync(recovered, src)
    assert (stats.files_changed, stats.turns) == (2, 2)
    assert [h["turn"] for h in search_turns(recovered.conn, "work").hits] == [1, 1, 1]


def test_a_failing_file_rolls_back_alone_inside_a_batch(indexer: Indexer, src: Path) -> None:
    session_file(src / "a.jsonl", {"t": "user", "text": "first file"})
    session_file(src / "b.jsonl", {"t": "user", "text": "second file"})
    session_file(src / "c.jsonl", {"t": "user", "text": "third file"})

    class Exploding(MiniAdapter):
        def new_state(self, path: Path) -> dict[str, Any]:
            # a state that cannot be saved: the file fails after its rows were written
            return {"records": 0, "unsaveable": {path.name}} if path.stem == "b" else {"records": 0}

    indexer.adapters["mini"] = Exploding()
    stats = sync(indexer, src)
    assert stats.files_failed == 1
    assert [
        r[0] for r in indexer.conn.execute("SELECT status FROM source_files ORDER BY path")
    ] == [
        "ok",
        "failed",
        "ok",
    ]
    assert [t[1] for t in turns(indexer)] == ["first file", "third file"]


class Waiting(MiniAdapter):
    """A busy machine, as this process sees it: wall time passes while it waits for a core."""

    def new_state(self, path: Path) -> dict[str, Any]:
        time.sleep(0.4)
        return super().new_state(path)


def batches_of_syncing(indexer: Indexer, src: Path) -> int:
    """How many transactions the sync wrote files in."""
    statements: list[str] = []
    indexer.conn.set_trace_callback(statements.append)
    sync(indexer, src)
    indexer.conn.set_trace_callback(None)
    return sum(
        (first, then) == ("BEGIN IMMEDIATE", "SAVEPOINT sync_file")
        for first, then in itertools.pairwise(statements)
    )


def test_a_batch_lasts_a_second_of_the_syncs_cpu_not_of_the_clock(
    indexer: Indexer, src: Path
) -> None:
    """Waiting for a core does not end a batch (each commit writes the batch's search segment
    and the pages it shares with the last batch again): four files that take 1.6 s of wall
    time and little CPU are one batch, unless the wall-time cap ends it. The caps are set far
    from the files' times, so a loaded machine reads the same."""
    for name in "abcd":
        session_file(src / f"{name}.jsonl", {"t": "user", "text": f"file {name}"})
    indexer.adapters["mini"] = Waiting()
    indexer.batch_wall_seconds = 60.0
    assert batches_of_syncing(indexer, src) == 1

    for name in "ef":
        session_file(src / f"{name}.jsonl", {"t": "user", "text": f"file {name}"})
    indexer.batch_wall_seconds = 0.0  # a reader of a first build waits at most this long
    assert batches_of_syncing(indexer, src) == 2


def test_the_start_and_end_of_long_tool_output_are_searchable(indexer: Indexer, src: Path) -> None:
    output = "collected 400 items\n" + "." * 20_000 + "\nFAILED test_totals - ZeroDivisionError"
    session_file(
        src / "a.jsonl",
        {"t": "user", "text": "run the suite"},
        {"t": "run", "id": "c1", "cmd": "pytest"},
        {"t": "out", "id": "c1", "out": output, "exit": 1},
    )
    sync(indexer, src)
    assert [h["turn"] for h in search_turns(indexer.conn, "ZeroDivisionError").hits] == [1]
    assert [h["turn"] for h in search_turns(indexer.conn, "collected items").hits] == [1]


@pytest.mark.parametrize("exit_code", [None, 0, 2, -1])
def test_a_turn_revision_is_the_canonical_digest_of_its_value(exit_code: int | None) -> None:
    from teamlore.core.canonical import digest
    from teamlore.sessions.assembler import ToolRecord, TurnRecord

    turn = TurnRecord(3, "Cafe\u0301 中文 \u212b", "2026-01-01T00:00:00Z", 1)
    turn.assistant_parts += ["done", "e\u0301"]
    tool = ToolRecord("c1", "Ba\u0301sh", "shell", '{"cmd": "ls"}', "ls", [], [], None)
    tool.exit_code, tool.result_sha256, tool.status = exit_code, "ab" * 32, "ok"
    turn.tools += [tool, ToolRecord("c2", "Read", "read", None, None, [], [], None)]
    assert turn.revision() == digest(turn._revision_value())


def test_a_new_index_has_32_kib_pages_and_an_old_one_keeps_its_own(home: Path) -> None:
    import sqlite3

    home.mkdir(parents=True, exist_ok=True)
    assert open_index(home).execute("PRAGMA page_size").fetchone()[0] == 32768
    old = home / "old"
    old.mkdir()
    sqlite3.connect(old / "index.sqlite3").execute("CREATE TABLE t(x)").connection.close()
    assert open_index(old).execute("PRAGMA page_size").fetchone()[0] == 4096


def test_a_no_op_resync_stats_each_file_once(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # discovery reads file types from the folder listing; the indexer stats each file once for
    # what it will read and whether the file changed (three stats per file before)
    src = tmp_path / "s"
    for n in range(4):
        session_file(src / f"d{n % 2}" / f"{n}.jsonl", {"t": "user", "text": f"turn {n}"})
    indexer = Indexer(open_index(home), {"mini": MiniAdapter()}, home=home, analysis="auto")
    assert indexer.sync([Source("mini", src)]).files_changed == 4
    statted: list[str] = []
    real = os.stat

    def counted(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        statted.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", counted)
    again = indexer.sync([Source("mini", src)])
    assert (again.files_seen, again.files_changed) == (4, 0)
    per_file = [statted.count(str(p)) for p in sorted(src.rglob("*.jsonl"))]
    assert per_file == [1, 1, 1, 1]


def test_a_sync_reads_the_origin_secret_once_for_all_its_sessions(
    indexer: Indexer, src: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from teamlore.core import keys

    for n in range(3):
        session_file(src / f"s{n}.jsonl", {"t": "user", "text": f"prompt {n}"})
    reads: list[Path | None] = []
    real_origin_secret = keys.origin_secret

    def counting(home: Path | None = None) -> bytes:
        reads.append(home)
        return real_origin_secret(home)

    monkeypatch.setattr(keys, "origin_secret", counting)

    assert sync(indexer, src).sessions == 3

    assert reads == [home]
    stored = {r[0] for r in indexer.conn.execute("SELECT session_key FROM sessions")}
    assert stored == {keys.session_key("mini", f"s{n}", home) for n in range(3)}


def test_each_tool_call_records_the_assistant_text_before_it_also_across_syncs(
    indexer: Indexer, src: Path
) -> None:
    # the offset is kept as parts are added (not summed per call); a turn left open by one sync
    # and read back by the next carries its text's length on
    said = ["first part", "naïve 中文"]
    calls = [{"t": "run", "id": f"c{n}", "cmd": "ls"} for n in range(2)]
    path = session_file(src / "a.jsonl", {"t": "user", "text": "go"}, calls[0])
    with path.open("ab") as handle:
        handle.write(lines({"t": "say", "text": said[0]}, calls[1], {"t": "say", "text": said[1]}))
    sync(indexer, src)
    with path.open("ab") as handle:
        handle.write(lines({"t": "run", "id": "c2", "cmd": "ls"}, {"t": "say", "text": "end"}))
        handle.write(lines({"t": "run", "id": "c3", "cmd": "ls"}))
    sync(indexer, src)
    text = indexer.conn.execute("SELECT assistant_text FROM turns").fetchone()[0]
    offsets = [r[0] for r in indexer.conn.execute("SELECT assistant_offset FROM tool_uses")]
    assert text == "first part\n\nnaïve 中文\n\nend"
    assert offsets == [0, len("first part"), len("first part\n\nnaïve 中文"), len(text)]
