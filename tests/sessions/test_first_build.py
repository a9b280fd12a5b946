"""A new index's first bulk sync is written with a rollback journal instead of the WAL
(`db.first_build_without_wal`, docs/sessions.md "A first sync"): it stores the same rows, the
index is in WAL mode afterwards, a crash in the middle resumes to the same index, and another
connection to the index is never refused (the switch is skipped, or that connection works with
the rollback journal until the switch back)."""

from __future__ import annotations

import shutil
import sqlite3
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest

from sessions.index_snapshot import GOLDEN, PROVIDERS, build, snapshot
from support import run_killed_at, shared_fixtures
from teamlore.core import db, errors
from teamlore.core.errors import TeamloreError
from teamlore.sessions import indexer as indexer_module
from teamlore.sessions.index_db import MIGRATIONS, index_db_path, open_index
from teamlore.sessions.index_health import _open_read_only
from teamlore.sessions.indexer import Indexer, Source
from teamlore.sessions.providers import get_adapter


def sync_fixtures(home: Path, *, first_build_bytes: int = 1, batch_bytes: int = 1 << 20) -> Indexer:
    """The real fixture files (19 MiB) synced in-process in several batches; by default as a
    first build whatever their size."""
    home.mkdir(parents=True, exist_ok=True)
    indexer = Indexer(
        open_index(home), {p: get_adapter(p) for p in PROVIDERS}, home=home, analysis="off"
    )
    indexer.first_build_bytes = first_build_bytes
    indexer.batch_bytes = batch_bytes
    indexer.sync([Source(p, shared_fixtures("sessions") / p) for p in PROVIDERS])
    return indexer


def rows_of(indexer: Indexer) -> dict[str, Any]:
    return snapshot(indexer.conn, shared_fixtures("sessions"))


def journal_mode(conn: sqlite3.Connection) -> str:
    return str(conn.execute("PRAGMA journal_mode").fetchone()[0])


def test_a_first_bulk_sync_stores_the_golden_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexer_module, "FIRST_BUILD_MIN_BYTES", 1)  # the fixtures are 19 MiB
    switched: list[bool] = []
    real = db.first_build_without_wal

    @contextmanager
    def recorded(conn: sqlite3.Connection) -> Iterator[bool]:
        with real(conn) as made:
            switched.append(made)
            yield made

    monkeypatch.setattr(db, "first_build_without_wal", recorded)
    assert build(shared_fixtures("sessions")) == orjson.loads(GOLDEN.read_bytes())
    assert switched == [True]  # the rows above were written without the WAL


def test_the_first_sync_is_written_without_the_wal_and_leaves_the_index_in_wal_mode(
    tmp_path: Path,
) -> None:
    first = sync_fixtures(tmp_path / "first")
    with_wal = sync_fixtures(tmp_path / "wal", first_build_bytes=1 << 40)

    assert first.built_without_wal and not with_wal.built_without_wal
    assert rows_of(first) == rows_of(with_wal)
    assert journal_mode(first.conn) == "wal"
    assert first.conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL, as connect sets
    assert not (tmp_path / "first" / "index.sqlite3-journal").exists()
    again = Indexer(first.conn, {p: get_adapter(p) for p in PROVIDERS}, analysis="off")
    again.first_build_bytes = 1
    again.sync([Source(p, shared_fixtures("sessions") / p) for p in PROVIDERS])
    assert not again.built_without_wal  # the index holds files: not a first build


def test_a_small_first_sync_keeps_the_wal(tmp_path: Path) -> None:
    assert not sync_fixtures(tmp_path, first_build_bytes=1 << 40).built_without_wal


def test_another_open_connection_keeps_the_wal(tmp_path: Path) -> None:
    home = tmp_path / "state"
    home.mkdir()
    other = open_index(home)  # e.g. the MCP server's
    indexer = sync_fixtures(home)
    assert not indexer.built_without_wal
    assert journal_mode(other) == "wal"
    assert other.execute("SELECT count(*) FROM turns").fetchone()[0] > 100


def test_a_connection_opened_during_a_first_build_waits_for_the_batch_and_is_not_refused(
    tmp_path: Path,
) -> None:
    home = tmp_path / "state"
    home.mkdir()
    writer = open_index(home)
    opened: list[sqlite3.Connection] = []
    with db.first_build_without_wal(writer) as switched:
        assert switched
        writer.execute("BEGIN IMMEDIATE")  # the first build holds its write lock
        writer.execute("INSERT INTO meta(key, value) VALUES ('probe', 'x')")
        # status or search from another terminal: it waits for the batch, it is not refused
        reader = threading.Thread(target=lambda: opened.append(open_index(home)))
        reader.start()
        time.sleep(0.3)
        writer.execute("COMMIT")
        reader.join()
    (other,) = opened
    assert other.execute("SELECT value FROM meta WHERE key = 'probe'").fetchone()[0] == "x"
    assert journal_mode(writer) == "wal"  # switched back with the other connection open
    assert journal_mode(other) == "wal"
    other.execute("INSERT INTO meta(key, value) VALUES ('after', 'y')")
    assert writer.execute("SELECT value FROM meta WHERE key = 'after'").fetchone()[0] == "y"


def test_a_connection_left_with_the_rollback_journal_syncs_fully(tmp_path: Path) -> None:
    """`synchronous = NORMAL` is power-loss safe only in WAL mode: a connection that opened
    during a first build and works with the rollback journal commits with FULL, as the build."""
    home = tmp_path / "state"
    home.mkdir()
    writer = open_index(home)
    with db.first_build_without_wal(writer) as switched:
        assert switched
        writer.execute("BEGIN IMMEDIATE")
        writer.execute("INSERT INTO meta(key, value) VALUES ('probe', 'x')")
        other = db.connect(index_db_path(home), MIGRATIONS)
        assert other.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        writer.execute("COMMIT")
        assert journal_mode(other) == "delete"
    assert writer.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL again, in WAL mode


CRASH_SCRIPT = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path.insert(0, {tests!r})
    from sessions.test_first_build import sync_fixtures
    sync_fixtures(Path({home!r}))
""")


@pytest.mark.parametrize("point", ["sync.before-commit", "sync.after-commit"])
def test_a_crash_during_a_first_build_resumes_to_the_same_index(tmp_path: Path, point: str) -> None:
    shared_fixtures("sessions")  # skip here: in the child a skip would be a traceback
    home = tmp_path / "state"
    home.mkdir()
    run_killed_at(point, CRASH_SCRIPT.format(tests=str(Path(__file__).parents[1]), home=str(home)))
    # the kill met the first build without the WAL: a hot journal mid-batch, a database in
    # rollback mode (file format bytes 18-19 are 1, 2 in WAL mode) after a commit
    index = home / "index.sqlite3"
    assert index.read_bytes()[18:20] == b"\x01\x01"
    assert (home / "index.sqlite3-journal").exists() == (point == "sync.before-commit")
    resumed = sync_fixtures(home)
    assert resumed.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert journal_mode(resumed.conn) == "wal"
    assert rows_of(resumed) == rows_of(sync_fixtures(tmp_path / "alone", first_build_bytes=1 << 40))


def test_a_read_only_opener_refuses_an_interrupted_batch_rather_than_reading_around_it(
    tmp_path: Path,
) -> None:
    """After a crash mid-batch the index has a hot rollback journal; a read-only connection
    cannot roll it back (SQLITE_READONLY_ROLLBACK), and an immutable one would read the torn
    batch: a read-only state dir says STATE_READ_ONLY until a writer opens the index."""
    home, crashed = tmp_path / "state", tmp_path / "crashed"
    home.mkdir()
    crashed.mkdir()
    writer = open_index(home)
    with db.first_build_without_wal(writer) as switched:
        assert switched
        writer.execute("PRAGMA cache_size = 8")  # the batch spills pages into the file
        writer.execute("BEGIN IMMEDIATE")
        writer.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)", [(f"k{n}", "v" * 500) for n in range(400)]
        )
        for name in (
            "index.sqlite3",
            "index.sqlite3-journal",
        ):  # the files as a SIGKILL leaves them
            shutil.copyfile(home / name, crashed / name)
        writer.execute("ROLLBACK")
    with pytest.raises(TeamloreError) as refused:
        _open_read_only(index_db_path(crashed))
    assert refused.value.error == errors.STATE_READ_ONLY
    resumed = open_index(crashed)  # a writer rolls the batch back
    assert resumed.execute("SELECT count(*) FROM meta WHERE key LIKE 'k%'").fetchone()[0] == 0
    assert journal_mode(resumed) == "wal"
    assert (
        _open_read_only(index_db_path(crashed)).execute("PRAGMA quick_check").fetchone()[0] == "ok"
    )


def test_a_build_that_cannot_switch_back_yet_keeps_syncing_fully(tmp_path: Path) -> None:
    """A reader opened during the build holds the index at its end: the switch back to WAL
    waits for it and gives up, and the writes after the build still use the rollback journal,
    so they keep `synchronous = FULL` (NORMAL only with the WAL) until the next `connect`."""
    home = tmp_path / "state"
    home.mkdir()
    writer = open_index(home)
    with db.first_build_without_wal(writer) as switched:
        assert switched
        writer.execute("INSERT INTO meta(key, value) VALUES ('probe', 'x')")
        writer.execute("BEGIN IMMEDIATE")
        reader = db.connect(index_db_path(home), MIGRATIONS)  # the switch to WAL is refused
        writer.execute("COMMIT")
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM meta").fetchone()  # a read in progress
        writer.execute("PRAGMA busy_timeout = 50")
    assert journal_mode(writer) == "delete"
    assert writer.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    reader.execute("COMMIT")
    assert journal_mode(open_index(home)) == "wal"  # the next connect switches


def traced_sync(home: Path, *, first_build_bytes: int = 1, failing: str = "") -> tuple[Any, ...]:
    """`sync_fixtures` with every SQL statement recorded; the Claude Code file named `failing`
    breaks once its rows are written (its parser state cannot be saved)."""
    home.mkdir(parents=True, exist_ok=True)
    adapters = {p: get_adapter(p) for p in PROVIDERS}
    plain_state = adapters["claude"].new_state

    def state_of(path: Path) -> dict[str, Any]:
        state = plain_state(path)
        return {**state, "unsaveable": {1}} if path.name == failing else state

    adapters["claude"].new_state = state_of  # type: ignore[method-assign]
    indexer = Indexer(open_index(home), adapters, home=home, analysis="off")
    indexer.first_build_bytes = first_build_bytes
    indexer.batch_bytes = 1 << 20
    statements: list[str] = []
    indexer.conn.set_trace_callback(statements.append)
    stats = indexer.sync([Source(p, shared_fixtures("sessions") / p) for p in PROVIDERS])
    indexer.conn.set_trace_callback(None)
    counts = (stats.files_changed, stats.files_failed, stats.turns, stats.diagnostic_count)
    return indexer, statements, counts


def test_a_first_build_writes_its_new_files_without_a_savepoint_each(tmp_path: Path) -> None:
    """A savepoint copies each page the file changes that existed before it into a statement
    journal (~1 MiB a file with 32 KiB pages); a first build's files go without one."""
    first, statements, _ = traced_sync(tmp_path / "first")
    with_wal, wal_statements, _ = traced_sync(tmp_path / "wal", first_build_bytes=1 << 40)
    assert first.built_without_wal
    assert not [s for s in statements if s.startswith("SAVEPOINT")]
    assert [s for s in wal_statements if s.startswith("SAVEPOINT")]  # an incremental sync's
    assert rows_of(first) == rows_of(with_wal)


def test_a_file_failing_in_a_first_build_rolls_back_alone(tmp_path: Path) -> None:
    failing = "entire-cli-2.1.12.jsonl"
    first, statements, counts = traced_sync(tmp_path / "first", failing=failing)
    with_wal, _, wal_counts = traced_sync(
        tmp_path / "wal", first_build_bytes=1 << 40, failing=failing
    )
    # the batch rolled back and its files were synced again, each in a savepoint
    assert "ROLLBACK" in statements
    assert [s for s in statements if s.startswith("SAVEPOINT")]
    assert counts == wal_counts and counts[1] == 1
    failed = first.conn.execute("SELECT path FROM source_files WHERE status = 'failed'").fetchall()
    assert [Path(r[0]).name for r in failed] == [failing]
    assert rows_of(first) == rows_of(with_wal)


def test_a_first_build_interrupted_mid_file_keeps_its_committed_batches(tmp_path: Path) -> None:
    home = tmp_path / "state"
    home.mkdir()
    adapters = {p: get_adapter(p) for p in PROVIDERS}
    plain_parse = adapters["claude"].parse
    calls: list[int] = []

    def parse(record: Any, line: int, state: dict[str, Any]) -> list[Any]:
        calls.append(line)
        if len(calls) == 3000:  # mid-way through the Claude Code files, mid-file
            raise KeyboardInterrupt
        return plain_parse(record, line, state)

    adapters["claude"].parse = parse  # type: ignore[method-assign]
    indexer = Indexer(open_index(home), adapters, home=home, analysis="off")
    indexer.first_build_bytes = 1
    indexer.batch_bytes = 1 << 20
    with pytest.raises(KeyboardInterrupt):
        indexer.sync([Source(p, shared_fixtures("sessions") / p) for p in PROVIDERS])
    conn = indexer.conn
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    kept = conn.execute("SELECT count(*) FROM source_files").fetchone()[0]
    assert kept > 0  # the batches committed before the interruption
    # no file half-written: each file kept has its turns' search rows
    assert (
        conn.execute(
            "SELECT count(*) FROM turns WHERE id NOT IN (SELECT rowid FROM turns_fts)"
        ).fetchone()[0]
        == 0
    )
    resumed = sync_fixtures(home)
    assert rows_of(resumed) == rows_of(sync_fixtures(tmp_path / "alone", first_build_bytes=1 << 40))
